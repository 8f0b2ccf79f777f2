"""Every script the audience reads renders: does the broadcast Chrome draw Hangul, kana, Han?

Without a CJK font, Chrome draws each Korean, Japanese or Chinese character as an empty box
(the font's `.notdef` glyph) and nothing says so. The check opens a *hidden* target in the
running Chrome (`Target.createTarget` with `hidden`: in no tab strip, never the owned tab, closed
at once), draws each character of a test string on an OffscreenCanvas and compares its pixels
and width with those of code points no font has (the box). It speaks CDP over one short-lived
WebSocket (standard library only), so `doctor` and `/readyz` can call it from any thread;
`cached_font_check` runs it once per Chrome (its DevTools browser id) and then remembers.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .._chrome import cdp_version
from .._errors import CdpUnreachable

TEST_STRING = "방송 켜줘 — 오늘 서울 날씨는 맑음 / ひらがな / 漢字"
SAMPLES: dict[str, str] = {
    "Hangul": "방송켜줘오늘서울날씨는맑음",
    "kana": "ひらがなカタカナ",
    "Han": "漢字天気北京",
}
FIX = (
    "install the Noto CJK fonts (`sudo apt-get install fonts-noto-cjk`, or `make setup`), "
    "then restart the broadcast Chrome (`stream-browser chrome --stop`, `stream-browser chrome`)"
)
_TIMEOUT_S = 3.0
_FAIL_TTL_S = 60.0  # a failed or skipped check is tried again after this (a fix shows up)

# Draws each sample character and each of two "no font has this" code points (U+10FFFD and
# U+10FFFC, private use, plane 16) on an OffscreenCanvas: a character whose alpha pixels and
# advance equal a box's is drawn as a box.
_PROBE_JS = r"""
((samples) => {
  const canvas = new OffscreenCanvas(72, 72);
  const g = canvas.getContext("2d", { willReadFrequently: true });
  const draw = (ch) => {
    g.clearRect(0, 0, 72, 72);
    g.font = "40px sans-serif";
    g.textBaseline = "top";
    g.fillText(ch, 8, 8);
    const data = g.getImageData(0, 0, 72, 72).data;
    let alpha = "";
    for (let i = 3; i < data.length; i += 4) alpha += data[i] ? "1" : "0";
    return g.measureText(ch).width.toFixed(2) + ":" + alpha;
  };
  const boxes = new Set([draw("\u{10FFFD}"), draw("\u{10FFFC}")]);
  const out = {};
  for (const [script, text] of Object.entries(samples)) {
    const chars = [...text];
    const drawnAsBox = chars.filter((ch) => boxes.has(draw(ch)));
    out[script] = { total: chars.length, boxes: drawnAsBox.join("") };
  }
  return out;
})
"""


@dataclass(frozen=True)
class FontCheck:
    """The outcome: `ok`, the scripts drawn as boxes (with the characters), a readable line."""

    ok: bool
    detail: str
    boxes: dict[str, str] = field(default_factory=dict)
    checked: bool = True  # False: Chrome could not be asked (the check says nothing then)

    @property
    def fix(self) -> str:
        return FIX if not self.ok else ""

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"ok": self.ok, "detail": self.detail}
        if not self.ok:
            data["fix"] = FIX
        return data


def check_fonts(endpoint: str, timeout: float = _TIMEOUT_S) -> FontCheck:
    """Ask the Chrome at `endpoint` (http://host:port) to draw the test string; never raises."""
    try:
        version = cdp_version(endpoint, timeout=min(timeout, 1.5))
        result = _probe(_browser_ws(endpoint, version), timeout)
    except (CdpUnreachable, OSError, ValueError, KeyError, TypeError, _CdpError) as exc:
        return FontCheck(ok=True, detail=f"not checked: {str(exc)[:160]}", checked=False)
    return _judge(result)


def _judge(result: Any) -> FontCheck:
    if not isinstance(result, dict) or set(result) != set(SAMPLES):
        return FontCheck(ok=True, detail="not checked: unexpected answer", checked=False)
    boxes = {name: str(v.get("boxes", "")) for name, v in result.items() if v.get("boxes")}
    if not boxes:
        return FontCheck(ok=True, detail="Hangul, kana and Han render as text")
    shown = ", ".join(f"{name} ({chars[:6]})" for name, chars in boxes.items())
    return FontCheck(ok=False, detail=f"drawn as empty boxes: {shown}", boxes=boxes)


_CACHE: dict[str, tuple[float, FontCheck]] = {}
_CACHE_LOCK = threading.Lock()


def cached_font_check(endpoint: str) -> FontCheck:
    """`check_fonts`, once per Chrome: the answer is kept while the same Chrome runs (its
    DevTools browser id); a failed or unchecked answer is asked again after a minute."""
    try:
        browser_id = _browser_ws(endpoint, cdp_version(endpoint, timeout=1.0))
    except (CdpUnreachable, ValueError, KeyError) as exc:
        return FontCheck(ok=True, detail=f"not checked: {str(exc)[:160]}", checked=False)
    with _CACHE_LOCK:
        hit = _CACHE.get(browser_id)
        if hit is not None and ((hit[1].ok and hit[1].checked) or time.monotonic() < hit[0]):
            return hit[1]
    check = check_fonts(endpoint)
    with _CACHE_LOCK:
        _CACHE[browser_id] = (time.monotonic() + _FAIL_TTL_S, check)
    return check


def _browser_ws(endpoint: str, version: dict[str, str]) -> str:
    """The browser's DevTools WebSocket, reached at the endpoint's own host and port."""
    path = urlsplit(version["webSocketDebuggerUrl"]).path
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    if not parts.hostname or not path:
        raise ValueError(f"no DevTools WebSocket at {endpoint}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"ws://{host}:{parts.port or 80}{path}"


class _CdpError(Exception):
    """A CDP command answered with an error."""


def _probe(ws_url: str, timeout: float) -> Any:
    with _Cdp(ws_url, timeout) as cdp:
        target = cdp.call(
            "Target.createTarget", {"url": "about:blank", "hidden": True, "background": True}
        )
        target_id = target["targetId"]
        try:
            session = cdp.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})
            answer = cdp.call(
                "Runtime.evaluate",
                {
                    "expression": f"({_PROBE_JS})({json.dumps(SAMPLES)})",
                    "returnByValue": True,
                    "timeout": int(timeout * 1000),
                },
                session=session["sessionId"],
            )
        finally:
            cdp.call("Target.closeTarget", {"targetId": target_id})
    if "exceptionDetails" in answer:
        raise _CdpError("the test page raised: " + str(answer["exceptionDetails"])[:120])
    return answer["result"].get("value")


