"""Card codes, decks and seeded shuffles shared by every engine.

A card is its code everywhere outside an engine's inner loops: rank
(`A 2 3 4 5 6 7 8 9 10 J Q K`) followed by suit (`C D H S`), or `JK` for a
joker.  Strings keep states JSON-ready and views trivially censorable; multi-deck
games simply repeat codes, since any copy of a card is as good as another.

Randomness never lives in a state as a mutable generator: every shuffle draws
from `rng_for(seed, *labels)`, a fresh generator keyed by the game's seed and
what is being shuffled (deal 3, reshuffle 2, ...).  States stay cheap to copy,
and replaying the same actions from the same seed gives the same cards.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("C", "D", "H", "S")
JOKER = "JK"

#: rank text -> 1..13 (A=1, J=11, Q=12, K=13)
RANK_VALUE: dict[str, int] = {r: i + 1 for i, r in enumerate(RANKS)}


class CardError(ValueError):
    """A string that is not a card code (or a card the game does not use)."""


def _split(code: object) -> tuple[str, str]:
    if not isinstance(code, str) or not code:
        raise CardError(f"{code!r} is not a card: expected a code like '10H', 'AS' or 'JK'")
    if code == JOKER:
        return JOKER, ""
    rank, suit = code[:-1], code[-1:]
    if rank not in RANK_VALUE or suit not in SUITS:
        raise CardError(
            f"{code!r} is not a card: rank must be one of {' '.join(RANKS)} "
            f"and suit one of {' '.join(SUITS)} (or 'JK' for a joker)"
        )
    return rank, suit


def validate(code: object, *, jokers: bool = True) -> str:
    """Return `code` if it names a card this game uses, else raise CardError."""
    rank, _ = _split(code)
    if rank == JOKER and not jokers:
        raise CardError("this game is played without jokers")
    assert isinstance(code, str)
    return code


def is_joker(code: str) -> bool:
    return code == JOKER


def rank(code: str) -> int:
    """1..13 (A low), 0 for a joker."""
    if code == JOKER:
        return 0
    return RANK_VALUE[code[:-1]]


def rank_text(code: str) -> str:
    return JOKER if code == JOKER else code[:-1]


def suit(code: str) -> str:
    """'C', 'D', 'H' or 'S'; '' for a joker."""
    return "" if code == JOKER else code[-1]


def make(rank_value: int, suit_letter: str) -> str:
    """The code for rank 1..13 of a suit."""
    return RANKS[rank_value - 1] + suit_letter


def standard_deck(*, jokers: int = 0) -> list[str]:
    """One 52-card deck, suit by suit, plus `jokers` jokers."""
    return [r + s for s in SUITS for r in RANKS] + [JOKER] * jokers


def build_deck(decks: int, *, jokers_per_deck: int = 0) -> list[str]:
    """`decks` standard decks together, unshuffled."""
    if decks < 1:
        raise ValueError("at least one deck is needed")
    out: list[str] = []
    for _ in range(decks):
        out.extend(standard_deck(jokers=jokers_per_deck))
    return out


def rng_for(seed: int, *labels: object) -> random.Random:
    """A generator for one purpose of one game; str seeds hash with SHA-512, so
    the sequence is the same on every machine and Python run."""
    return random.Random(":".join(str(x) for x in (seed, *labels)))


def shuffled(cards: Iterable[str], rng: random.Random) -> list[str]:
    out = list(cards)
    rng.shuffle(out)
    return out


def stacked(full: Sequence[str], top: Sequence[object] | None, rng: random.Random) -> list[str]:
    """The deck for a first deal: `top` in order, then every card it omits,
    shuffled.  Naming a card more often than `full` holds it is an error, with
    a message that says which card and how many copies exist."""
    if top is None:
        return shuffled(full, rng)
    if not isinstance(top, (list, tuple)):
        raise ValueError("deck must be a list of card codes")
    have = Counter(full)
    used: Counter[str] = Counter()
    for code in top:
        card = _checked(code)
        used[card] += 1
        if used[card] > have[card]:
            copies = have[card]
            raise ValueError(
                f"deck names {card} {used[card]} times, but the game holds "
                f"{copies} cop{'y' if copies == 1 else 'ies'}"
            )
    skip = used.copy()
    rest: list[str] = []
    for card in full:  # the omitted cards, in the full deck's order, then shuffled
        if skip[card]:
            skip[card] -= 1
        else:
            rest.append(card)
    return [str(c) for c in top] + shuffled(rest, rng)


def _checked(code: object) -> str:
    _split(code)
    assert isinstance(code, str)
    return code


def deal_clockwise(
    order: Sequence[str], seats: int, dealer: int, hand_size: int
) -> list[list[str]]:
    """Deal `hand_size` cards each, one at a time clockwise from the dealer's
    left (docs/cards.md, Dealing); the cards after them stay where they are in `order`."""
    hands: list[list[str]] = [[] for _ in range(seats)]
    for i, card in enumerate(order[: seats * hand_size]):
        hands[(dealer + 1 + i) % seats].append(card)
    return hands


SUIT_SYMBOLS: dict[str, str] = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def card_text(code: str) -> str:
    """A card as a player reads it in a message: "10♣", "Q♥", "joker".
    Codes stay on the wire; words meant for people use this."""
    if code == JOKER:
        return "joker"
    return code[:-1] + SUIT_SYMBOLS.get(code[-1:], code[-1:])


def cards_text(codes: Iterable[str]) -> str:
    return " ".join(card_text(c) for c in codes)


def sort_key(code: str) -> tuple[int, int]:
    """Suit then rank: a tidy hand order for views."""
    return (SUITS.index(suit(code)) if code != JOKER else 4, rank(code))
