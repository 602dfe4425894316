"""The one clock a room reads: wall-clock seconds, injected.

Deadlines are wall-clock times (a view shows them, a rebuilt room resumes
from the stored time of the last action), while waits are loop timers.  The
two must agree or a wait fires early or late, and in the room simulator
(tests/sim) they must agree on a loop whose time is fast-forwarded: an hour
of a room's life runs in milliseconds.  So no deadline, wait or stored
time of a room calls `time.time()` itself; it asks the `Clock` it was given -
`time.time` in the server, `looptime`'s loop time plus a fixed start in the
simulator.  (The one other reading in app/rooms is a push request's signed
expiry, app/rooms/webpush.py, which a push service checks against the real
clock.)
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: wall-clock seconds since the epoch
Clock = Callable[[], float]

system_clock: Clock = time.time
