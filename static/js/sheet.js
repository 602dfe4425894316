// The Posso score sheet, drawn like the paper one: a column per player, a
// line per hand with that hand's points and the running total underneath,
// who went out, Posso tallies and cuts, the toilet over 500; plus a chart of
// running totals across the ten hands with the 500 line.
import { icon } from "./icons.js";
import { h, svg } from "./dom.js";

export const TOILET = 500;
const COLORS = ["#2f6fdf", "#d9480f", "#2b8a3e", "#ae3ec9", "#e8590c", "#0c8599", "#c2255c", "#5c940d", "#1864ab", "#862e9c"];

/** Words for a hand's requirement, whatever shape the server gives. */
export function requirementText(req) {
  if (!req) return "";
  if (typeof req === "string") return req;
  if (Array.isArray(req)) {
    return req.map((m) => {
      if (typeof m === "string") return m;
      const n = m.size ?? m.min ?? m.length ?? "";
      const plus = m.min !== undefined && m.size === undefined ? "+" : m.or_more ? "+" : "";
      return m.kind === "run" ? `run of ${n}${plus}` : `${n} of a kind`;
    }).join(", ");
  }
  if (typeof req === "object") return req.text || req.label || requirementText(req.melds);
  return String(req);
}

/**
 * Normalise a sheet: from the history API ({seats, hands: [{lines}]}) or from
 * the live view (rows with per-seat arrays). Returns {names, hands} with
 * per-seat arrays points/totals/possos.
 */
export function normalizeSheet(data, names) {
  const rows = Array.isArray(data) ? data : data?.hands || data?.rows || [];
  const seatNames = names || (data?.seats || []).map((s) => s.name);
  const n = seatNames.length;
  const hands = rows.map((r) => {
    const out = {
      hand: r.hand,
      dealer: r.dealer ?? null,
      requirement: r.requirement ?? r.row?.requirement ?? null,
      went_out: r.went_out ?? null,
      cut: r.cut ?? r.row?.cut ?? null,
      points: Array(n).fill(null),
      totals: Array(n).fill(null),
      possos: Array(n).fill(0),
    };
    if (Array.isArray(r.lines)) {
      for (const l of r.lines) {
        out.points[l.seat] = l.points;
        out.totals[l.seat] = l.total;
        out.possos[l.seat] = l.possos ?? 0;
        if (l.went_out && out.went_out === null) out.went_out = l.seat;
        if (l.cut && !out.cut) out.cut = { seat: l.seat, ...l.cut };
      }
    } else {
      const src = r.row || r;
      for (let s = 0; s < n; s++) {
        out.points[s] = src.points?.[s] ?? null;
        out.totals[s] = src.totals?.[s] ?? null;
        out.possos[s] = src.possos?.[s] ?? 0;
      }
    }
    return out;
  });
  return { names: seatNames, hands };
}

/**
 * A hand's cut in words: "Ann cut 48 (needed 48 or 49): a hit, 120 → 0",
 * "Ann did not cut in time: a miss", "no cut: it could not change Ann's
 * score" (a moot cut, which nobody was asked to make). `dealer` names the cutter when the cut
 * does not say (the engine's rows leave it to the row's dealer).
 */
export function cutText(cut, names, dealer = null) {
  if (!cut) return null;
  if (typeof cut === "string") return cut;
  const seat = cut.seat ?? cut.effect?.seat ?? dealer;
  const who = seat !== null && seat !== undefined && names[seat] ? names[seat] : "The dealer";
  const took = cut.count ?? cut.cut ?? cut.cards ?? null;
  const target = cut.target ?? cut.needed ?? null;
  const hit = cut.hit === true || cut.result === "hit";
  if (cut.moot) return `no cut: it could not change ${who}'s score`;
  if (took === null || took === undefined) return `${who} did not cut in time: a miss`;
  const needed = typeof target === "number" ? ` (needed ${target} or ${target + 1})` : Array.isArray(target) ? ` (needed ${target.join(" or ")})` : "";
  let text = `${who} cut ${took}${needed}: ${hit ? "a hit" : "a miss"}`;
  const eff = cut.effect;
  if (eff && typeof eff === "object" && typeof eff.before === "number") text += `, ${eff.before} → ${eff.after}`;
  else if (typeof eff === "number" || typeof eff === "string") text += `, now ${eff}`;
  else if (cut.new_total !== undefined) text += `, now ${cut.new_total}`;
  return text;
}

/** The paper sheet. opts: {current: hand number in play, hands: total (10),
 * handHref(n): where a played hand's replay is (its row then opens it),
 * onHand(n, event): what a click on that row does instead of following it,
 * newTab: open it in another tab} */
