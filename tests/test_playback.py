"""Playback through the tool, as the brain drives it on air: play, a search that pauses the
video and says so, status, resume from the kept position, honest failures."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core import Driver, Settings, parse_envelope
from search import BrowseTool, ToolContext
from tests._web import FakeWeb, Page, fixture_text

PAGES = Path(__file__).parent / "pages"
VIDEO_ID = "abcdefghijk"
LIVE = ToolContext(broadcasting=True)
CROW = "serp/aql-wayback/2020-12-20_google-crow-names-1608438374"


def watch_page(video: str = "/test-video.webm") -> Page:
    html = (PAGES / "yt-watch.html").read_text(encoding="utf-8")
    html = html.replace("VIDEO_ID", VIDEO_ID).replace("AD_CLASS", "")
    return Page(html.replace("/test-video.webm", video))


def ranged_video(request: Any) -> Page:
    """Serve the test video with byte ranges, as YouTube's media servers do: Chromium can
    only seek in media whose server answers ranges."""
    data = (PAGES / "test-video.webm").read_bytes()
    wanted = request.headers.get("range", "")
    start, _, end = wanted.removeprefix("bytes=").partition("-")
    first = int(start or 0)
    last = min(int(end), len(data) - 1) if end else len(data) - 1
    headers = {"accept-ranges": "bytes"}
    if not wanted:
        return Page(data, content_type="video/webm", headers=headers)
    headers["content-range"] = f"bytes {first}-{last}/{len(data)}"
    return Page(data[first : last + 1], status=206, content_type="video/webm", headers=headers)


@pytest.fixture
def on_air(settings: Settings) -> Iterator[tuple[BrowseTool, FakeWeb]]:
    web = FakeWeb()
    web.add("https://www.youtube.com/test-video.webm", ranged_video)
    web.add("https://www.youtube.com/watch", watch_page())
    web.add("https://www.google.com/search", Page(fixture_text(f"{CROW}.html.gz")))
    tool = BrowseTool(settings, driver=Driver(settings, page_hooks=(web.hook,)))
    yield tool, web
    tool.loop.run(tool.driver.close_owned_tab(), 10)
    tool.close()


def test_a_search_during_playback_pauses_the_video_and_resume_continues_where_it_was(
    on_air: tuple[BrowseTool, FakeWeb],
) -> None:
    tool, _ = on_air
    played = tool.run_sync(f"https://youtu.be/{VIDEO_ID}", action="play", ctx=LIVE).result
    assert played is not None and played.success and played.data["playing"]
    time.sleep(1.5)

    search = tool.run_sync("crow names", action="search", ctx=LIVE).result
    assert search is not None and search.success and search.provider == "google"
    assert search.note and "resume" in search.note
    header = parse_envelope(search.reply_text).header
    assert "Paused the video (Test Pattern Tone)" in header["note"]

    status = tool.run_sync("", action="status", ctx=LIVE).result
    assert status is not None and "paused at" in parse_envelope(status.reply_text).body

    resumed = tool.run_sync("", action="resume", ctx=LIVE).result
    assert resumed is not None and resumed.success, resumed and resumed.reply_text
    kept = tool.registry.providers["youtube"]
    assert kept.parked is None  # type: ignore[attr-defined]
    assert resumed.data["video_id"] == VIDEO_ID and resumed.data["playing"]
    assert resumed.data["position_s"] >= 1.0  # not from the start: the kept position


def test_pause_then_status_then_stop_through_the_tool(on_air: tuple[BrowseTool, FakeWeb]) -> None:
    tool, _ = on_air
    assert tool.run_sync(f"https://youtu.be/{VIDEO_ID}", action="play", ctx=LIVE).result
    paused = tool.run_sync("", action="pause", ctx=LIVE).result
    assert paused is not None and paused.success and not paused.data["playing"]
    assert "Paused Test Pattern Tone" in parse_envelope(paused.reply_text).body
    stopped = tool.run_sync("", action="stop", ctx=LIVE).result
    assert stopped is not None and stopped.success
    again = tool.run_sync("", action="pause", ctx=LIVE).result
    assert again is not None and not again.success and again.failure_kind == "nothing-playing"


@pytest.mark.slow
def test_a_video_that_never_plays_is_a_playback_failure_not_a_success(
    on_air: tuple[BrowseTool, FakeWeb],
) -> None:
    tool, web = on_air
    web.add("https://www.youtube.com/watch", watch_page(video="/missing.webm"))
    walk = tool.run_sync(f"https://youtu.be/{VIDEO_ID}", action="play", ctx=LIVE)
    assert walk.result is not None and not walk.result.success
    assert walk.result.failure_kind == "playback-failed"
    assert walk.chain[-1].failure_kind == "playback-failed" and not walk.chain[-1].ok
    assert "did not start" in parse_envelope(walk.result.reply_text).body


@pytest.mark.parametrize("action", ["pause", "resume", "stop"])
def test_controls_are_refused_off_air_and_status_still_answers(
    settings: Settings, action: str
) -> None:
    tool = BrowseTool(settings)
    try:
        refused = tool.run_sync("", action=action, ctx=ToolContext(broadcasting=False)).result
        assert refused is not None and not refused.success and "not live" in refused.reply_text
        disabled = BrowseTool(settings.model_copy(update={"stream_browser": False}))
        status = disabled.run_sync("", action="status").result
        disabled.close()
        assert status is not None and "disabled" in status.reply_text
    finally:
        tool.close()


def test_a_google_page_with_zero_results_falls_to_gemini(
    settings: Settings, tmp_path: Path
) -> None:
    from gemini.testing import write_fake_gemini

    web = FakeWeb()
    zero = fixture_text("serp/zlurad-serp-parser/desktop/no-results.html.gz")
    web.add("https://www.google.com/search", Page(zero))
    fake = write_fake_gemini(tmp_path / "bin", "success")
    answers = settings.model_copy(update={"gemini_cli": str(fake)})
    tool = BrowseTool(answers, driver=Driver(answers, page_hooks=(web.hook,)))
    try:
        walk = tool.run_sync("324j23i4jkdfjklndsklfmsdkl", action="search", ctx=LIVE)
    finally:
        tool.loop.run(tool.driver.close_owned_tab(), 10)
        tool.close()
    assert [(hop.provider, hop.failure_kind) for hop in walk.chain] == [
        ("google", "no-results"),
        ("bing", "navigation-failed"),  # the next engine (not served here) is asked too
        ("gemini", None),
    ]
    assert walk.result is not None and walk.result.provider.startswith("gemini")
    assert walk.chain[0].hint and "Gemini" in walk.chain[0].hint
