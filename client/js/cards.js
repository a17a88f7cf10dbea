// Card codes ("TH" = ten of hearts) and how they are drawn. Nothing here knows a rule:
// the rank order is only used to sort and to spell the selection the way the server lists plays.

export const RANKS = "3456789TJQKA2";
export const SUITS = "SHDC";

export const rankIndex = (code) => RANKS.indexOf(code[0]);
export const suitIndex = (code) => SUITS.indexOf(code[1]);

/** How a rank is printed on a card ("T" is a ten). */
export const rankLabel = (rank) => (rank === "T" ? "10" : rank);

/** The ranks of `codes` ascending, e.g. "55539": the form of the server's `legal` list. */
export function rankString(codes) {
  return codes
    .map((c) => c[0])
    .sort((a, b) => RANKS.indexOf(a) - RANKS.indexOf(b))
    .join("");
}

/** Sort by rank (3 low .. 2 high) or by suit then rank. */
export function sortCodes(codes, mode = "rank") {
  const byRank = (a, b) => rankIndex(a) - rankIndex(b) || suitIndex(a) - suitIndex(b);
  const bySuit = (a, b) => suitIndex(a) - suitIndex(b) || rankIndex(a) - rankIndex(b);
  return [...codes].sort(mode === "suit" ? bySuit : byRank);
}

const SVG_NS = "http://www.w3.org/2000/svg";

function suitIcon(suit, cls) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", cls);
  svg.setAttribute("viewBox", "0 0 100 100");
  svg.setAttribute("aria-hidden", "true");
  const use = document.createElementNS(SVG_NS, "use");
  use.setAttribute("href", `#suit-${suit}`);
  svg.append(use);
  return svg;
}

/**
 * A card face as a DOM element.  `name` is the accessible name (the caller translates it).
 * Court cards get a framed letter, the others one large suit mark: readable even when
 * only the left edge shows in a fanned hand.
 */
export function cardElement(code, { name = code, tag = "div", size = "" } = {}) {
  const rank = code[0];
  const suit = code[1];
  const el = document.createElement(tag);
  el.className = `card suit-${suit}${size ? ` card-${size}` : ""}`;
  el.dataset.code = code;
  el.setAttribute("aria-label", name);
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.setAttribute("aria-hidden", "true");
  const r = document.createElement("span");
  r.className = "rank";
  r.textContent = rankLabel(rank);
  corner.append(r, suitIcon(suit, "pip"));
  const face = document.createElement("span");
  face.className = "face";
  face.setAttribute("aria-hidden", "true");
  if ("JQK".includes(rank)) {
    face.classList.add("court");
    const letter = document.createElement("span");
    letter.className = "court-letter";
    letter.textContent = rank;
    face.append(letter, suitIcon(suit, "court-pip"));
  } else {
    face.append(suitIcon(suit, "big-pip"));
  }
  const foot = corner.cloneNode(true);
  foot.className = "corner foot";
  el.append(corner, face, foot);
  return el;
}

/** A face-down card back, for opponents' hands. */
export function cardBack(size = "") {
  const el = document.createElement("div");
  el.className = `card back${size ? ` card-${size}` : ""}`;
  el.setAttribute("aria-hidden", "true");
  return el;
}

/** Replace every `[data-cards="5S 5H"]` under `root` with small drawn cards (rules page). */
export function expandCardMarkup(root, nameOf) {
  for (const holder of root.querySelectorAll("[data-cards]")) {
    const codes = holder.dataset.cards.trim().split(/\s+/);
    holder.classList.add("card-row");
    holder.replaceChildren(...codes.map((c) => cardElement(c, { name: nameOf(c), size: "mini" })));
    holder.setAttribute("role", "img");
    holder.setAttribute("aria-label", codes.map(nameOf).join(", "));
  }
}
