"""The game's story so far, in pages: what a new or returning socket is told
before its view, and the older pages its log asks for (`story` command).

A socket's first frame once held every kept event it had not seen: in a long
2-player Posso game that was hundreds of small frames, more than a connection
may queue (app/rooms/connection.py, `MAX_QUEUE`), so the server dropped the
socket the moment it joined and its page reconnected for ever.  Now the first frame carries at
most one page - the newest events, bounded in bytes and in frames - and says
where the rest begins; the log fetches older pages only when asked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: bytes of events a page may hold (the view rides beside them: a few KB)
PAGE_BYTES = 24_576
#: events a page may hold: well under what a connection may queue at once
PAGE_FRAMES = 128

Kept = Iterable[tuple[int, tuple[tuple[int | None, str], ...]]]


@dataclass(frozen=True, slots=True)
class Page:
    #: encoded event frames, oldest first
    frames: list[str]
    #: the version of the oldest event in the page when older ones addressed
    #: to this seat are still kept (ask for them with `before` = this), else None
    before: int | None


def page(kept: Kept, seat: int | None, *, since: int, before: int | None = None) -> Page:
    """The newest events `seat` may see with `since` < v < `before`, as many
    as fit in one page.  `kept` is the room's history, oldest first."""
    newest_first = sorted(
        ((v, frames) for v, frames in kept if v > since and (before is None or v < before)),
        key=lambda item: -item[0],
    )
    taken: list[list[str]] = []
    size = count = 0
    oldest: int | None = None
    for v, frames in newest_first:
        mine = [frame for to, frame in frames if to is None or to == seat]
        if not mine:
            continue
        cost = sum(len(f) + 1 for f in mine)
        if taken and (size + cost > PAGE_BYTES or count + len(mine) > PAGE_FRAMES):
            return Page([f for group in reversed(taken) for f in group], oldest)
        taken.append(mine)
        size += cost
        count += len(mine)
        oldest = v
    return Page([f for group in reversed(taken) for f in group], None)


def more_frame(before: int) -> str:
    """Tells a socket that older events than those it was sent are kept."""
    return f'{{"story":{{"before":{before}}}}}'
