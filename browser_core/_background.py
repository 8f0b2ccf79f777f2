"""Event handlers that answer Chrome by awaiting: each reply runs as a task of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


def in_background(
    tasks: set[asyncio.Task[Any]], coro: Coroutine[Any, Any, Any]
) -> asyncio.Task[Any]:
    """Run `coro` as a task held in `tasks` until it ends (the event loop keeps only a weak
    reference to a task: one nobody holds may be collected before it finishes)."""
    task = asyncio.ensure_future(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task
