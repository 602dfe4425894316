"""Room codes, seat tokens and player ids.

Tokens are bearer secrets: the room keeps only their SHA-256, so a leaked
database (or a log of records) cannot be replayed into a seat.  (Same recipe as
app.api.identity.new_secret; rooms sit below the api layer, so they do not import it.)
"""

from __future__ import annotations

import hashlib
import secrets

#: no 0/O, 1/I/L: codes are read aloud and typed from phones
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
#: 31**12 is about 2**59: a code lets anyone watch the room, so it must be
#: hopeless to guess at the lookup rate allowed (docs/security.md has the sums)
CODE_LENGTH = 12


def new_token() -> str:
    """256 bits of randomness, URL-safe."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(code: str) -> str:
    """As typed or read aloud: any case, spaces or dashes anywhere."""
    return "".join(code.split()).replace("-", "").upper()


def is_code(code: str) -> bool:
    """Whether a normalised code could name a room at all: text that could not
    is answered "no room" without asking storage anything."""
    return len(code) == CODE_LENGTH and all(c in CODE_ALPHABET for c in code)


def new_player_id() -> str:
    """Not secret: names a player inside one room (views, tallies, records)."""
    return "p" + secrets.token_hex(5)
