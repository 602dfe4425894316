// Looking back: my past games, one game's result and score sheet, and a
// replay viewer that steps through the game using the same table drawings
// as live play (read-only).
import { h, mount, toast } from "./dom.js";
import { api } from "./api.js";
import { cardsText } from "./cards.js";
import { icon } from "./icons.js";
import { sheetEl, normalizeSheet } from "./sheet.js";
import { logPanel } from "./log.js";
import { personLink, gameExports } from "./records.js";

const TITLES = { posso: "Posso", possession: "Possession", possum: "Possum", bigtwo: "Big Two" };
const TABLES = {
  posso: () => import("./tables/posso.js"),
  possession: () => import("./tables/possession.js"),
  possum: () => import("./tables/possum.js"),
  bigtwo: () => import("./tables/bigtwo.js"),
};
const ORD = (n) => (n === 1 ? "1st" : n === 2 ? "2nd" : n === 3 ? "3rd" : `${n}th`);

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function showHistory(app) {
  const body = h("tbody");
  const more = h("button", { hidden: true }, "Older games");
  const status = h("p.muted", "Loading…");
  let before = null;
  const load = async () => {
    try {
      const q = before ? `?before=${before}` : "";
      const r = await api(`/api/me/games${q}`);
      status.textContent = "";
      if (!r.games.length && !before) {
        status.replaceWith(h("p.empty", "No games yet. Finished games you play in this browser show up here."));
      }
      for (const g of r.games) body.append(gameRow(g));
      before = r.next_before;
      more.hidden = !before;
    } catch (e) {
      status.textContent = e.message;
      status.className = "err";
    }
  };
  more.addEventListener("click", load);
  const reload = () => {
    body.replaceChildren();
    before = null;
    load();
  };
  window.addEventListener("cardroom:account", reload);
  mount(app,
    h("div.history",
      h("h1", "My games"),
      h("p.muted", "Games played from this browser (and your account, when signed in)."),
      status,
      h("div", { style: { overflowX: "auto" } },
        h("table.list",
          h("thead", h("tr", h("th", "When"), h("th", "Game"), h("th", "Players"), h("th", "Result"), h("th", ""))),
          body)),
      h("p", more),
    ));
  load();
  return () => window.removeEventListener("cardroom:account", reload);
}

function gameRow(g) {
  const players = g.seats.flatMap((s, i) => [i ? ", " : "", personLink(s), s.is_bot ? [" ", icon("bot", "bot")] : ""]);
  const result = g.status !== "finished" ? "still being played" : g.my_place ? `you were ${ORD(g.my_place)}` : "finished";
  return h("tr",
    h("td", when(g.finished_at || g.started_at)),
    h("td", h("strong", TITLES[g.game] || g.game), h("div.muted", `room ${g.room}`)),
    h("td", players),
    h("td", result),
    h("td", h("a", { href: `/#game/${g.id}` }, g.game === "posso" ? "Sheet & replay" : "Replay")),
  );
}

export function showGame(app, id) {
  // printed, the page is the score sheet alone (css/print.css)
  const head = h("div.noprint", h("p.muted", "Loading…"));
  const sheetBox = h("section");
  const replayBox = h("section.noprint");
  mount(app, h("div.history", h("p.noprint", h("a", { href: "/#history" }, "← My games")), head, sheetBox, replayBox));
  let stopReplay = null;
  api(`/api/history/games/${encodeURIComponent(id)}`)
    .then((g) => {
      const names = g.seats.map((s) => s.name);
      const places = g.result?.places || [];
      mount(head,
        h("h1", `${TITLES[g.game] || g.game} · ${when(g.started_at)}`),
        h("p.players", "Players: ", g.seats.map((s, i) => [i ? ", " : "", personLink(s)])),
        h("p.muted", `Room ${g.room} · ${g.actions ?? "?"} moves · ${g.status === "finished" ? `finished ${when(g.finished_at)}` : "still being played"}`),
        places.length
          ? h("ol.places", places.map((grp, i) => h("li", `${ORD(i + 1)}: ${grp.map((s) => names[s]).join(" & ")}`,
              g.result.scores ? h("span.muted", ` (${grp.map((s) => g.result.scores[s]).join(", ")})`) : null)))
          : null,
      );
      if (g.has_sheet) {
        api(`/api/history/games/${encodeURIComponent(id)}/sheet`)
          .then((s) => mount(sheetBox, h("h2.noprint", "Score sheet"), h("div.printsheet", h("h2.printonly", `Posso · room ${g.room} · ${when(g.started_at)}`), sheetEl(normalizeSheet(s), { hands: 10 }))))
          .catch((e) => mount(sheetBox, h("p.err", e.message)));
      }
      head.append(gameExports(g));
      stopReplay = replayViewer(replayBox, g);
    })
    .catch((e) => mount(head, h("h1", "Game"), h("p.err", e.message)));
  return () => stopReplay && stopReplay();
}

