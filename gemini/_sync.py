"""Sync twins of the Gemini calls run on the one sync bridge, `browser_core`'s loop thread.

Never re-enters a caller's running loop and never starts a loop or thread per call.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from browser_core import shared_loop

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
    """Run `coro` to completion from synchronous code on any thread, within `timeout`."""
    return shared_loop().run(coro, timeout)
