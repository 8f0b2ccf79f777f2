"""What the brain gets from a read that carries a question, on a real Chromium: the passages
that answer it (not the page's opening), in page order with the gaps marked, and `data` saying
which were kept; a read without a question is the opening as before. And a search that reads:
with no direct answer on the results page (SB_SEARCH_READ=auto) it opens the top result and its
passages join the answer; with one, it does not."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page as AsyncPage
from structlog.testing import capture_logs

from browser_core import Deadline, Settings, SyncDriver
from search._passages import GAP
from search._types import Request
from search.parsers.google import parse_serp
from search.providers import google as google_provider
from search.providers.google import GoogleProvider, google_search
from search.providers.read import ReadProvider
from tests._server import LocalServer, Reply
from tests._web import FakeWeb, Page, fixture_text

FILLER = [
    f"Section {i} recounts the harbour town's markets, its bridges and the river trade of "
    f"the {i}th century, with the names of merchants, guilds and the ships they kept."
    for i in range(1, 90)
]
ANSWER = "The lighthouse on the north cape was first lit in 1873 by the engineer Ada Lindqvist."
QUESTION = "Who first lit the lighthouse on the north cape, and when?"


def article(paragraphs: list[str], title: str = "The harbour town") -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    nav = "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(30))
    return (
        f"<html lang='en'><head><title>{title}</title></head><body><nav><ul>{nav}</ul></nav>"
        f"<article><h1>{title}</h1>{body}</article><footer>About us</footer></body></html>"
    )


LONG = article([*FILLER[:70], ANSWER, *FILLER[70:]])


def read(drv: SyncDriver, settings: Settings, url: str, query: str) -> Any:
    provider = ReadProvider(drv.driver)
    request = Request(action="read", query=query, url=url)
    return drv.call(provider.run(request, settings, Deadline(20)), 25)


def test_a_question_gets_the_passage_that_answers_it_far_past_the_opening(
    sync_driver: SyncDriver, settings: Settings, http: LocalServer
) -> None:
    url = http.route("/harbour", Reply(LONG))
    answer = read(sync_driver, settings, url, QUESTION)
    data = answer.data
    assert data["text_chars"] > 10_000 and data["truncated"] and data["focused"]
    assert ANSWER in answer.body, "the answer lies past the first 6,000 characters"
    assert GAP in answer.body and "excerpts for the question" in answer.body
    assert len(data["text"]) <= settings.read_max_chars
    best = [p for p in data["passages"] if p["best"]]
    assert len(best) == 1 and best[0]["score"] > 0
    starts = [p["start"] for p in data["passages"]]
    assert starts == sorted(starts)  # in page order
    opening = read(sync_driver, settings, url, url)  # a bare URL: no question
    assert ANSWER not in opening.body and not opening.data["focused"]
    assert opening.data["passages"] == [] and "[truncated:" in opening.body


def test_a_compact_budget_still_leads_with_the_answer_in_whole_sentences(
    sync_driver: SyncDriver, settings: Settings, http: LocalServer
) -> None:
    compact = settings.model_copy(update={"read_max_chars": 1500})
    url = http.route("/harbour-compact", Reply(LONG))
    data = read(sync_driver, compact, url, QUESTION).data
    assert len(data["text"]) <= 1500 and ANSWER in data["text"]
    for piece in data["text"].split(GAP):  # every excerpt ends a sentence
        assert not piece.strip() or piece.strip().endswith(".")


def test_a_page_that_fits_the_budget_is_read_whole_with_or_without_a_question(
    sync_driver: SyncDriver, settings: Settings, http: LocalServer
) -> None:
    url = http.route("/short", Reply(article([*FILLER[:5], ANSWER])))
    asked = read(sync_driver, settings, url, QUESTION)
    bare = read(sync_driver, settings, url, url)
    assert asked.body == bare.body and ANSWER in asked.body and GAP not in asked.body
    assert not asked.data["truncated"] and not asked.data["focused"]


# -- a search that reads its top result ----------------------------------------------------

NO_ANSWER = "serp/aql-wayback/2021-03-08_google-gnosticism-1615175612"  # results only
WITH_ANSWER = "serp/aql-wayback/2020-12-20_google-crow-names-1608438374"  # an answer box


@pytest.fixture
def web(settings: Settings) -> Iterator[tuple[SyncDriver, FakeWeb, Settings]]:
    auto = settings.model_copy(update={"search_read": "auto"})
    fake = FakeWeb()
    drv = SyncDriver(auto)
    drv.driver.page_hooks.append(fake.hook)
    yield drv, fake, auto
    drv.shutdown()


def serp_of(name: str) -> tuple[str, Any]:
    html = fixture_text(f"{name}.html.gz")
    return html, parse_serp(html, "https://www.google.com/search?q=x")


def test_with_no_direct_answer_the_search_opens_the_top_result_and_carries_its_passages(
    web: tuple[SyncDriver, FakeWeb, Settings],
) -> None:
    drv, fake, settings = web
    html, parsed = serp_of(NO_ANSWER)
    top = parsed.results[0]
    assert not (parsed.answer or parsed.knowledge_panel)
    fake.add("https://www.google.com/search", Page(html))
    snippet_paragraph = f"As the search showed: {top.snippet}"
    fake.add(top.url.split("#")[0], Page(article([*FILLER, snippet_paragraph], "Gnosticism")))
    provider = GoogleProvider(drv.driver)
    answer = drv.call(provider.run(Request("search", "gnosticism"), settings, Deadline(20)), 25)
    reads = answer.data["reads"]
    assert len(reads) == 1 and reads[0]["final_url"].startswith(top.url.split("#")[0])
    assert reads[0]["focused"] and snippet_paragraph in reads[0]["text"]
    assert f"From Gnosticism ({top.url.split('#')[0]}" in answer.body
    assert snippet_paragraph in answer.body

    async def where(page: Any) -> str:
        return str(page.url)

    assert drv.run("where", where).startswith(top.url.split("#")[0])  # on the stream


def test_with_a_direct_answer_the_search_stays_on_the_results_page(
    web: tuple[SyncDriver, FakeWeb, Settings],
) -> None:
    drv, fake, settings = web
    html, parsed = serp_of(WITH_ANSWER)
    assert parsed.answer
    fake.add("https://www.google.com/search", Page(html))
    serp, reads = drv.call(google_search(drv.driver, "crow names", settings), 25)
    assert reads == [] and serp.read_skipped is None
    assert not [u for u in fake.seen if u.startswith(parsed.results[0].url.split("#")[0])]


def test_a_read_that_cannot_finish_in_its_share_is_dropped_and_the_answer_says_so(
    web: tuple[SyncDriver, FakeWeb, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    drv, fake, settings = web
    html, parsed = serp_of(NO_ANSWER)
    fake.add("https://www.google.com/search", Page(html))
    fake.add(parsed.results[0].url.split("#")[0], Page(LONG))
    monkeypatch.setattr(google_provider, "READ_RESERVE_S", 60.0)  # no share left in 20 s
    provider = GoogleProvider(drv.driver)
    answer = drv.call(provider.run(Request("search", "gnosticism"), settings, Deadline(20)), 25)
    assert answer.data["reads"] == [] and answer.data["read_skipped"]
    assert "The top result was not read" in answer.body
    assert parsed.results[0].title in answer.body  # the results page's answer, alone
    assert json.dumps(answer.data)  # the envelope's data stays JSON


# -- the next result: when the top one does not hold the answer -----------------------------


def two_results(fake: FakeWeb, first: str, second: str) -> tuple[str, str]:
    """The recorded results page (no direct answer), its top two results leading to the
    given pages; their addresses without the fragment."""
    html, parsed = serp_of(NO_ANSWER)
    fake.add("https://www.google.com/search", Page(html))
    urls = tuple(r.url.split("#")[0] for r in parsed.results[:2])
    fake.add(urls[0], Page(first))
    fake.add(urls[1], Page(second))
    return urls[0], urls[1]


def search_for(drv: SyncDriver, settings: Settings, query: str) -> Any:
    provider = GoogleProvider(drv.driver)
    return drv.call(provider.run(Request("search", query), settings, Deadline(20)), 25)


def marked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The results the stage marks on the results page, in order (the real marks, recorded)."""
    seen: list[str] = []
    real = google_provider.show_result

    async def record(page: Any, url: str, **kwargs: Any) -> Any:
        seen.append(url.split("#")[0])
        return await real(page, url, **kwargs)

    monkeypatch.setattr(google_provider, "show_result", record)
    return seen


