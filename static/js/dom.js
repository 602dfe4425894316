// Tiny DOM helpers. Text always goes in through textContent (never innerHTML),
// so a player's name or chat line can never become markup.
//
// Pages describe what they show by building a fresh tree with h(); patch()
// then brings the live tree to match it, so an element that is still there
// between two drawings is the same element, never taken out of the page: a
// button pressed while a view arrives keeps its press and gets its click.

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
    if (k.startsWith("on") && typeof v === "function") on(el, k.slice(2), v);
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

// Handlers live in a table on the element and one listener per event type
// reads it, so patch() can hand a kept element the new drawing's handlers
// (which close over the new view) without adding or removing listeners.
function dispatch(e) {
  const f = this._on && this._on[e.type];
  if (f) return f.call(this, e);
  return undefined;
}

/** Listen for `type` on `el`; a later on() for the same type replaces it. */
export function on(el, type, fn) {
  const table = el._on || (el._on = {});
  if (!(type in table)) el.addEventListener(type, dispatch);
  table[type] = fn;
  return el;
}

const keyOf = (node) => (node.nodeType === 1 ? node.getAttribute("data-key") || node.id || null : null);

const BLOCKS = new Set(["DIV", "SECTION", "ASIDE", "NAV", "UL", "OL", "LI", "HEADER", "FOOTER", "P", "TABLE"]);

/**
 * Key the blocks that have no key of their own by their place: the nearest
 * keyed ancestor's key, then each block's tag and first class (and which of
 * its like it is). Matched by key, a block that a new panel now precedes is
 * kept where it is, rather than morphed into that panel with the rest of
 * the page rebuilt behind it (which is what loses a press).
 */
function autoKey(node, prefix) {
  const seen = {};
  let i = 0;
  for (const c of node.children) {
    i += 1;
    const own = c.getAttribute("data-key");
    if (own) {
      autoKey(c, own);
      continue;
    }
    if (c.namespaceURI !== XHTML) continue;
    const cls = c.classList[0];
    if (!cls || !BLOCKS.has(c.tagName)) {
      autoKey(c, `${prefix}/${c.tagName}@${i}`);
      continue;
    }
    const name = `${c.tagName}.${cls}`;
    const n = seen[name] || 0;
    seen[name] = n + 1;
    const key = `${prefix}/${name}${n ? `#${n}` : ""}`;
    c.setAttribute("data-key", key);
    autoKey(c, key);
  }
}

const XHTML = "http://www.w3.org/1999/xhtml";

function patchAttributes(live, next) {
  for (const a of [...live.attributes]) {
    if (a.name !== "style" && !next.hasAttributeNS(a.namespaceURI, a.localName)) live.removeAttributeNS(a.namespaceURI, a.localName);
  }
  for (const a of next.attributes) {
    if (a.name === "style") continue;
    if (live.getAttributeNS(a.namespaceURI, a.localName) !== a.value) live.setAttributeNS(a.namespaceURI, a.name, a.value);
  }
  // Styles through the CSSOM: the page's Content-Security-Policy (style-src
  // 'self') blocks writing a style attribute, not setting style properties.
  if (live.style && next.style && live.style.cssText !== next.style.cssText) live.style.cssText = next.style.cssText;
  // What a person is typing or ticking is theirs until they leave the field.
  if ((live.tagName === "INPUT" || live.tagName === "TEXTAREA" || live.tagName === "SELECT") && document.activeElement !== live) {
    if (live.value !== next.value) live.value = next.value;
    if (live.checked !== next.checked) live.checked = next.checked;
  }
}

function patchElement(live, next) {
  if (next._beforePatch) next._beforePatch(live);
  if (live._on) for (const type of Object.keys(live._on)) if (!next._on || !next._on[type]) live._on[type] = null;
  if (next._on) for (const [type, fn] of Object.entries(next._on)) on(live, type, fn);
  patchAttributes(live, next);
  patchChildren(live, next);
}

/**
 * Bring live's children to match next's. Keyed children match by key,
 * others by tag in order. Children with no match leave first; the rest are
 * then walked in order: a match already in place stays put (it is never
 * taken out of the page, so a press on it survives), a new child goes in
 * where it belongs, and only a child whose order really changed is moved.
 */
function patchChildren(live, next) {
  const wanted = [...next.childNodes];
  const keyed = new Map();
  const loose = new Map();
  for (const c of live.childNodes) {
    const k = keyOf(c);
    if (k) keyed.set(k, c);
    else {
      const sig = c.nodeType === 1 ? c.nodeName : `#${c.nodeType}`;
      if (!loose.has(sig)) loose.set(sig, []);
      loose.get(sig).push(c);
    }
  }
  const pairs = wanted.map((w) => {
    const k = keyOf(w);
    let m = null;
    if (k) {
      m = keyed.get(k) || null;
      if (m && m.nodeName !== w.nodeName) m = null;
      if (m) keyed.delete(k);
    } else {
      const sig = w.nodeType === 1 ? w.nodeName : `#${w.nodeType}`;
      m = loose.get(sig)?.shift() || null;
    }
    return [w, m];
  });
  const used = new Set(pairs.map(([, m]) => m).filter(Boolean));
  for (const c of [...live.childNodes]) {
    // Added by the page after drawing (the "more of the table" cue): kept.
    if (!used.has(c) && !(c.nodeType === 1 && c.hasAttribute("data-keep"))) c.remove();
  }
  let cursor = live.firstChild;
  for (const [w, m] of pairs) {
    while (cursor && cursor !== m && cursor.nodeType === 1 && cursor.hasAttribute("data-keep")) cursor = cursor.nextSibling;
    const node = m || w;
    if (node === cursor) cursor = cursor.nextSibling;
    else live.insertBefore(node, cursor);
    if (!m) continue;
    if (m.nodeType === 1) patchElement(m, w);
    else if (m.nodeValue !== w.nodeValue) m.nodeValue = w.nodeValue;
  }
}

/**
 * Make the children of the live element `el` look like `children` (nodes,
 * text, arrays), reusing every live element that still stands for the same
 * thing: matched by data-key (or id) where given, else by place and tag.
 * A new element may carry `_beforePatch(live)` to take over state that
 * lives only on the page (a hand's measured card spacing).
 */
export function patch(el, ...children) {
  const to = el.cloneNode(false);
  append(to, children);
  autoKey(to, "~");
  patchChildren(el, to);
  return el;
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
