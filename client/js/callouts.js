// Call-outs: "炸弹 / Bomb!" when a bomb is played and "报单 / Last card!" when a seat is down
// to one card, from the server's events (a `played` event's kind, `last_card`).  Spoken with
// the browser's speech synthesis in the page's language ("voice"), or a short sound
// ("sounds", also where the browser cannot speak that language); nothing with the sound
// setting off.  The rules here have no 报双 (two cards left): no event, no call-out.

import { language, t } from "./i18n.js";
import { cue } from "./sound.js";

export const CALLOUT_MODES = ["voice", "sounds"];

// The language tag a voice must speak for each of ours.
const SPEECH_LANG = { en: "en", de: "de", "zh-Hans": "zh-CN", it: "it" };

let sound = true;
let mode = "voice";

export function setCallouts(settings) {
  sound = settings.sound !== false;
  mode = CALLOUT_MODES.includes(settings.callouts) ? settings.callouts : "voice";
}

/** The call-outs one state frame makes, in order: "bomb" and "lastCard". */
export function calls(events) {
  const out = [];
  for (const ev of events || []) {
    if (ev.type === "played" && ev.kind === "bomb") out.push("bomb");
    else if (ev.type === "last_card") out.push("lastCard");
  }
  return out;
}

/** A voice for our language, if the browser lists any voices: null when it lists some and
 * none speaks it (then a sound is better than our words read in a foreign voice). */
function voiceFor(tag) {
  const voices = window.speechSynthesis.getVoices();
  if (!voices.length) return undefined; // none listed (yet): the browser picks from `lang`
  const base = tag.split("-")[0].toLowerCase();
  return voices.find((v) => v.lang.toLowerCase().replace("_", "-") === tag.toLowerCase()) || voices.find((v) => v.lang.toLowerCase().startsWith(base)) || null;
}

function speak(name) {
  if (!("speechSynthesis" in window) || typeof SpeechSynthesisUtterance !== "function") return false;
  const tag = SPEECH_LANG[language()] || "en";
  const voice = voiceFor(tag);
  if (voice === null) return false;
  const words = new SpeechSynthesisUtterance(t(`callout.${name}`));
  words.lang = tag;
  if (voice) words.voice = voice;
  words.rate = 1.1;
  try {
    window.speechSynthesis.speak(words);
    return true;
  } catch {
    return false;
  }
}

/** Say (or sound) the call-outs of one frame. */
export function callOut(events) {
  // Browsers allow audio and speech only after the player has touched the page.
  if (!sound || !navigator.userActivation?.hasBeenActive) return;
  for (const name of calls(events)) {
    if (mode === "voice" && speak(name)) continue;
    // A bomb's sound is already its boom (narrate.js); the last card gets its beep here.
    if (name === "lastCard") cue("lastCard");
  }
}
