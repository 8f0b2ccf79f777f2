"""The next result read unseen (issue 57): while the stream reads the top result, the broadcast
Chrome loads the next one without drawing it, and the tool opens it on screen only when it
answers the question better. On a real Chromium behind the egress guard, the results page a
2026-shaped Google page, the results real pages on the local server.

What viewers would notice: a top result that only mentions the question's words no longer
keeps the answer from them (the next one is opened and read), and a next result that answers
nothing is no longer opened for a top result that answers with little confidence. What must
never happen: a peek at an internal address, before or after a redirect."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from browser_core import Deadline, Settings, SyncDriver
from search._types import Request
from search.providers import google as google_provider
from search.providers.google import GoogleProvider
from tests._serp_pages import Result, page_2026
from tests._server import LocalServer, Reply
from tests._web import FakeWeb, Page
from tests.test_reads_for_a_question import FILLER, LONG, QUESTION, article

SEARCH = "https://www.google.com/search"
# A page about the cape that shares most of the question's words and does not answer it.
MENTIONS = article(
    [
        *FILLER[:40],
        "The lighthouse on the north cape is painted red and white, and its keepers once lived "
        "on the cape.",
        *FILLER[40:],
    ],
    "Cape tours",
)
# A question the answer's page answers with little confidence (words it does not hold).
VAGUE = (
    "Who first lit the lighthouse, and what did the zeppelin quasar nebula harpsichord "
    "obelisk cost?"
)


@pytest.fixture
def web(settings: Settings) -> Iterator[tuple[SyncDriver, FakeWeb, Settings, list[str]]]:
    """The driver with the fake Google, and the main frame's navigations as they happen."""
    auto = settings.model_copy(update={"search_read": "auto"})
    fake = FakeWeb()
    shown: list[str] = []

    def navigated(frame: Any) -> None:
        if frame.parent_frame is None:
            shown.append(frame.url)

    async def watch(page: Any) -> None:
        page.on("framenavigated", navigated)

    drv = SyncDriver(auto)
    drv.driver.page_hooks.extend((fake.hook, watch))
    yield drv, fake, auto, shown
    drv.shutdown()


def results_page(fake: FakeWeb, first: str, second: str) -> None:
    results = [
        Result("The first result", first, "A page about the north cape."),
        Result("The second result", second, "Another page about the north cape."),
    ]
    fake.add(SEARCH, Page(page_2026(QUESTION, "en", None, results, extras=False)))


def search(drv: SyncDriver, settings: Settings, query: str) -> Any:
    provider = GoogleProvider(drv.driver)
    with capture_logs() as logs:
        answer = drv.call(provider.run(Request("search", query), settings, Deadline(20)), 25)
    drv.call(drv.driver.stage_done(), 10)
    return answer, [e["event"] for e in logs]


def opened(shown: list[str], url: str) -> bool:
    return any(u.split("#")[0] == url for u in shown)


def test_a_top_result_that_only_mentions_the_question_gives_way_to_the_next_that_answers(
    web: tuple[SyncDriver, FakeWeb, Settings, list[str]], http: LocalServer
) -> None:
    drv, fake, settings, shown = web
    first = http.route("/mentions", Reply(MENTIONS))
    second = http.route("/answers", Reply(LONG))
    results_page(fake, first, second)
    answer, events = search(drv, settings, QUESTION)
    peek = answer.data["read_peek"]
    # every term of the question, and the reading model finds the answer close in meaning
    assert peek["outcome"] == "ok" and peek["confidence"] > 0.9, peek
    choice = answer.data["read_choice"]
    [top, nxt] = choice["results"]
    # The top page holds enough of the question's words for the threshold alone to keep it.
    assert top["confidence"] >= settings.search_read_confidence
    assert choice["chosen"] == 2 and nxt["url"] == second
    assert "The lighthouse on the north cape was first lit in 1873" in answer.body
    assert opened(shown, first) and opened(shown, second)  # viewers saw both opened
    assert shown[-1].split("#")[0] == second  # and the tab shows the page that answers
    assert "search.read_peek" in events


