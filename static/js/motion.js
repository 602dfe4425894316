// Moves you can follow: what just happened on the table moves into place
// with a short CSS animation (static/css/table.css, "Moves you can follow") -
// a card landing on the pile, a meld going down, a property changing hands,
// a Big Two or Possum play, a deal sliding into the hand. All of them are off
// under prefers-reduced-motion (the stylesheet says so, not this code).
//
// patch() keeps an element that still stands for the same thing, so an
// animation that runs when an element is put in the page would never run
// again on a kept one (the pile's top card is kept as the card on it
// changes). `moving` gives an element the signature of what it shows; when
// a drawing finds the kept element showing something else, its animation
// class comes off and goes back on, and the animation starts again. The
// element itself stays: nothing is taken out of the page under a finger.

/** `el` animates with `cls` whenever what it shows (`sig`) changes. */
export function moving(el, sig, cls = "land") {
  el.classList.add(cls);
  el.dataset.sig = String(sig);
  el._beforePatch = (live) => {
    if (live.dataset.sig !== el.dataset.sig && live.classList.contains(cls)) {
      live.classList.remove(cls);
      void live.offsetWidth; // patch() puts the class back: the animation restarts
    }
  };
  return el;
}
