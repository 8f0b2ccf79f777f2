"""Pictures of the broadcast tab for the console, over a CDP socket of their own (never the
driver's Playwright connection, never its loop thread): live frames while a console asks for
them, and one small screenshot per call once the stage is done with the screen.

Guards against the console slowing a call: nothing is taken while a call runs or waits (the
live view shows its last frame, marked paused), nothing at all while no console polls, one
capture at a time shared by every open console, each bounded by `CAPTURE_TIMEOUT_S`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from browser_core import CdpSocket, cdp_targets

log = structlog.get_logger("search.console")

CAPTURE_TIMEOUT_S = 1.5
FRAME_EVERY_S = 0.4  # consoles polling faster share the same frame
FRAME_WIDTH = 800
SHOT_WIDTH = 480
STAGE_WAIT_S = 3.0  # the stage holds the tab at most 1.5 s after an answer


@dataclass(frozen=True)
class Frame:
    jpeg: bytes
    taken: float
    digest: str


class Screens:
    """Frames and stage screenshots of the owned tab. `busy()` says a call has the screen."""

    def __init__(self, endpoint: str, target: Callable[[], str | None], busy: Callable[[], bool]):
        self.endpoint = endpoint
        self.target = target
        self.busy = busy
        self.last: Frame | None = None
        self._lock = asyncio.Lock()
        self._ws: tuple[str, str] | None = None  # (target id, its WebSocket URL)

    async def live(self) -> tuple[Frame | None, str]:
        """The frame to show and its state: `live`, `paused` (a call has the screen) or why
        there is none."""
        if self.busy():
            return self.last, "paused"
        async with self._lock:
            last = self.last
            if last is not None and time.monotonic() - last.taken < FRAME_EVERY_S:
                return last, "live"
            jpeg, why = await self.capture(FRAME_WIDTH, 60)
            if jpeg is None:
                return None, why
            digest = hashlib.sha256(jpeg).hexdigest()[:16]
            self.last = Frame(jpeg, time.monotonic(), digest)
            return self.last, "live"

    async def capture(self, width: int, quality: int) -> tuple[bytes | None, str]:
        """A JPEG of what the owned tab shows, at most `width` pixels wide, or why not."""
        if self.busy():
            return None, "skipped: a call had the screen"
        target = self.target()
        if not target:
            return None, "no broadcast tab yet: it opens with the first call"
        try:
            jpeg = await asyncio.wait_for(
                asyncio.to_thread(self._capture, target, width, quality), CAPTURE_TIMEOUT_S + 0.5
            )
        except (OSError, TimeoutError, ValueError, KeyError) as exc:
            self._ws = None
            log.info("console.capture_failed", error=f"{type(exc).__name__}: {str(exc)[:200]}")
            return None, "the broadcast tab did not answer"
        return jpeg, "taken"

    def _capture(self, target: str, width: int, quality: int) -> bytes:
        with CdpSocket(self._ws_url(target), CAPTURE_TIMEOUT_S) as cdp:
            metrics = cdp.call("Page.getLayoutMetrics", {})
            view = metrics.get("cssVisualViewport") or metrics["visualViewport"]
            w, h = float(view["clientWidth"]), float(view["clientHeight"])
            clip = {
                "x": float(view.get("pageX", 0)),
                "y": float(view.get("pageY", 0)),
                "width": w,
                "height": h,
                "scale": min(1.0, width / max(w, 1.0)),
            }
            params = {"format": "jpeg", "quality": quality, "clip": clip, "optimizeForSpeed": True}
            shot = cdp.call("Page.captureScreenshot", params)
        return base64.b64decode(shot["data"])

    def _ws_url(self, target: str) -> str:
        if self._ws is not None and self._ws[0] == target:
            return self._ws[1]
        tabs = cdp_targets(self.endpoint, CAPTURE_TIMEOUT_S)
        tab: dict[str, Any] = next((t for t in tabs if t.get("id") == target), {})
        url = tab.get("webSocketDebuggerUrl")
        if not url:
            raise KeyError("the broadcast tab is not among Chrome's targets")
        self._ws = (target, str(url))
        return str(url)


async def after_stage(stage_done: Callable[[], Any], timeout: float = STAGE_WAIT_S) -> None:
    """Wait until the stage is done with the screen (bounded); never raises."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(stage_done(), timeout)
