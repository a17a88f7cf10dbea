// Strings live in client/i18n/<lang>.json, flat "area.name" keys, "{name}" placeholders.
// English is always loaded as the fallback so a missing key never shows up blank.
// Counted strings: "key" is the general ("other") form; "key.one" (and "key.few" ... where a
// language needs them) are the forms Intl.PluralRules picks for the count in {n} (or {s}).

export const LANGUAGES = ["en", "de", "zh-Hans", "it"];

let current = "en";
let strings = {};
let fallback = {};
let plurals = new Intl.PluralRules("en");

async function fetchStrings(lang) {
  const url = new URL(`../i18n/${lang}.json`, import.meta.url);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`cannot load ${lang} strings (${res.status})`);
  return res.json();
}

/** The best of our languages for the browser's preference list. */
export function detectLanguage(prefs = navigator.languages || [navigator.language || "en"]) {
  for (const pref of prefs) {
    const p = String(pref).toLowerCase();
    if (p.startsWith("zh")) return "zh-Hans";
    for (const lang of LANGUAGES) if (p.split("-")[0] === lang) return lang;
  }
  return "en";
}

export async function setLanguage(lang) {
  if (!LANGUAGES.includes(lang)) lang = "en";
  if (!Object.keys(fallback).length) fallback = await fetchStrings("en");
  strings = lang === "en" ? fallback : await fetchStrings(lang);
  current = lang;
  plurals = new Intl.PluralRules(lang);
  document.documentElement.lang = lang;
  translateStatic(document);
}

export const language = () => current;

export function has(key) {
  return key in strings || key in fallback;
}

/** The plural form of `key` this language uses for `count`: only from the current language's
 * own strings, so an English "one" form never stands in for a German one. */
function pluralKey(key, count) {
  if (typeof count !== "number" && typeof count !== "string") return key;
  const n = Number(count);
  if (!Number.isFinite(n)) return key;
  const form = `${key}.${plurals.select(n)}`;
  return form in strings ? form : key;
}

export function t(key, params = {}) {
  const chosen = pluralKey(key, params.n ?? params.s);
  const text = strings[chosen] ?? fallback[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

/** Fill `data-i18n` (text), `data-i18n-aria` (aria-label), `data-i18n-title` and
 * `data-i18n-placeholder` attributes. */
export function translateStatic(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-aria]")) el.setAttribute("aria-label", t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
}

/** "Ten of hearts" etc., for screen readers and announcements. */
export function cardName(code) {
  return t("card.name", { rank: t(`rank.${code[0]}`), suit: t(`suit.${code[1]}`) });
}