const CHUNK = 150;

export function replayViewer(box, facts) {
  const id = facts.id;
  const chunks = new Map(); // start -> Promise<steps>
  let total = null;
  let step = 0;
  let timer = null;
  let perspective = null;
  let table = null;
  let meta = null;
  const ui = { selected: [], sort: "suit" };
  const felt = h("section.felt", { "aria-label": "Replay table" });
  const slider = h("input", { type: "range", min: 0, max: 0, value: 0, "aria-label": "Replay step" });
  const info = h("span.stepinfo");
  const events = h("ul.stepevents", { "aria-live": "polite" });
  const who = h("select", { "aria-label": "Whose view" });
  const playBtn = h("button", { onclick: () => (timer ? pause() : play()) }, "▶ Play");

  const fetchChunk = (start) => {
    const key = Math.floor(start / CHUNK) * CHUNK;
    if (!chunks.has(key)) {
      // a kept record (the "Open a saved game" page) brings its own way to fetch steps
      const fetched = facts.fetchSteps ? facts.fetchSteps(key, CHUNK) : api(`/api/history/games/${id}/replay?start=${key}&limit=${CHUNK}`);
      chunks.set(key, fetched.then((r) => {
        total = r.total_steps;
        meta = r;
        return r.steps;
      }).catch((e) => {
        chunks.delete(key);
        throw e;
      }));
    }
    return chunks.get(key);
  };
  const stepData = async (k) => {
    const steps = await fetchChunk(k);
    return steps.find((s) => s.step === k);
  };

  const draw = async () => {
    let s;
    try {
      s = await stepData(step);
    } catch (e) {
      mount(felt, h("p.err", e.message));
      pause();
      return;
    }
    if (!s) return;
    slider.max = String(total - 1);
    slider.value = String(step);
    info.textContent = `Step ${step} of ${total - 1}`;
    const keys = Object.keys(s.views);
    if (!who.options.length) {
      for (const k of keys) who.append(h("option", { value: k }, k === "spectator" ? "Spectator" : `${facts.seats[Number(k)]?.name || `Seat ${Number(k) + 1}`}'s view`));
      perspective = keys[0];
      const mine = facts.my_seats?.[0];
      if (mine !== undefined && keys.includes(String(mine))) perspective = String(mine);
      who.value = perspective;
    }
    const view = s.views[perspective] || s.views[keys[0]];
    const ctx = replayContext(facts, view, perspective, draw, ui);
    if (!table) table = await TABLES[facts.game]();
    try {
      mount(felt, table.render(ctx));
    } catch (e) {
      mount(felt, h("p.err", `Could not draw this step: ${e.message}`));
    }
    const lines = [];
    const me = perspective === "spectator" ? null : Number(perspective);
    for (const e of s.events || []) {
      // Private events show only in the view of the seat they were for.
      if (e.to !== null && e.to !== undefined && e.to !== me) continue;
      const d = table.describe ? table.describe(e, ctx) : null;
      if (d) lines.push(typeof d === "string" ? d : d.text);
    }
    if (s.action && !lines.length) lines.push(actionText(s.action, s.seat === null ? null : facts.seats[s.seat]?.name || `Seat ${s.seat + 1}`));
    if (step === 0) lines.push("The deal.");
    mount(events, lines.map((l) => h("li", l)));
  };
  const go = (k) => {
    if (total !== null) k = Math.max(0, Math.min(total - 1, k));
    step = Math.max(0, k);
    draw();
  };
  const play = () => {
    playBtn.textContent = "⏸ Pause";
    timer = setInterval(() => {
      if (total !== null && step >= total - 1) return pause();
      go(step + 1);
    }, 700);
  };
  const pause = () => {
    clearInterval(timer);
    timer = null;
    playBtn.textContent = "▶ Play";
  };
  slider.addEventListener("input", () => go(Number(slider.value)));
  who.addEventListener("change", () => {
    perspective = who.value;
    draw();
  });
  const keys = (e) => {
    if (e.target.closest("input, select, textarea")) return;
    if (e.key === "ArrowRight") go(step + 1);
    else if (e.key === "ArrowLeft") go(step - 1);
    else return;
    e.preventDefault();
  };
  document.addEventListener("keydown", keys);
  mount(box,
    h("div.replay",
      h("h2", "Replay"),
      h("div.controls",
        h("button", { onclick: () => go(0), "aria-label": "First step" }, "«"),
        h("button", { onclick: () => go(step - 1), "aria-label": "Previous step" }, "◀"),
        playBtn,
        h("button", { onclick: () => go(step + 1), "aria-label": "Next step" }, "▶"),
        h("button", { onclick: () => go((total ?? 1) - 1), "aria-label": "Last step" }, "»"),
        slider, info, who),
      events,
      felt,
    ));
  draw().catch((e) => toast(e.message, "error"));
  return () => {
    pause();
    document.removeEventListener("keydown", keys);
  };
}

