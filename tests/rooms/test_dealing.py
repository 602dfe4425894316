"""The room's games one after another (app/rooms/dealing.py): the series
tally a finished game adds to.  Dealing, finishing and rebuilding games are
walked through whole rooms in test_room.py, test_recovery.py and
test_time_and_faults.py."""

from __future__ import annotations

from app.rooms.dealing import add_to_tally


def test_tied_seats_each_get_the_points_of_the_place_they_share() -> None:
    tally = {"ann": 1}
    add_to_tally(tally, ["ann", "bob", "cy", "di"], {"places": [[2], [0, 3], [1]]})
    # first 3; two share second (2 each); the one after them is fourth (0)
    assert tally == {"ann": 3, "bob": 0, "cy": 3, "di": 2}


def test_a_game_without_places_adds_nothing() -> None:
    tally = {"ann": 4}
    add_to_tally(tally, ["ann", "bob"], {})
    assert tally == {"ann": 4}
