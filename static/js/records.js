// Records among friends: a person's page (games, places, Posso totals, Big
// Two series, rivals), a head-to-head between two people, a room's evening
// (its games in order and a league table) and the page that replays a kept
// record.  A game's links to its people and its exports are in gamelinks.js.
import { h, mount } from "./dom.js";
import { api } from "./api.js";
import { icon } from "./icons.js";
import { sheetEl, normalizeSheet } from "./sheet.js";
import { replayViewer } from "./history.js";
import { personLink } from "./gamelinks.js";

const TITLES = { posso: "Posso", possession: "Possession", possum: "Possum", bigtwo: "Big Two" };
const ORD = (n) => (n === 1 ? "1st" : n === 2 ? "2nd" : n === 3 ? "3rd" : `${n}th`);
const title = (g) => TITLES[g] || g;

function when(iso) {
  if (!iso) return "";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function placesText(places) {
  return Object.entries(places || {}).map(([p, n]) => `${ORD(Number(p))} ×${n}`).join(", ");
}

function possoRows(totals) {
  if (!totals || !totals.games) return null;
  return [
    ["Posso games", totals.games],
    ["Best total (lowest)", totals.best ?? "–"],
    ["Average total", totals.average ?? "–"],
    ["Hands won (went out)", totals.hands_won],
    ["Possos taken", totals.possos],
  ];
}

function facts(rows) {
  return h("dl.facts", rows.map(([k, v]) => [h("dt", k), h("dd", String(v))]));
}

export function showPerson(app, id) {
  const box = h("div.history.records", h("p.muted", "Loading…"));
  mount(app, box);
  api(`/api/people/${encodeURIComponent(id)}`)
    .then((r) => {
      const name = r.name || "Someone";
      mount(box,
        h("p", h("a", { href: "/#history" }, "← My games")),
        h("h1", r.me ? `${name} (you)` : name),
        r.me && r.kind === "guest"
          ? h("p.note", "These records belong to this browser. Sign in to keep them across devices.")
          : null,
        h("section",
          h("h2", "Games"),
          r.games.length
            ? h("table.list",
                h("thead", h("tr", h("th", "Game"), h("th", "Played"), h("th", "Won"), h("th", "Places"))),
                h("tbody", r.games.map((g) => h("tr", h("td", title(g.game)), h("td", String(g.played)), h("td", String(g.won)), h("td", placesText(g.places))))))
            : h("p.empty", "No finished games yet."),
        ),
        possoRows(r.posso) ? h("section", h("h2", "Posso"), facts(possoRows(r.posso))) : null,
        r.bigtwo.series ? h("section", h("h2", "Big Two"), facts([["Series played (rooms)", r.bigtwo.series], ["Series won", r.bigtwo.series_won]])) : null,
        h("section",
          h("h2", "Rivals"),
          r.rivals.length
            ? h("table.list",
                h("thead", h("tr", h("th", "Rival"), h("th", "Games together"), h("th", `${name} higher`), h("th", "Rival higher"), h("th", ""))),
                h("tbody", r.rivals.map((v) => h("tr",
                  h("td", personLink(v)), h("td", String(v.together)), h("td", String(v.higher)), h("td", String(v.lower)),
                  h("td", h("a", { href: `/#versus/${id}/${v.person}` }, "Head-to-head"))))))
            : h("p.muted", "A rival is someone you have finished three or more games with."),
        ),
        h("section",
          h("h2", "Latest games"),
          h("ul.recent", r.recent.map((g) => h("li",
            h("a", { href: `/#game/${g.id}` }, `${title(g.game)} · ${when(g.finished_at)}`),
            ` · ${ORD(g.place)} · room ${g.room}`))),
          h("p", h("a", { href: `/api/people/${id}/games.csv`, download: "" }, "All games as CSV")),
        ),
      );
    })
    .catch((e) => mount(box, h("h1", "Records"), h("p.err", e.message)));
}

export function showVersus(app, one, two) {
  const box = h("div.history.records", h("p.muted", "Loading…"));
  mount(app, box);
  api(`/api/people/${encodeURIComponent(one)}/versus/${encodeURIComponent(two)}`)
    .then((r) => {
      const [a, b] = r.people.map((p) => p.name || "Someone");
      mount(box,
        h("p", h("a", { href: `/#person/${one}` }, `← ${a}`)),
        h("h1", `${a} v ${b}`),
        h("p.muted", `${r.together} finished game${r.together === 1 ? "" : "s"} together`),
        h("table.list",
          h("thead", h("tr", h("th", "Game"), h("th", "Together"), h("th", `${a} higher`), h("th", `${b} higher`), h("th", "Tied"))),
          h("tbody", r.games.map((g) => h("tr", h("td", title(g.game)), h("td", String(g.together)),
            h("td", String(g.first_higher)), h("td", String(g.second_higher)), h("td", String(g.tied)))))),
        r.posso[0].games
          ? h("section", h("h2", "Posso, side by side"),
              h("table.list",
                h("thead", h("tr", h("th", ""), h("th", a), h("th", b))),
                h("tbody", possoRows(r.posso[0]).map(([k], i) => h("tr", h("th", k),
                  h("td", String(possoRows(r.posso[0])[i][1])), h("td", String(possoRows(r.posso[1])[i][1])))))))
          : null,
        h("section", h("h2", "Latest together"),
          h("ul.recent", r.recent.map((g) => h("li",
            h("a", { href: `/#game/${g.id}` }, `${title(g.game)} · ${when(g.finished_at)}`),
            ` · ${a} ${ORD(g.places[0])}, ${b} ${ORD(g.places[1])}`)))),
      );
    })
    .catch((e) => mount(box, h("h1", "Head-to-head"), h("p.err", e.message)));
}

/** The room's evening: every game played in it, in order, and the league. */
export function eveningEl(code) {
  const box = h("div.evening", h("p.muted", "Loading the evening…"));
  api(`/api/history/rooms/${encodeURIComponent(code)}/evening`)
    .then((r) => {
      const done = r.games.filter((g) => g.status === "finished");
      const hasTally = r.league.some((row) => row.tally !== null && row.tally !== undefined);
      const hasPosso = r.league.some((row) => row.posso);
      // each column says what it counts (header tooltip and the key below)
      const cols = [
        ["Player", "Each person and each bot seat once; a bot added in place of another has its own name."],
        ["Played", "Games finished in this room."],
        ["Won", "Games finished first. The table is ranked by this, then by the average place."],
        ["Avg place", "The average finishing place (1 is best)."],
        ["Places", "How often each place: 1st, 2nd, …"],
        hasTally ? ["Big Two series", "Big Two points: 3 for 1st, 2 for 2nd, 1 for 3rd, 0 for 4th."] : null,
        hasPosso ? ["Posso avg", "Average Posso score (lower is better)."] : null,
      ].filter(Boolean);
      mount(box,
        h("h3", "League"),
        r.league.length
          ? [h("table.list.league",
              h("thead", h("tr", cols.map(([name, what]) => h("th", { title: what, scope: "col" }, name)))),
              h("tbody", r.league.map((row) => h("tr",
                h("td", personLink(row), row.is_bot ? [" ", icon("bot", "bot")] : ""), h("td", String(row.played)), h("td", String(row.won)),
                h("td", String(row.mean_place ?? "–")),
                h("td", placesText(row.places)),
                hasTally ? h("td", String(row.tally ?? 0)) : null,
                hasPosso ? h("td", row.posso ? String(row.posso.average ?? "–") : "") : null)))),
            h("dl.league-key", cols.map(([name, what]) => [h("dt", name), h("dd", what)]))]
          : h("p.muted", "No game finished here yet."),
        h("h3", "Games"),
        h("ol.games", r.games.map((g) => h("li",
          h("a", { href: `/#game/${g.id}` }, `${title(g.game)}`),
          g.status === "finished"
            ? ` · ${g.seats.slice().sort((x, y) => (x.place ?? 99) - (y.place ?? 99)).map((s) => `${s.name} ${ORD(s.place)}${g.game === "posso" && s.score !== null ? ` (${s.score})` : ""}`).join(", ")}`
            : " · being played"))),
        done.some((g) => g.game === "posso")
          ? h("p", h("a", { href: `/#sheets/${encodeURIComponent(code)}` }, "Print the evening's score sheets"))
          : null,
      );
    })
    .catch((e) => mount(box, h("p.err", e.message)));
  return box;
}

export function showEvening(app, code) {
  mount(app, h("div.history", h("h1", `Room ${code}: the evening`), eveningEl(code)));
}

/** Every Posso sheet of a room's evening, one printed page each. */
export function showSheets(app, code) {
  const box = h("div.sheets", h("p.muted", "Loading…"));
  mount(app, h("div.history",
    h("p.noprint", h("a", { href: `/#evening/${encodeURIComponent(code)}` }, "← The evening"), " ",
      h("button", { onclick: () => window.print() }, "Print")),
    box));
  api(`/api/history/rooms/${encodeURIComponent(code)}/evening`)
    .then(async (r) => {
      const posso = r.games.filter((g) => g.game === "posso" && g.status === "finished");
      const sheets = await Promise.all(posso.map((g) => api(`/api/history/games/${g.id}/sheet`)));
      mount(box, posso.length ? posso.map((g, i) => h("section.printsheet",
        h("h2", `Posso · room ${code} · game ${i + 1} · ${when(g.finished_at)}`),
        sheetEl(normalizeSheet(sheets[i]), { hands: 10, handHref: (n) => `/#game/${g.id}/hand/${n}` }))) : h("p.empty", "No Posso game finished in this room."));
      document.body.dataset.sheets = String(posso.length);
    })
    .catch((e) => mount(box, h("p.err", e.message)));
}

/** Replays a record someone kept (GET .../record): the file never leaves
 * this page except to be replayed by the server. */
export function showLoadReplay(app) {
  const box = h("section");
  const input = h("input", { type: "file", accept: "application/json,.json", "aria-label": "A saved game record" });
  let stop = null;
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    if (!file) return;
    let record;
    try {
      record = JSON.parse(await file.text());
    } catch {
      mount(box, h("p.err", "That file is not a game record (it is not JSON)."));
      return;
    }
    if (stop) stop();
    const seats = (record.seats || []).map((s) => ({ ...s, is_bot: false }));
    const facts = {
      id: null, game: record.game, room: record.room, options: record.options, seats,
      fetchSteps: (start, limit) => api(`/api/replay?start=${start}&limit=${limit}`, { method: "POST", body: record }),
    };
    mount(box, h("h2", `${title(record.game)} · room ${record.room ?? "?"} · ${when(record.finished_at)}`));
    const viewer = h("div");
    box.append(viewer);
    stop = replayViewer(viewer, facts);
  });
  mount(app, h("div.history",
    h("h1", "Open a saved game"),
    h("p.muted", "Choose a game record downloaded from a game's page (Full record, JSON) to replay it."),
    h("p", input),
    box));
  return () => stop && stop();
}
