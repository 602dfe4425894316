"""The strong level: determinized search with the heuristic bot as playout policy.

To choose a move the bot samples worlds consistent with its view
(app/bots/worlds.py), and in each world tries each of a short list of its
legal actions, then plays the game out with every seat driven by the game's
heuristic bot, and scores how the game ended for itself.  The action with the
best total over all worlds is played.  Every candidate is tried in the same
worlds with the same playout generator, so the comparison between candidates
is not drowned in the luck of the sampled cards.

The budget is a number of playouts (worlds x candidates), not a time: the
same view, legal list and generator give the same choice on any machine, so a
game with strong bots replays exactly.  A wall-clock cap above the budget
guards a slow machine: past it the bot plays the heuristic's move at once.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from app.bots.base import Action, Bot
from app.bots.shortlists import SHORTLISTS, Shortlist
from app.bots.worlds import SAMPLERS, Sampler, Unaccounted
from app.games import GAMES, Game, IllegalAction
from app.games.possession.model import PossessionState
from app.games.posso.model import OVER as POSSO_OVER
from app.games.posso.model import PossoState
from app.games.posso.rules import hand_points

View = dict[str, Any]
#: (game, world, state, seat, actions since the world) -> how good `state` is
#: for `seat`, about 0..1; None: play on
Judge = Callable[[Game[Any], Any, Any, int, int], float | None]

#: playouts a move, calibrated to about 200 ms a move on the development machine
#: (bench/arena.py prints think times; docs/bots.md has the figures)
DEFAULT_PLAYOUTS: dict[str, int] = {"bigtwo": 24, "possum": 24, "possession": 32, "posso": 20}
#: Possession playouts stop this many actions in, unless the game ends first
POSSESSION_HORIZON = 40
#: Posso playouts stop this many actions in, unless the hand ends first
POSSO_HORIZON = 60
#: points that weigh as much as beating every other seat in a hand
POSSO_POINTS_SCALE = 200
#: past this, a move is the heuristic's: a search that slow has something wrong
WALL_CAP_SECONDS = 1.0
#: how many standard errors a candidate must beat the heuristic's move by
CONFIDENCE = 1.0
#: a playout that goes on longer than this is cut and judged where it stands
MAX_PLAYOUT_ACTIONS = 2_000


def finish_value(game: Game[Any], world: Any, state: Any, seat: int, steps: int) -> float | None:
    """A finished game's worth to `seat`: first place (shared when tied) counts
    most; a better place a little, so a lost game is still played for second."""
    result = game.result(state)
    if result is None:
        return None
    places: list[list[int]] = result["places"]
    rank = next((i for i, group in enumerate(places) if seat in group), len(places))
    win = 1.0 / len(places[0]) if rank == 0 else 0.0
    spread = max(1, len(places) - 1)
    return win + 0.25 * (1 - rank / spread)


def evident_best(values: list[list[float]], confidence: float) -> int:
    """The candidate to play: the heuristic's (index 0) unless another beats it
    in the same worlds by more than `confidence` standard errors of the
    difference.  A few dozen sampled worlds tell moves apart only when one is
    clearly better; where they cannot, the heuristic's judgement is the better
    guess than the noise of the samples."""
    base = values[0]
    n = len(base)
    best, best_bound = 0, 0.0
    for i in range(1, len(values)):
        diffs = [a - b for a, b in zip(values[i], base, strict=True)]
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
        bound = mean - confidence * math.sqrt(var / n)
        if bound > best_bound:
            best, best_bound = i, bound
    return best


class SearchBot:
    def __init__(
        self,
        game: Game[Any],
        heuristic: Bot,
        sampler: Sampler,
        shortlist: Shortlist,
        playouts: int,
        judge: Judge = finish_value,
        wall_cap: float = WALL_CAP_SECONDS,
        confidence: float = CONFIDENCE,
    ) -> None:
        self.game = game
        self.heuristic = heuristic
        self.sampler = sampler
        self.shortlist = shortlist
        self.playouts = playouts
        self.judge = judge
        self.wall_cap = wall_cap
        self.confidence = confidence

    def choose(self, view: View, legal: list[Action], seat: int, rng: random.Random) -> Action:
        fallback = self.heuristic.choose(view, legal, seat, rng)
        candidates = self.shortlist(view, legal, seat, fallback)
        if len(candidates) < 2:
            return fallback
        seed = rng.getrandbits(64)
        deadline = time.perf_counter() + self.wall_cap
        # values[i][w]: candidate i in world w
        values: list[list[float]] = [[] for _ in candidates]
        for w in range(max(2, self.playouts // len(candidates))):
            world_rng = random.Random(seed + w)
            try:
                world = self.sampler(view, seat, world_rng)
            except Unaccounted:
                return fallback
            playout_seed = world_rng.getrandbits(64)
            for i, action in enumerate(candidates):
                if time.perf_counter() > deadline:
                    return fallback
                values[i].append(self.playout(world, seat, action, random.Random(playout_seed)))
        return candidates[evident_best(values, self.confidence)]

    def playout(self, world: Any, seat: int, action: Action, rng: random.Random) -> float:
        game, policy = self.game, self.heuristic
        try:
            state, _ = game.apply(world, seat, action)
        except IllegalAction:
            return 0.0  # never in a world true to the view; counted as the worst
        for steps in range(MAX_PLAYOUT_ACTIONS):
            value = self.judge(game, world, state, seat, steps)
            if value is not None:
                return value
            acting = sorted(game.to_act(state))
            if not acting:
                state, _ = game.apply(state, None, {"type": "timeout"})
                continue
            actor = acting[0] if len(acting) == 1 else rng.choice(acting)
            legal = game.legal_actions(state, actor)
            if len(legal) == 1:  # forced: no view to build, nothing to ask
                move = legal[0]
            else:
                move = policy.choose(game.view(state, actor), legal, actor, rng)
            state, _ = game.apply(state, actor, move)
        return 0.0


def relative_points(points: list[int], seat: int) -> float:
    """Share of the other seats with more points than `seat` (ties count half)."""
    mine = points[seat]
    others = [p for s, p in enumerate(points) if s != seat]
    beaten = sum(1.0 if p > mine else 0.5 if p == mine else 0.0 for p in others)
    return beaten / max(1, len(others))


def posso_hand_value(
    game: Game[Any], world: PossoState, state: PossoState, seat: int, steps: int
) -> float | None:
    """Posso is judged on the hand under way, not the whole game (ten hands
    would take a playout seconds): the hand's points once it ends, or, after
    `POSSO_HORIZON` actions, the points each seat still holds, as if it ended
    there.  Fewer points than the others is what lowers a total."""
    if state.phase == POSSO_OVER or state.hand_no != world.hand_no:
        row = next(r for r in state.sheet if r["hand"] == world.hand_no)
        points: list[int] = row["points"]
    elif steps >= POSSO_HORIZON:
        points = [hand_points(h) for h in state.hands]
    else:
        return None
    return relative_points(points, seat) - points[seat] / POSSO_POINTS_SCALE


def possession_value(
    game: Game[Any], world: Any, state: PossessionState, seat: int, steps: int
) -> float | None:
    """A Possession game runs to hundreds of actions, too long for more than a
    world or two within the budget; a playout stops `POSSESSION_HORIZON`
    actions in and is judged on the estates then (more cards than the others
    is what wins), unless the game ended first."""
    done = finish_value(game, world, state, seat, steps)
    if done is not None or steps < POSSESSION_HORIZON:
        return done
    estates = [0] * state.rules.seats
    for prop in state.properties:
        estates[prop.owner] += len(prop.cards)
    return relative_points([-n for n in estates], seat)


JUDGES: dict[str, Judge] = {"posso": posso_hand_value, "possession": possession_value}


def search_bot(
    game_name: str, heuristic: Bot, playouts: int | None = None, wall_cap: float | None = None
) -> SearchBot | None:
    """The determinized search of a game, or None for a game without one."""
    sampler = SAMPLERS.get(game_name)
    shortlist = SHORTLISTS.get(game_name)
    if sampler is None or shortlist is None:
        return None
    budget = playouts if playouts is not None else DEFAULT_PLAYOUTS[game_name]
    judge = JUDGES.get(game_name, finish_value)
    cap = WALL_CAP_SECONDS if wall_cap is None else wall_cap
    return SearchBot(GAMES[game_name], heuristic, sampler, shortlist, budget, judge, cap)


#: games whose search, measured in bench/arena.py, plays no better than the
#: heuristic: their strong level is the heuristic (docs/bots.md, Figures)
HEURISTIC_IS_STRONGER = frozenset({"possum"})


def strong_bot(
    game_name: str, heuristic: Bot, playouts: int | None = None, wall_cap: float | None = None
) -> Bot | None:
    """The strong bot of a game, or None where the heuristic is the strongest."""
    if game_name in HEURISTIC_IS_STRONGER:
        return None
    return search_bot(game_name, heuristic, playouts, wall_cap)
