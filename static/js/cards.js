// Cards: parsing codes, names for screen readers, sorting, and drawing them as
// inline SVG (suit shapes come from the sprite in index.html, so nothing is
// fetched from elsewhere and every card scales crisply on any screen).
import { h, svg, on } from "./dom.js";

export const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
export const SUITS = ["C", "D", "H", "S"];
export const JOKER = "JK";
const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const SUIT_CHAR = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RANK_NAME = { A: "ace", J: "jack", Q: "queen", K: "king" };

export function parse(code) {
  if (code === JOKER) return { code, rank: JOKER, suit: "", joker: true, value: 0 };
  const rank = code.slice(0, -1);
  const suit = code.slice(-1);
  return { code, rank, suit, joker: false, value: RANKS.indexOf(rank) + 1 };
}

export const isRed = (code) => /[DH]$/.test(code);
export const suitChar = (s) => SUIT_CHAR[s] || "";

/** "10 of hearts", "queen of spades", "joker". */
export function cardName(code) {
  if (!code) return "face-down card";
  const c = parse(code);
  if (c.joker) return "joker";
  return `${RANK_NAME[c.rank] || c.rank} of ${SUIT_NAME[c.suit]}`;
}

/** Short text for logs: "10♥", "Q♠", "Joker". */
export function cardText(code) {
  if (code === JOKER) return "Joker";
  const c = parse(code);
  return c.rank + SUIT_CHAR[c.suit];
}

export const cardsText = (codes) => (codes || []).map(cardText).join(" ");

// Rank orders per game for sorting (low to high), and suit orders.
const ORDER = {
  // Posso: 3 low, ace high, wilds (2s and jokers) at the end.
  posso: ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", JOKER],
  bigtwo: ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"],
  default: [...RANKS, JOKER],
};
const SUIT_ORDER = {
  bigtwo: ["C", "S", "H", "D"],
  default: ["C", "D", "S", "H"], // alternating colours read best in a fan
};

export function isWild(code, game) {
  return game === "posso" && (code === JOKER || code.startsWith("2") && code.length === 2);
}

/** Sort a hand by suit (then rank) or by rank (then suit), using the game's order. */
export function sortCards(codes, by = "suit", game = "default") {
  const ranks = ORDER[game] || ORDER.default;
  const suits = SUIT_ORDER[game] || SUIT_ORDER.default;
  const key = (code) => {
    const c = parse(code);
    const wild = isWild(code, game);
    const r = ranks.indexOf(c.rank);
    const s = c.joker ? suits.length : suits.indexOf(c.suit);
    if (wild) return [1, r, s];
    return by === "rank" ? [0, r, s] : [0, s, r];
  };
  return [...codes].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
    return 0;
  });
}

// Pip positions (x column 0..2, y 0..1) for number cards; lower pips are turned.
const PIPS = {
  2: [[1, 0], [1, 1]],
  3: [[1, 0], [1, 0.5], [1, 1]],
  4: [[0, 0], [2, 0], [0, 1], [2, 1]],
  5: [[0, 0], [2, 0], [1, 0.5], [0, 1], [2, 1]],
  6: [[0, 0], [2, 0], [0, 0.5], [2, 0.5], [0, 1], [2, 1]],
  7: [[0, 0], [2, 0], [1, 0.25], [0, 0.5], [2, 0.5], [0, 1], [2, 1]],
  8: [[0, 0], [2, 0], [1, 0.25], [0, 0.5], [2, 0.5], [1, 0.75], [0, 1], [2, 1]],
  9: [[0, 0], [2, 0], [0, 1 / 3], [2, 1 / 3], [1, 0.5], [0, 2 / 3], [2, 2 / 3], [0, 1], [2, 1]],
  10: [
    [0, 0], [2, 0], [1, 1 / 6], [0, 1 / 3], [2, 1 / 3],
    [0, 2 / 3], [2, 2 / 3], [1, 5 / 6], [0, 1], [2, 1],
  ],
};

const use = (suit, x, y, size, flip = false) =>
  svg("use", {
    href: `#suit-${suit}`,
    x: -size / 2,
    y: -size / 2,
    width: size,
    height: size,
    transform: `translate(${x} ${y})${flip ? " rotate(180)" : ""}`,
  });

function corner(rank, suit, flip) {
  const g = svg("g", { transform: flip ? "rotate(180 50 70)" : null });
  const ten = rank === "10";
  g.append(
    svg("text", {
      x: 11, y: 22, "text-anchor": "middle", class: "ix",
      "font-size": ten ? 19 : 22, "letter-spacing": ten ? -2 : 0,
    }, rank),
  );
  if (suit) g.append(use(suit, 11, 33, 13));
  return g;
}

