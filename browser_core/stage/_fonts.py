"""Every script the audience reads renders: does the broadcast Chrome draw Hangul, kana, Han?

Without a CJK font, Chrome draws each Korean, Japanese or Chinese character as an empty box
(the font's `.notdef` glyph) and nothing says so. The check opens a *hidden* target in the
running Chrome (`Target.createTarget` with `hidden`: in no tab strip, never the owned tab, closed
at once), draws each character of a test string on an OffscreenCanvas and compares its pixels
and width with those of code points no font has (the box). It speaks CDP over one short-lived
WebSocket (`_cdp_raw.CdpSocket`, standard library only), so `doctor` and `/readyz` can call it
from any thread; `cached_font_check` runs it once per Chrome (its DevTools browser id) and then
remembers.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .._cdp_raw import CdpSocket
from .._errors import CdpUnreachable
from ..chrome import cdp_version

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
    """The test page raised instead of answering."""


def _probe(ws_url: str, timeout: float) -> Any:
    with CdpSocket(ws_url, timeout) as cdp:
        target = cdp.call(
            "Target.createTarget", {"url": "about:blank", "hidden": True, "background": True}
        )
        target_id = target["targetId"]
        try:
            session = cdp.attach(target_id)
            answer = cdp.call(
                "Runtime.evaluate",
                {
                    "expression": f"({_PROBE_JS})({json.dumps(SAMPLES)})",
                    "returnByValue": True,
                    "timeout": int(timeout * 1000),
                },
                session=session,
            )
        finally:
            cdp.call("Target.closeTarget", {"targetId": target_id})
    if "exceptionDetails" in answer:
        raise _CdpError("the test page raised: " + str(answer["exceptionDetails"])[:120])
    return answer["result"].get("value")
