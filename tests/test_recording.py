"""The session recorder keeps every document's whole body, on pages the size of 2026's.

A search is recorded through the real driver path on the session Chromium (the page served
at Google's address, as `scripts/make_recording.py` does), and the HAR's document must be
byte for byte what was served. The driver answers from the body as Chrome's network stack
has it, before the page's renderer has taken it all in; a HAR stopped then kept an empty
body (2 of 8 runs of `make_recording.py` on 1.7 MB pages). A page whose renderer is busy
when the action returns makes that race certain here; a body that cannot be kept is an
error, never a silent empty recording.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright

from browser_core import Settings, StreamBrowserError, SyncDriver
from browser_core import _recording as recording
from browser_core.recording import SessionRecorder
from search.recordings import run_action
from tests._serp_pages import page_2026
from tests._server import LocalServer, Reply
from tests._web import FakeWeb, Page

QUERY = "why is the sky blue"
RESULTS = "https://www.google.com/search"
PADDING_KB = 1700  # the bench's 2026 page: 1.76 MB, like the real ones of 2026 (1.5-1.8 MB)
# Holds the page's renderer for a while at the top of the document, before the rest of the
# body is taken in: the action (answered from the network's copy) is over by then.
BUSY = "<script>const t0 = Date.now(); while (Date.now() - t0 < 1500) {}</script>"


@pytest.fixture(scope="module")
def page_2026_bytes() -> bytes:
    return page_2026(QUERY, padding_kb=PADDING_KB).encode()


def record_search(settings: Settings, har: Path, body: bytes) -> dict[str, Any]:
    """Record a search served `body` as Google's results page; the live run's payload."""
    web = FakeWeb()
    web.add(RESULTS, Page(body))
    recorder = SessionRecorder(har_path=har, slim=True)
    # Serving 1.7 MB through `route.fulfill` takes seconds on a busy machine: room for it.
    settings = settings.model_copy(update={"op_timeout_s": 60.0, "nav_timeout_s": 45.0})
    drv = SyncDriver(settings)  # its own loop: the stage's work after the answer goes on
    drv.driver.page_hooks.extend([web.hook, recorder.hook])

    async def search() -> dict[str, Any]:
        payload = (await run_action(drv.driver, "search", QUERY, settings)).payload
        await recorder.stop()
        return payload

    try:
        return drv.call(search(), 150)
    finally:
        drv.shutdown()


def recorded_documents(har: Path) -> list[bytes]:
    entries = json.loads(har.read_text(encoding="utf-8"))["log"]["entries"]
    return [
        str(e["response"]["content"].get("text", "")).encode()
        for e in entries
        if e["request"]["url"].startswith(RESULTS)
    ]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@pytest.mark.parametrize("run", [1, 2, 3])
def test_a_2026_sized_results_page_is_recorded_whole_every_time(
    run: int, settings: Settings, tmp_path: Path, page_2026_bytes: bytes
) -> None:
    har = tmp_path / "session.har"
    payload = record_search(settings, har, page_2026_bytes)
    assert payload["result"]["provider"] == "google", payload
    documents = recorded_documents(har)
    assert [(len(d), digest(d)) for d in documents] == [
        (len(page_2026_bytes), digest(page_2026_bytes))
    ]


def test_a_page_still_loading_when_the_action_is_over_is_waited_for(
    settings: Settings, tmp_path: Path, page_2026_bytes: bytes
) -> None:
    busy = page_2026_bytes.replace(b"<head>", b"<head>" + BUSY.encode(), 1)
    har = tmp_path / "session.har"
    record_search(settings, har, busy)
    assert [(len(d), digest(d)) for d in recorded_documents(har)] == [(len(busy), digest(busy))]


def test_a_body_that_cannot_be_kept_is_an_error_and_no_har_is_written(
    settings: Settings, tmp_path: Path, http: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording, "DOCUMENTS_WAIT_S", 0.5)
    url = http.route("/slow", Reply("<p>slow</p>" * 2000, trickle_s=4.0))
    har = tmp_path / "session.har"

    async def record_slow_page() -> None:
        recorder = SessionRecorder(har_path=har, slim=True)
        async with async_playwright() as pw:
            browser = await pw.chromium.connect_over_cdp(settings.cdp_endpoint)
            page = await browser.contexts[0].new_page()
            try:
                await recorder.hook(page)
                await page.goto(url, wait_until="commit")
                await recorder.stop()
            finally:
                await page.close()

    with pytest.raises(StreamBrowserError) as caught:
        asyncio.run(record_slow_page())
    assert f"the recording lost the body of {url} (still loading" in str(caught.value)
    assert "record again" in str(caught.value)
    assert not har.exists()