// A step the game's own log lines leave unsaid (a pass in a Posso window
// tells nothing to the table while it is open), in plain words.
const ACTIONS = {
  pass_posso: () => "passed on the Posso",
  call_posso: () => "called Posso",
  answer_posso: (a) => (a.allow ? "allowed the Posso" : "denied the Posso and took the card"),
  cut: () => "cut the deck",
  draw: (a) => (a.source === "pile" ? "took the pile card" : a.source === "stock" ? "drew from the stock" : "drew from the stack"),
  discard: (a) => (a.card ? `discarded ${cardsText([a.card])}` : "discarded"),
  go_down: () => "went down",
  play_on: (a) => (a.cards?.length ? `played ${cardsText(a.cards)} on a meld` : "played on a meld"),
  swap_wild: () => "swapped a wild",
  play: (a) => (a.cards?.length ? `played ${cardsText(a.cards)}` : "played"),
  pass: () => "passed",
  meld: () => "laid down a property",
  extend: () => "added to a property",
  keep: () => "kept everything",
  fold: () => "folded",
};

/** "Bot 3 passed on the Posso"; `who` null: the timer acted (time ran out). */
export function actionText(action, who) {
  const words = ACTIONS[action.type]?.(action) || action.type.replace(/_/g, " ");
  return who === null ? `Time ran out: ${words}.` : `${who} ${words}.`;
}

/** A read-only context for the table modules. */
function replayContext(facts, view, perspective, redraw, ui) {
  const me = perspective === "spectator" ? null : Number(perspective);
  const seats = facts.seats.map((s) => ({ name: s.name, bot: s.is_bot, connected: true, auto: false, host: false }));
  const room = { code: facts.room, game: facts.game, title: TITLES[facts.game], seats, status: view.over ? "finished" : "playing", options: facts.options };
  return {
    room,
    you: { seat: me, host: false },
    me,
    game: view,
    legal: [],
    timer: null,
    ui,
    events: [],
    readonly: true,
    name: (s) => (s === null || s === undefined ? "—" : seats[s]?.name || `Seat ${s + 1}`),
    seatName: (s) => seats[s]?.name || `Seat ${s + 1}`,
    act: () => Promise.reject(new Error("This is a replay.")),
    cmd: () => Promise.reject(new Error("This is a replay.")),
    rerender: () => redraw(),
    setSort: (by) => {
      ui.sort = by;
      redraw();
    },
  };
}

export { logPanel };
