// Motion: a played set travels from its seat to the table, a bomb shakes the table, a
// last card flashes its seat.  Web Animations ignore the CSS reduced-motion rule, so
// every effect here asks the media query first; with reduced motion nothing moves.

const REDUCE = "(prefers-reduced-motion: reduce)";

export const reducedMotion = () => window.matchMedia(REDUCE).matches;

function run(el, keyframes, options) {
  if (!el || reducedMotion() || !el.animate) return null;
  return el.animate(keyframes, options);
}

/** Move `el` in from where `from` is drawn (a seat panel, or our hand). */
export function travel(el, from) {
  if (!el || !from) return null;
  const a = el.getBoundingClientRect();
  const b = from.getBoundingClientRect();
  const dx = b.left + b.width / 2 - (a.left + a.width / 2);
  const dy = b.top + b.height / 2 - (a.top + a.height / 2);
  return run(
    el,
    [
      { transform: `translate(${dx}px, ${dy}px) scale(0.55)`, opacity: 0.2 },
      { transform: "none", opacity: 1 },
    ],
    { id: "pdk-travel", duration: 340, easing: "cubic-bezier(.2,.8,.2,1)" },
  );
}

/** A bomb: the table jolts and the bomb's cards flare. */
export function bombEffect(table, play) {
  run(
    table,
    [
      { transform: "none" },
      { transform: "translate(-6px, 2px)" },
      { transform: "translate(5px, -3px)" },
      { transform: "translate(-3px, 1px)" },
      { transform: "none" },
    ],
    { id: "pdk-bomb", duration: 420, easing: "ease-out" },
  );
  run(
    play,
    [{ filter: "brightness(1.9) drop-shadow(0 0 14px #ff5a5f)" }, { filter: "none" }],
    { id: "pdk-bomb-flare", duration: 700, easing: "ease-out" },
  );
}

/** A seat down to its last card: its panel flashes red twice. */
export function lastCardEffect(seat) {
  run(
    seat,
    [
      { boxShadow: "0 0 0 0 rgba(255, 90, 95, 0)" },
      { boxShadow: "0 0 0 6px rgba(255, 90, 95, 0.85)" },
      { boxShadow: "0 0 0 0 rgba(255, 90, 95, 0)" },
    ],
    { id: "pdk-last-card", duration: 450, iterations: 2 },
  );
}
