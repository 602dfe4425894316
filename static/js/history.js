// Looking back: my past games, one game's result and score sheet, and a
// replay viewer that steps through the game using the same table drawings
// as live play (read-only).
import { h, mount, toast } from "./dom.js";
import { api, movedNote } from "./api.js";

/** A game this browser may not open: if its person moved to another
 * device, say so (the game is likely theirs, there). */
function notHere(e) {
  const note = /you were not in/.test(e.message || "") ? movedNote() : null;
  return note ? h("p.moved-note", note) : null;
}
import { cardsText } from "./cards.js";
import { icon } from "./icons.js";
import { sheetEl, normalizeSheet } from "./sheet.js";
import { logPanel } from "./log.js";
import { personLink, gameExports } from "./gamelinks.js";

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
  // where this browser's person went, if a place moved to another device
  const moved = movedNote();
  const load = async () => {
    try {
      const q = before ? `?before=${encodeURIComponent(before)}` : "";
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
      h("p", h("a.btn.replay-link", { href: "/#replay" }, "Open a saved game record")),
      moved ? h("p.moved-note", moved) : null,
      status,
      h("div", { style: { overflowX: "auto" } },
        // on a phone each game is a card (css: table.list.cardlist)
        h("table.list.cardlist",
          h("thead", h("tr", h("th", "When"), h("th", "Game"), h("th", "Players"), h("th", "Result"), h("th", h("span.sr-only", "Open")))),
          body)),
      h("p", more),
    ));
  load();
  return () => window.removeEventListener("cardroom:account", reload);
}

function gameRow(g) {
  const players = g.seats.flatMap((s, i) => [i ? ", " : "", personLink(s), s.is_bot ? [" ", icon("bot", "bot")] : ""]);
  const result = g.status !== "finished" ? "still being played" : g.my_place ? `you were ${ORD(g.my_place)}` : "finished";
  // each cell's content in one element: on a phone a cell is a grid of its
  // label and its content, and loose pieces would each take a grid cell
  return h("tr",
    h("td", { dataset: { label: "When" } }, when(g.finished_at || g.started_at)),
    h("td", { dataset: { label: "Game" } }, h("span", h("strong", TITLES[g.game] || g.game), h("div.muted", `room ${g.room}`))),
    h("td", { dataset: { label: "Players" } }, h("span.players", players)),
    h("td", { dataset: { label: "Result" } }, result),
    h("td.go", h("a.btn", { href: `/#game/${g.id}` }, g.game === "posso" ? "Sheet & replay" : "Replay")),
  );
}

/** `where`: "12" (game 12), or "12/hand/3" to open its replay at hand 3
 * (trick, round: whatever the game's replay jumps through). */
export function showGame(app, where) {
  const [id, , at] = where.split("/");
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
      // a sheet row opens the replay below at that hand
      const openHand = (n, e) => {
        e.preventDefault();
        history.replaceState(history.state, "", `/#game/${g.id}/hand/${n}`);
        stopReplay?.jump(n);
        replayBox.scrollIntoView({ block: "start" });
      };
      if (g.has_sheet) {
        api(`/api/history/games/${encodeURIComponent(id)}/sheet`)
          .then((s) => mount(sheetBox, h("h2.noprint", "Score sheet"), h("div.printsheet", h("h2.printonly", `Posso · room ${g.room} · ${when(g.started_at)}`), sheetEl(normalizeSheet(s), { hands: 10, handHref: (n) => `/#game/${g.id}/hand/${n}`, onHand: openHand }))))
          .catch((e) => mount(sheetBox, h("p.err", e.message)));
      }
      head.append(gameExports(g));
      stopReplay = replayViewer(replayBox, g);
      if (at !== undefined) {
        stopReplay.jump(Number(at));
        replayBox.scrollIntoView({ block: "start" });
      }
    })
    .catch((e) => mount(head, h("h1", "Game"), h("p.err", e.message), notHere(e)));
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
  let chapters = null; // {unit, marks: [{n, step}]}: where each hand, trick or round begins
  let gotChapters;
  const chaptersReady = new Promise((resolve) => (gotChapters = resolve));
  const felt = h("section.felt", { "aria-label": "Replay table" });
  const jumpTo = h("select.jump", { "aria-label": "Jump to", disabled: true }, h("option", { value: "" }, "Jump to…"));
  const prevChapter = h("button.chapter", { disabled: true, onclick: () => toChapter(-1) }, "◀◀");
  const nextChapter = h("button.chapter", { disabled: true, onclick: () => toChapter(1) }, "▶▶");
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
        if (r.chapters && !chapters) showChapters(r.chapters);
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
    markChapter();
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
  const UNIT = { hand: ["Hand", "hand"], trick: ["Trick", "trick"], round: ["Round", "round"] };
  const unitWords = () => UNIT[chapters?.unit] || ["Part", "part"];
  // the chapter the current step is in: the last one begun at or before it
  const current = () => {
    let at = -1;
    for (const [i, m] of (chapters?.marks || []).entries()) if (m.step <= step) at = i;
    return at;
  };
  const showChapters = (found) => {
    chapters = found;
    const [Word, word] = unitWords();
    mount(jumpTo, h("option", { value: "" }, `Jump to a ${word}…`),
      found.marks.map((m, i) => h("option", { value: String(i) }, `${Word} ${m.n}`)));
    jumpTo.disabled = found.marks.length < 2;
    prevChapter.setAttribute("aria-label", `Previous ${word}`);
    nextChapter.setAttribute("aria-label", `Next ${word}`);
    prevChapter.title = `Previous ${word}`;
    nextChapter.title = `Next ${word}`;
    document.body.dataset.replayChapters = String(found.marks.length); // for tests
    gotChapters();
  };
  const markChapter = () => {
    if (!chapters) return;
    const i = current();
    jumpTo.value = i < 0 ? "" : String(i);
    prevChapter.disabled = i <= 0 && step === 0;
    nextChapter.disabled = i >= chapters.marks.length - 1;
    info.textContent = `Step ${step} of ${total - 1} · ${unitWords()[0]} ${chapters.marks[Math.max(0, i)].n}`;
  };
  // back: to this chapter's start, or the one before when already there
  const toChapter = (dir) => {
    if (!chapters) return;
    const i = current();
    const marks = chapters.marks;
    const k = dir > 0 ? i + 1 : marks[i] && marks[i].step < step ? i : i - 1;
    if (marks[k]) go(marks[k].step);
  };
  jumpTo.addEventListener("change", () => {
    const m = chapters?.marks[Number(jumpTo.value)];
    if (jumpTo.value !== "" && m) go(m.step);
  });
  /** Open at hand (trick, round) number `n`, once the chapters are known. */
  const jump = (n) => chaptersReady.then(() => {
    const m = chapters.marks.find((c) => c.n === n);
    if (m) go(m.step);
  });
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
      h("div.controls.chapters", prevChapter, jumpTo, nextChapter),
      events,
      felt,
    ));
  draw().catch((e) => toast(e.message, "error"));
  const stop = () => {
    pause();
    document.removeEventListener("keydown", keys);
  };
  stop.jump = jump;
  return stop;
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
