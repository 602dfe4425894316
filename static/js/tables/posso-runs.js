// Posso runs: card values (3 low, ace high, twos and jokers wild) and laying
// run cards out low to high with the wilds where they stand.
import { parse } from "../cards.js";

export const LOWEST = 3;
export const HIGHEST = 14;
export const isWild = (c) => c === "JK" || /^2[CDHS]$/.test(c);
/** Posso values: 3..K = 3..13, ace 14; wilds 0. */
export const pv = (c) => (isWild(c) ? 0 : parse(c).value === 1 ? HIGHEST : parse(c).value);

/**
 * Lay out run cards low to high: naturals in order, wilds filling the gaps,
 * spare wilds at `spare` end ("high" unless that passes the ace).
 * `from` pins the first natural's neighbourhood when extending a meld.
 */
export function arrangeRun(cards, spare = "high") {
  const wild = cards.filter(isWild);
  const nat = cards.filter((c) => !isWild(c)).sort((a, b) => pv(a) - pv(b));
  if (!nat.length) return [...wild];
  const out = [nat[0]];
  for (let i = 1; i < nat.length; i++) {
    let gap = pv(nat[i]) - pv(nat[i - 1]) - 1;
    while (gap > 0 && wild.length) {
      out.push(wild.shift());
      gap--;
    }
    out.push(nat[i]);
  }
  let low = pv(nat[0]);
  let high = pv(nat[nat.length - 1]);
  while (wild.length) {
    if ((spare === "high" && high < HIGHEST) || low <= LOWEST) {
      out.push(wild.shift());
      high++;
    } else {
      out.unshift(wild.shift());
      low--;
    }
  }
  return out;
}

/** Cards to add at one end of a run meld, listed low to high as they will stand. */
export function arrangeOnRun(meld, cards, end) {
  const wild = cards.filter(isWild);
  const nat = cards.filter((c) => !isWild(c)).sort((a, b) => pv(a) - pv(b));
  const low = valueOf(meld.low);
  const high = valueOf(meld.high);
  if (end === "high") {
    const out = [];
    let v = high + 1;
    for (const c of nat) {
      while (v < pv(c) && wild.length) {
        out.push(wild.shift());
        v++;
      }
      out.push(c);
      v = pv(c) + 1;
    }
    return [...out, ...wild];
  }
  const out = [];
  let v = low - 1;
  for (const c of [...nat].reverse()) {
    while (v > pv(c) && wild.length) {
      out.unshift(wild.shift());
      v--;
    }
    out.unshift(c);
    v = pv(c) - 1;
  }
  return [...wild, ...out];
}

export function valueOf(text) {
  if (typeof text === "number") return text;
  return { A: HIGHEST, J: 11, Q: 12, K: 13 }[text] ?? Number(text);
}
