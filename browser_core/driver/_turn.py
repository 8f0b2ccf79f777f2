"""Whose turn it is on the one visible tab, and the stage's hold on it after an answer.

Guards against two callers driving the tab at once: a FIFO lock in the process, then a file
lock shared with other processes (`_tab_lock`), both waits counted against the call's
deadline. The answer is handed back as soon as it exists; what the stage does for viewers
after it runs on the tab still held, for at most `STAGE_HOLD_S` (a mark still unfinished then
is made in the background, without the tab), so the next call waits at most for what is left.

Under a burst the show yields: while another call waits for the tab (`someone_waits`: this
process's line, or a source such as the service's queue), the stage cuts its show to the
marks (`stage._focus.someone_waits`) and the hold ends after `STAGE_HOLD_BUSY_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog

from .._errors import OperationTimeout
from ..stage._focus import waiting_check
from ._deadline import Deadline
from ._tab_lock import TabLock

log = structlog.get_logger("browser_core.driver")

# The longest the stage's work after an answer holds the tab (the next call waits at most
# this); a mark still unfinished then is made in the background, without the tab.
STAGE_HOLD_S = 1.5
# Once another call waits for the tab the hold ends after this (the show is cut to its marks).
STAGE_HOLD_BUSY_S = 0.5
_HOLD_SLICE_S = 0.05


class Turn:
    """The owned tab's queue: `take` it, then `release` it or `hand_over` what follows."""

    def __init__(self, lock_path: Path) -> None:
        self._lock = asyncio.Lock()
        self.tab_lock = TabLock(lock_path)
        self._after: asyncio.Future[None] | None = None  # the stage's work after an answer
        self._queued = 0  # calls of this process waiting in line for the tab
        # More than this process's own line: who else waits (the service's queue).
        self.waiting_sources: list[Callable[[], bool]] = []

    def someone_waits(self) -> bool:
        """Is another call waiting for the tab (this process's line, or a waiting source)?"""
        return self._queued > 0 or any(_asks(source) for source in self.waiting_sources)

    async def take(self, op: str, deadline: Deadline) -> None:
        """The FIFO lock of this process, then the file lock shared with other processes."""
        self._queued += 1
        try:
            await asyncio.wait_for(self._lock.acquire(), deadline.remaining())
        except TimeoutError:
            raise _waited(op, deadline, "another operation") from None
        finally:
            self._queued -= 1
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

    async def hold(self, op: str, show: Awaitable[Any]) -> bool:
        """The stage's marks after the answer, holding the tab for at most `STAGE_HOLD_S`, or
        `STAGE_HOLD_BUSY_S` once another call waits; a step still unfinished then goes on
        without the tab. Whether someone waited (the show was cut for them)."""
        started = time.perf_counter()
        waiting_check(self.someone_waits)  # the show's steps inherit it, and ask as they go
        step = asyncio.ensure_future(show)
        busy = self.someone_waits()
        while not step.done():
            busy = self.someone_waits()
            left = (STAGE_HOLD_BUSY_S if busy else STAGE_HOLD_S) - (time.perf_counter() - started)
            if left <= 0:
                break
            await asyncio.wait({step}, timeout=min(left, _HOLD_SLICE_S))
        if step.done() and not step.cancelled() and step.exception() is not None:
            log.info("stage.show_failed", op=op, error=str(step.exception())[:200])
        if busy:
            held_ms = round((time.perf_counter() - started) * 1000, 1)
            log.info("stage.yielded", op=op, held_ms=held_ms, done=step.done())
        return busy

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


def _asks(source: Callable[[], bool]) -> bool:
    try:
        return bool(source())
    except Exception:  # a source that fails says nobody waits: the full show runs
        return False


def _waited(op: str, deadline: Deadline, holder: str) -> OperationTimeout:
    return OperationTimeout(
        f"{op}: waited {deadline.seconds:.1f} s for the broadcast tab, which {holder} was using",
        hint="retry, or raise SB_OP_TIMEOUT_S",
    )
