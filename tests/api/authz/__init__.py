"""The authorization matrix (issue 34 item 7): every HTTP route and every
socket command, asked by every kind of person, in every state a room can be
in, against the real app in-process (SQLite, accounts, sockets).

- world.py builds one room in a given state, with a browser per role;
- table.py says what each role gets, per state;
- tests/api/test_authorization.py runs every cell and checks that a refusal changed nothing.
"""
