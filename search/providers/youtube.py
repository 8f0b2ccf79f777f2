"""YouTube playback on the broadcast tab: find the video, make it play with sound, skip ads.

Playback is confirmed by watching `currentTime` advance, not by trusting a click. Ads are
skipped when their skip button appears. `stop` leaves the tab on a neutral page.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import Any
from urllib.parse import urlencode

import structlog
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel

from browser_core import (
    Deadline,
    Driver,
    FailureKind,
    NavigationFailed,
    Settings,
    Source,
    ToolExecutionResult,
    envelope_result,
)
from search._types import Request
from search.parsers._models import YoutubeVideo
from search.parsers.google import detect_interstitial
from search.parsers.youtube import (
    first_video,
    parse_watch_page,
    parse_youtube_results,
    video_id_from_url,
)
from search.providers.google import answer_consent

log = structlog.get_logger(__name__)

NEUTRAL_URL = "about:blank"
_SKIP_BUTTONS = ".ytp-skip-ad-button, .ytp-ad-skip-button, .ytp-ad-skip-button-modern"
_PLAY_JS = """async (muted) => {
  const v = document.querySelector('video');
  if (!v) return {ok: false, error: 'no video element'};
  v.muted = muted;
  try { await v.play(); return {ok: true}; }
  catch (e) { return {ok: false, error: String(e && e.name || e)}; }
}"""
_STATE_JS = """() => {
  const v = document.querySelector('video');
  const player = document.querySelector('#movie_player, .html5-video-player');
  if (!v) return null;
  return {paused: v.paused, t: v.currentTime, duration: isFinite(v.duration) ? v.duration : null,
          muted: v.muted, ad: !!(player && player.classList.contains('ad-showing'))};
}"""


class PlayStatus(BaseModel):
    """What is on the broadcast tab's player."""

    video_id: str | None = None
    title: str = ""
    channel: str = ""
    duration: int | None = None
    url: str = ""
    playing: bool = False
    position_s: float = 0.0
    muted: bool = False
    ad_skipped: bool = False


def results_url(query: str) -> str:
    return "https://www.youtube.com/results?" + urlencode({"search_query": query})


async def _find_video(driver: Driver, page: Any, query: str, settings: Settings) -> YoutubeVideo:
    await driver.navigate(page, results_url(query), check=False, settle_ms=0)
    video = await _first_on_page(page)
    if video is None and detect_interstitial(await page.content(), page.url) is None:
        await driver.settle(page)  # a script redirect (or late render): look again
    if detect_interstitial(await page.content(), page.url) == "consent":
        await answer_consent(page, settings.google_consent)
        await page.wait_for_url(re.compile(r"^https://www\.youtube\.com/results"), timeout=8000)
        await page.wait_for_load_state("domcontentloaded")
    video = video or await _first_on_page(page)
    if video is None:
        raise NavigationFailed(
            f"YouTube found no playable video for {query[:100]!r}",
            hint="try other words or a video URL",
            failure_kind=FailureKind.NO_VIDEO,
        )
    return video


async def _first_on_page(page: Any) -> YoutubeVideo | None:
    results = await asyncio.to_thread(parse_youtube_results, await page.content())
    return first_video(results)


async def _state(page: Any) -> dict[str, Any] | None:
    state = await page.evaluate(_STATE_JS)
    return state if isinstance(state, dict) else None


async def _start(page: Any) -> bool:
    """Play with sound; a click on the player counts as the user gesture if needed."""
    await page.wait_for_selector("video", state="attached", timeout=8000)
    result = await page.evaluate(_PLAY_JS, False)
    if result.get("ok"):
        return False
    log.info("youtube.play_blocked", error=result.get("error"))
    with contextlib.suppress(PlaywrightError):
        await page.locator("#movie_player, .html5-video-player, video").first.click(timeout=3000)
    state = await _state(page)
    if state and not state["paused"]:
        return False
    result = await page.evaluate(_PLAY_JS, False)
    if result.get("ok"):
        return False
    await page.evaluate(_PLAY_JS, True)  # last resort: muted playback still shows the video
    return True


