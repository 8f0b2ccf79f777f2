"""Whose turn it is on the one visible tab, and the stage's hold on it after an answer.

Guards against two callers driving the tab at once: a FIFO lock in the process, then a file
lock shared with other processes (`_tab_lock`), both waits counted against the call's
deadline. The answer is handed back as soon as it exists; what the stage does for viewers
after it runs on the tab still held, for at most `STAGE_HOLD_S` (a mark still unfinished then
is made in the background, without the tab), so the next call waits at most for what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import structlog

from .._errors import OperationTimeout
from ._deadline import Deadline
from ._tab_lock import TabLock

log = structlog.get_logger("browser_core.driver")

# The longest the stage's work after an answer holds the tab (the next call waits at most
# this); a mark still unfinished then is made in the background, without the tab.
STAGE_HOLD_S = 1.5


class Turn:
    """The owned tab's queue: `take` it, then `release` it or `hand_over` what follows."""

    def __init__(self, lock_path: Path) -> None:
        self._lock = asyncio.Lock()
        self.tab_lock = TabLock(lock_path)
        self._after: asyncio.Future[None] | None = None  # the stage's work after an answer

    async def take(self, op: str, deadline: Deadline) -> None:
        """The FIFO lock of this process, then the file lock shared with other processes."""
        try:
            await asyncio.wait_for(self._lock.acquire(), deadline.remaining())
        except TimeoutError:
            raise _waited(op, deadline, "another operation") from None
        try:
            got = await self.tab_lock.acquire(deadline.remaining())
        except BaseException:
            self._lock.release()
            raise
        if not got:
            self._lock.release()
            raise _waited(op, deadline, "another process")

    def release(self) -> None:
        self.tab_lock.release()
        self._lock.release()

    def hand_over(self, op: str, after: Awaitable[None]) -> None:
        """The answer is out: `after` (the stage's show and the driver's housekeeping, never
        raising) runs on the tab still ours; the turn is released when it ends."""
        self._after = asyncio.ensure_future(self._then_release(op, after))

    async def _then_release(self, op: str, after: Awaitable[None]) -> None:
        started = time.perf_counter()
        try:
            await after
        finally:
            self.release()
            held_ms = round((time.perf_counter() - started) * 1000, 1)
            log.debug("driver.tab_held_after_answer", op=op, held_ms=held_ms)

    async def hold(self, op: str, show: Awaitable[Any]) -> None:
        """The stage's marks after the answer, holding the tab for at most `STAGE_HOLD_S`; a
        step still unfinished then goes on without the tab."""
        step = asyncio.ensure_future(show)
        done, _ = await asyncio.wait({step}, timeout=STAGE_HOLD_S)
        if done and not step.cancelled() and step.exception() is not None:
            log.info("stage.show_failed", op=op, error=str(step.exception())[:200])

    async def done(self, timeout: float) -> None:
        """Wait (at most `timeout`) until the work after the last answer is done and the
        tab is free."""
        after = self._after
        if after is not None and not after.done():
            await asyncio.wait({after}, timeout=timeout)

    @contextlib.asynccontextmanager
    async def across_processes(self, timeout: float) -> AsyncIterator[bool]:
        """The file lock alone, for at most `timeout` (closing the tab); whether it was got."""
        locked = await self.tab_lock.acquire(timeout)
        try:
            yield locked
        finally:
            if locked:
                self.tab_lock.release()

    def close(self) -> None:
        self.tab_lock.close()


def _waited(op: str, deadline: Deadline, holder: str) -> OperationTimeout:
    return OperationTimeout(
        f"{op}: waited {deadline.seconds:.1f} s for the broadcast tab, which {holder} was using",
        hint="retry, or raise SB_OP_TIMEOUT_S",
    )
