"""The cross-process lock on the owned tab: one `flock`ed file per CDP endpoint.

Guards against two processes (two in-process CLI calls, a CLI and a test run) driving the one
broadcast tab at once, or each opening a tab of its own because neither saw the other's state
file yet. The kernel releases the lock when its process dies, so a crash never leaves it held.
The wait polls a non-blocking `flock` on the event loop and is bounded by the caller's deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
from pathlib import Path

import structlog

_POLL_FIRST_S = 0.005
_POLL_MAX_S = 0.05
log = structlog.get_logger("browser_core.driver")


class TabLock:
    """An exclusive `flock` on `path`, taken per operation. Fails open if the file can't be made."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._held = False
        self._unusable = False

    async def acquire(self, timeout: float) -> bool:
        """Take the lock within `timeout` seconds; False if another process held it throughout."""
        fd = self._open()
        if fd is None:
            return True
        until = time.monotonic() + timeout
        pause = _POLL_FIRST_S
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                left = until - time.monotonic()
                if left <= 0:
                    return False
                waited = True
                await asyncio.sleep(min(pause, left))
                pause = min(pause * 2, _POLL_MAX_S)
                continue
            self._held = True
            if waited:
                log.info("driver.tab_lock_waited", path=str(self.path))
            return True

    def release(self) -> None:
        if self._held and self._fd is not None:
            self._held = False
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self.release()
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _open(self) -> int | None:
        if self._fd is not None or self._unusable:
            return self._fd
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            self._unusable = True
            log.warning(
                "driver.tab_lock_unavailable",
                path=str(self.path),
                error=str(exc)[:200],
                hint="set SB_STATE_DIR to a writable folder; without it two processes may "
                "drive the tab at once",
            )
        return self._fd
