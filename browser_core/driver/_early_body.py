"""The main document's body as soon as Chrome's network stack has it, not when the page's
renderer gets round to handing it over.

Playwright's `response.text()` asks the page's renderer (`Network.getResponseBody`), which
answers on its main thread, between the page's own parsing and scripts. Measured on the
bench's results page on a quiet machine: the last byte was in at 70 ms
(`Network.loadingFinished`), the body came back at 208 ms, DOMContentLoaded at 227 ms. Paused
at the CDP `Fetch` response stage instead, the browser process reads the whole body for us
(`Fetch.getResponseBody`) and the page then continues with the same bytes: the answer is
parsed from them while the renderer paints the page for viewers.

Only our own navigation's main-frame document is taken, and only an HTML one that is neither
an attachment nor declared larger than `MAX_BYTES`: every other document response (a frame,
a redirect hop, a download) is let go at once. The session's `Fetch` is enabled only for the
length of one navigation (`armed`); a session kept per page goes with the page.

The browser holds the whole body until it is handed over, so a body that takes longer than
`WAIT_S` (a page that never ends, measured: Chrome buffered 500 MB a second from a local
server and went down after about 4 s) is cancelled there (`Fetch.failRequest`, which frees
it, measured) and `Arming.gave_up` says so: the driver then opens the page again the usual
way, where the renderer reads it at its own pace.

The pause, the body and the go-ahead travel over a raw CDP socket of the driver's own
(`_cdp_channel`) when it has one: through Playwright's channel the 2026 results page's body
(1.76 MB, 2.35 MB of base64) took 210 ms to reach us, over the socket 41 ms. Without it (it
could not be opened, or it closed) the page's Playwright session does the same.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import structlog
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .._background import in_background
from ..stage._perpage import PerPage
from ._cdp_channel import CdpChannel, CdpChannelError, ChannelSession

log = structlog.get_logger("browser_core.early_body")

MAX_BYTES = 8 * 1024 * 1024  # a declared length above this is read the usual way
WAIT_S = 1.5  # a body not complete by then is given up on (a results page takes ~0.05 s here)
_PATTERNS = [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"}]
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_GONE = (PlaywrightError, CdpChannelError)  # the channel or the request went away

Channel = CDPSession | ChannelSession


@dataclass(frozen=True)
class EarlyBody:
    """The document response Chrome paused: where it came from, its status, its text."""

    url: str
    status: int
    content_type: str
    text: str


@dataclass
class Arming:
    """One navigation's wait: `body` gets the document (or None); `gave_up` is set when its
    body took longer than `WAIT_S` and the request was cancelled for it."""

    body: asyncio.Future[EarlyBody | None]
    gave_up: bool = False


class _Catcher:
    """One page's sessions (Playwright's, and the raw socket's when there is one), and the
    navigation it is armed for."""

    def __init__(self, session: CDPSession, target_id: str) -> None:
        self.fallback = session
        self.target_id = target_id
        self.frame_id = target_id  # a page's main frame has its target's id
        self.raw: ChannelSession | None = None
        self.arming: Arming | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.disabling: asyncio.Task[None] | None = None
        session.on("Fetch.requestPaused", lambda event: self._on_paused(event, session))

    async def channel(self, socket: CdpChannel | None) -> Channel:
        """The raw socket's session on this page (attached on first use), else Playwright's."""
        if socket is None or socket.closed:
            return self.fallback
        if self.raw is None or not self.raw.alive or self.raw.socket is not socket:
            raw = await socket.attach(self.target_id)
            raw.on("Fetch.requestPaused", lambda event: self._on_paused(event, raw))
            self.raw = raw
        return self.raw

    def _on_paused(self, event: dict[str, Any], channel: Channel) -> None:
        in_background(self._tasks, self._decide(event, channel))

    async def _decide(self, event: dict[str, Any], channel: Channel) -> None:
        request_id = event["requestId"]
        arming = self.arming
        mine = arming is not None and not arming.body.done() and self._ours(event)
        try:
            if arming is not None and mine:
                try:
                    body = await asyncio.wait_for(self._take(event, channel), WAIT_S)
                except TimeoutError:
                    arming.gave_up = True
                    log.info("driver.early_body_slow", url=_url(event)[:200], waited_s=WAIT_S)
                    await channel.send(
                        "Fetch.failRequest", {"requestId": request_id, "errorReason": "Aborted"}
                    )
                    return
                except _GONE:
                    body = None  # no body to be had here: the page is read the usual way
                if not arming.body.done():
                    arming.body.set_result(body)
            await channel.send("Fetch.continueResponse", {"requestId": request_id})
        except _GONE:
            pass  # the page navigated away or closed: the request is gone with it
        finally:
            if arming is not None and mine and not arming.body.done():
                arming.body.set_result(None)

    def _ours(self, event: dict[str, Any]) -> bool:
        headers = _headers(event)
        return (
            event.get("frameId") == self.frame_id
            and event.get("responseStatusCode") not in _REDIRECTS
            and "location" not in headers
        )

    async def _take(self, event: dict[str, Any], channel: Channel) -> EarlyBody | None:
        headers = _headers(event)
        kind = headers.get("content-type", "")
        declared = headers.get("content-length", "")
        if (
            "html" not in kind
            or "attachment" in headers.get("content-disposition", "").lower()
            or (declared.isdigit() and int(declared) > MAX_BYTES)
        ):
            return None
        reply = await channel.send("Fetch.getResponseBody", {"requestId": event["requestId"]})
        raw = reply.get("body", "")
        data = base64.b64decode(raw) if reply.get("base64Encoded") else str(raw).encode()
        text = decode_body(data, kind)
        if text is None:
            return None
        return EarlyBody(
            url=_url(event),
            status=int(event.get("responseStatusCode") or 0),
            content_type=kind,
            text=text,
        )


def _url(event: dict[str, Any]) -> str:
    return str(event.get("request", {}).get("url", ""))


def _headers(event: dict[str, Any]) -> dict[str, str]:
    return {
        str(h.get("name", "")).lower(): str(h.get("value", ""))
        for h in event.get("responseHeaders") or ()
    }


def decode_body(data: bytes, content_type: str) -> str | None:
    """The body as text: UTF-8 (what `response.text()` gives), else the declared charset."""
    with contextlib.suppress(UnicodeDecodeError):
        return data.decode("utf-8")
    charset = content_type.lower().partition("charset=")[2].split(";")[0].strip(" \"'")
    if charset:
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            return data.decode(charset)
    return None  # the caller reads the page the usual way


_CATCHERS: PerPage[_Catcher] = PerPage("early_body")


async def _catcher(page: Page) -> _Catcher:
    catcher = _CATCHERS.get(page)
    if catcher is None:
        session = await page.context.new_cdp_session(page)
        info = await session.send("Target.getTargetInfo")
        catcher = _CATCHERS.set(page, _Catcher(session, str(info["targetInfo"]["targetId"])))
    return catcher


@contextlib.asynccontextmanager
async def armed(page: Page, socket: CdpChannel | None = None) -> AsyncIterator[Arming]:
    """For the navigation started inside: its main document's body (or None: not HTML, too
    large, undecodable, too slow, or the page went away first). Over `socket` (the driver's
    raw CDP socket) when it is given and open, else over the page's Playwright session."""
    catcher = await _catcher(page)
    if catcher.disabling is not None:  # the last navigation's, never after this one's enable
        with contextlib.suppress(*_GONE):
            await catcher.disabling
    arming = Arming(asyncio.get_running_loop().create_future())
    catcher.arming = arming
    channel = await _enable(catcher, socket)
    try:
        yield arming
    finally:
        catcher.arming = None
        if not arming.body.done():
            arming.body.set_result(None)
        # Disabling lets anything paused go on. It is not waited for: measured 9 ms at the
        # results page's commit, on every search's answer; a document paused meanwhile (a
        # frame) is not ours and goes on at once.
        catcher.disabling = in_background(catcher._tasks, _disable(channel))


async def _enable(catcher: _Catcher, socket: CdpChannel | None) -> Channel:
    """`Fetch.enable` on the raw socket's session; on Playwright's if that one fails."""
    try:
        channel = await catcher.channel(socket)
        await channel.send("Fetch.enable", {"patterns": _PATTERNS})
    except CdpChannelError as exc:
        log.info("driver.early_body_socket_failed", error=str(exc)[:200])
        channel = catcher.fallback
        await channel.send("Fetch.enable", {"patterns": _PATTERNS})
    return channel


async def _disable(channel: Channel) -> None:
    with contextlib.suppress(*_GONE):
        await channel.send("Fetch.disable")
