// Card size and high contrast: two classes on <body>; css/display.css holds what they change.
// Large cards grow where the screen has room (the hand's layout still keeps every card a
// 44 px target, hand.js) and always carry bigger corner indices; high contrast draws card
// faces, suits and buttons in solid colours that meet WCAG AA (4.5:1 for their text).

export const CARD_SIZES = ["normal", "large"];

/** The display settings as the page applies them (a stored value we do not know: the default). */
export function displayOf(settings) {
  return {
    cardSize: CARD_SIZES.includes(settings.cardSize) ? settings.cardSize : "normal",
    highContrast: settings.highContrast === true,
  };
}

export function applyCardDisplay(settings, body = document.body) {
  const { cardSize, highContrast } = displayOf(settings);
  body.classList.toggle("cards-large", cardSize === "large");
  body.classList.toggle("high-contrast", highContrast);
}
