"""CDP commands to one tab over a plain WebSocket, without Playwright.

Guards against a JS dialog left open on the owned tab (by a process that exited, or before a
restart): Playwright's `connect_over_cdp` waits on that tab and times out. Such a dialog
cannot be answered over CDP either (measured on Chromium 156: `Page.handleJavaScriptDialog`
says "No dialog is showing" to a session that was not enabled when it opened, and
`Page.enable` hangs), so the driver asks the tab to run `1` first and replaces it over
HTTP when it does not answer. Standard library only; every step bounded by `timeout`.

`CdpSocket` is the one client: commands one at a time (`call`), optionally to a session of a
target it attached to (`attach`, flattened sessions), as the font check does with a hidden
target; `cdp_calls` sends a few commands to one tab at once.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import struct
import time
from typing import Any
from urllib.parse import urlsplit


class RawCdpError(OSError):
    """The tab's WebSocket could not be reached or did not answer in time."""


class CdpSocket:
    """One DevTools WebSocket (RFC 6455, text frames), every step within `timeout` of opening.

    `call` sends one command and returns its `result` (events and other replies are read
    past); an error answer raises `RawCdpError`. Use as a context manager."""

    def __init__(self, ws_url: str, timeout: float) -> None:
        parts = urlsplit(ws_url)
        if parts.scheme != "ws" or not parts.hostname:
            raise RawCdpError(f"not a DevTools WebSocket URL: {ws_url[:200]}")
        self.until = time.monotonic() + timeout
        self._next = 0
        self._sock = socket.create_connection((parts.hostname, parts.port or 80), timeout)
        try:
            _handshake(self._sock, parts.netloc, parts.path or "/", self.until)
        except BaseException:
            self._sock.close()
            raise

    def __enter__(self) -> CdpSocket:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the socket; a thread blocked reading it wakes at once (a bare `close()`
        leaves a `recv` in another thread waiting for its timeout)."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()

    def send(self, method: str, params: dict[str, Any], session: str | None = None) -> int:
        """Send one command without waiting; its id."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        _send_text(self._sock, json.dumps(message))
        return self._next

    def reply(self, number: int) -> dict[str, Any]:
        """The whole reply to command `number` (`result` or `error`)."""
        while True:
            message = json.loads(_read_text(self._sock, self.until))
            if message.get("id") == number:
                return dict(message)

    def call(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        """Send one command and return its `result`; an error answer raises `RawCdpError`."""
        answer = self.reply(self.send(method, params, session))
        if "error" in answer:
            raise RawCdpError(f"{method}: {answer['error'].get('message', '?')}")
        return answer.get("result", {})

    def attach(self, target_id: str) -> str:
        """Attach to `target_id` (a flattened session on this socket); the session id."""
        return str(
            self.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})[
                "sessionId"
            ]
        )


def cdp_calls(
    ws_url: str, commands: list[tuple[str, dict[str, Any]]], timeout: float
) -> dict[str, Any]:
    """Send `commands` (method, params) at once to the target at `ws_url`; the reply to the
    last one (`result` or `error`). Events and earlier replies are read past."""
    try:
        with CdpSocket(ws_url, timeout) as cdp:
            last = 0
            for method, params in commands:
                last = cdp.send(method, params)
            return cdp.reply(last)
    except RawCdpError:
        raise
    except (OSError, ValueError) as exc:
        raise RawCdpError(f"{commands[-1][0]}: {exc}") from exc


def tab_responds(ws_url: str, timeout: float = 0.5) -> bool:
    """Does the tab at `ws_url` run a script within `timeout`? A JS dialog left open, or a
    busy loop, keeps it from answering (and would hang Playwright's attach)."""
    try:
        reply = cdp_calls(ws_url, [("Runtime.evaluate", {"expression": "1"})], timeout)
    except RawCdpError:
        return False
    return "result" in reply


def _handshake(sock: socket.socket, host: str, path: str, until: float) -> None:
    key = base64.b64encode(os.urandom(16)).decode("ascii")
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode("ascii")
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += _recv(sock, 1, until)
        if len(head) > 8192:
            raise RawCdpError("the WebSocket handshake answer is too long")
    if not head.startswith(b"HTTP/1.1 101"):
        raise RawCdpError(f"the WebSocket upgrade was refused: {head[:60]!r}")


def _send_text(sock: socket.socket, text: str) -> None:
    payload = text.encode("utf-8")
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x81, 0x80 | size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", 0x81, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(header + mask + masked)


def _read_text(sock: socket.socket, until: float) -> str:
    """The next whole text message (continuation frames joined; control frames skipped)."""
    chunks: list[bytes] = []
    while True:
        first, second = _recv(sock, 2, until)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", _recv(sock, 2, until))[0]
        elif size == 127:
            size = struct.unpack("!Q", _recv(sock, 8, until))[0]
        mask = _recv(sock, 4, until) if second & 0x80 else b""
        data = _recv(sock, size, until) if size else b""
        if mask:
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        opcode = first & 0x0F
        if opcode == 0x8:
            raise RawCdpError("the tab closed the WebSocket")
        if opcode in (0x1, 0x0):
            chunks.append(data)
            if first & 0x80:
                return b"".join(chunks).decode("utf-8")


def _recv(sock: socket.socket, size: int, until: float) -> bytes:
    out = b""
    while len(out) < size:
        left = until - time.monotonic()
        if left <= 0:
            raise RawCdpError("the tab did not answer in time")
        sock.settimeout(left)
        chunk = sock.recv(size - len(out))
        if not chunk:
            raise RawCdpError("the connection closed")
        out += chunk
    return out
