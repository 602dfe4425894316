"""People, as the records name them in public.

A person is a signed-in account (`a12`) or a guest browser (`g` and 24 hex
digits of a hash of its guest id).  The guest id is the secret in the
browser's cookie, so it never appears in a page or a URL; its hash does, and
cannot be turned back into it.  A guest's records stay with that browser:
signing in moves them to the account, which keeps them across devices.
"""

from __future__ import annotations

import hashlib
import re

#: a public person id, as it appears in a URL
PERSON_ID = re.compile(r"^(?:a[1-9][0-9]{0,9}|g[0-9a-f]{24})$")


def person_of(guest_id: str | None, account_id: int | None) -> str | None:
    """The public person id of a players row: its account, else its guest;
    None for a bot."""
    if account_id is not None:
        return f"a{account_id}"
    if guest_id:
        return "g" + hashlib.sha256(b"person:" + guest_id.encode()).hexdigest()[:24]
    return None


def persons_of(guest_id: str | None, account_id: int | None) -> list[str]:
    """Every person id an asker answers to: their account and their browser."""
    found = [person_of(None, account_id), person_of(guest_id, None)]
    return [p for p in found if p is not None]
