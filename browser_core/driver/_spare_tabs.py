"""Blank tabs the driver opens over HTTP while it replaces a wedged or crashed tab.

Failure mode it guards against: a replacement that did not become the owned tab (the driver
then opened its own over CDP, or adopted another) stayed in the tab strip beside ours for the
rest of the broadcast. Each one is remembered until our tab exists, then closed over HTTP.
When Chrome did not give the new tab's id in time, the tab it may still have opened is told
by its absence from the list of tabs taken just before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection

from .._errors import CdpUnreachable
from ..chrome import cdp_targets, close_target, new_target

__all__ = ["BLANK_URLS", "SpareTabs"]

BLANK_URLS = ("about:blank", "chrome://newtab/", "chrome://new-tab-page/")
_OPEN_S = 2.0  # `/json/new` answers in a few ms, also while another tab is wedged
_LIST_S = 1.0
_CLOSE_S = 2.0


class SpareTabs:
    """What `open` opened and has not been closed yet (one driver's, in its event loop)."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._before: frozenset[str] | None = None  # the page targets before an unanswered open

    @property
    def empty(self) -> bool:
        return not self._ids and self._before is None

    async def open(self, endpoint: str) -> str | None:
        """Open a blank tab over HTTP and remember it; its id, or None when Chrome did not
        say it within `_OPEN_S` (that tab, if it comes, is found by `close_all`)."""
        before = await _page_ids(endpoint)
        try:
            target_id = await asyncio.wait_for(asyncio.to_thread(new_target, endpoint), _OPEN_S)
        except (TimeoutError, OSError, CdpUnreachable):
            if before is not None and self._before is None:
                self._before = frozenset(before)
            return None
        self._ids.add(target_id)
        return target_id

    async def close_all(self, endpoint: str, keep: Collection[str | None]) -> list[str]:
        """Close every spare but those in `keep` (the owned tab); the ids closed. Spares stay
        remembered when Chrome cannot list its tabs now (the next call tries again)."""
        pages = await _pages(endpoint)
        if pages is None:
            return []
        doomed = {i for i in self._ids if i in pages}
        if self._before is not None:
            doomed |= {i for i, url in pages.items() if i not in self._before and url in BLANK_URLS}
        self._ids.clear()
        self._before = None
        closed = []
        for target_id in sorted(doomed - set(keep)):
            with contextlib.suppress(TimeoutError, OSError):
                await asyncio.wait_for(
                    asyncio.to_thread(close_target, endpoint, target_id), _CLOSE_S
                )
                closed.append(target_id)
        return closed


async def _pages(endpoint: str) -> dict[str, str] | None:
    """Chrome's page targets, id -> URL (None when it does not answer within `_LIST_S`)."""
    try:
        tabs = await asyncio.wait_for(asyncio.to_thread(cdp_targets, endpoint, _LIST_S), _LIST_S)
    except (TimeoutError, CdpUnreachable):
        return None
    return {str(t["id"]): str(t.get("url", "")) for t in tabs if t.get("type") == "page"}


async def _page_ids(endpoint: str) -> set[str] | None:
    pages = await _pages(endpoint)
    return None if pages is None else set(pages)
