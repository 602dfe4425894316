"""The engine contract every game implements; docs/games/*.md describe each game's side of it.

An engine is a pure function of (options, seed, actions): no I/O, no clock, no
asyncio.  The room above it owns time (a timer that runs out becomes the action
`{"type": "timeout"}` from seat `None`) and owns delivery (every event names the
seat it is for, or `None` for everyone).  Everything that crosses this boundary
is JSON-ready: actions in, views and events out, cards as their codes.

`apply` is the only door into a state: it validates everything and either
returns a new state or raises `IllegalAction` having changed nothing.  Callers
never need to ask "is this legal?" first, and a refused action can never
corrupt a game.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from app.games.cards import CardError, card_text, rng_for, standard_deck, validate

Action = dict[str, Any]
#: An event: `{"type": ..., "to": None | seat, ...}`.  `to` is who may see it.
Event = dict[str, Any]
View = dict[str, Any]

S = TypeVar("S")


class IllegalAction(Exception):
    """An action the rules refuse.  `code` is stable and machine-readable
    (`not_your_turn`, `bad_card`, ...); `message` is for the player."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class GameOptions(BaseModel):
    """Base for each game's options: unknown keys are an error, values are
    checked strictly enough that a typo never silently becomes a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def event(type_: str, to: int | None = None, **fields: Any) -> Event:
    """An event for everyone (`to=None`) or for one seat."""
    return {"type": type_, "to": to, **fields}


#: action type -> (required fields, optional fields); "type" itself is implied.
Shapes = Mapping[str, tuple[frozenset[str], frozenset[str]]]


def read_action(action: object, shapes: Shapes, game_title: str) -> str:
    """The action's type, once its envelope is known to be sound.

    Actions come straight from browsers, so every engine refuses the same
    malformed envelopes with the same codes before any rule runs: a client can
    rely on `bad_action` meaning "fix the message" and `unknown_action`
    meaning "this game has no such move", whichever game it is talking to.
    """
    if not isinstance(action, dict):
        raise IllegalAction("bad_action", "an action must be a JSON object with a 'type'")
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in shapes:
        known = ", ".join(sorted(shapes))
        raise IllegalAction(
            "unknown_action", f"unknown action type {kind!r}: {game_title} knows {known}"
        )
    required, optional = shapes[kind]
    keys = action.keys()
    if len(keys) == len(required) + 1 and required <= keys:
        return kind  # exactly "type" and the required fields: the usual action
    missing = required - keys
    if missing:
        raise IllegalAction("bad_action", f"{kind} needs field(s) {', '.join(sorted(missing))}")
    extra = keys - required - optional - {"type"}
    if extra:
        raise IllegalAction("bad_action", f"{kind} takes no field(s) {', '.join(sorted(extra))}")
    return kind


#: the 52 codes every game takes (a joker is checked against the game's rules)
STANDARD: frozenset[str] = frozenset(standard_deck())


def read_card(value: object, *, jokers: bool = True) -> str:
    """A card code from the wire, or `bad_card` with the card module's reason,
    so a typo and a joker in a joker-less game read the same in every game."""
    try:
        return validate(value, jokers=jokers)
    except CardError as err:
        raise IllegalAction("bad_card", str(err)) from None


def read_cards(value: object, *, jokers: bool = True, what: str = "cards") -> list[str]:
    """A non-empty list of card codes.  An empty or non-list value is
    `bad_cards` (the selection is wrong) rather than `bad_action`, so a client
    can point at the cards the player picked; `what` names the field."""
    if not isinstance(value, list) or not value:
        raise IllegalAction("bad_cards", f"{what} must be a non-empty list of card codes")
    # a standard card is checked by one look-up; anything else the long way
    return [v if type(v) is str and v in STANDARD else read_card(v, jokers=jokers) for v in value]


def check_held(hand: Sequence[str], chosen: Sequence[str]) -> None:
    """Refuse cards the seat does not hold.  Copies are counted because two-deck
    games hold duplicates: naming 7D twice needs two 7Ds in hand."""
    if len(set(chosen)) == len(chosen) and all(card in hand for card in chosen):
        return  # the usual case, without counting
    held = Counter(hand)
    problems = []
    for card, wanted in Counter(chosen).items():
        if held[card] == 0:
            problems.append(f"you do not hold {card_text(card)}")
        elif held[card] < wanted:
            problems.append(f"you hold {held[card]} {card_text(card)}, not {wanted}")
    if problems:
        raise IllegalAction("not_in_hand", "; ".join(problems))


#: what a value must be, in plain words, by pydantic's error type (its own
#: messages, "Input should be less than or equal to 10", are for programmers)
_MUST_BE: dict[str, str] = {
    "less_than_equal": "at most {le}",
    "greater_than_equal": "at least {ge}",
    "less_than": "below {lt}",
    "greater_than": "above {gt}",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a number",
    "bool_type": "on or off",
    "bool_parsing": "on or off",
    "string_type": "text",
    "literal_error": "one of {expected}",
    "enum": "one of {expected}",
}


#: house rules whose form label (static/js/options.js) is not their name in words
OPTION_LABELS = {
    "start_hand": "Start at hand",
    "no_posso_down": "No Posso once down",
    "pass_locks": "Passing locks you out",
    "distinct_suit_sets": "Sets need different suits",
}


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _plain(e: Any, labels: Mapping[str, str]) -> str:
    name = str(e["loc"][0]) if e["loc"] else ""
    label = labels.get(name) or (_label(name) if name else "These options")
    kind = e["type"]
    ctx = {k: str(v).replace("_", " ") for k, v in (e.get("ctx") or {}).items()}
    if kind == "extra_forbidden":
        return f"{label}: unknown option"
    if name == "first_dealer" and kind in ("less_than_equal", "greater_than_equal"):
        # seats are shown numbered from 1; the option counts from 0
        top = f", 1 to {int(e['ctx']['le']) + 1}" if "le" in (e.get("ctx") or {}) else ""
        return f"{label}: must be one of the seats{top}"
    if kind == "missing":
        return f"{label}: needed"
    template = _MUST_BE.get(kind)
    if template is None:
        return f"{label}: not a value it can take"
    return f"{label}: must be {template.format(**ctx)}"


def describe_validation_error(err: ValidationError, labels: Mapping[str, str] | None = None) -> str:
    """One line per problem in plain words, e.g. "Start at hand: must be at most 10";
    `labels` names fields as the form a person filled in does."""
    return "; ".join(_plain(e, labels or {}) for e in err.errors())


class Game(ABC, Generic[S]):
    """One game's rules.  Instances are stateless singletons registered in
    `app.games.GAMES`; all game data lives in the state objects they return."""

    name: ClassVar[str]
    title: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    Options: ClassVar[type[GameOptions]]

    def stored_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options a stored game replays with.  A game whose rules changed
        records their version in its options (Posso's `rules`); a game stored
        before that names none and replays under the rules it was played by."""
        return dict(options)

    def parse_options(self, options: dict[str, Any] | None) -> GameOptions:
        """Validate room options, raising ValueError with a message a host can act on."""
        if options is not None and not isinstance(options, dict):
            raise ValueError("options must be a JSON object")
        try:
            return self.Options.model_validate(options or {})
        except ValidationError as err:
            problems = describe_validation_error(err, OPTION_LABELS)
            raise ValueError(f"{self.title} house rules: {problems}") from None

    def check_seats(self, seats: int) -> None:
        if not isinstance(seats, int) or not self.min_seats <= seats <= self.max_seats:
            raise ValueError(
                f"{self.name} is played by {self.min_seats} to {self.max_seats} seats, not {seats}"
            )

    def choose_dealer(self, seats: int, seed: int, chosen: int | None) -> int:
        """The first dealer (docs/cards.md, First dealer): the option when the host set
        one, else drawn from the seed, so a replay deals to the same seats."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError("seed must be an integer")
        if chosen is None:
            return rng_for(seed, "first_dealer").randrange(seats)
        if not 0 <= chosen < seats:
            # the option counts seats from 0; people see them numbered from 1
            raise ValueError(
                f"the first dealer must be one of the {seats} seats at this table "
                f"(1 to {seats}), not seat {chosen + 1}"
            )
        return chosen

    @abstractmethod
    def new_game(
        self, seats: int, options: dict[str, Any], seed: int, deck: list[str] | None = None
    ) -> S:
        """Deal the first hand.  `deck` stacks it from the top (docs/cards.md, Dealing)."""

    @abstractmethod
    def to_act(self, state: S) -> set[int]:
        """Seats that may act now; empty when over or waiting only for a timeout."""

    @abstractmethod
    def legal_actions(self, state: S, seat: int) -> list[Action]:
        """Every legal action for `seat` (a representative set where combinatorial)."""

    @abstractmethod
    def apply(self, state: S, seat: int | None, action: Action) -> tuple[S, list[Event]]:
        """The new state and its events; raises IllegalAction and changes nothing."""

    @abstractmethod
    def view(self, state: S, seat: int | None) -> View:
        """What `seat` may know, JSON-ready; `None` is a spectator."""

    def public_view(self, state: S) -> View | None:
        """The part of `view` that is the same for every seat and for a
        spectator, or None.  When a game gives one, `view(state, seat)` is
        `seat_view(state, seat)` and this merged, no key in both: a room then
        builds and encodes it once per state rather than once per socket."""
        return None

    def seat_view(self, state: S, seat: int | None) -> View:
        """What `view` holds beside `public_view` (all of it when that is None):
        never empty, since it says whose view it is (`"seat"`)."""
        return self.view(state, seat)

    def seat_view_key(self, state: S, seat: int | None) -> object:
        """An object that stays the same one (`is`) for as long as
        `seat_view(state, seat)` stays equal: a room encodes a seat's own part
        again only when its key is another object.  By default the state
        itself (one encoding per state); a game whose states share the parts
        a move leaves alone can do better (Big Two: the seat's hand)."""
        return state

    @abstractmethod
    def result(self, state: S) -> dict[str, Any] | None:
        """`{"places": [[seat, ...], ...], "scores": [...]}` once over, else None."""

    def timer(self, state: S) -> str | None:
        """The room timer the game is waiting on now, if any: e.g. "posso_window",
        "posso_answer", "cut".  The room knows the durations; when one runs out it
        applies `{"type": "timeout"}` from seat None.  Games without timers: None."""
        return None

    def score_rows(self, state: S) -> list[dict[str, Any]]:
        """Every score-sheet row written so far, each with its `"hand"` - the
        same rows as the `hand_ended` events carried - so the room can store
        any that a failed write or a crash left out.  Games without a score
        sheet: none."""
        return []

    def is_over(self, state: S) -> bool:
        return self.result(state) is not None