function faceArt(c) {
  const parts = [];
  if (c.joker) {
    parts.push(
      svg("rect", { x: 22, y: 16, width: 56, height: 108, rx: 6, class: "frame" }),
      svg("path", {
        class: "star",
        d: "M50 40 L56 60 L77 60 L60 72 L66 92 L50 80 L34 92 L40 72 L23 60 L44 60 Z",
      }),
      svg("text", { x: 50, y: 112, "text-anchor": "middle", class: "jk", "font-size": 13 }, "JOKER"),
      svg("text", { x: 8, y: 24, class: "ix jkix", "font-size": 11 }, "J"),
      svg("text", { x: 8, y: 36, class: "ix jkix", "font-size": 11 }, "K"),
    );
    return parts;
  }
  if (c.value >= 11) {
    // Court cards: a framed panel with the letter, a little crown, suit marks.
    parts.push(
      svg("rect", { x: 22, y: 16, width: 56, height: 108, rx: 5, class: "frame" }),
      svg("path", {
        class: "crown",
        d: c.rank === "J"
          ? "M36 46 L64 46 L64 38 L57 42 L50 33 L43 42 L36 38 Z"
          : c.rank === "Q"
            ? "M35 47 L65 47 L67 34 L58 41 L50 30 L42 41 L33 34 Z"
            : "M34 48 L66 48 L68 31 L59 40 L50 27 L41 40 L32 31 Z",
      }),
      svg("text", { x: 50, y: 88, "text-anchor": "middle", class: "court", "font-size": 40 }, c.rank),
      use(c.suit, 50, 108, 14),
      use(c.suit, 50, 58, 9),
    );
    return parts;
  }
  if (c.rank === "A") {
    parts.push(use(c.suit, 50, 70, 40));
    return parts;
  }
  for (const [col, row] of PIPS[c.value] || []) {
    const x = 30 + col * 20;
    const y = 28 + row * 84;
    parts.push(use(c.suit, x, y, 18, row > 0.5));
  }
  return parts;
}

/** The SVG picture of a card face (or its back when code is null). */
export function cardSvg(code) {
  const root = svg("svg", {
    viewBox: "0 0 100 140", class: "cardsvg", "aria-hidden": "true", focusable: "false",
  });
  if (!code) {
    root.append(
      svg("rect", { x: 1, y: 1, width: 98, height: 138, rx: 8, class: "back-bg" }),
      svg("rect", { x: 7, y: 7, width: 86, height: 126, rx: 5, class: "back-pattern" }),
      svg("rect", { x: 7, y: 7, width: 86, height: 126, rx: 5, class: "back-line" }),
    );
    return root;
  }
  const c = parse(code);
  root.append(svg("rect", { x: 1, y: 1, width: 98, height: 138, rx: 8, class: "face-bg" }));
  root.append(...faceArt(c));
  if (!c.joker) root.append(corner(c.rank, c.suit, false), corner(c.rank, c.suit, true));
  return root;
}

/**
 * A card element. Interactive cards are <button>s (focusable, Enter/Space
 * select); static ones are <div role="img">. opts: {onclick, selected,
 * playable, dim, order, label, small, title, wild}.
 */
export function cardEl(code, opts = {}) {
  const interactive = typeof opts.onclick === "function";
  const cls = ["card"];
  if (!code) cls.push("back");
  else if (code === JOKER) cls.push("joker");
  else cls.push(isRed(code) ? "red" : "black");
  if (opts.selected) cls.push("selected");
  if (opts.playable) cls.push("playable");
  if (opts.dim) cls.push("dim");
  if (opts.wild) cls.push("wild");
  if (opts.extra) cls.push(opts.extra);
  const label = opts.label || cardName(code);
  const attrs = {
    class: cls.join(" "),
    "aria-label": label,
    title: opts.title || null,
    dataset: code ? { code } : {},
  };
  let el;
  if (interactive) {
    el = h("button", { ...attrs, type: "button", "aria-pressed": opts.selected ? "true" : "false" });
    on(el, "click", (e) => opts.onclick(e, code));
  } else {
    el = h("div", { ...attrs, role: "img" });
  }
  el.append(cardSvg(code));
  if (opts.order) el.append(h("span.order", { "aria-hidden": "true" }, String(opts.order)));
  return el;
}

/** A small fan of card backs showing how many cards someone holds. */
export function backsFan(count, max = 7) {
  const shown = Math.min(count, max);
  const fan = h("div.fan", { "aria-hidden": "true" });
  for (let i = 0; i < shown; i++) {
    const b = cardEl(null);
    b.style.setProperty("--i", i);
    b.style.setProperty("--n", shown);
    fan.append(b);
  }
  return fan;
}
