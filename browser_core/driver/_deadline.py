"""A call's deadline: one point in time that every wait of the call counts against (the turn,
attaching, the operation), so that no step can spend time another step already spent."""

from __future__ import annotations

import time


class Deadline:
    """A point in time; `remaining()` is what is left of it (never negative)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.at = self.started + seconds

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)
