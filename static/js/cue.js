// Noticing that it is your turn: the tab's title says so (and what is asked,
// for a Posso call), and a short chime plays if the player switched sound on
// (it is off until they do). Also the hint that part of the table is behind
// the pinned hand panel on a small screen.
import { h } from "./dom.js";
import { pref, setPref } from "./api.js";
import { askedAboutPosso } from "./tables/posso-quiet.js";

/** What the tab title leads with when this view asks something of me. */
export function askedText(view) {
  const g = view?.game;
  const me = view?.you?.seat;
  if (!g || me === null || me === undefined || g.over) return null;
  if (!(g.to_act || []).includes(me)) return null;
  if (g.phase === "posso_window") return askedAboutPosso(g, view.you) ? "Posso?" : null;
  if (g.phase === "posso_answer") return "Answer the Posso";
  if (g.phase === "cut") return "Your cut";
  return "Your turn";
}

export const soundOn = () => pref("sound", "off") === "on";

let audio = null;

/** A soft two-note chime, made on the spot (nothing to download). */
export function chime() {
  try {
    audio ||= new (window.AudioContext || window.webkitAudioContext)();
    const t = audio.currentTime;
    const gain = audio.createGain();
    gain.gain.setValueAtTime(0.0001, t);
    gain.gain.exponentialRampToValueAtTime(0.12, t + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.35);
    gain.connect(audio.destination);
    for (const [f, at] of [[660, 0], [880, 0.12]]) {
      const o = audio.createOscillator();
      o.type = "sine";
      o.frequency.setValueAtTime(f, t + at);
      o.connect(gain);
      o.start(t + at);
      o.stop(t + at + 0.22);
    }
    document.body.dataset.chimed = String(Number(document.body.dataset.chimed || 0) + 1);
  } catch {
    /* no audio here: the title still says it */
  }
}

/** Tracks "asked or not" across views and cues the moment it turns true. */
export class TurnCue {
  constructor() {
    this.asked = null;
  }

  update(view, title) {
    const asked = askedText(view);
    document.title = asked ? `● ${asked} · ${title}` : title;
    document.body.dataset.asked = asked || "";
    if (asked && asked !== this.asked && soundOn()) chime();
    this.asked = asked;
  }
}

/** The sound switch (off by default), for the table's status bar. */
export function soundToggle(rerender) {
  const on = soundOn();
  return h("button.small.soundtoggle", {
    type: "button",
    "aria-pressed": String(on),
    dataset: { key: "sound" },
    title: on ? "A chime plays when it becomes your turn" : "No sound when it becomes your turn",
    onclick: () => {
      setPref("sound", on ? "off" : "on");
      if (!on) chime(); // let the player hear what they switched on
      rerender();
    },
    "aria-label": on ? "Sound on" : "Sound off",
  }, "♪", h("span.sndword", on ? " Sound on" : " Sound off"));
}

/** A table too big for the screen scrolls above the hand panel: say that more
 * of it lies below, with a button that scrolls there. */
export function updateMoreCue(felt) {
  const panel = felt.querySelector(".mearea");
  const area = felt.querySelector(".tablearea") || felt;
  const hidden = panel && area.scrollHeight - area.clientHeight - area.scrollTop > 24;
  let cue = felt.querySelector(".morecue");
  if (!hidden) {
    cue?.remove();
    return;
  }
  // Between the table area and the hand panel, in a line of its own: over
  // the table it covered what was just above the fold (the "Now:" line, an
  // estate's cards). The table area gives up its height, the hand panel stays
  // where it is: coming and going, it never moves the hand or the buttons
  // under a finger (tests/browser/test_lost_taps.py).
  if (!cue || cue.previousElementSibling !== area) {
    cue?.remove();
    const smooth = !window.matchMedia?.("(prefers-reduced-motion: reduce)").matches;
    cue = h("button.morecue", {
      type: "button",
      dataset: { key: "morecue" },
      "data-keep": "", // put in after drawing: a redraw keeps it

      onclick: () => area.scrollTo({ top: area.scrollHeight, behavior: smooth ? "smooth" : "auto" }),
    }, "▾ More of the table below: show it");
    area.after(cue);
  }
}