export function sheetEl(sheet, opts = {}) {
  const { names, hands } = sheet;
  const last = hands[hands.length - 1];
  const totals = last ? last.totals : names.map(() => 0);
  const best = Math.min(...totals.filter((t) => t !== null));
  const table = h("table.sheet", { "aria-label": "Posso score sheet" });
  table.append(h("thead", h("tr",
    h("th.handcol", { scope: "col" }, "Hand"),
    names.map((n, s) => h("th", { scope: "col", title: n }, h("span.swatch", { style: { background: COLORS[s % COLORS.length] } }), h("span.pname", n))),
  )));
  const body = h("tbody");
  for (const r of hands) {
    const req = requirementText(r.requirement);
    const cut = cutText(r.cut, names, r.dealer);
    const link = opts.handHref
      ? h("a.replayhand.noprint", {
          href: opts.handHref(r.hand),
          "aria-label": `Replay hand ${r.hand}`,
          target: opts.newTab ? "_blank" : null,
          rel: opts.newTab ? "noopener" : null,
          onclick: opts.onHand ? (e) => opts.onHand(r.hand, e) : null,
        }, "Replay")
      : null;
    body.append(h("tr", {
      class: link ? "hasreplay" : null,
      // the whole row opens the hand's replay; the link is there for the keyboard
      onclick: link ? (e) => { if (!e.target.closest("a")) link.click(); } : null,
    },
      h("th.handcol", { scope: "row" },
        h("span.hn", String(r.hand)),
        link,
        req ? h("span.req", req) : null,
        r.dealer !== null && names[r.dealer] ? h("span.req", `dealt by ${names[r.dealer]}`) : null,
        cut ? h("span.req.cut", cut) : null),
      names.map((_, s) => {
        const out = r.went_out === s;
        const total = r.totals[s];
        return h("td", { class: total !== null && total > TOILET ? "toilet" : null },
          h("span.pts", { class: out ? "out" : null, title: out ? "went out" : null }, out ? "0 out" : r.points[s] === null ? "" : `+${r.points[s]}`),
          r.possos[s] ? h("span.possos", { title: `${r.possos[s]} Posso${r.possos[s] === 1 ? "" : "s"}` }, `${r.possos[s]} Posso${r.possos[s] === 1 ? "" : "s"}`) : null,
          h("span.total", total === null ? "" : String(total)),
        );
      }),
    ));
  }
  const total = opts.hands || 10;
  const first = hands.length ? hands[0].hand : opts.first || 1;
  for (let k = (last?.hand ?? first - 1) + 1; k <= total; k++) {
    body.append(h("tr.future", h("th.handcol", { scope: "row" }, h("span.hn", String(k)), k === opts.current ? h("span.req", "being played") : null), names.map(() => h("td"))));
  }
  table.append(body);
  if (hands.length) {
    table.append(h("tfoot", h("tr",
      h("th.handcol", { scope: "row" }, "Total"),
      totals.map((t) => h("td", { class: [t === best ? "leader" : "", t > TOILET ? "toilet" : ""].join(" ").trim() || null },
        String(t ?? ""), t > TOILET ? h("span.toiletmark", " ", icon("toilet", "In the toilet (over 500)")) : null)),
    )));
  }
  return h("div.sheetbox",
    h("div.paper", table),
    chartEl(sheet, { first, last: total }),
  );
}

/** Running totals per player across the hands, with the 500 line. */
export function chartEl(sheet, { first = 1, last = 10 } = {}) {
  const { names, hands } = sheet;
  const W = 520;
  const H = 260;
  const L = 44;
  const R = 12;
  const T = 14;
  const B = 30;
  const all = hands.flatMap((r) => r.totals.filter((t) => t !== null));
  const maxY = Math.max(600, Math.ceil((Math.max(0, ...all) + 50) / 100) * 100);
  const span = Math.max(1, last - first + 1);
  const x = (k) => L + ((k - first + 1) / span) * (W - L - R);
  const y = (v) => T + (1 - v / maxY) * (H - T - B);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": "Running totals chart" });
  root.append(svg("title", {}, "Running totals per player, hand by hand; lower is better; over 500 is in the toilet"));
  for (let v = 0; v <= maxY; v += maxY > 1000 ? 200 : 100) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
    root.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, String(v)));
  }
  for (let k = first - 1; k <= last; k++) {
    root.append(svg("text", { x: x(k), y: H - 10, "text-anchor": "middle", class: "axis" }, k < first ? "" : String(k)));
  }
  root.append(svg("line", { x1: L, x2: W - R, y1: y(TOILET), y2: y(TOILET), class: "toilet-line" }));
  root.append(svg("text", { x: W - R - 4, y: y(TOILET) - 5, "text-anchor": "end", class: "toilet-label" }, "500 · the toilet"));
  names.forEach((name, s) => {
    const pts = [[x(first - 1), y(0)]];
    for (const r of hands) if (r.totals[s] !== null) pts.push([x(r.hand), y(r.totals[s])]);
    const color = COLORS[s % COLORS.length];
    root.append(svg("polyline", { points: pts.map((p) => p.join(",")).join(" "), fill: "none", stroke: color, "stroke-width": 2.5, "stroke-linejoin": "round" }));
    for (const [px, py] of pts.slice(1)) root.append(svg("circle", { cx: px, cy: py, r: 3.5, fill: color }));
  });
  const legend = h("div.legend", names.map((n, s) => h("span", h("span.swatch", { style: { background: COLORS[s % COLORS.length] } }), n)));
  return h("figure.chartbox", root, h("figcaption", legend));
}
