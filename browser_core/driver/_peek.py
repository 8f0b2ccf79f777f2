"""A page fetched by the broadcast Chrome without being shown: for a choice the stream should
not have to watch being made (whether the next result is worth opening).

`Network.loadNetworkResource` on the owned tab's frame: Chrome's own network stack loads the
URL (its resolver, its proxy and so the egress guard, its certificates, its user agent and
cookies), nothing is parsed, run or drawn, and the body comes back as a stream. Measured on
Chromium 156: the load goes on while the frame navigates elsewhere (even to another site), so
it runs beside the read the audience watches. The CDP `Fetch` domain never sees it (neither
the page's session nor the browser's), so the fetch guard cannot check its redirect hops:
only the egress guard, which checks every connection after name resolution, can. A peek is
therefore refused unless Chrome runs behind the guard (`egress_status`), and its URL passes
the navigation policy first, as a navigation's does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from dataclasses import dataclass, replace
from typing import Any

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .._settings import Settings
from ..safety._egress import egress_status
from ..stage._perpage import PerPage
from ._early_body import decode_body
from ._navigation import is_html_type

MAX_BYTES = 4 * 1024 * 1024  # a body longer than this is cut here (the text is in its first MBs)
_CHUNK = 1024 * 1024
# How long the guard's state is trusted before /proc is read again (a restart of Chrome or of
# the guard is seen within this).
GUARD_TTL_S = 30.0
# Chrome's cache and the cookies the tab would send: the page as the tab would get it.
_OPTIONS = {"disableCache": False, "includeCredentials": True}


@dataclass(frozen=True)
class Peeked:
    """What a peek found: `body` (None when there is none to read), or why not (`error`)."""

    url: str
    status: int | None = None
    content_type: str = ""
    body: str | None = None
    error: str | None = None
    ms: int = 0  # how long the load took

    @property
    def is_html(self) -> bool:
        return is_html_type(self.content_type)  # as a read decides it


_SESSIONS: PerPage[tuple[CDPSession, str]] = PerPage("peek")


class Guarded:
    """Whether Chrome runs behind the egress guard, read from /proc at most every GUARD_TTL_S."""

    def __init__(self) -> None:
        self._at = -GUARD_TTL_S
        self._ok = False

    async def __call__(self, settings: Settings) -> bool:
        now = time.monotonic()
        if now - self._at >= GUARD_TTL_S:
            status = await asyncio.to_thread(egress_status, settings)
            self._ok, self._at = status.ok, now
        return self._ok


async def _session(page: Page) -> tuple[CDPSession, str]:
    known = _SESSIONS.get(page)
    if known is None:
        session = await page.context.new_cdp_session(page)
        info = await session.send("Target.getTargetInfo")
        known = _SESSIONS.set(page, (session, str(info["targetInfo"]["targetId"])))
    return known


async def peek(page: Page, url: str, timeout: float) -> Peeked:
    """`url` loaded by Chrome beside what `page` shows, within `timeout` seconds. The caller
    has checked the URL against the navigation policy and that the egress guard is there."""
    started = time.monotonic()
    try:
        found = await asyncio.wait_for(_load(page, url), timeout)
    except TimeoutError:
        found = Peeked(url, error=f"no answer within {timeout:.1f} s")
    except PlaywrightError as exc:
        found = Peeked(url, error=str(exc).splitlines()[0][:200])
    return replace(found, ms=round((time.monotonic() - started) * 1000))


async def _load(page: Page, url: str) -> Peeked:
    session, frame = await _session(page)
    found = await session.send(
        "Network.loadNetworkResource",
        {"frameId": frame, "url": url, "options": _OPTIONS},
    )
    resource: dict[str, Any] = found.get("resource", {})
    headers = {str(k).lower(): str(v) for k, v in (resource.get("headers") or {}).items()}
    status = resource.get("httpStatusCode")
    kind = headers.get("content-type", "")
    stream = resource.get("stream")
    if not resource.get("success"):
        error = str(resource.get("netErrorName") or "the load failed")
        return Peeked(url, status=status, content_type=kind, error=error)
    if stream is None:
        return Peeked(url, status=status, content_type=kind, error="no body")
    try:
        data = await _read(session, str(stream)) if Peeked(url, content_type=kind).is_html else b""
    finally:
        with contextlib.suppress(PlaywrightError):
            await session.send("IO.close", {"handle": stream})
    return Peeked(url, status=status, content_type=kind, body=decode_body(data, kind))


async def _read(session: CDPSession, stream: str) -> bytes:
    data = bytearray()
    while len(data) < MAX_BYTES:
        chunk = await session.send("IO.read", {"handle": stream, "size": _CHUNK})
        piece = chunk.get("data", "")
        data += base64.b64decode(piece) if chunk.get("base64Encoded") else piece.encode()
        if chunk.get("eof"):
            break
    return bytes(data[:MAX_BYTES])
