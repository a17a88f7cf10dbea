// The in-app rules page: one hand-written HTML fragment per language under client/rules/,
// with combinations written as `data-cards` lists that are drawn as real cards here.

import { expandCardMarkup } from "./cards.js";
import { cardName, language } from "./i18n.js";

const cache = new Map();

async function fragment(lang) {
  if (!cache.has(lang)) {
    const res = await fetch(new URL(`../rules/${lang}.html`, import.meta.url));
    if (!res.ok) throw new Error(`rules page ${lang}: ${res.status}`);
    cache.set(lang, await res.text());
  }
  return cache.get(lang);
}

export async function showRules(dialog, article) {
  const lang = language();
  if (article.dataset.lang !== lang) {
    // The fragments are our own static files, not user input.
    article.innerHTML = await fragment(lang);
    article.lang = lang;
    article.dataset.lang = lang;
    expandCardMarkup(article, cardName);
  }
  if (!dialog.open) dialog.showModal();
  article.scrollTop = 0;
  dialog.querySelector(".sheet-body").scrollTop = 0;
}
