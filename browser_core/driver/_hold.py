"""A person's hold on the broadcast tab: while someone holds it from the console, no call
drives the tab (`Driver.run` refuses them with `ScreenHeld`, and the walk goes on to its
next provider, such as Gemini), and the person's own operations pass.

Guards against a call and a person fighting over the screen: the hold is taken only on the
tab's turn (between calls), given back by the person or after `SB_SCREEN_IDLE_S` seconds
without their input, and read from any thread (the service's loop and the tool's).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from .._errors import ScreenHeld

log = structlog.get_logger("browser_core.driver")


@dataclass(frozen=True)
class Holder:
    """Who holds the screen: an opaque owner id (never a secret) and the name shown."""

    owner: str
    name: str
    since: float  # Unix time


class ScreenHold:
    """At most one holder; `idle_s` without `touch()` gives the screen back by itself.
    `on_release(holder, why)` callbacks hear every give back (any thread)."""

    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self._holder: Holder | None = None
        self._active = 0.0
        self._lock = threading.Lock()
        self.on_release: list[Callable[[Holder, str], None]] = []

    def current(self) -> Holder | None:
        """The holder, or None (an idle hold is given back here, once)."""
        with self._lock:
            holder = self._holder
            if holder is None or time.monotonic() - self._active < self.idle_s:
                return holder
            self._holder = None
        self._released(holder, f"idle for {self.idle_s:g} s (SB_SCREEN_IDLE_S)")
        return None

    def take(self, owner: str, name: str) -> Holder:
        """Hold the screen for `owner` (again, if they hold it); `ScreenHeld` if another does."""
        held = self.current()
        with self._lock:
            if held is not None and held.owner != owner:
                raise refusal(held)
            self._holder = held or Holder(owner, name, time.time())
            self._active = time.monotonic()
            holder = self._holder
        if held is None:
            log.info("screen.taken", holder=name)
        return holder

    def touch(self, owner: str) -> bool:
        """The holder acted: the idle clock starts again. Whether `owner` holds the screen."""
        if not self.holds(owner):
            return False
        with self._lock:
            self._active = time.monotonic()
        return True

    def holds(self, owner: str) -> bool:
        held = self.current()
        return held is not None and held.owner == owner

    def give_back(self, owner: str, why: str = "given back") -> bool:
        """End `owner`'s hold; whether they held the screen."""
        with self._lock:
            holder = self._holder
            if holder is None or holder.owner != owner:
                return False
            self._holder = None
        self._released(holder, why)
        return True

    def check(self, by: str | None) -> None:
        """Raise `ScreenHeld` unless the screen is free or held by `by`."""
        held = self.current()
        if held is not None and held.owner != by:
            raise refusal(held)

    async def free(self, by: str | None, wait_s: float, sleep: Callable[[float], object]) -> None:
        """Wait (at most `wait_s`) for a hold by someone other than `by` to end."""
        ends = time.monotonic() + wait_s
        while time.monotonic() < ends:
            held = self.current()
            if held is None or held.owner == by:
                return
            await sleep(min(0.1, max(0.0, ends - time.monotonic())))  # type: ignore[misc]

    def _released(self, holder: Holder, why: str) -> None:
        held_s = round(time.time() - holder.since, 1)
        log.info("screen.given_back", holder=holder.name, why=why, held_s=held_s)
        for callback in list(self.on_release):
            try:
                callback(holder, why)
            except Exception as exc:  # a listener's failure never keeps the screen held
                log.info("screen.release_listener_failed", error=str(exc)[:200])


def refusal(held: Holder) -> ScreenHeld:
    since = time.strftime("%H:%M", time.localtime(held.since))
    return ScreenHeld(
        f"the screen is held by {held.name} in the console (since {since})",
        hint="the call went to the next provider; the person gives the screen back in the "
        "console, or it comes back by itself after SB_SCREEN_IDLE_S seconds without input",
    )
