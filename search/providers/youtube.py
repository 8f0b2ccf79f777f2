"""YouTube playback on the broadcast tab: find the video, make it play with sound, skip ads.

Playback is confirmed by watching `currentTime` advance, not by trusting a click. Ads are
skipped when their skip button appears; then the player goes to theater mode (fullscreen
with `SB_VIDEO_FULLSCREEN=true`). `stop` leaves the tab on a neutral page.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import structlog
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel

from browser_core import (
    Answer,
    Deadline,
    Driver,
    FailureKind,
    NavigationFailed,
    Settings,
    Source,
    document_html,
)
from browser_core.stage import CAP_S, finish, show_caption, show_neutral, show_player, start
from search._types import Request
from search.parsers._models import YoutubeVideo
from search.parsers.google import detect_interstitial
from search.parsers.youtube import (
    first_video,
    parse_watch_page,
    parse_youtube_results,
    unplayable_reason,
    video_id_from_url,
)
from search.providers.google import answer_consent

log = structlog.get_logger(__name__)

NEUTRAL_URL = "about:blank"
_SKIP_BUTTONS = ".ytp-skip-ad-button, .ytp-ad-skip-button, .ytp-ad-skip-button-modern"
# play() settles only once media data arrives: with no source (an unavailable video) or a
# stalled stream it never does, so the wait is bounded and the outcome is watched instead.
_PLAY_JS = """async (muted) => {
  const v = document.querySelector('video');
  if (!v) return {ok: false, error: 'no video element'};
  v.muted = muted;
  const late = new Promise((resolve) => setTimeout(() => resolve('pending'), 3000));
  try { return (await Promise.race([v.play(), late])) === 'pending'
          ? {ok: false, error: 'play() still pending'} : {ok: true}; }
  catch (e) { return {ok: false, error: String(e && e.name || e)}; }
}"""
_NO_PLAYER = "the page has no video player"
_STATE_JS = """() => {
  const v = document.querySelector('video');
  const player = document.querySelector('#movie_player, .html5-video-player');
  if (!v) return null;
  return {paused: v.paused, t: v.currentTime, duration: isFinite(v.duration) ? v.duration : null,
          muted: v.muted, ad: !!(player && player.classList.contains('ad-showing')),
          waiting: !v.paused && v.readyState < 3};  // not paused, but no data to play
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
    problem: str = ""  # why it does not play, when known (YouTube's own words)
    stalled: bool = False  # not paused, but waiting for data that has not come


def results_url(query: str) -> str:
    return "https://www.youtube.com/results?" + urlencode({"search_query": query})


async def _find_video(driver: Driver, page: Any, query: str, settings: Settings) -> YoutubeVideo:
    await driver.navigate(page, results_url(query), check=False, settle_ms=0)
    html = await document_html(page)
    video = await _first_video(html)
    if video is None and detect_interstitial(html, page.url) is None:
        await driver.settle(page)  # a script redirect (or late render): look again
        html = await document_html(page)
    if detect_interstitial(html, page.url) == "consent":
        await answer_consent(page, settings.google_consent)
        await page.wait_for_url(re.compile(r"^https://www\.youtube\.com/results"), timeout=8000)
        html = await document_html(page)
    video = video or await _first_video(html)
    if video is None:
        raise NavigationFailed(
            f"YouTube found no playable video for {query[:100]!r}",
            hint="try other words or a video URL",
            failure_kind=FailureKind.NO_VIDEO,
        )
    return video


async def _first_video(html: str) -> YoutubeVideo | None:
    return first_video(await asyncio.to_thread(parse_youtube_results, html))


async def _state(page: Any) -> dict[str, Any] | None:
    state = await page.evaluate(_STATE_JS)
    return state if isinstance(state, dict) else None


async def _start(page: Any) -> bool | None:
    """Play with sound; a click on the player counts as the user gesture if needed.
    True: only muted playback was allowed; None: the page has no media element."""
    try:
        await page.locator("video").first.wait_for(state="attached", timeout=8000)
    except PlaywrightError:
        return None
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


def caption_subject(target: str) -> str:
    """What the caption says is playing: the words asked for, never the page's own title
    (the caption is our voice on screen; a video's title is whatever its uploader chose)."""
    return "the requested video" if video_id_from_url(target) else target


async def _show_playing(page: Any, target: str, settings: Settings) -> tuple[Any, Any]:
    return await asyncio.gather(
        show_player(page, fullscreen=settings.video_fullscreen, budget_s=CAP_S),
        show_caption(page, "play", caption_subject(target), settings, budget_s=CAP_S),
    )


async def _confirm(
    page: Any, seconds: float, on_play: Callable[[], None] | None = None
) -> tuple[dict[str, Any] | None, bool, bool]:
    """Skip ads as they appear. Returns the last state, whether an ad was skipped, and
    whether currentTime advanced on the real video (a media element that is not paused
    but stalled, or still waiting for data, is not playing). `on_play` is called when the
    real video first plays, while its progress is still being confirmed."""
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
                if on_play is not None:
                    on_play()
            elif state["t"] > first + 0.2:
                return state, skipped, True
        await asyncio.sleep(0.25)
    return state, skipped, False


async def play_in_page(
    driver: Driver,
    page: Any,
    target: str,
    settings: Settings,
    confirm_s: float = 8.0,
    staged: list[asyncio.Future[Any]] | None = None,
) -> PlayStatus:
    """Play on `page`. The player's stage (theater mode, caption) starts as soon as the video
    plays; with `staged` it is handed over for after the answer, else waited for 100 ms."""
    video_id = video_id_from_url(target)
    found: YoutubeVideo | None = None
    if video_id is None:
        found = await _find_video(driver, page, target, settings)
        video_id = found.video_id
    url = f"https://www.youtube.com/watch?v={video_id}"
    await driver.navigate(page, url, check=False, settle_ms=0)
    html = await document_html(page)
    if detect_interstitial(html, page.url) == "consent":
        await answer_consent(page, settings.google_consent)
        html = await document_html(page)
    info = parse_watch_page(html)
    status = PlayStatus(
        video_id=video_id,
        title=(info.title if info else "") or (found.title if found else "") or await page.title(),
        channel=(info.channel if info else "") or (found.channel if found else ""),
        duration=(info.duration_s if info else None) or (found.duration_s if found else None),
        url=url,
    )
    reason = unplayable_reason(html)  # unavailable, private, age or sign-in gate
    if reason is not None:
        log.info("youtube.unplayable", video_id=video_id, reason=reason[:200])
        return status.model_copy(update={"problem": reason})
    muted = await _start(page)
    if muted is None:
        return status.model_copy(update={"problem": _NO_PLAYER})
    stage: asyncio.Future[Any] | None = None

    def on_play() -> None:  # the ad is gone and the video plays: it fills the frame
        nonlocal stage
        if stage is None:
            stage = start(_show_playing(page, target, settings))

    state, skipped, advanced = await _confirm(page, confirm_s, on_play)
    if stage is not None and staged is not None:  # the driver waits for it after the answer
        staged.append(stage)
    elif stage is not None:  # begun while playback was confirmed: at most 100 ms more
        await finish("player", stage)
    return status.model_copy(
        update={
            "playing": bool(advanced and state and not state["paused"] and not state["ad"]),
            "position_s": round(float(state["t"]), 1) if state else 0.0,
            "muted": muted,
            "ad_skipped": skipped,
        }
    )


async def play(
    driver: Driver, target: str, settings: Settings, timeout: float | None = None
) -> PlayStatus:
    """Play a YouTube URL or the first real video for a query on the broadcast tab."""
    budget = timeout or settings.op_timeout_s

    staged: list[asyncio.Future[Any]] = []

    async def op(page: Any) -> PlayStatus:
        confirm_s = max(2.0, min(8.0, budget / 2))
        return await play_in_page(driver, page, target, settings, confirm_s, staged)

    async def show(page: Any, status: PlayStatus) -> None:
        for step in staged:  # begun while playback was confirmed
            await finish("player", step, CAP_S, after=True)

    return await driver.run("youtube.play", op, timeout=budget, show=show)


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
            # play() may reject (no playable source) or never settle (no data): the status
            # read afterwards says what the player did, not this call.
            await page.evaluate(
                "(p) => { const v = document.querySelector('video'); if (!v) return;"
                " if (p) { v.pause(); return; }"
                " return Promise.race([v.play().catch(() => {}),"
                " new Promise((r) => setTimeout(r, 2000))]); }",
                command == "pause",
            )
        return await _status_in(page)

    async def show(page: Any, status: PlayStatus) -> None:
        if command == "stop":  # the video's last frame gives way to the blank page
            await show_neutral(page, budget_s=None)

    return await driver.run(f"youtube.{command}", op, timeout=timeout or 10.0, show=show)


async def _status_in(page: Any) -> PlayStatus:
    video_id = video_id_from_url(page.url)
    state = await _state(page) if video_id else None
    if state is None:  # a watch address with no player on it: nothing to pause or resume
        return PlayStatus()
    return PlayStatus(
        video_id=video_id,
        title=_title(await page.title()) if video_id else "",
        url=page.url if video_id else "",
        duration=int(state["duration"]) if state and state["duration"] else None,
        playing=not state["paused"] and not state.get("waiting"),
        stalled=bool(state.get("waiting")),
        position_s=round(float(state["t"]), 1) if state else 0.0,
        muted=bool(state and state["muted"]),
    )


def _title(page_title: str) -> str:
    return page_title.removesuffix(" - YouTube").strip()


async def park(driver: Driver, timeout: float = 3.0) -> PlayStatus | None:
    """Pause the video on the broadcast tab before another action takes the tab over.

    Returns where it was (to resume later), or None when no video is playing there.
    """

    async def op(page: Any) -> PlayStatus | None:
        if video_id_from_url(page.url) is None:
            return None
        status = await _status_in(page)
        if not status.playing:
            return None
        await page.evaluate("() => { const v = document.querySelector('video'); v && v.pause(); }")
        return status.model_copy(update={"playing": False})

    return await driver.run("youtube.park", op, timeout=timeout)


async def resume_parked(
    driver: Driver, parked: PlayStatus, settings: Settings, timeout: float
) -> PlayStatus:
    """Bring a parked video back on the broadcast tab and play it from where it was."""

    async def op(page: Any) -> PlayStatus:
        if video_id_from_url(page.url) != parked.video_id:
            start = int(parked.position_s)
            await driver.navigate(page, f"{parked.url}&t={start}s", check=False, settle_ms=0)
            await page.locator("video").first.wait_for(state="attached", timeout=8000)
            at = await page.evaluate(_SEEK_JS, parked.position_s)
            log.info("youtube.seeked", wanted_s=parked.position_s, at_s=at)
        muted = await _start(page)
        if muted is None:
            return parked.model_copy(update={"playing": False, "problem": _NO_PLAYER})
        state, _, advanced = await _confirm(page, min(4.0, max(1.0, timeout / 2)))
        status = await _status_in(page)
        playing = bool(advanced and state and not state["paused"] and not state["ad"])
        return status.model_copy(
            update={"playing": playing, "muted": muted or status.muted, "channel": parked.channel}
        )

    return await driver.run("youtube.resume", op, timeout=timeout)


_SEEK_JS = """async (t) => { const v = document.querySelector('video');
  if (!v || !(t > 0)) return null;
  const nap = () => new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < 30; i++) {  // until the media is seekable there (about 3 s at most)
    if (v.readyState >= 1) {
      v.currentTime = t;
      await nap();
      if (Math.abs(v.currentTime - t) < 1) return v.currentTime;
    } else { await nap(); }
  }
  return v.currentTime;
}"""


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def describe(status: PlayStatus) -> str:
    if not status.playing:
        why = f": {status.problem.rstrip('.')}" if status.problem else ""
        return f"Opened {status.title or status.url}, but playback did not start{why}."
    by = f" by {status.channel}" if status.channel else ""
    muted = (
        " It is muted: the browser blocked sound, so unmute it on the stream to hear it."
        if status.muted
        else ""
    )
    return f"Now playing on the stream: {status.title}{by} ({status.url}).{muted}"


def describe_control(command: str, status: PlayStatus, parked: PlayStatus | None) -> str:
    """What a playback control did, in words the brain can say."""
    at = f" at {_clock(status.position_s)}"
    if command == "stop":
        return "Stopped the video; the stream shows a blank page."
    if status.video_id is None:
        if parked is not None:
            return (
                f"Nothing is playing on the stream; {parked.title} is paused at "
                f"{_clock(parked.position_s)} (say resume to continue)."
            )
        return "Nothing is playing on the stream."
    if command == "pause":
        return f"Paused {status.title}{at}."
    if command == "resume":
        return (
            f"Resumed {status.title}{at}."
            if status.playing
            else (f"{status.title} did not start playing again{at}.")
        )
    total = f" of {_clock(status.duration)}" if status.duration else ""
    if status.stalled:
        return f"Stuck on the stream, waiting for the video to load: {status.title}{at}{total}."
    state = "Playing" if status.playing else "Paused"
    return f"{state} on the stream: {status.title}{at}{total}."


class YoutubeProvider:
    """`play` and the playback controls on the broadcast Chrome.

    Remembers a video that another action paused (`park`), so `resume` brings it back to
    the front where it was, even after a search or a read used the tab.
    """

    name = "youtube"
    actions = frozenset({"play", "pause", "resume", "stop", "status"})

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.parked: PlayStatus | None = None
        self.started = False  # this provider started a video that may still be playing

    async def park(self, settings: Settings, timeout: float = 3.0) -> str | None:
        """Pause a playing video before a search or read takes the tab; say so, or None.

        Costs nothing unless this provider started a video (no extra CDP round trip on an
        ordinary search)."""
        if not self.started:
            return None
        self.started = False
        status = await park(self.driver, timeout)
        if status is None:
            return None
        self.parked = status
        log.info("youtube.parked", video_id=status.video_id, position_s=status.position_s)
        return (
            f"Paused the video ({status.title}) at {_clock(status.position_s)} to show this; "
            "say resume to continue it."
        )

    async def run(self, request: Request, settings: Settings, deadline: Deadline) -> Answer:
        if request.action == "play":
            status = await play(
                self.driver, request.url or request.query, settings, timeout=deadline.remaining()
            )
            self.parked = None
            self.started = status.playing
            return self._answer(request.action, status, describe(status))
        status = await self._control(request.action, settings, deadline)
        if request.action in ("resume", "stop"):
            self.started = request.action == "resume" and status.playing
        return self._answer(
            request.action, status, describe_control(request.action, status, self.parked)
        )

    async def _control(self, command: str, settings: Settings, deadline: Deadline) -> PlayStatus:
        budget = max(1.0, deadline.remaining())
        if command == "resume" and self.parked is not None:
            current = await control(self.driver, "status", settings, timeout=budget)
            if current.video_id is None or current.video_id == self.parked.video_id:
                parked, self.parked = self.parked, None
                return await resume_parked(self.driver, parked, settings, deadline.remaining())
        if command == "stop":
            self.parked = None
        if command == "resume":
            status = await control(self.driver, command, settings, timeout=budget)
            if status.video_id:  # not paused is not playing (refused, stalled): verify
                return await resume_parked(self.driver, status, settings, deadline.remaining())
            return status
        return await control(self.driver, command, settings, timeout=budget)

    def _answer(self, action: str, status: PlayStatus, text: str) -> Answer:
        return Answer(
            text,
            [Source(title=status.title, url=status.url)] if status.url else [],
            status.model_dump(),
            failure_kind=_failure(action, status, self.parked),
        )


def _failure(action: str, status: PlayStatus, parked: PlayStatus | None) -> FailureKind | None:
    """An honest outcome: play and resume succeed only when playback is verified."""
    if action in ("play", "resume") and status.video_id and not status.playing:
        return FailureKind.PLAYBACK_FAILED
    if action in ("pause", "resume") and status.video_id is None:
        return FailureKind.NOTHING_PLAYING
    return None
