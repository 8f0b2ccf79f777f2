"""YouTube playback on a real Chromium: a local watch page at the real address, a real video."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

import pytest

from browser_core import Settings, SyncDriver
from search.providers.youtube import control, play
from tests._web import FIXTURES, FakeWeb, Page, fixture_text

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
    drv.shutdown()


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


PUDDING = "youtube/search/aql-wayback/2019-07-14_youtube-pudding-1563068696"


def script_redirect(location: str) -> Page:
    """Playwright 1.65 cannot fulfil a 3xx for a navigation here: redirect by script."""
    return Page(f"<script>location.replace({json.dumps(location)})</script>")


def test_a_query_goes_through_the_consent_wall_and_results_to_the_first_real_video(
    youtube: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, web = youtube

    async def fresh_profile(page: Any) -> None:
        await page.context.clear_cookies()

    drv.run("clear-cookies", fresh_profile)
    expected = json.loads((FIXTURES / f"{PUDDING}.expected.json").read_text(encoding="utf-8"))
    first_id = expected["results"][0]["url"].split("v=")[1][:11]
    results = "https://www.youtube.com/results?search_query=pudding"
    answered: list[str] = []

    def results_page(request: Any) -> Page:
        if "SOCS=" in (request.headers.get("cookie") or ""):
            return Page(fixture_text(f"{PUDDING}.html.gz"))
        return script_redirect("https://consent.youtube.com/ml?continue=" + quote(results))

    def save(request: Any) -> Page:
        form = parse_qs(request.post_data or "")
        answered.append(form["set_eom"][0])
        page = script_redirect(results)
        page.headers["Set-Cookie"] = "SOCS=CAE; Domain=.youtube.com; Path=/; Secure"
        return page

    web.add("https://www.youtube.com/results", results_page)
    web.add(
        "https://consent.youtube.com/ml",
        Page(fixture_text("consent/youtube-before-you-continue.html")),
    )
    web.add("https://consent.youtube.com/save", save)
    web.add("https://www.youtube.com/watch", watch_page(ad=False))
    status = run(drv, play(drv.driver, "pudding", settings))
    assert answered == ["true"]  # "Reject all" by default
    assert status.video_id == first_id
    assert status.playing
