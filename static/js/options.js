// The house-rules form, built from each game's options JSON schema (from
// GET /api/games), with a short explanation under every rule. Only values the
// host changed from the defaults are sent, so the server's defaults stay the
// single source of truth.
import { h } from "./dom.js";

// Plain-words explanations, used when the schema has no description.
const HELP = {
  posso: {
    decks: "How many 54-card decks (with jokers). Empty: one fewer than players, at least two.",
    start_hand: "Start at a later hand (1-10) for a shorter game; each hand deals 6 + hand cards.",
    cutting:
      "Before each deal the dealer cuts blind. A cut right on the number of cards dealt " +
      "(or one more) pulls the dealer's score down to the leader's (to lead) or to zero (to win).",
    dead_card: "After a Posso, the next player may only draw from the stack.",
    no_posso_down: "Players who have gone down may not call Posso for the rest of the hand.",
    first_dealer: "Who deals the first hand: seat 1, 2, … as the seats are numbered. Empty: drawn at random.",
  },
  possession: {
    open_pile: "Everyone may look through the whole discard pile, not just the ajar cards on top.",
    distinct_suit_sets: "Four players: sets need different suits and stop at four of a kind.",
    first_dealer: "Who deals (seat number). Empty: drawn at random.",
  },
  possum: {
    multiply: "Also allow two cards whose product is the top card (2 and 3 on a 6).",
    multi: "Play any number of cards equal to the top card, not just one.",
    no_face_cards: "Take the jacks, queens and kings out of the deck.",
    single_draw: "When you cannot play, draw only one card instead of up to two.",
    first_dealer: "Who deals (seat number). Empty: drawn at random.",
  },
  bigtwo: {
    pass_locks: "A player who passes sits out the rest of the trick.",
    first_dealer: "Who is dealt to first (seat number). Empty: drawn at random.",
  },
};

const LABELS = {
  posso: { cutting: { off: "Off", to_lead: "Cut to lead", to_win: "Cut to win" } },
};

function resolve(schema, root) {
  if (schema && schema.$ref) {
    const name = schema.$ref.split("/").pop();
    return { ...(root.$defs?.[name] || root.definitions?.[name] || {}), ...schema, $ref: undefined };
  }
  return schema || {};
}

/** Flatten anyOf [X, null] into X with nullable=true. */
function simplify(prop, root) {
  let p = resolve(prop, root);
  let nullable = false;
  if (Array.isArray(p.anyOf)) {
    const parts = p.anyOf.map((x) => resolve(x, root));
    const nonNull = parts.filter((x) => x.type !== "null");
    nullable = nonNull.length < parts.length;
    if (nonNull.length === 1) p = { ...nonNull[0], ...p, anyOf: undefined, type: nonNull[0].type };
  }
  if (p.const !== undefined && !p.enum) p = { ...p, enum: [p.const] };
  return { ...p, nullable };
}

// Friendlier names than the schema's generated titles.
const TITLES = {
  first_dealer: "First dealer",
  pass_locks: "Passing locks you out",
  start_hand: "Start at hand",
  cutting: "Cutting",
  dead_card: "Dead card",
  no_posso_down: "No Posso once down",
  decks: "Decks",
  open_pile: "Open pile",
  distinct_suit_sets: "Sets need different suits",
  multiply: "Multiply",
  multi: "Multi",
  no_face_cards: "No face cards",
  single_draw: "Single draw",
  posso_window: "Posso window (seconds)",
  posso_answer: "Posso answer (seconds)",
  cut: "Cut timer (seconds)",
  turn_timer: "Turn timer (seconds)",
  disconnect_grace: "Grace when disconnected (seconds)",
  bot_delay: "Bot thinking time (seconds)",
  public_replays: "Public replays",
};
// What an empty number field means, shown in it: the server's default for a
// field that may be empty ("none", "no limit"), never the word "default".
const EMPTY = {
  decks: "players − 1, at least 2",
  first_dealer: "at random",
  reshuffles: "no limit",
  turn_timer: "none",
};
/** Options naming a seat: the form numbers seats from 1, as the table does. */
const SEAT_NUMBERS = new Set(["first_dealer"]);

const titleOf = (key, p) => TITLES[key] || p.title || key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

/**
 * Build the form for one game, showing `current` (the stored values) where it
 * has them, else the defaults. Returns {el, values(), changed()}: values()
 * gives the options that differ from the defaults (a new room), changed()
 * those the person changed from what the form opened with (a room's saved
 * rules); both throw Error with a message for a field that cannot be read.
 */
