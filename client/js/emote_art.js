// The eight reactions drawn as small inline SVGs, so they look the same everywhere: many
// systems have no colour emoji font and would draw the emoji characters as empty boxes
// (issue 28, defect 9).  Drawn for this project; same licence as the rest of the client.

const SKIN = "#ffcc4d";
const INK = "#664500";
const face = (fill = SKIN) => `<circle cx="18" cy="18" r="16" fill="${fill}"/>`;
const eyes = `<circle cx="12.5" cy="15" r="2.3" fill="${INK}"/><circle cx="23.5" cy="15" r="2.3" fill="${INK}"/>`;
const stroke = (d, color = INK, w = 2.2) => `<path d="${d}" fill="none" stroke="${color}" stroke-width="${w}" stroke-linecap="round"/>`;

export const EMOTE_ART = {
  thumbs_up:
    `<rect x="5" y="16" width="6" height="16" rx="1.5" fill="#5dadec"/>` +
    `<path d="M11 17l5.5-11c1.2-2.4 5.6-1.4 4.6 1.8L19.5 15H28a3 3 0 0 1 3 3v11a3 3 0 0 1-3 3H11z" fill="${SKIN}"/>` +
    stroke("M20 21h10M20 26h10", "#c68a12", 1.6),
  laugh: face() + stroke("M9 14q3.5-4 7 0M20 14q3.5-4 7 0") + `<path d="M8 19h20a10 10 0 0 1-20 0z" fill="${INK}"/><path d="M12 26a8 4 0 0 0 12 0z" fill="#ff7892"/>`,
  wow: face() + eyes + `<ellipse cx="18" cy="25.5" rx="4" ry="5" fill="${INK}"/>`,
  sad: face() + eyes + stroke("M11 27q7-6 14 0") + `<path d="M27 18c0 3-1.4 4.6-3 4.6s-3-1.6-3-4.6l3-5z" fill="#5dadec"/>`,
  angry: face("#f4900c") + eyes + stroke("M8 9.5l7 3M28 9.5l-7 3") + stroke("M11 27q7-5 14 0"),
  clap:
    `<g fill="${SKIN}" stroke="#c68a12" stroke-width="1.2"><rect x="7" y="10" width="11" height="22" rx="5.5" transform="rotate(-18 12.5 21)"/>` +
    `<rect x="18" y="10" width="11" height="22" rx="5.5" transform="rotate(18 23.5 21)"/></g>` +
    stroke("M5 5l3 3M18 2v4M31 5l-3 3", "#f4900c", 2),
  think:
    face() + eyes + stroke("M9 9.5q3.5-3 7-0.5", INK, 2) + stroke("M14 26h9") +
    stroke("M27 4.5a3 3 0 1 1 3 3.2v2", "#5dadec", 2) + `<circle cx="30" cy="12.6" r="1.3" fill="#5dadec"/>`,
  wave:
    `<g fill="${SKIN}"><rect x="11" y="15" width="15" height="17" rx="6"/>` +
    `<rect x="11" y="5" width="3.4" height="15" rx="1.7"/><rect x="14.9" y="3" width="3.4" height="16" rx="1.7"/>` +
    `<rect x="18.8" y="4" width="3.4" height="15" rx="1.7"/><rect x="22.6" y="7" width="3.4" height="13" rx="1.7"/>` +
    `<rect x="5" y="17" width="10" height="4" rx="2" transform="rotate(40 10 19)"/></g>` +
    stroke("M4 8q-2 4 0 8M32 8q2 4 0 8", "#f4900c", 2),
};

/** One reaction as an SVG element (decorative: its button or bubble carries the words). */
export function emoteSvg(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 36 36");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "emote-art");
  svg.innerHTML = EMOTE_ART[name];
  return svg;
}
