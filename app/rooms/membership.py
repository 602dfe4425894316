"""Who is in a room: people and bots, their seats, the host, their tokens, and
who is away.

Pure bookkeeping - no I/O, no asyncio - so every rule about people can be read
and tested on its own.  The room changes it only under its lock, and saves
`snapshot()` whenever it changed.

Presence is one map: `away_since` holds every person (never a bot) with no
open socket, and the wall-clock time the last one went; a person who joined
over HTTP and has not connected yet is away since joining.  Seating order is
remembered (`seated_at`), because the host role passes to the connected
person who has been seated longest.
"""

from __future__ import annotations

import dataclasses
import itertools

from app.bots import DEFAULT_LEVEL
from app.rooms.clock import Clock, system_clock
from app.rooms.errors import RoomError
from app.rooms.ratelimit import TokenBucket
from app.rooms.settings import LOBBY_HOST_GRACE
from app.rooms.tokens import new_player_id, new_token, token_hash
from app.store.records import PlayerRecord, RemovedPerson, ReplacedToken, RoomRecord

#: people (players and spectators) in one room
MAX_MEMBERS = 60
#: seconds a seat link stays good
CLAIM_TTL = 15 * 60
#: replaced tokens remembered, so an old device coming back is told what
#: happened: at most this many per room, for at most REPLACED_TTL seconds
#: (stored with the room, so a restart forgets none of them)
REPLACED_MAX = 64
REPLACED_TTL = 7 * 24 * 3600
#: a seat link is made only for a person away this long at least, whatever the
#: room's `disconnect_grace` (a host who sets the grace to 0 mid-game cannot
#: hand a seat away while its phone reconnects); docs/security.md names it
SEAT_LINK_FLOOR = 10.0
#: people the host removed, remembered so the same browser or account cannot
#: walk back in (at most this many a room: the oldest is forgotten first)
REMOVED_MAX = 256
#: chat per person, players and spectators alike, whatever their number of tabs:
#: a message a second on average, in bursts of up to CHAT_BURST
CHAT_RATE = 1.0
CHAT_BURST = 8.0


@dataclasses.dataclass(frozen=True)
class Claim:
    """A pending one-time link to a person's place: `by` made it (the person
    themselves for a move to their own new device), until `expires`."""

    player_id: str
    by: str
    expires: float

    @property
    def own(self) -> bool:
        return self.by == self.player_id


def moved_refusal(r: ReplacedToken) -> RoomError:
    """What a device whose token a link replaced is told when it comes back."""
    if r.own:
        text = f"{r.name}, you moved your place to another device; this one is signed out"
    else:
        text = (
            f"{r.name}'s seat moved to a new device with a seat link {r.by} made "
            "while this device was away; ask the table for a new seat link to play here"
        )
    return RoomError("seat_moved", text)


