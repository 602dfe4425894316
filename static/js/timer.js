// Countdowns. A view's timer gives `ms_left` when it was sent; we turn that
// into a local deadline (performance.now based, so the two clocks never need
// to agree) and one ticker updates every countdown on the page.
import { h } from "./dom.js";

let ticking = null;

function tick() {
  const now = performance.now();
  const els = document.querySelectorAll("[data-deadline]");
  if (!els.length) {
    clearInterval(ticking);
    ticking = null;
    return;
  }
  for (const el of els) {
    const left = Math.max(0, Number(el.dataset.deadline) - now);
    const total = Number(el.dataset.total) || 1;
    const secs = Math.ceil(left / 1000);
    const text = el.querySelector(".t");
    if (text) text.textContent = secs >= 60 ? `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, "0")}` : `${secs}s`;
    el.style.setProperty("--frac", String(Math.min(1, left / total)));
    el.classList.toggle("urgent", left < 3000);
  }
}

function ensureTicking() {
  if (!ticking) ticking = setInterval(tick, 200);
  tick();
}

/** Local deadline for a view's timer, computed once when the view arrives. */
export function localTimer(timer) {
  if (!timer) return null;
  const left = typeof timer.ms_left === "number" ? timer.ms_left : timer.deadline_ms - Date.now();
  return { ...timer, localDeadline: performance.now() + Math.max(0, left), total: Math.max(1, left) };
}

/** A countdown pill; `label` says what runs out ("Posso", "Turn"). */
export function countdown(timer, label) {
  if (!timer) return null;
  const el = h("span.countdown", {
    role: "timer",
    "aria-label": `${label} timer`,
    dataset: { deadline: String(timer.localDeadline), total: String(timer.total) },
  }, h("span.ring", { "aria-hidden": "true" }), label ? h("span.l", label) : null, h("span.t", ""));
  queueMicrotask(ensureTicking);
  return el;
}
