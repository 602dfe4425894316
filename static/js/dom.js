// Tiny DOM helpers. Text always goes in through textContent (never innerHTML),
// so a player's name or chat line can never become markup.

/**
 * h("div.seat.active", {onclick, "aria-label": "x", dataset: {...}}, child, "text", ...)
 * Children may be nodes, strings (text nodes), arrays, or null/false (skipped).
 */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "style" && typeof v === "object") Object.assign(el.style, v);
    else if (k === "class") el.className += (el.className ? " " : "") + v;
    else if (k === "text") el.textContent = String(v);
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replace everything inside `el` with `children`. */
export function mount(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** SVG element with attributes (SVG needs its namespace). */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    el.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Keyboard focus across redraws: a table is drawn afresh for every view, so
// the element with the focus is found again by its data-key (or id).

/** What has the keyboard focus, as a data-key or "#id" (null: nothing). */
export function rememberFocus() {
  const a = document.activeElement;
  if (!a || a === document.body) return null;
  return a.dataset?.key || (a.id ? `#${a.id}` : null);
}

/**
 * Give the focus back to the element that now stands for `key`. When a move
 * took that control away (the Discard button once the turn has passed), the
 * focus goes to `fallback` (the table) rather than to the page's top, so the
 * next Tab continues on the table.
 */
export function restoreFocus(key, fallback = null) {
  if (!key) return;
  const el = key.startsWith("#") ? document.getElementById(key.slice(1)) : document.querySelector(`[data-key="${CSS.escape(key)}"]`);
  const target = el && !el.disabled ? el : fallback;
  if (target && target !== document.activeElement) target.focus({ preventScroll: true });
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/** A short-lived message at the bottom of the screen (errors, "link copied"). */
export function toast(message, kind = "info") {
  let box = document.getElementById("toasts");
  if (!box) {
    box = h("div", { id: "toasts", "aria-live": "polite" });
    document.body.append(box);
  }
  const t = h(`div.toast.${kind}`, { role: kind === "error" ? "alert" : "status" }, message);
  box.append(t);
  setTimeout(() => t.classList.add("gone"), kind === "error" ? 5000 : 2500);
  setTimeout(() => t.remove(), kind === "error" ? 5600 : 3100);
  return t;
}
