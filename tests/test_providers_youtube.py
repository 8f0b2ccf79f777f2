"""YouTube playback on a real Chromium: a local watch page at the real address, a real video."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core import Settings, SyncDriver
from search.providers.youtube import control, play
from tests._web import FakeWeb, Page

PAGES = Path(__file__).parent / "pages"
VIDEO_ID = "abcdefghijk"


def watch_page(ad: bool) -> Page:
    html = (PAGES / "yt-watch.html").read_text(encoding="utf-8")
    html = html.replace("VIDEO_ID", VIDEO_ID).replace("AD_CLASS", "ad-showing" if ad else "")
    return Page(html)


@pytest.fixture
def youtube(settings: Settings) -> Iterator[tuple[SyncDriver, FakeWeb]]:
    web = FakeWeb()
    web.add(
        "https://www.youtube.com/test-video.webm",
        Page((PAGES / "test-video.webm").read_bytes(), content_type="video/webm"),
    )
    drv = SyncDriver(settings)
    drv.driver.page_hooks.append(web.hook)
    yield drv, web
    drv.call(drv.driver.close_owned_tab(), 10)
    drv.close()
    drv.loop.stop()


def run(drv: SyncDriver, coro: Any) -> Any:
    return drv.call(coro, 40)


def test_a_youtube_url_plays_with_sound_and_time_advances(
    youtube: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, web = youtube
    web.add("https://www.youtube.com/watch", watch_page(ad=False))
    status = run(drv, play(drv.driver, f"https://youtu.be/{VIDEO_ID}", settings))
    assert status.playing and not status.muted
    assert status.video_id == VIDEO_ID
    assert status.title == "Test Pattern Tone" and status.channel == "Local Test Channel"
    assert status.duration == 30
    first = run(drv, control(drv.driver, "status", settings)).position_s
    run(drv, asyncio.sleep(1.2))
    assert run(drv, control(drv.driver, "status", settings)).position_s > first


def test_a_skippable_ad_is_skipped_before_the_video_counts_as_playing(
    youtube: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, web = youtube
    web.add("https://www.youtube.com/watch", watch_page(ad=True))
    status = run(drv, play(drv.driver, f"https://www.youtube.com/watch?v={VIDEO_ID}", settings))
    assert status.ad_skipped and status.playing
    assert status.position_s < 15  # the real video from its start, not the ad at 20 s


def test_pause_resume_status_and_stop(
    youtube: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, web = youtube
    web.add("https://www.youtube.com/watch", watch_page(ad=False))
    run(drv, play(drv.driver, f"https://youtu.be/{VIDEO_ID}", settings))
    paused = run(drv, control(drv.driver, "pause", settings))
    assert not paused.playing
    run(drv, asyncio.sleep(0.8))
    assert run(drv, control(drv.driver, "status", settings)).position_s == paused.position_s
    assert run(drv, control(drv.driver, "resume", settings)).playing
    stopped = run(drv, control(drv.driver, "stop", settings))
    assert stopped.video_id is None and not stopped.playing

    async def where(page: Any) -> str:
        return str(page.url)

    assert drv.run("where", where) == "about:blank"
    assert run(drv, control(drv.driver, "status", settings)).video_id is None
