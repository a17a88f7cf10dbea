// Short synthesised cues (no audio files to download).  Browsers only allow audio after a
// user gesture, so the context is created lazily on the first cue after one.

let ctx = null;
let enabled = true;
// A running context wakes the audio thread hundreds of times a second even in silence:
// on a phone that is battery spent for nothing between moves.  So the context is
// suspended once its last tone has rung out for a while, and the next cue resumes it.
const REST_AFTER_MS = 1500;
let quietAt = 0; // the context's time at which the last tone scheduled ends
let restTimer = null;

function restWhenQuiet() {
  clearTimeout(restTimer);
  const wait = Math.max(0, quietAt - ctx.currentTime) * 1000 + REST_AFTER_MS;
  restTimer = setTimeout(() => {
    restTimer = null;
    // A resume still on its way leaves the clock behind the tones: wait on.
    if (ctx.currentTime < quietAt) restWhenQuiet();
    else ctx.suspend().catch(() => {});
  }, wait);
}

/** The audio context's state ("none" before the first cue) and its clock, which runs
 * only while the context does: for the page's read-only state. */
export const audioState = () => ({ state: ctx ? ctx.state : "none", time: ctx ? ctx.currentTime : 0 });

export function setSound(on) {
  enabled = on;
}

function context() {
  if (!ctx) {
    const AC = window.AudioContext || window.webkitAudioContext;
    if (!AC) return null;
    ctx = new AC();
  }
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  return ctx;
}

function tone(freq, start, dur, { type = "sine", gain = 0.08 } = {}) {
  const ac = context();
  if (!ac) return;
  const t0 = ac.currentTime + start;
  const osc = ac.createOscillator();
  const g = ac.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, t0);
  g.gain.setValueAtTime(0.0001, t0);
  g.gain.exponentialRampToValueAtTime(gain, t0 + 0.01);
  g.gain.exponentialRampToValueAtTime(0.0001, t0 + dur);
  osc.connect(g).connect(ac.destination);
  osc.start(t0);
  osc.stop(t0 + dur + 0.02);
  quietAt = Math.max(quietAt, t0 + dur + 0.02);
  restWhenQuiet();
}

const CUES = {
  play: () => tone(520, 0, 0.09, { type: "triangle" }),
  pass: () => tone(260, 0, 0.12, { type: "sine", gain: 0.05 }),
  turn: () => {
    tone(660, 0, 0.1);
    tone(880, 0.1, 0.14);
  },
  bomb: () => {
    tone(110, 0, 0.35, { type: "sawtooth", gain: 0.1 });
    tone(80, 0.05, 0.4, { type: "square", gain: 0.05 });
  },
  lastCard: () => {
    tone(990, 0, 0.08, { type: "square", gain: 0.04 });
    tone(990, 0.14, 0.08, { type: "square", gain: 0.04 });
  },
  error: () => tone(180, 0, 0.18, { type: "square", gain: 0.04 }),
  win: () => [523, 659, 784, 1047].forEach((f, i) => tone(f, i * 0.11, 0.2, { type: "triangle" })),
  lose: () => [392, 330, 262].forEach((f, i) => tone(f, i * 0.13, 0.22)),
};

// The names of the cues actually played (the newest 200: more than a deal makes), for the
// page's read-only state.
const log = [];
export const played = () => log;

export function cue(name) {
  if (!enabled || !navigator.userActivation?.hasBeenActive || !CUES[name]) return;
  log.push(name);
  if (log.length > 200) log.shift();
  try {
    CUES[name]?.();
  } catch {
    // Audio is a nicety; never let it break the game.
  }
}
