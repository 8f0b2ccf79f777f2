"""The one bridge from synchronous callers to the async core.

With no event loop running in the calling thread the coroutine runs on a fresh loop right
here; inside a running loop (a sync call from async code) it runs on a short-lived thread,
so the caller's loop is never re-entered.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from synchronous code on any thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="gemini-sync", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