class _Cdp:
    """A minimal blocking CDP client: one WebSocket, one command at a time (RFC 6455)."""

    def __init__(self, ws_url: str, timeout: float) -> None:
        parts = urlsplit(ws_url)
        self._deadline = time.monotonic() + timeout
        self._sock = socket.create_connection((parts.hostname, parts.port or 80), timeout)
        self._next = 0
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self._sock.sendall(request.encode())
        head = self._until(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise _CdpError("the DevTools WebSocket refused the upgrade")

    def __enter__(self) -> _Cdp:
        return self

    def __exit__(self, *_: object) -> None:
        self._sock.close()

    def call(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self._send(json.dumps(message).encode())
        while True:
            if time.monotonic() > self._deadline:
                raise _CdpError(f"{method}: no answer in time")
            reply = json.loads(self._frame())
            if reply.get("id") != self._next:
                continue  # an event
            if "error" in reply:
                raise _CdpError(f"{method}: {reply['error'].get('message', '?')}")
            return reply.get("result", {})

    def _send(self, payload: bytes) -> None:
        mask = os.urandom(4)
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x81, 0x80 | size)
        elif size < 65536:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self._sock.sendall(header + mask + masked)

    def _frame(self) -> bytes:
        """One whole text message (continuation frames joined; control frames skipped)."""
        data = b""
        while True:
            first, second = self._exact(2)
            size = second & 0x7F
            if size == 126:
                size = struct.unpack("!H", self._exact(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self._exact(8))[0]
            payload = self._exact(size)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise _CdpError("the DevTools WebSocket closed")
            if opcode in (0x1, 0x2, 0x0):
                data += payload
                if first & 0x80:
                    return data

    def _exact(self, size: int) -> bytes:
        chunks = b""
        while len(chunks) < size:
            self._sock.settimeout(max(0.05, self._deadline - time.monotonic()))
            chunk = self._sock.recv(size - len(chunks))
            if not chunk:
                raise _CdpError("the DevTools WebSocket closed")
            chunks += chunk
        return chunks

    def _until(self, marker: bytes) -> bytes:
        data = b""
        while marker not in data:
            data += self._exact(1)
        return data
