"""A search on a 2026 results page with an AI Overview, on a real Chromium: the overview
waited for while it streams in (bounded), handed to the brain first and labelled, its
sources in the envelope, no result opened when it answers; and a read that fails leaves
the results page on screen, never Chrome's error page."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from browser_core import Deadline, Settings, SyncDriver, parse_envelope, wrap_answer
from browser_core.chrome import free_port
from browser_core.stage import RESULT
from search._types import Request
from search.providers._overview import LABEL
from search.providers.google import GoogleProvider, google_search, search_url
from tests import _serp_pages as pages
from tests._server import LocalServer, Reply
from tests._web import FakeWeb, Page

QUERY = "why is the sky blue"
ARTICLE = (
    "<html><head><title>Sky</title></head><body><article><h1>Why the sky is blue</h1>"
    + "".join(
        f"<p>Paragraph {i}: sunlight is scattered by the molecules of the air, and blue light "
        "is scattered more than red light, which is why the sky looks blue.</p>"
        for i in range(12)
    )
    + "</article></body></html>"
)


@pytest.fixture
def web(settings: Settings) -> Iterator[tuple[SyncDriver, FakeWeb]]:
    fake = FakeWeb()
    drv = SyncDriver(settings)
    drv.driver.page_hooks.append(fake.hook)
    yield drv, fake
    drv.shutdown()


def where(drv: SyncDriver) -> str:
    async def url(page: Any) -> str:
        return str(page.url)

    return str(drv.run("where", url))


def answer(drv: SyncDriver, settings: Settings, timeout: float = 20.0) -> Any:
    provider = GoogleProvider(drv.driver)
    request = Request(action="search", query=QUERY)
    return drv.call(provider.run(request, settings, Deadline(timeout)), timeout + 5)


def test_a_complete_overview_is_what_the_brain_hears_first_labelled_with_its_sources(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(pages.page_2026(QUERY)))
    for result in pages.SKY_RESULTS:
        fake.add(result.url, Page(ARTICLE))
    found = answer(drv, settings.model_copy(update={"search_read": "auto"}))
    wrapped = wrap_answer(found, provider="google", action="search", query=QUERY)
    body = parse_envelope(wrapped.reply_text).body
    assert body.startswith(LABEL)
    assert body.index(pages.SKY.paragraphs[0][:40]) < body.index("Top results:")
    assert "Show more" not in body and "AI responses may include mistakes" not in body
    assert [s.url.split("#")[0] for s in found.sources[:3]] == [u for _, u, _ in pages.SKY.sources]
    overview = found.data["ai_overview"]
    assert overview["complete"] and overview["text"].startswith(pages.SKY.paragraphs[0])
    # The overview answers: no result is opened, the audience keeps the results page.
    assert found.data["reads"] == [] and where(drv) == search_url(QUERY, settings)


def test_an_overview_that_streams_in_late_is_waited_for(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(pages.page_2026(QUERY, late_ms=1200)))
    started = time.monotonic()
    serp, reads = drv.call(google_search(drv.driver, QUERY, settings), 30)
    assert serp.ai_overview is not None and serp.ai_overview.complete
    assert serp.ai_overview.paragraphs[0] == pages.SKY.paragraphs[0]
    assert serp.ai_overview_waited_ms is not None and serp.ai_overview_waited_ms >= 900
    assert reads == [] and serp.ai_overview_note is None
    assert time.monotonic() - started < settings.google_overview_wait_s + 5


def test_an_overview_that_never_finishes_is_left_out_and_the_data_says_so(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(pages.page_2026(QUERY, late_ms=-1)))
    for result in pages.SKY_RESULTS:
        fake.add(result.url, Page(ARTICLE))
    quick = settings.model_copy(update={"google_overview_wait_s": 1.0, "search_read": "auto"})
    started = time.monotonic()
    found = answer(drv, quick)
    took = time.monotonic() - started
    assert found.data["ai_overview"] is None and found.data["ai_overview_state"] == "loading"
    assert "still loading after 1.0 s" in found.data["ai_overview_note"]
    assert LABEL not in found.body and "still loading" in found.body
    # the 1.0 s setting, not the 3.0 s default (the note above names it); slack for a loaded machine
    assert 0.9 <= found.data["ai_overview_waited_ms"] / 1000 < 2.9
    assert found.data["reads"], "with no overview, the top result is read as before"
    assert took < 10


def test_the_wait_never_outlasts_the_calls_deadline(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(pages.page_2026(QUERY, late_ms=-1)))
    patient = settings.model_copy(update={"google_overview_wait_s": 30.0, "search_read": "never"})
    started = time.monotonic()
    found = answer(drv, patient, timeout=5.0)
    assert time.monotonic() - started < 5.0
    assert found.data["ai_overview"] is None and found.data["ai_overview_waited_ms"] < 4000


@pytest.mark.parametrize(
    "state", ["unavailable", "error"], ids=["not-available", "cannot-generate"]
)
def test_an_overview_google_cannot_give_is_not_waited_for(
    web: tuple[SyncDriver, FakeWeb], settings: Settings, state: str
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(pages.page_2026(QUERY, ov=None, state=state)))
    never = settings.model_copy(update={"search_read": "never"})
    started = time.monotonic()
    found = answer(drv, never)
    assert time.monotonic() - started < 3.0
    assert found.data["ai_overview"] is None and found.data["ai_overview_state"] == state
    assert found.data["ai_overview_waited_ms"] is None and LABEL not in found.body


MARKED_JS = """(name) => { const h = CSS.highlights.get(name);
  return h ? [...h].map((r) => r.toString().trim()) : []; }"""


def marked(drv: SyncDriver) -> list[str]:
    async def look(page: Any) -> list[str]:
        found: list[str] = await page.evaluate(MARKED_JS, RESULT)
        return found

    return list(drv.run("marked", look))


@pytest.mark.parametrize("case", ["refused", "timeout", "egress-guard", "not-recorded"])
def test_a_result_that_cannot_be_read_leaves_the_results_page_on_screen(
    web: tuple[SyncDriver, FakeWeb], settings: Settings, http: LocalServer, case: str
) -> None:
    drv, fake = web
    bad = {
        "refused": lambda n: f"http://127.0.0.1:{free_port()}/page{n}",  # nothing listens
        "timeout": lambda n: http.route(f"/slow{n}", Reply(ARTICLE, delay_s=30)),
        "egress-guard": lambda n: f"http://10.20.30.{n + 1}/page",  # a private address
        "not-recorded": lambda n: f"https://not-in-the-recording.example/page{n}",
    }[case]
    results = [pages.Result(f"Result {n}", bad(n), f"About the sky, part {n}.") for n in (1, 2)]
    page = pages.page_2026(QUERY, ov=None, results=results)
    fake.add("https://www.google.com/search", Page(page))
    reading = settings.model_copy(update={"search_read": "auto"})
    # A result that never answers takes the read's whole share of the deadline: no time is
    # left for the next one.
    ranks = [1] if case == "timeout" else [1, 2]
    found = answer(drv, reading, timeout=6.0 if case == "timeout" else 20.0)
    on_screen = where(drv)
    until = time.monotonic() + 5
    while (mark := marked(drv)) != [f"Result {ranks[-1]}"]:  # the last opened, marked after
        assert time.monotonic() < until, mark
        time.sleep(0.05)
    failed = found.data["read_failed"]
    assert [f["rank"] for f in failed] == ranks, failed
    assert found.data["reads"] == []
    assert "could not be opened" in found.body or "not read" in found.body
    assert on_screen == search_url(QUERY, reading), "left on an error page"
    if case == "egress-guard":  # refused before anything was asked of the network
        assert not [u for u in fake.seen if "10.20.30." in u]
        assert "refused" in failed[0]["error"]