export function optionsForm(game, current = {}) {
  const schema = game.options_schema || game.options || game.schema || {};
  const props = schema.properties || {};
  const fields = [];
  const box = h("div.options");
  for (const [key, raw] of Object.entries(props)) {
    const p = simplify(raw, schema);
    const help = p.description || HELP[game.name]?.[key] || "";
    const id = `opt-${game.name}-${key}`;
    let input;
    let read;
    const start = current && key in current ? current[key] : p.default;
    if (p.type === "boolean") {
      input = h("input", { type: "checkbox", id, checked: start === true });
      read = () => input.checked;
      box.append(
        h("label.field.check", { for: id }, input, h("span", h("span.label", titleOf(key, p)), help && h("span.help", help))),
      );
    } else {
      if (Array.isArray(p.enum)) {
        input = h("select", { id });
        if (p.nullable) input.append(h("option", { value: "" }, EMPTY[key] || "None"));
        for (const v of p.enum) {
          const o = h("option", { value: String(v) }, LABELS[game.name]?.[key]?.[v] || String(v).replace(/_/g, " "));
          if (v === start) o.selected = true;
          input.append(o);
        }
        read = () => {
          if (input.value === "") return null;
          const v = p.enum.find((x) => String(x) === input.value);
          return v === undefined ? input.value : v;
        };
      } else if (p.type === "integer" || p.type === "number") {
        // Seats are numbered from 1 on the page (Seat 1, Seat 2); the option
        // counts from 0, so the form shows and reads a seat one higher.
        const shift = SEAT_NUMBERS.has(key) ? 1 : 0;
        const lo = p.minimum ?? p.exclusiveMinimum;
        const hi = p.maximum ?? p.exclusiveMaximum;
        input = h("input", {
          type: "number", id, inputmode: "numeric",
          min: lo === undefined ? undefined : lo + shift, max: hi === undefined ? undefined : hi + shift,
          step: p.type === "integer" ? 1 : "any",
          value: start === null || start === undefined ? "" : start + shift,
          placeholder: p.nullable ? EMPTY[key] || "empty" : "",
        });
        read = () => {
          if (input.value === "") {
            if (p.nullable) return null;
            throw new Error(`${titleOf(key, p)}: enter a number`);
          }
          const n = Number(input.value);
          if (!Number.isFinite(n) || (p.type === "integer" && !Number.isInteger(n))) {
            throw new Error(`${titleOf(key, p)}: enter a whole number`);
          }
          return n - shift;
        };
      } else {
        input = h("input", { type: "text", id, value: start ?? "" });
        read = () => (input.value === "" && p.nullable ? null : input.value);
      }
      box.append(
        h("label.field", { for: id }, h("span.label", titleOf(key, p)), input, help && h("span.help", help)),
      );
    }
    input.name = key;
    fields.push({ key, read, def: p.default ?? null, start: start ?? null });
  }
  if (!fields.length) box.append(h("p.muted", "This game has no house rules to choose."));
  /** The fields whose value is not their `from` ("def" or "start") value. */
  const differing = (from) => {
    const out = {};
    for (const f of fields) {
      const v = f.read();
      if (v !== f[from]) out[f.key] = v;
    }
    return out;
  };
  return {
    el: box,
    values: () => differing("def"),
    changed: () => differing("start"),
  };
}

/** One line per option for the lobby ("Cutting: to lead"). */
export function describeOptions(game, options) {
  const props = game?.options_schema?.properties || game?.options?.properties || {};
  const lines = [];
  const known = Object.keys(props).length > 0;
  for (const [k, v] of Object.entries(options || {})) {
    if (v === null || v === undefined) continue;
    // only the house rules the host chooses: not what the server keeps
    // beside them (Posso's rules version, "rules: 2")
    if (known ? !(k in props) : k === "rules") continue;
    const title = TITLES[k] || props[k]?.title || k.replace(/_/g, " ");
    const shown = typeof v === "boolean" ? (v ? "on" : "off")
      : SEAT_NUMBERS.has(k) && typeof v === "number" ? `Seat ${v + 1}`
        : LABELS[game?.name]?.[k]?.[v] || String(v).replace(/_/g, " ");
    lines.push(`${title}: ${shown}`);
  }
  return lines;
}
