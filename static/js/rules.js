// How to play, in the app: each game's rules in plain words with a few cards
// pictured, at /#rules/<game> (linked from the lobby and the table). The full
// rulings are docs/games/<game>.md; this page is the short of them.
import { h, mount } from "./dom.js";
import { cardEl } from "./cards.js";

const cards = (codes, note) =>
  h("figure.rule-example", h("div.rule-cards", codes.map((c) => cardEl(c, { extra: "sm" }))), h("figcaption", note));

const RULES = {
  posso: {
    title: "Posso",
    aim: "Ten hands of rummy. Lowest total after hand ten wins.",
    parts: [
      ["The hands", "Hand one deals 7 cards, and each hand one more, up to 16 in hand ten. Each hand asks for its own melds (its requirement): for example two threes of a kind. Twos and jokers are wild."],
      ["Your turn", "Draw the top of the stack or take the pile card. Then, if you can, go down: lay exactly the melds the hand asks for. Once down, you may play cards onto anyone's melds. End your turn by discarding one card."],
      ["Posso!", "After each discard, the others may call \"Posso\" to take that card out of turn, with a blind penalty card from the stack. The player next in turn answers: allow it, or deny it and take the card themselves."],
      ["The end of a hand", "When someone lays or plays away their last card, they go out. Everyone else scores the cards still in their hand. In hand ten you go down and out at once, with three runs of five or more in different suits."],
      ["The cut", "Before each deal the dealer cuts the deck blind. Lifting exactly the number of cards the deal needs (or one more) is a hit, which can bring the dealer's score down."],
    ],
    examples: [cards(["7C", "7D", "7H"], "A set: three of a kind."), cards(["5S", "6S", "2H", "8S"], "A run: one suit in order; the 2 is wild and stands for the 7.")],
    // what each hand asks for (app/games/posso/rules.py REQUIREMENTS)
    hands: [
      "two threes of a kind",
      "a three of a kind and a run of four",
      "two fours of a kind",
      "a four of a kind and a run of five",
      "two runs of five, in different suits",
      "a run of eight and a three of a kind",
      "three fours of a kind",
      "two fours of a kind and a run of five",
      "two runs of five in different suits and a four of a kind",
      "three runs of five or more in different suits, every card, no discard",
    ],
  },
  possession: {
    title: "Possession",
    aim: "Build properties in your estate, steal the others'. Each card in your estate scores a point; most points wins.",
    parts: [
      ["Your turn", "Pick up the pile's top card or the stock's. Then put down one thing: discard a card, lay a new property (it may use cards from the top of the pile), add to one of your properties, or steal someone's property by adding your cards to it: the whole property becomes yours."],
      ["Properties", "A set is three or four cards of one rank; a run is three or more cards of one suit in order (ace low). A run grows at one end at a time."],
      ["The showdown", "When the stock runs out, nobody draws or discards any more: on your turn make one property move or fold. The game ends when someone's hand is empty, or when everyone has folded."],
    ],
    examples: [cards(["QC", "QD", "QS"], "A set of queens."), cards(["4H", "5H", "6H"], "A run: add 7♥ (or 3♥) to it, or steal it by adding yours.")],
  },
  possum: {
    title: "Possum",
    aim: "Be the first to play all your cards.",
    parts: [
      ["Your turn", "Look at the top of the pile. Play one card of the same value, or two cards that add up to it, or a card x and a card y where x plus the top makes y. The last card you play is the new top."],
      ["When you cannot play", "You must play when you can. If you cannot, draw a card and play if you now can; else draw again. Then your turn ends by itself."],
      ["Values", "Ace is 1, 2 to 10 as printed, jack 11, queen 12, king 13. Suits do not matter."],
    ],
    examples: [cards(["6C", "2D", "4S"], "On a 6: 2 and 4 add up to 6."), cards(["9H", "3C", "QD"], "On a 9: 3 plus the 9 makes 12, so the 3 and the queen go down together.")],
  },
  bigtwo: {
    title: "Big Two",
    aim: "Be the first to play all your cards: four players, 13 cards each.",
    parts: [
      ["Playing", "Whoever holds the 3♣ leads first, and that first play must include it. Lead a single, a pair, a triple or a five-card hand. Each next player beats it with a higher play of the same kind, or passes."],
      ["Control", "When everyone else has passed, the last player to play takes control and leads anything."],
      ["Order", "3 is lowest, then 4 up to king, ace, and 2 highest. Between equal ranks, suits go ♣ < ♠ < ♥ < ♦."],
    ],
    examples: [cards(["3C"], "The lowest card, and the first lead."), cards(["2D"], "The highest card.")],
  },
};

/** The rules page for one game, or the list of games. */
export function showRules(app, game) {
  const r = RULES[game];
  if (!r) {
    mount(app, h("div.lobby", h("section.panel.rules",
      h("h1", "How to play"),
      h("ul", Object.entries(RULES).map(([k, v]) => h("li", h("a", { href: `/#rules/${k}` }, v.title)))))));
    return;
  }
  mount(app, h("div.lobby", h("section.panel.rules",
    h("h1", `How to play ${r.title}`),
    h("p.rule-aim", r.aim),
    r.parts.map(([head, text]) => h("section", h("h2", head), h("p", text))),
    r.hands ? h("section.rule-hands", h("h2", "What each hand asks for"),
      h("ol", r.hands.map((text, i) => h("li", { dataset: { hand: String(i + 1) } },
        h("strong", `Hand ${i + 1}`), ` (${7 + i} cards): ${text}`)))) : null,
    h("h2", "For example"),
    h("div.rule-examples", r.examples),
    h("p.muted", h("a", { href: "/#rules" }, "All games")),
  )));
}

/** A link that opens the rules beside the game (a new tab: the room stays). */
export const rulesLink = (game, label = "How to play") =>
  RULES[game] ? h("a.btn.rules-link", { href: `/#rules/${game}`, target: "_blank", rel: "noopener" }, label) : null;