def test_a_next_result_that_answers_nothing_is_not_opened_for_an_unsure_top_result(
    web: tuple[SyncDriver, FakeWeb, Settings, list[str]], http: LocalServer
) -> None:
    drv, fake, settings, shown = web
    first = http.route("/answers", Reply(LONG))
    second = http.route("/markets", Reply(article(FILLER, "Markets")))
    results_page(fake, first, second)
    answer, _ = search(drv, settings, VAGUE)
    [read] = answer.data["reads"]
    # Below the threshold: without the peek the next result would have been opened.
    assert read["confidence"] >= google_provider.PEEK_FLOOR
    assert read["lexical_confidence"] < settings.search_read_confidence
    assert answer.data["read_peek"]["confidence"] == 0.0
    assert answer.data["read_choice"] is None and answer.data["read_next_skipped"] is None
    assert "first lit in 1873" in answer.body
    assert "/markets" in http.requests, "the next result was loaded, unseen"
    assert opened(shown, first) and not opened(shown, second)  # and never shown


def test_without_the_peeks_figure_the_threshold_decides_as_before(
    web: tuple[SyncDriver, FakeWeb, Settings, list[str]], http: LocalServer
) -> None:
    drv, fake, settings, shown = web
    first = http.route("/answers", Reply(LONG))
    second = "https://www.example.org/next"  # the guard opens only the local server
    fake.add(second, Page(article(FILLER, "Markets")))  # what the tab would be shown
    results_page(fake, first, second)
    answer, _ = search(drv, settings, VAGUE)
    peek = answer.data["read_peek"]
    assert peek["confidence"] is None and peek["outcome"] == "failed", peek
    assert answer.data["read_choice"]["chosen"] == 1  # opened (below the threshold), lost
    assert opened(shown, second)


def test_a_peek_at_an_internal_address_is_refused_before_anything_is_sent(
    web: tuple[SyncDriver, FakeWeb, Settings, list[str]], http: LocalServer
) -> None:
    drv, fake, settings, _ = web
    first = http.route("/mentions", Reply(MENTIONS))
    results_page(fake, first, "http://10.20.30.40/admin")
    answer, _ = search(drv, settings, QUESTION)
    peek = answer.data["read_peek"]
    assert peek["confidence"] is None and peek["error"].startswith("refused: "), peek
    assert "10.20.30.40" in peek["error"] and "private" in peek["error"].lower()


def test_a_peek_redirected_to_an_internal_address_is_stopped_by_the_egress_guard(
    web: tuple[SyncDriver, FakeWeb, Settings, list[str]], http: LocalServer
) -> None:
    drv, fake, settings, _ = web
    inside = LocalServer()  # another port of loopback: outside what the guard opens
    try:
        target = inside.route("/secret", Reply(LONG))
        first = http.route("/mentions", Reply(MENTIONS))
        second = http.route("/moved", Reply(status=302, headers={"Location": target}))
        results_page(fake, first, second)
        answer, _ = search(drv, settings, QUESTION)
        peek = answer.data["read_peek"]
        assert peek["confidence"] is None and "SOCKS" in peek["error"], peek  # the guard's no
        assert "/moved" in http.requests, "the peek did go out, to an allowed page"
        assert inside.requests == [], "the redirect reached a port the guard does not open"
    finally:
        inside.stop()


def test_a_chrome_without_the_egress_guard_is_never_peeked_through(
    settings: Settings, http: LocalServer
) -> None:
    unguarded = settings.model_copy(update={"cdp_port": 1})  # no Chrome of ours there
    drv = SyncDriver(unguarded)
    try:
        url = http.route("/answers", Reply(LONG))
        nothing: Any = None  # refused before any page is touched
        peeked = drv.call(drv.driver.peek(nothing, url, 5.0), 10)
    finally:
        drv.shutdown()
    assert peeked.body is None and peeked.error is not None
    assert "egress guard" in peeked.error and http.requests == []
