"""The service's one line of callers: first come, first served, one call at a time, a bounded
wait (429 when full), and the errors of a call the service did not run."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator

import structlog

from browser_core import (
    FailureKind,
)

log = structlog.get_logger("search.service")


class ServiceError(Exception):
    """A call the service did not run; `status` is the HTTP status it answers with."""

    status = 500
    kind = FailureKind.SERVICE_UNAVAILABLE

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class QueueFull(ServiceError):
    status = 429
    kind = FailureKind.QUEUE_FULL


class Draining(ServiceError):
    status = 503
    kind = FailureKind.SERVICE_UNAVAILABLE


class CallQueue:
    """First come, first served, one call at a time; at most `max_waiting` wait behind it.

    `asyncio.Lock` hands the lock to its waiters in the order they asked, so arrival order is
    service order; a call that would wait beyond the bound is refused at once (429).
    """

    def __init__(self, max_waiting: int) -> None:
        self.max_waiting = max_waiting
        self.waiting = 0
        self.running: str | None = None
        self.running_since = 0.0
        self.tickets = 0
        self._lock = asyncio.Lock()
        self._recent_s: list[float] = []

    @contextlib.asynccontextmanager
    async def turn(self, label: str) -> AsyncIterator[int]:
        """Wait for the turn; yields the call's ticket (its place in arrival order)."""
        if self.waiting >= self.max_waiting:
            raise QueueFull(
                f"{self.waiting} calls are already waiting (SB_QUEUE_MAX={self.max_waiting})",
                retry_after_s=self.retry_after_s(),
            )
        self.tickets += 1
        ticket, arrived = self.tickets, time.monotonic()
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self.running, self.running_since = label, time.monotonic()
        log.info("service.turn", ticket=ticket, action=label, waited_ms=_ms_since(arrived))
        try:
            yield ticket
        finally:
            self._recent_s = [*self._recent_s[-19:], time.monotonic() - self.running_since]
            self.running = None
            self._lock.release()

    def retry_after_s(self) -> int:
        """Whole seconds until a place is likely free: the recent mean call times the line."""
        mean = sum(self._recent_s) / len(self._recent_s) if self._recent_s else 1.0
        return max(1, min(60, math.ceil(mean * (self.waiting + 1))))

    @property
    def idle(self) -> bool:
        return self.running is None and self.waiting == 0


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