async def _confirm(page: Any, seconds: float) -> tuple[dict[str, Any] | None, bool]:
    """Skip ads as they appear; True once currentTime advances on the real video."""
    skipped = False
    first: float | None = None
    until = time.monotonic() + seconds
    state = None
    while time.monotonic() < until:
        state = await _state(page)
        if state and state["ad"]:
            skip = page.locator(_SKIP_BUTTONS).first
            if await skip.count() and await skip.is_visible():
                await skip.click(timeout=2000)
                skipped = True
                log.info("youtube.ad_skipped")
            first = None
        elif state and not state["paused"]:
            if first is None:
                first = state["t"]
            elif state["t"] > first + 0.2:
                return state, skipped
        await asyncio.sleep(0.25)
    return state, skipped


async def play_in_page(
    driver: Driver, page: Any, target: str, settings: Settings, confirm_s: float = 8.0
) -> PlayStatus:
    video_id = video_id_from_url(target)
    found: YoutubeVideo | None = None
    if video_id is None:
        found = await _find_video(driver, page, target, settings)
        video_id = found.video_id
    url = f"https://www.youtube.com/watch?v={video_id}"
    await driver.navigate(page, url, check=False, settle_ms=0)
    if detect_interstitial(await page.content(), page.url) == "consent":
        await answer_consent(page, settings.google_consent)
        await page.wait_for_load_state("domcontentloaded")
    muted = await _start(page)
    state, skipped = await _confirm(page, confirm_s)
    info = parse_watch_page(await page.content())
    return PlayStatus(
        video_id=video_id,
        title=(info.title if info else "") or (found.title if found else "") or await page.title(),
        channel=(info.channel if info else "") or (found.channel if found else ""),
        duration=(info.duration_s if info else None) or (found.duration_s if found else None),
        url=url,
        playing=bool(state and not state["paused"] and not state["ad"]),
        position_s=round(float(state["t"]), 1) if state else 0.0,
        muted=muted,
        ad_skipped=skipped,
    )


async def play(
    driver: Driver, target: str, settings: Settings, timeout: float | None = None
) -> PlayStatus:
    """Play a YouTube URL or the first real video for a query on the broadcast tab."""
    budget = timeout or settings.op_timeout_s

    async def op(page: Any) -> PlayStatus:
        return await play_in_page(
            driver, page, target, settings, confirm_s=max(2.0, min(8.0, budget / 2))
        )

    return await driver.run("youtube.play", op, timeout=budget)


async def control(
    driver: Driver, command: str, settings: Settings, timeout: float | None = None
) -> PlayStatus:
    """`pause`, `resume`, `stop` or `status` of what plays on the broadcast tab."""

    async def op(page: Any) -> PlayStatus:
        if command == "stop":
            await page.goto(NEUTRAL_URL)
            return PlayStatus()
        video_id = video_id_from_url(page.url)
        if command in ("pause", "resume") and video_id:
            await page.evaluate(
                "(p) => { const v = document.querySelector('video'); if (!v) return;"
                " if (p) { v.pause(); } else { return v.play(); } }",
                command == "pause",
            )
        state = await _state(page) if video_id else None
        return PlayStatus(
            video_id=video_id,
            title=(await page.title()) if video_id else "",
            url=page.url if video_id else "",
            duration=int(state["duration"]) if state and state["duration"] else None,
            playing=bool(state and not state["paused"]),
            position_s=round(float(state["t"]), 1) if state else 0.0,
            muted=bool(state and state["muted"]),
        )

    return await driver.run(f"youtube.{command}", op, timeout=timeout or 10.0)


def describe(status: PlayStatus) -> str:
    if not status.playing:
        return f"Opened {status.title or status.url}, but playback did not start."
    by = f" by {status.channel}" if status.channel else ""
    return f"Now playing on the stream: {status.title}{by} ({status.url})."


class YoutubeProvider:
    """The `play` action on the broadcast Chrome."""

    name = "youtube"
    actions = frozenset({"play"})

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    async def run(
        self, request: Request, settings: Settings, deadline: Deadline
    ) -> ToolExecutionResult:
        status = await play(
            self.driver, request.url or request.query, settings, timeout=deadline.remaining()
        )
        return envelope_result(
            describe(status),
            provider=self.name,
            action="play",
            query=request.query,
            sources=[Source(title=status.title, url=status.url)],
            data=status.model_dump(),
            max_chars=settings.envelope_max_chars,
            elapsed_ms=deadline.elapsed_ms(),
        )
