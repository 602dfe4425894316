"""Reading a Posso score-sheet row as the engine writes it.

The engine's row is stored verbatim (score_hands.row) and also split into
columns: one line per player per hand, so a sheet can be read, summed or
searched without parsing JSON.  The expected shape is

    {"hand": 3, "dealer": 1, "requirement": ..., "went_out": 2,
     "points": [per seat], "totals": [per seat], "possos": [per seat],
     "cut": {...} | None}

(what app/games/posso writes; the cut is the dealer's, so it goes on the
dealer's line)

and a per-player list (`"players": [{"seat", "points", "total", "possos",
"cut"?}, ...]`) is read too.  Keys are looked up under their usual spellings
so that a renamed field costs a column, never the row: whatever is not found
is null in its column and still present in `row`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_POINTS = ("points", "hand_points", "scores")
_TOTALS = ("totals", "total", "running", "running_totals", "running_total")
_POSSOS = ("possos", "posso_count", "posso_counts", "posso_calls", "possos_called")
_WENT_OUT = ("went_out", "out", "winner")
_PLAYERS = ("players", "lines", "rows", "seats")


@dataclass(frozen=True)
class SheetLine:
    seat: int
    points: int | None
    total: int | None
    went_out: bool
    posso_count: int | None
    cut: Any


@dataclass(frozen=True)
class SheetHand:
    hand: int
    dealer: int | None
    requirement: Any
    went_out: int | None
    cut: Any
    lines: list[SheetLine]


def _first(d: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in d:
            return d[k]
    return None


def _int(x: Any) -> int | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return int(x)


def _at(seq: Any, i: int) -> Any:
    if isinstance(seq, list | tuple) and i < len(seq):
        return seq[i]
    if isinstance(seq, dict):
        return seq.get(str(i), seq.get(i))
    return None


def _seat_count(row: dict[str, Any], players: list[Any] | None) -> int:
    if players is not None:
        return len(players)
    for keys in (_POINTS, _TOTALS, _POSSOS):
        seq = _first(row, keys)
        if isinstance(seq, list | tuple | dict):
            return len(seq)
    return 0


def read_row(hand: int, row: dict[str, Any]) -> SheetHand:
    """Split one engine row into table-wide fields and per-seat lines."""
    if not isinstance(row, dict):
        raise ValueError(
            f"score row for hand {hand} must be a JSON object, not {type(row).__name__}"
        )
    raw_players = _first(row, _PLAYERS)
    players = raw_players if isinstance(raw_players, list) else None
    went_out = _first(row, _WENT_OUT)
    out_flags = went_out if isinstance(went_out, list) else None
    out_seat = _int(went_out)
    cut = row.get("cut", row.get("cuts"))
    dealer = _int(row.get("dealer"))  # the dealer cuts, unless the cut names its seat
    lines: list[SheetLine] = []
    for i in range(_seat_count(row, players)):
        if players is not None:
            p = players[i] if isinstance(players[i], dict) else {}
            seat = _int(p.get("seat"))
            seat = i if seat is None else seat
            points, total = _first(p, _POINTS), _first(p, _TOTALS)
            possos = _first(p, _POSSOS)
            own_cut = p.get("cut")
            out = bool(p.get("went_out")) or out_seat == seat
        else:
            seat = i
            points, total = _at(_first(row, _POINTS), i), _at(_first(row, _TOTALS), i)
            possos = _at(_first(row, _POSSOS), i)
            own_cut = cut if isinstance(cut, dict) and cut.get("seat", dealer) == i else None
            out = bool(_at(out_flags, i)) if out_flags is not None else out_seat == i
        lines.append(SheetLine(seat, _int(points), _int(total), out, _int(possos), own_cut))
    if out_seat is None:
        outs = [ln.seat for ln in lines if ln.went_out]
        out_seat = outs[0] if len(outs) == 1 else None
    return SheetHand(
        hand=hand,
        dealer=dealer,
        requirement=row.get("requirement"),
        went_out=out_seat,
        cut=cut,
        lines=lines,
    )
