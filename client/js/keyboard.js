// Keys for the table: Enter plays, P passes, H hints, L shows the last trick, Escape clears
// the selection (and closes the reactions and the last trick), arrows or Space move into the hand.  Not while a sheet is open or
// a field has the focus, and never with Ctrl, Cmd or Alt held.

export function bindKeyboard({ hand, play, pass, hint, clear, emotesOpen, closeEmotes, lastTrick = () => {}, closePanels = () => {} }) {
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || document.querySelector("dialog[open]")) return;
    const target = e.target;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    const inHand = hand.contains(target);
    const onButton = target.tagName === "BUTTON";
    switch (e.key) {
      case "Enter":
        if (onButton && !inHand) return;
        e.preventDefault();
        play();
        break;
      case "p":
      case "P":
        pass();
        break;
      case "h":
      case "H":
        hint();
        break;
      case "l":
      case "L":
        lastTrick();
        break;
      case "Escape":
        if (emotesOpen()) closeEmotes();
        closePanels();
        clear();
        break;
      case "ArrowLeft":
      case "ArrowRight":
      case " ":
        if (!inHand && !onButton) {
          e.preventDefault();
          (hand.querySelector('.card[tabindex="0"]') || hand.querySelector(".card"))?.focus();
        }
        break;
      default:
        break;
    }
  });
}
