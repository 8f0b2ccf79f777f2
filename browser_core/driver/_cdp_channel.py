"""A second, raw CDP socket to the same Chrome, for the early body (`_early_body`) alone.

Measured on the 2026-shaped results page (1.76 MB, Chromium 156): `Fetch.getResponseBody` of
the paused document took 210 ms through Playwright's channel (Chrome, the Playwright driver's
Node process, its pipe to Python) and 41 ms over a socket of our own, in the same rounds; a
body taken as a stream (`Fetch.takeResponseBodyAsStream`, `IO.read`) took as long as through
Playwright and must then be sent back whole (`Fetch.fulfillRequest`). The socket only
attaches to a page Playwright already has and speaks CDP to it: nothing else goes over it.

It is the WebSocket client side of RFC 6455 that CDP needs (text messages, fragments, ping,
close), on asyncio streams: kept open on the driver's loop, events dispatched as they come
(`browser_core._cdp_raw` is the blocking, one-command client for a tab that may not answer).
Any failure (Chrome gone, a reply not in `REPLY_S`, a message larger than `MAX_MESSAGE`)
closes the socket and fails every call on it with `CdpChannelError`: the caller then uses
Playwright's session as before.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import ssl
import struct
import urllib.parse
from collections.abc import Callable
from typing import Any

import structlog

from ._health import _get_version

log = structlog.get_logger("browser_core.cdp_channel")

REPLY_S = 5.0  # a reply later than this means the socket is stuck: it is closed
OPEN_S = 2.0  # the version request, the TCP connect and the handshake together
MAX_MESSAGE = 64 * 1024 * 1024  # an 8 MB body is 11 MB of base64; anything far above is wrong

Handler = Callable[[dict[str, Any]], None]


class CdpChannelError(Exception):
    """The raw socket failed or is closed; the call's outcome is unknown."""