def test_when_only_the_second_result_holds_the_answer_the_brain_gets_it_from_there(
    web: tuple[SyncDriver, FakeWeb, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    drv, fake, settings = web
    shown = marked(monkeypatch)
    first, second = two_results(fake, article(FILLER, "Markets"), LONG)
    answer = search_for(drv, settings, QUESTION)
    choice = answer.data["read_choice"]
    assert choice["chosen"] == 2
    assert [r["url"] for r in choice["results"]] == [first, second]
    top, nxt = (r["confidence"] for r in choice["results"])
    assert top < 0.5 and nxt > 0.9  # every term, and close in meaning (the reading model)
    assert ANSWER in answer.body and f"({second})" in answer.body
    assert "result 2 answers the question better" in answer.body
    [read_] = answer.data["reads"]
    assert read_["final_url"] == second and read_["highlights"][0]["text"] == ANSWER
    sources = [s.url.split("#")[0] for s in answer.sources]
    assert first in sources and second in sources  # both pages read are sources
    assert shown[-1] == second  # viewers saw the second result chosen on the results page
    drv.call(drv.driver.stage_done(), 10)

    async def where(page: Any) -> str:
        return str(page.url)

    assert drv.run("where", where) == second  # and the page it was read from


def test_a_top_result_that_answers_with_confidence_is_read_alone(
    web: tuple[SyncDriver, FakeWeb, Settings],
) -> None:
    drv, fake, settings = web
    _, second = two_results(fake, LONG, article(FILLER, "Markets"))
    answer = search_for(drv, settings, QUESTION)
    assert answer.data["read_choice"] is None and ANSWER in answer.body
    assert answer.data["reads"][0]["confidence"] >= settings.search_read_confidence
    assert not [u for u in fake.seen if u.startswith(second)]  # the next one never opened


def test_a_page_that_holds_the_answer_is_never_traded_for_one_that_does_not(
    web: tuple[SyncDriver, FakeWeb, Settings],
) -> None:
    drv, fake, settings = web
    wary = settings.model_copy(update={"search_read_confidence": 0.99})
    first, second = two_results(fake, LONG, article(FILLER, "Markets"))
    question = QUESTION + " And what did the zeppelin quasar nebula cost?"
    answer = search_for(drv, wary, question)
    choice = answer.data["read_choice"]
    assert choice["chosen"] == 1 and [r["url"] for r in choice["results"]] == [first, second]
    assert ANSWER in answer.body and f"({first})" in answer.body
    assert [r["final_url"] for r in answer.data["reads"]] == [first]
    drv.call(drv.driver.stage_done(), 10)

    async def where(page: Any) -> str:
        return str(page.url)

    assert drv.run("where", where) == first  # the tab went back to the page that answers


def test_a_top_result_that_fails_to_read_gives_way_to_the_next_unless_switched_off(
    web: tuple[SyncDriver, FakeWeb, Settings],
) -> None:
    drv, fake, settings = web
    html, parsed = serp_of(NO_ANSWER)
    fake.add("https://www.google.com/search", Page(html))
    first, second = (r.url.split("#")[0] for r in parsed.results[:2])
    fake.add(first, Page(article(FILLER, "Down"), status=503))
    fake.add(second, Page(LONG))
    answer = search_for(drv, settings, QUESTION)
    assert answer.data["read_choice"]["chosen"] == 2 and ANSWER in answer.body
    assert answer.data["read_choice"]["results"][0]["outcome"] in ("http-error", "failed")
    fake.seen.clear()
    off = settings.model_copy(update={"search_read_confidence": 0.0})  # 0: never
    answer = search_for(drv, off, QUESTION + " again")
    assert answer.data["read_choice"] is None and ANSWER not in answer.body
    assert not [u for u in fake.seen if u.startswith(second)]


def test_when_going_back_fails_the_next_result_is_opened_by_its_address_never_skipped(
    web: tuple[SyncDriver, FakeWeb, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    drv, fake, settings = web

    async def no_way_back(self: Any, **kwargs: Any) -> None:
        raise PlaywrightError("going back failed (made to fail by the test)")

    monkeypatch.setattr(AsyncPage, "go_back", no_way_back)
    _first, second = two_results(fake, article(FILLER, "Markets"), LONG)
    with capture_logs() as logs:
        answer = search_for(drv, settings, QUESTION)
    events = [e["event"] for e in logs]
    assert "search.back_by_address" in events, "going back did fail: the test's premise"
    assert answer.data["read_choice"]["chosen"] == 2 and ANSWER in answer.body
    assert answer.data["read_next_skipped"] is None
    assert [u for u in fake.seen if u.startswith(second)], "the next result was opened"


@pytest.mark.serial  # a deadline that leaves room for one read and not two
def test_a_next_result_that_cannot_be_opened_in_time_is_said_not_skipped_silently(
    web: tuple[SyncDriver, FakeWeb, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    drv, fake, settings = web
    _first, second = two_results(fake, article(FILLER, "Markets"), LONG)
    # The top result's read leaves less than a read's share, whatever the machine's load.
    monkeypatch.setattr(google_provider, "READ_MIN_S", 0.5)
    monkeypatch.setattr(google_provider, "READ_RESERVE_S", 0.5)
    provider = GoogleProvider(drv.driver)
    request = Request(action="search", query=QUESTION)
    real_read = google_provider._read_one

    async def slow_first(*args: Any, **kwargs: Any) -> Any:
        read = await real_read(*args, **kwargs)
        deadline = args[6]
        await asyncio.sleep(max(0.0, deadline.remaining() - 1.0))  # the rest of its time
        return read

    monkeypatch.setattr(google_provider, "_read_one", slow_first)
    with capture_logs() as logs:
        answer = drv.call(provider.run(request, settings, Deadline(8)), 15)
    skipped = answer.data["read_next_skipped"]
    assert skipped and "no time left" in skipped
    assert "search.read_next_skipped" in [e["event"] for e in logs]
    assert not [u for u in fake.seen if u.startswith(second)]


def test_when_both_results_are_read_the_other_pages_best_sentences_go_with_the_answer(
    web: tuple[SyncDriver, FakeWeb, Settings],
) -> None:
    drv, fake, settings = web
    wary = settings.model_copy(update={"search_read_confidence": 0.99})  # always the next too
    other = "The lighthouse keeper's cottage on the north cape became a museum in 1990."
    _first, _second = two_results(fake, LONG, article([*FILLER[:5], other, *FILLER[5:20]]))
    answer = search_for(drv, wary, QUESTION + " And what did the zeppelin quasar nebula cost?")
    assert answer.data["read_choice"] is not None
    assert ANSWER in answer.body and other in answer.body  # neither page traded away
    assert answer.body.index(ANSWER) < answer.body.index(other)  # the better page first
