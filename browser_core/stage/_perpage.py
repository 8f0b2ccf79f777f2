"""State the stage keeps for one page (a CDP session, our world, the consent controller),
carried by the page object itself, so that it goes when the page goes.

A `WeakKeyDictionary` keyed by the page never let a page go: each value reaches Playwright's
connection (a CDP session's parent), which holds the page, so the key stayed reachable, and
every reattach (the driver's restart every RECYCLE_OPS calls, a lost connection) left the
whole old connection alive in Python with its pages, frames, requests and responses.
Playwright itself keeps its API wrapper on each object the same way.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

V = TypeVar("V")


class PerPage(Generic[V]):
    """One named slot on every page: `get`, `set`, `pop`, `in`."""

    def __init__(self, name: str) -> None:
        self._attr = f"_stream_browser_{name}"

    def get(self, page: Any) -> V | None:
        value: V | None = getattr(page, self._attr, None)
        return value

    def set(self, page: Any, value: V) -> V:
        setattr(page, self._attr, value)
        return value

    def pop(self, page: Any) -> V | None:
        value = self.get(page)
        if value is not None:
            delattr(page, self._attr)
        return value

    def __contains__(self, page: Any) -> bool:
        return self.get(page) is not None