class CdpChannel:
    """One WebSocket to Chrome's browser endpoint; sessions attached to pages share it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[str, dict[str, Handler]] = {}  # session id -> method -> handler
        self.closed = False
        self._reading = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def open(cls, endpoint: str, timeout: float = OPEN_S) -> CdpChannel:
        """Connect to the browser endpoint behind `endpoint` (http/https/ws/wss)."""
        try:
            async with asyncio.timeout(timeout):
                url = await _browser_url(endpoint)
                return await _handshake(url)
        except (
            OSError,
            ValueError,
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
        ) as exc:
            raise CdpChannelError(f"no raw CDP socket to {endpoint}: {exc!r}"[:300]) from exc

    async def attach(self, target_id: str) -> ChannelSession:
        """A session on the page target `target_id` (flat: its messages carry the session id)."""
        reply = await self.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        session_id = str(reply["sessionId"])
        self._handlers[session_id] = {}
        return ChannelSession(self, session_id)

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None
    ) -> dict[str, Any]:
        """One command; its result, or `CdpChannelError` (Chrome's own error included)."""
        if self.closed:
            raise CdpChannelError("the raw CDP socket is closed")
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        reply = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = reply
        try:
            self._writer.write(_frame(json.dumps(message).encode()))
            async with asyncio.timeout(REPLY_S):
                answer = await reply
        except TimeoutError:
            self._fail(f"no reply to {method} within {REPLY_S:.0f} s")
            raise CdpChannelError(f"no reply to {method} within {REPLY_S:.0f} s") from None
        finally:
            self._waiting.pop(message["id"], None)
        if "error" in answer:
            error = answer["error"]
            raise CdpChannelError(f"{method}: {error.get('message', error)}"[:300])
        result = answer.get("result", {})
        return result if isinstance(result, dict) else {}

    def on(self, session_id: str, method: str, handler: Handler) -> None:
        self._handlers.setdefault(session_id, {})[method] = handler

    async def close(self) -> None:
        self._fail("closed")
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError, CdpChannelError):
            await self._reading
        # The transport lets go of its socket a loop turn after close(): wait for it, or a
        # loop that ends right after leaves the socket to the garbage collector (a
        # ResourceWarning, and a descriptor held until then).
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)

    # -- reading -----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            while True:
                self._dispatch(json.loads(await self._message()))
        except (OSError, ValueError, asyncio.IncompleteReadError, CdpChannelError) as exc:
            self._fail(f"{type(exc).__name__}: {exc}"[:200])

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            reply = self._waiting.get(message["id"])
            if reply is not None and not reply.done():
                reply.set_result(message)
            return
        method = str(message.get("method", ""))
        session_id = message.get("sessionId")
        if method == "Target.detachedFromTarget":
            self._handlers.pop(str(message.get("params", {}).get("sessionId")), None)
            return
        handler = self._handlers.get(str(session_id), {}).get(method)
        if handler is not None:
            handler(message.get("params", {}))

    async def _message(self) -> bytes:
        """One whole text message (fragments joined); pings answered, a close ends it."""
        parts: list[bytes] = []
        size = 0
        while True:
            head = await self._reader.readexactly(2)
            fin, opcode, length = head[0] & 0x80, head[0] & 0x0F, head[1] & 0x7F
            if head[1] & 0x80:
                raise CdpChannelError("the server masked a frame")
            if length == 126:
                length = struct.unpack(">H", await self._reader.readexactly(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", await self._reader.readexactly(8))[0]
            size += length
            if size > MAX_MESSAGE:
                raise CdpChannelError(f"a message over {MAX_MESSAGE} bytes")
            payload = await self._reader.readexactly(length)
            if opcode == 0x8:
                raise CdpChannelError("Chrome closed the socket")
            if opcode == 0x9:
                self._writer.write(_frame(payload, opcode=0xA))
                continue
            if opcode == 0xA:
                continue
            parts.append(payload)
            if fin:
                return b"".join(parts)

    def _fail(self, why: str) -> None:
        if not self.closed:
            self.closed = True
            log.info("driver.cdp_channel_closed", reason=why)
        for reply in self._waiting.values():
            if not reply.done():
                reply.set_exception(CdpChannelError(f"the raw CDP socket closed: {why}"))
        self._waiting.clear()
        self._handlers.clear()
        self._writer.close()


class ChannelSession:
    """A page's session on the raw socket: `send` and `on`, as Playwright's `CDPSession`."""

    def __init__(self, socket: CdpChannel, session_id: str) -> None:
        self.socket = socket
        self.session_id = session_id

    @property
    def alive(self) -> bool:
        return not self.socket.closed and self.session_id in self.socket._handlers

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.socket.send(method, params, self.session_id)

    def on(self, method: str, handler: Handler) -> None:
        self.socket.on(self.session_id, method, handler)


async def _browser_url(endpoint: str) -> urllib.parse.SplitResult:
    """The browser's WebSocket address: `endpoint` itself when it is one, else the path Chrome
    names in /json/version, on the endpoint's own host and port (as Playwright does)."""
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme in ("ws", "wss") and parts.path.startswith("/devtools/"):
        return parts
    named = urllib.parse.urlsplit(str((await _get_version(endpoint))["webSocketDebuggerUrl"]))
    scheme = "wss" if parts.scheme in ("https", "wss") else "ws"
    return parts._replace(scheme=scheme, path=named.path, query="", fragment="")


async def _handshake(url: urllib.parse.SplitResult) -> CdpChannel:
    secure = url.scheme == "wss"
    host = url.hostname or "127.0.0.1"
    port = url.port or (443 if secure else 80)
    context = ssl.create_default_context() if secure else None
    reader, writer = await asyncio.open_connection(host, port, ssl=context, limit=1 << 20)
    try:
        return await _upgrade(url, reader, writer)
    except BaseException:  # a refusal, or the open's time running out mid-handshake
        writer.close()
        raise


async def _upgrade(
    url: urllib.parse.SplitResult, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> CdpChannel:
    key = base64.b64encode(os.urandom(16)).decode("ascii")
    authority = url.netloc.rpartition("@")[2]
    target = url.path + (f"?{url.query}" if url.query else "")
    writer.write(
        (
            f"GET {target} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode("ascii")
    )
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    if head.split(" ", 2)[1:2] != ["101"]:
        raise ValueError(f"no WebSocket upgrade: {head.splitlines()[0][:100]}")
    return CdpChannel(reader, writer)


def _frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """One final, masked client frame (RFC 6455 5.2)."""
    length = len(payload)
    if length < 126:
        head = struct.pack(">BB", 0x80 | opcode, 0x80 | length)
    elif length < 1 << 16:
        head = struct.pack(">BBH", 0x80 | opcode, 0x80 | 126, length)
    else:
        head = struct.pack(">BBQ", 0x80 | opcode, 0x80 | 127, length)
    mask = os.urandom(4)
    repeated = (mask * (length // 4 + 1))[:length]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
        length, "big"
    )
    return head + mask + masked
