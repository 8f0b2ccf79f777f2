"""The one sync bridge: an event-loop thread so callers on any thread can use the async core.

Playwright objects are not thread-safe: everything runs on this one loop. A caller that
waits past its timeout gets `OperationTimeout` and its coroutine is cancelled; nothing else
on the loop is disturbed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ._errors import OperationTimeout

T = TypeVar("T")


class LoopThread:
    """A private asyncio loop on a daemon thread, started on first use."""

    def __init__(self, name: str = "stream-browser-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None or not self._loop.is_running():
                ready = threading.Event()
                loop = asyncio.new_event_loop()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=serve, name=self._name, daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run `coro` on the loop; raise OperationTimeout after `timeout` seconds."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("LoopThread.run called from its own loop: await instead")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():
                raise  # a TimeoutError raised by the coroutine itself: keep its type
            future.cancel()
            raise OperationTimeout(f"no answer within {timeout:.1f} s") from None

    async def arun(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Await `coro` on this loop from another event loop, without holding a thread."""
        if asyncio.get_running_loop() is self._loop:
            return await asyncio.wait_for(coro, timeout)
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except TimeoutError as exc:
            future.cancel()
            if isinstance(exc, OperationTimeout):
                raise
            raise OperationTimeout(f"no answer within {timeout:.1f} s") from None

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(5)
        if loop is not None and not loop.is_running() and not loop.is_closed():
            loop.close()  # its selector and self-pipe sockets, not left to the GC
        self._loop = None


_shared: LoopThread | None = None
_shared_lock = threading.Lock()


def shared_loop() -> LoopThread:
    """The process-wide loop thread for sync twins that own no loop of their own."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = LoopThread("stream-browser-shared")
        return _shared


class SyncDriver:
    """A `Driver` owned by a `LoopThread`, callable from any thread."""

    def __init__(self, settings: Any, loop: LoopThread | None = None) -> None:
        from .driver import Driver

        self.loop = loop or LoopThread()
        self.driver = Driver(settings)

    def run(self, op: str, fn: Any, *, timeout: float | None = None) -> Any:
        """Run the async `fn(page)` on the owned tab; see `Driver.run`."""
        limit = timeout if timeout is not None else self.driver.settings.op_timeout_s
        return self.loop.run(self.driver.run(op, fn, timeout=limit), limit + 2.0)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        return self.loop.run(coro, timeout)

    def close(self) -> None:
        with contextlib.suppress(OperationTimeout):
            self.loop.run(self.driver.close(), 10)

    def shutdown(self, *, close_tab: bool = True) -> None:
        """Close the owned tab (tests), drop the connection and stop the loop thread."""
        if close_tab:
            with contextlib.suppress(OperationTimeout):
                self.loop.run(self.driver.close_owned_tab(), 10)
        self.close()
        self.loop.stop()