class Membership:
    def __init__(
        self,
        record: RoomRecord,
        max_seats: int,
        clock: Clock = system_clock,
        grace: float = 60.0,
    ) -> None:
        self.record = record
        self.clock = clock
        self.players: dict[str, PlayerRecord] = {p.player_id: p for p in record.players}
        #: every name ever seen here, so a tally outlives a player who left
        self.names: dict[str, str] = {p.player_id: p.name for p in record.players}
        self.by_token: dict[str, str] = {
            p.token_hash: p.player_id for p in record.players if p.token_hash
        }
        self.seats: list[str | None] = [None] * max_seats
        now = self.clock()
        self.away_since: dict[str, float] = {}
        #: the grace each away person got when they went: the room's
        #: `disconnect_grace` at that moment, so a setting changed while they
        #: are away applies to the next drop, not to theirs
        self.graces: dict[str, float] = {}
        self.seated_at: dict[str, int] = {}
        #: one-time links by hash of the secret: at most one per person
        self.claims: dict[str, Claim] = {}
        #: tokens that links replaced, by hash, newest last (at most
        #: REPLACED_MAX, none older than REPLACED_TTL): the record's own map,
        #: so that it is saved with the room
        record.replaced = {h: r for h, r in record.replaced.items() if now - r.at <= REPLACED_TTL}
        self.replaced = record.replaced
        #: each person's chat allowance (people in the room only)
        self.chatter: dict[str, TokenBucket] = {}
        self._order = itertools.count()
        for p in sorted(record.players, key=lambda q: (q.seat is None, q.seat or 0)):
            if p.seat is not None:
                self.grow(p.seat + 1)
                self.seats[p.seat] = p.player_id
                self.seated_at[p.player_id] = next(self._order)
            if not p.is_bot:
                self.away_since[p.player_id] = now
                self.graces[p.player_id] = grace

    # ------------------------------------------------------------------ people

    @property
    def host(self) -> str | None:
        return self.record.host_player_id

    @host.setter
    def host(self, pid: str | None) -> None:
        self.record.host_player_id = pid

    def authenticate(self, token: str) -> PlayerRecord | None:
        return self.by_hash(token_hash(token)) if token else None

    def by_hash(self, hashed: str) -> PlayerRecord | None:
        """The person whose token hashes to `hashed` (a token relayed from
        another process travels as its hash only)."""
        pid = self.by_token.get(hashed) if hashed else None
        return self.players.get(pid) if pid else None

    def add_person(
        self,
        name: str,
        seat: int | None,
        *,
        guest_id: str | None,
        account_id: int | None,
        hashed: str | None = None,
        grace: float = 60.0,
    ) -> tuple[PlayerRecord, str]:
        """A new person, away until their first socket; returns them and their
        token ("" when the caller made the token and passed only its hash)."""
        if len(self.players) >= MAX_MEMBERS:
            raise RoomError("room_full", f"a room holds at most {MAX_MEMBERS} people")
        token = "" if hashed else new_token()
        player = PlayerRecord(
            player_id=self._new_player_id(),
            name=name,
            token_hash=hashed or token_hash(token),
            seat=None,
            guest_id=guest_id,
            account_id=account_id,
        )
        self._add(player)
        self.by_token[player.token_hash] = player.player_id
        self.away_since[player.player_id] = self.clock()
        self.graces[player.player_id] = grace
        self.seat(player, seat)
        return player, token

    def new_bot(self, seat_hint: int, level: str = DEFAULT_LEVEL) -> PlayerRecord:
        """A bot at `level`, named after the first free "Bot k" from its seat;
        not yet added."""
        names = {p.name for p in self.players.values()}
        k = seat_hint + 1
        while f"Bot {k}" in names:
            k += 1
        return PlayerRecord(
            player_id=self._new_player_id(),
            name=f"Bot {k}",
            token_hash="",
            seat=None,
            is_bot=True,
            bot_level=level,
        )

    def add_bot(self, bot: PlayerRecord, seat: int | None) -> None:
        self._add(bot)
        self.seat(bot, seat)

    def add_ghost(self, pid: str, seat: int) -> None:
        """A recovered game's seat whose player record is gone: a bot plays it."""
        ghost = PlayerRecord(
            player_id=pid, name=f"Bot {seat + 1}", token_hash="", seat=None, is_bot=True
        )
        self._add(ghost)

    def _add(self, p: PlayerRecord) -> None:
        self.players[p.player_id] = p
        self.names[p.player_id] = p.name
        self.record.players.append(p)

    def forget(self, p: PlayerRecord) -> None:
        """Out of the room for good: seat freed, token void, pending link and
        chat allowance gone; the name is kept only if the tally still shows
        it, so people coming and going cannot grow the room's maps."""
        pid = p.player_id
        self.seat(p, None)
        self.players.pop(pid, None)
        self.record.players = [q for q in self.record.players if q.player_id != pid]
        self.by_token.pop(p.token_hash, None)
        self.away_since.pop(pid, None)
        self.graces.pop(pid, None)
        self.seated_at.pop(pid, None)
        self.chatter.pop(pid, None)
        self.claims = {h: c for h, c in self.claims.items() if c.player_id != pid}
        if pid not in self.record.tally:  # a name the tally still shows stays
            self.names.pop(pid, None)

    def may_chat(self, p: PlayerRecord) -> bool:
        """Whether `p` may say something now (one allowance per person, so a
        spectator with many tabs says no more than a player)."""
        bucket = self.chatter.get(p.player_id)
        if bucket is None:
            bucket = self.chatter[p.player_id] = TokenBucket(CHAT_RATE, CHAT_BURST)
        return bucket.take()

    def void_token(self, p: PlayerRecord) -> None:
        self.by_token.pop(p.token_hash, None)
        p.token_hash = ""

    def reissue_token(self, p: PlayerRecord, hashed: str | None = None) -> str:
        """A fresh token for `p`, on another device: the old one stops working.
        ("" when the caller made it and passed only its hash, as another
        process does: a token never travels through Redis.)"""
        self.void_token(p)
        token = "" if hashed else new_token()
        p.token_hash = hashed or token_hash(token)
        self.by_token[p.token_hash] = p.player_id
        return token

    def by_account(self, account_id: int) -> PlayerRecord | None:
        """The person here signed in as `account_id` (they may open the room
        on any device and get their own seat back)."""
        return next((p for p in self.humans() if p.account_id == account_id and p.token_hash), None)

    def waiting_for(self, guest_id: str | None) -> PlayerRecord | None:
        """The guest's place here that a move made elsewhere released (no
        token: no device holds it), for them to take on their new browser."""
        if not guest_id:
            return None
        return next((p for p in self.humans() if p.guest_id == guest_id and not p.token_hash), None)

    def new_claim(
        self, p: PlayerRecord, by: PlayerRecord, hashed: str | None = None
    ) -> tuple[str, float]:
        """A one-time secret that hands `p`'s place to whoever opens it, made
        by `by`; and when it expires.  Only its hash is kept, and a person has
        one pending link at most: a new one replaces the last (so the map is
        never larger than the room).  With `hashed` the asker's process made
        the secret and sent only its hash (several processes): the answer's
        secret is "" and that process fills it in."""
        now = self.clock()
        self.claims = {
            h: c for h, c in self.claims.items() if c.expires > now and c.player_id != p.player_id
        }
        secret = "" if hashed else new_token()
        expires = now + CLAIM_TTL
        self.claims[hashed or token_hash(secret)] = Claim(p.player_id, by.player_id, expires)
        return secret, expires

    def take_claim(self, claim_hash: str) -> tuple[PlayerRecord, Claim] | None:
        """The person a link is for and the link (named by its secret's hash),
        once: it is used up."""
        claim = self.claims.pop(claim_hash, None)
        p = self.players.get(claim.player_id) if claim is not None else None
        if claim is None or p is None or p.is_bot or claim.expires < self.clock():
            return None
        return p, claim

    def remember_replaced(self, p: PlayerRecord, by: str, own: bool) -> None:
        """`p`'s current token is about to be replaced by a link `by` made."""
        if not p.token_hash:
            return
        now = self.clock()
        self.replaced[p.token_hash] = ReplacedToken(p.name, by, own, now)
        for h in [h for h, r in self.replaced.items() if now - r.at > REPLACED_TTL]:
            del self.replaced[h]
        while len(self.replaced) > REPLACED_MAX:
            del self.replaced[next(iter(self.replaced))]

    def refusal(self, hashed: str) -> RoomError:
        """Why a token that names nobody here is turned away, in plain words
        when a link replaced it."""
        replaced = self.replaced.get(hashed) if hashed else None
        if replaced is not None and self.clock() - replaced.at <= REPLACED_TTL:
            return moved_refusal(replaced)
        return RoomError("bad_token", "this link's seat token is missing or not valid")

    # ----------------------------------------------------------------- removal

    def remember_removed(self, p: PlayerRecord) -> None:
        """The host removed `p`: their browser and account are turned away
        from now on (`check_not_removed`), until the host lets them in."""
        if not (p.guest_id or p.account_id is not None):
            return  # nothing to know them by again
        removed = self.record.removed
        removed.pop(p.player_id, None)
        removed[p.player_id] = RemovedPerson(p.name, p.guest_id, p.account_id, self.clock())
        while len(removed) > REMOVED_MAX:
            del removed[next(iter(removed))]

    def check_not_removed(self, guest_id: str | None, account_id: int | None) -> None:
        for r in self.record.removed.values():
            if (guest_id and r.guest_id == guest_id) or (
                account_id is not None and r.account_id == account_id
            ):
                raise RoomError(
                    "removed",
                    "the host removed you from this room; ask them to let you back in",
                )

    def check_may_join(self, guest_id: str | None, account_id: int | None, locked: bool) -> None:
        """Why a new person may not come in, if they may not: removed before,
        or the room is locked to new people."""
        self.check_not_removed(guest_id, account_id)
        if locked:
            raise RoomError("locked", "the host has locked this room to new people")

    def let_in(self, pid: object) -> RemovedPerson:
        """Forget a removal: that browser and account may join again."""
        found = self.record.removed.pop(pid, None) if isinstance(pid, str) else None
        if found is None:
            raise RoomError("bad_player", "nobody by that id was removed from this room")
        return found

    def humans(self) -> list[PlayerRecord]:
        return [p for p in self.players.values() if not p.is_bot]

    def _new_player_id(self) -> str:
        while True:
            pid = new_player_id()
            if pid not in self.players:
                return pid

    # ------------------------------------------------------------------- seats

    def seat(self, p: PlayerRecord, target: int | None) -> None:
        """Move `p` to seat `target` (None: watching); the seat must be free."""
        if p.seat is not None and p.seat < len(self.seats) and self.seats[p.seat] == p.player_id:
            self.seats[p.seat] = None
        if target is None:
            self.seated_at.pop(p.player_id, None)
        else:
            self.seats[target] = p.player_id
            self.seated_at.setdefault(p.player_id, next(self._order))
        p.seat = target

    def free_seat(self) -> int | None:
        return next((i for i, pid in enumerate(self.seats) if pid is None), None)

    def seat_to(self, order: list[str]) -> None:
        """Seat exactly `order`, one per seat, as a game starts or is recovered."""
        for pid in self.seats:
            if pid is not None and pid not in order:
                self.players[pid].seat = None
                self.seated_at.pop(pid, None)
        self.seats = [None] * len(order)
        for i, pid in enumerate(order):
            self.seat(self.players[pid], i)

    def grow(self, size: int) -> None:
        if len(self.seats) < size:
            self.seats.extend([None] * (size - len(self.seats)))

    def refit(self, size: int) -> None:
        """Seats for a game of `size`: keep people in the seats that still exist,
        move the others to free seats (or to watching) and drop surplus bots."""
        old = self.seats
        self.seats = old[:size] + [None] * max(0, size - len(old))
        for pid in old[size:]:
            if pid is None:
                continue
            p = self.players[pid]
            p.seat = None
            if p.is_bot:
                self.forget(p)
                continue
            self.seat(p, self.free_seat())

    # ---------------------------------------------------------------- presence

    def connected(self, pid: str) -> bool:
        return pid in self.players and pid not in self.away_since

    def arrived(self, pid: str) -> None:
        self.away_since.pop(pid, None)
        self.graces.pop(pid, None)

    def left(self, pid: str, grace: float) -> None:
        """`pid`'s last socket went: away from now, with the room's grace as it
        is now (a person already away keeps the moment and grace they had)."""
        p = self.players.get(pid)
        if p is not None and not p.is_bot and pid not in self.away_since:
            self.away_since[pid] = self.clock()
            self.graces[pid] = grace

    def grace_ends(self, pid: str, grace: float | None = None) -> float | None:
        """When `pid`'s grace is over (None: they are here).  `grace` overrides
        the one they got when they went (the host's shorter lobby grace)."""
        away = self.away_since.get(pid)
        if away is None:
            return None
        return away + (self.graces.get(pid, 0.0) if grace is None else grace)

    def heir(self) -> PlayerRecord | None:
        """Who takes the host role: the connected person seated longest, else
        any connected person; None when nobody is connected."""
        here = [p for p in self.humans() if self.connected(p.player_id)]
        if not here:
            return None
        return min(
            here,
            key=lambda p: (p.seat is None, self.seated_at.get(p.player_id, 0)),
        )

    def host_away_since(self) -> float | None:
        host = self.host
        return self.away_since.get(host) if host is not None else None

    def host_grace_ends(self, playing: bool) -> float | None:
        """When an away host's role passes on: their own grace, shortened to
        LOBBY_HOST_GRACE between games (the others are waiting to start)."""
        host = self.host
        if host is None or host not in self.away_since:
            return None
        grace = self.graces.get(host, 0.0)
        return self.grace_ends(host, grace if playing else min(grace, LOBBY_HOST_GRACE))

    # ------------------------------------------------------------------ saving

    def snapshot(self) -> RoomRecord:
        """A deep copy of the record, for storage (the live one keeps changing)."""
        r = self.record
        return RoomRecord(
            code=r.code,
            game=r.game,
            options=dict(r.options),
            settings=dict(r.settings),
            host_player_id=r.host_player_id,
            players=[p.copy() for p in r.players],
            tally=dict(r.tally),
            closed=r.closed,
            replaced=dict(r.replaced),
            removed=dict(r.removed),
        )
