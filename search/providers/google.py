"""Google search on the broadcast tab: navigate visibly, answer consent, detect the captcha,
and mark on the results page the result the answer leads with (the one a read opens next).

For speed the result page is parsed from the HTTP response body as soon as it has arrived,
while Chromium keeps rendering the page for viewers (time-to-answer does not wait for paint).
The captcha is never solved: it is reported as `blocked="captcha"` so routing falls back.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urlsplit

import structlog
from playwright.async_api import Error as PlaywrightError

from browser_core import (
    Answer,
    Deadline,
    Driver,
    FailureKind,
    NavigationFailed,
    NavOutcome,
    PageBlocked,
    Peeked,
    ProviderError,
    Settings,
    Source,
    document_html,
    trim_heap,
)
from browser_core.stage import BUDGET_S, prepare, show_caption, show_result
from search._types import Request
from search.parsers._models import SerpPage, SerpResult
from search.providers._engine import LiveEngine, Rest
from search.providers._engine_bing import BING_LIVE
from search.providers._engine_google import GOOGLE_LIVE
from search.providers._engine_google import answer_consent as answer_consent
from search.providers._engine_google import search_url as search_url
from search.providers._overview import (
    LABEL,
    await_overview,
    overview_ready,
    overview_text,
    show_overview,
)
from search.providers.read import PageRead, PeekRead, judge_peek, read_in_page, show_read

log = structlog.get_logger(__name__)

# A read of a result gets what is left of the call's deadline less this reserve (for the
# envelope, and for Gemini's fallback when nothing answers), and is not begun with less
# than READ_MIN_S.
READ_RESERVE_S = 1.5
READ_MIN_S = 1.0
# The next result answers instead of the top one only when its confidence is higher by more
# than this (measured: python -m bench.answers --next; a page holding the answer is kept).
READ_NEXT_MARGIN = 0.1
# The next result is read without being shown while the top one is (`_peek_next`), and opened
# only when it answers better than the top one (or the top one below PEEK_FLOOR): chosen by
# 5-fold cross-validation (docs/reading.md). After the top one's read, the peek is waited for
# PEEK_WAIT_S at most; without its figure the confidence threshold decides, as before.
PEEK_FLOOR = 0.1
PEEK_WAIT_S = 1.0
# When both results were read, the other page's best sentences (this many characters at most)
# go with the answer: a page that held the answer is never traded away for one that did not.
ALSO_CHARS = 900


async def _body_html(page: Any, nav: NavOutcome) -> str:
    """The response body as soon as it arrived; the rendered DOM if the body is unavailable."""
    if nav.body is not None:
        return nav.body
    response = nav.response
    if response is not None:
        try:
            return str(await response.text())
        except PlaywrightError:
            pass
    return await document_html(page)


async def _parse(engine: LiveEngine, page: Any, html: str) -> SerpPage:
    serp = await asyncio.to_thread(engine.parser.parse, html, page.url)
    trim_heap()  # the page body and its parse tree are gone: give their pages back
    return serp


async def _load_serp(
    driver: Driver, page: Any, url: str, settings: Settings, engine: LiveEngine
) -> tuple[SerpPage, str]:
    """Open the results page and parse it; answer a consent wall on the way. The parse and
    the HTML it came from (kept as evidence when the parse is suspect)."""
    nav = await driver.navigate(page, url, wait_until="commit", check=False)
    prepare(page)  # the stage's world and stylesheet, while the page is parsed
    html = await _body_html(page, nav)
    serp = await _parse(engine, page, html)
    if serp.blocked is None and not serp.results:
        # Not a result page yet (a script or meta redirect, or a late render): settle, re-read.
        await page.wait_for_load_state("domcontentloaded")
        await driver.settle(page)
        html = await document_html(page)
        serp = await _parse(engine, page, html)
    if serp.blocked == "consent" and await engine.answer_consent(page, settings.google_consent):
        if not engine.is_results(page.url):
            await page.wait_for_url(engine.results_page, wait_until="commit", timeout=8000)
        html = await document_html(page)
        serp = await _parse(engine, page, html)
    return serp, html


async def _open_results(
    driver: Driver,
    page: Any,
    url: str,
    settings: Settings,
    engine: LiveEngine,
    on_parse: Callable[[SerpPage, str, str], None] | None,
) -> SerpPage:
    """`_load_serp`, never leaving the tab on Chrome's error page for the engine's address;
    the parse (with the page it came from) told to `on_parse`."""
    before = page.url
    try:
        serp, html = await _load_serp(driver, page, url, settings, engine)
    except NavigationFailed:
        await _off_the_error_page(page, before)
        raise
    if ranked(serp) and not serp.blocked:
        _SHOWN[page] = page.url
    if on_parse is not None:
        on_parse(serp, html, url)
    return serp


def suspect(serp: SerpPage) -> bool:
    """Whether the parse of this results page says it may not account for the page."""
    return serp.health.state == "suspect"


def ranked(serp: SerpPage) -> list[SerpResult]:
    """The results a search marks, reads and opens next: the organic ones; when the parse is
    suspect and found none, the generic reading's (the page's own links, in page order)."""
    if serp.results or not suspect(serp):
        return serp.results
    return serp.generic


def heard(serp: SerpPage, max_results: int) -> tuple[list[SerpResult], list[SerpResult]]:
    """What the brain hears of the results, within `max_results`: the parsed ones first; when
    the parse is suspect, then the generic reading's links that the parsed ones do not hold
    (docs/google.md, "When Google changes its page")."""
    parsed = serp.results[:max_results]
    if not suspect(serp):
        return parsed, []
    seen = {r.url.split("#")[0] for r in serp.results}
    extra = [r for r in serp.generic if r.url.split("#")[0] not in seen]
    return parsed, extra[: max(0, max_results - len(parsed))]


async def show_serp(
    page: Any, serp: SerpPage, query: str, settings: Settings, *, budget_s: float | None = None
) -> None:
    """The screen follows the answer: the results page stays in view with the result the
    answer leads with (and a read of the top results opens next) marked, or the last one a
    read opened and could not load, and the caption says what was searched. Runs after the
    answer (`budget_s=None`), or within `budget_s`."""
    marked = serp.read_failed[-1]["url"] if serp.read_failed else ranked(serp)[0].url
    await asyncio.gather(
        show_result(page, marked, budget_s=budget_s),
        show_caption(page, "search", query, settings, budget_s=budget_s),
    )


def direct_answer(serp: SerpPage) -> bool:
    """Whether the results page answers by itself (a complete AI Overview, answer box,
    featured snippet, panel): then no result is opened, and the audience keeps the answer
    the assistant speaks from on screen (docs/google.md)."""
    return bool(serp.answer or serp.knowledge_panel or overview_ready(serp))


def read_hints(result: SerpResult) -> list[str]:
    """What Google chose from the page for this query: the snippet, and the text of the
    result's `#:~:text=` fragment (the passage it scrolls to), to find it in the page."""
    hints = [result.snippet] if result.snippet else []
    fragment = urlsplit(result.url).fragment
    if fragment.startswith(":~:text="):
        for part in fragment.removeprefix(":~:text=").split("&text="):
            words = [unquote(piece) for piece in part.split(",") if not piece.endswith("-")]
            hints.append(" ".join(w for w in words if not w.startswith("-")))
    return hints


async def web_search(
    driver: Driver,
    query: str,
    settings: Settings,
    *,
    engine: LiveEngine = GOOGLE_LIVE,
    read_top: int = 0,
    timeout: float | None = None,
    on_parse: Callable[[SerpPage, str, str], None] | None = None,
) -> tuple[SerpPage, list[PageRead]]:
    """Search `engine` (Google unless told) on the owned tab; read the top `read_top`
    results, or (with
    `SB_SEARCH_READ=auto`, the default) the top one when the page holds no direct answer,
    and the next organic result too when the top one's best sentences cover too little of
    the query (`SB_SEARCH_READ_CONFIDENCE`): then the better of the two is the one read.
    A read is given what is left of the call's deadline less a reserve, and is dropped (the
    results page answers alone, `data.read_skipped` says why) when it cannot finish in it.
    When the parse is suspect and found no organic result, the generic reading's links are
    the ones marked and read. `on_parse(serp, html, address)` is told of the results page's
    parse (its health, the page it came from), before anything is read."""
    url = engine.results_url(query, settings)
    deadline = Deadline(timeout if timeout is not None else settings.op_timeout_s)

    async def op(page: Any) -> tuple[SerpPage, list[PageRead]]:
        serp = await _open_results(driver, page, url, settings, engine, on_parse)
        await await_overview(page, serp, settings, deadline)
        wanted = _to_read(serp, read_top, settings)
        if not wanted:
            return serp, []
        # Viewers see the result marked before it opens (100 ms at most).
        await show_serp(page, serp, query, settings, budget_s=BUDGET_S)
        peeking = _peek_next(driver, page, serp, settings, deadline, read_top)
        try:
            reads = await _read_results(
                driver, page, serp, wanted, query, settings, deadline, engine
            )
        except BaseException:  # the call failed or ran out of time: the peek goes with it
            if peeking is not None:
                peeking.cancel()
            raise
        if read_top:
            return serp, reads
        first = reads[0] if reads else None
        peeked = await _peeked(peeking, first, serp, query, settings, deadline)
        if not _wants_next(first, serp, settings, peeked):
            return serp, _answering(reads, read_top)
        second = await _read_next(driver, page, serp, query, settings, deadline, engine)
        if second is None:
            return serp, _answering(reads, read_top)
        return serp, _answering(_better_first(serp, first, second), read_top)

    async def show(page: Any, found: tuple[SerpPage, list[PageRead]]) -> None:
        serp, reads = found
        if reads:  # the tab shows the page that answers: its passage, like a read's
            if urldefrag(page.url).url != urldefrag(reads[-1].final_url).url:
                await _reopen(driver, page, reads[-1])  # the next one lost, or failed
            await show_read(page, reads[-1], settings)
        elif overview_ready(serp) and engine.is_results(page.url):
            _, shown, best = overview_text(serp, query, settings.read_max_chars)
            await asyncio.gather(
                show_overview(page, shown, best), show_caption(page, "search", query, settings)
            )
        elif ranked(serp) and not serp.blocked and engine.is_results(page.url):
            await show_serp(page, serp, query, settings)

    op_name = f"{engine.name}.search"
    return await driver.run(op_name, op, timeout=deadline.remaining(), show=show)


google_search = web_search  # the name the recordings, the CLI and the bench know


# The last results page each tab showed that held results (its address): where a search
# whose engine could not be reached takes the audience back to.
_SHOWN: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
CALM_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Searching</title><style>"
    "html,body{height:100%;margin:0}body{display:flex;align-items:center;"
    "justify-content:center;background:#f4f4f2;color:#666;font:28px system-ui,sans-serif}"
    "</style></head><body><p>Searching elsewhere\u2026</p></body></html>"
)


async def _off_the_error_page(page: Any, before: str, within_s: float = 3.0) -> None:
    """A search engine that could not be reached leaves Chrome's error page for its address
    on the tab (a moment after the failure is reported): back to the results page the tab
    showed before, when it was a good one (results, no wall), else a calm page of ours.
    Bounded; never raises (the walk goes on to the next engine)."""
    await _error_page_committed(page)
    good = _SHOWN.get(page) == before
    try:
        if good:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_go_back(page), within_s)
            if page.url != before:  # the way back was slow to commit (a busy machine)
                with contextlib.suppress(PlaywrightError):
                    await page.wait_for_url(before, wait_until="commit", timeout=1000)
            if page.url == before:
                log.info("search.back_to_last_results", url=before[:200])
                return
        await asyncio.wait_for(page.goto("about:blank", wait_until="commit"), within_s)
        await asyncio.wait_for(page.set_content(CALM_PAGE), within_s)
        log.info("search.calm_page", was=before[:200])
    except (PlaywrightError, TimeoutError) as exc:
        log.info("search.calm_page_failed", error=str(exc)[:200])


async def _go_back(page: Any) -> None:
    """`page.go_back`, again while Chrome's error page is still taking the tab over: for a
    moment there Playwright's session is on no page ("Not attached to an active page"), and
    the way back failed at once, leaving the error page for the calm one (1 in 3 here)."""
    while True:
        try:
            await page.go_back(wait_until="commit")
            return
        except PlaywrightError as exc:
            if "Not attached to an active page" not in str(exc):
                return
            await asyncio.sleep(0.1)


def _to_read(serp: SerpPage, read_top: int, settings: Settings) -> int:
    """How many of the top results to open: as asked, or one when nothing answers directly."""
    if serp.blocked or not ranked(serp):
        return 0
    if read_top:
        return read_top
    return 1 if settings.search_read == "auto" and not direct_answer(serp) else 0


def _answers(read: PageRead) -> bool:
    return read.outcome == "ok" and not read.blocked


def _answering(reads: list[PageRead], read_top: int) -> list[PageRead]:
    """What joins the envelope: every read asked for; of a search's own reads, only a page
    that answers (the better of the two, when the next result was read)."""
    if read_top:
        return reads
    good = [r for r in reads if _answers(r)]
    return good[-1:]


def _wants_next(
    first: PageRead | None, serp: SerpPage, settings: Settings, peeked: PeekRead | None = None
) -> bool:
    """Whether the next organic result is worth opening: the top one could not be read (in
    time: then there is none left) or did not answer; else, when the next one was read
    unseen, it answers better (or the top one's confidence is under PEEK_FLOOR); else the
    top one's best sentences cover less of the query than `SB_SEARCH_READ_CONFIDENCE`."""
    if settings.search_read_confidence <= 0.0 or len(ranked(serp)) < 2 or serp.read_skipped:
        return False
    if first is None or not _answers(first):
        return True
    if peeked is not None and peeked.confidence is not None:
        return first.confidence < PEEK_FLOOR or peeked.confidence > first.confidence
    return first.lexical_confidence < settings.search_read_confidence


def _peek_next(
    driver: Driver,
    page: Any,
    serp: SerpPage,
    settings: Settings,
    deadline: Deadline,
    read_top: int,
) -> asyncio.Task[Peeked] | None:
    """The next result loaded unseen, beside the top one's read on the stream (a search's
    own read, when the next one may be opened). It is judged after that read, and only when
    the choice needs it: judged beside it, the two extractions shared one interpreter and
    the top one's read took twice as long (measured: 110 ms against 58 on the Japanese
    development pages)."""
    if read_top or settings.search_read_confidence <= 0.0 or len(ranked(serp)) < 2:
        return None
    timeout = max(0.1, deadline.remaining() - READ_RESERVE_S)
    return asyncio.ensure_future(driver.peek(page, ranked(serp)[1].url, timeout))


async def _peeked(
    peeking: asyncio.Task[Peeked] | None,
    first: PageRead | None,
    serp: SerpPage,
    query: str,
    settings: Settings,
    deadline: Deadline,
) -> PeekRead | None:
    """The next result's confidence, when the choice needs it (the top one answered, with a
    confidence the next one could beat and above PEEK_FLOOR): its load waited for
    PEEK_WAIT_S at most, then judged; recorded in `serp.read_peek` and the log."""
    if peeking is None:
        return None
    needed = first is not None and _answers(first) and PEEK_FLOOR <= first.confidence < 1.0
    if not needed:
        peeking.cancel()
        return None
    wait = max(0.0, min(PEEK_WAIT_S, deadline.remaining() - READ_RESERVE_S))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(peeking), wait)
    if not peeking.done():
        peeking.cancel()
        why = f"not loaded within {wait:.1f} s"
        late = PeekRead(url=ranked(serp)[1].url[:500], outcome="late", error=why)
        serp.read_peek = late.model_dump()
        log.info("search.read_peek_late", engine=serp.engine, wait_s=round(wait, 1))
        return None
    if (error := peeking.exception()) is not None:
        log.info("search.read_peek_failed", engine=serp.engine, error=str(error)[:200])
        return None
    peeked = await asyncio.to_thread(judge_peek, peeking.result(), query, settings)
    serp.read_peek = peeked.model_dump()
    log.info("search.read_peek", engine=serp.engine, **peeked.model_dump(exclude={"url"}))
    return peeked


def _better_first(serp: SerpPage, first: PageRead | None, second: PageRead) -> list[PageRead]:
    """Both reads with the one that answers last (the envelope keeps the last that answers):
    the next result only when it answers and the top one did not, or covers more of the
    query by more than READ_NEXT_MARGIN. `serp.read_choice` says which, and why."""
    take_second = _answers(second) and (
        first is None
        or not _answers(first)
        or second.confidence > first.confidence + READ_NEXT_MARGIN
    )
    top = ranked(serp)[0]
    serp.read_choice = {
        "chosen": 2 if take_second else 1,
        "results": [
            _choice_row(1, first, top.url.split("#")[0]),
            _choice_row(2, second, second.final_url),
        ],
    }
    log.info(
        "search.read_next",
        engine=serp.engine,
        chosen=serp.read_choice["chosen"],
        confidence=[r["confidence"] for r in serp.read_choice["results"]],
    )
    winner, other = (second, first) if take_second else (first, second)
    if other is not None and _answers(other) and other.highlights and winner is not None:
        # Never traded away: what the other page says best goes with the answer too.
        serp.read_also = {
            "rank": 1 if take_second else 2,
            "url": other.final_url,
            "title": other.title or "",
            "text": _best_sentences(other),
        }
    reads = [first, second] if take_second else [second, first]
    return [r for r in reads if r is not None]


def _best_sentences(read: PageRead) -> str:
    """A page's best sentences for the question, each with its context, within ALSO_CHARS."""
    kept: list[str] = []
    for highlight in read.highlights:
        if sum(map(len, kept)) + len(highlight.context) > ALSO_CHARS and kept:
            break
        if not any(highlight.context in k or k in highlight.context for k in kept):
            kept.append(highlight.context[:ALSO_CHARS])
    return " [...] ".join(kept)


def _choice_row(rank: int, read: PageRead | None, url: str) -> dict[str, Any]:
    if read is None:  # the read failed (logged as search.read_top_failed)
        return {"rank": rank, "url": url, "confidence": 0.0, "outcome": "failed"}
    outcome = read.blocked or read.outcome
    return {"rank": rank, "url": read.final_url, "confidence": read.confidence, "outcome": outcome}


async def _read_one(
    driver: Driver,
    page: Any,
    serp: SerpPage,
    result: SerpResult,
    query: str,
    settings: Settings,
    deadline: Deadline,
) -> PageRead | None:
    """One result read within what the deadline leaves it; None (and `serp.read_skipped`
    when there was no time) when it could not be."""
    share = deadline.remaining() - READ_RESERVE_S
    if share < READ_MIN_S:
        serp.read_skipped = "no time left in the call's deadline to read the top result"
        return None
    step = read_in_page(
        driver, page, result.url, settings, question=query, hints=read_hints(result)
    )
    try:
        return await asyncio.wait_for(step, share)
    except TimeoutError:
        serp.read_skipped = f"the top result could not be read within {share:.1f} s"
        log.info(
            "search.read_top_late",
            engine=serp.engine,
            url=result.url[:200],
            share_s=round(share, 1),
        )
        serp.read_failed.append(
            {"rank": result.rank, "url": result.url[:500], "error": serp.read_skipped}
        )
        raise
    except Exception as exc:
        if isinstance(exc, NavigationFailed):
            await _error_page_committed(page)
        log.info(
            "search.read_top_failed",
            engine=serp.engine,
            url=result.url[:200],
            error=str(exc)[:200],
        )
        serp.read_failed.append(
            {"rank": result.rank, "url": result.url[:500], "error": str(exc)[:300]}
        )
        return None


async def _error_page_committed(page: Any, within_ms: float = 1000) -> None:
    """Chrome commits its error page for a result that failed to load a moment after the
    failure is reported (measured: the way back raced it and lost, and the error page came
    in over the results page): wait for it, briefly, so the way back starts from it."""
    with contextlib.suppress(PlaywrightError):
        await page.wait_for_url(
            lambda url: url.startswith("chrome-error://"), wait_until="commit", timeout=within_ms
        )


async def _read_results(
    driver: Driver,
    page: Any,
    serp: SerpPage,
    wanted: int,
    query: str,
    settings: Settings,
    deadline: Deadline,
    engine: LiveEngine,
) -> list[PageRead]:
    """The top `wanted` results read in turn; when none answers, the tab goes back to the
    results page (never left on a site's error page or Chrome's)."""
    reads: list[PageRead] = []
    late = False
    for result in ranked(serp)[:wanted]:
        try:
            read = await _read_one(driver, page, serp, result, query, settings, deadline)
        except TimeoutError:
            late = True
            break
        if read is None and serp.read_skipped:
            break
        if read is not None:
            reads.append(read)
    if not any(_answers(r) for r in reads):
        results = engine.results_url(query, settings)
        await _back_to_results(driver, page, engine, results, history=not late)
    return reads


def _on_results(page: Any, engine: LiveEngine) -> bool:
    return engine.is_results(page.url)


async def _back_to_results(
    driver: Driver, page: Any, engine: LiveEngine, results: str, *, history: bool = True
) -> bool:
    """Back to the results page (never an error page); whether the tab is on it. History
    first (the page as the audience saw it); where that does not lead there, the results
    page is opened again by its address: Chrome commits the error page of a result that
    failed to load a moment after the failure is reported (measured: the way back raced it
    and lost), a redirect may have replaced the entry, and a read that ran out of time left
    its navigation pending (`history=False`: the address still reads as the results page
    until that navigation commits, and going back would leave it)."""
    if history:
        for _ in range(2):  # once more when Chrome's error page came in over the way back
            if _on_results(page, engine):
                return True
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(page.go_back(wait_until="commit"), 2.0)
            if not _on_results(page, engine):
                await _error_page_committed(page, within_ms=300)
        if _on_results(page, engine):
            return True
    log.info("search.back_by_address", engine=engine.name, was=page.url[:200], history=history)
    with contextlib.suppress(Exception):
        await driver.navigate(page, results, wait_until="commit", check=False)
        prepare(page)
    return _on_results(page, engine)


async def _read_next(
    driver: Driver,
    page: Any,
    serp: SerpPage,
    query: str,
    settings: Settings,
    deadline: Deadline,
    engine: LiveEngine,
) -> PageRead | None:
    """Back on the results page, the next organic result marked, opened and read, when the
    deadline leaves a read's share after the way back; None when it could not be."""
    if deadline.remaining() - READ_RESERVE_S < READ_MIN_S + 0.5:
        serp.read_next_skipped = (
            f"no time left in the call's deadline ({deadline.remaining():.1f} s) to open "
            "the next result"
        )
        log.info(
            "search.read_next_skipped",
            engine=engine.name,
            remaining_s=round(deadline.remaining(), 1),
        )
        return None
    second = ranked(serp)[1]
    results = engine.results_url(query, settings)
    if await _back_to_results(driver, page, engine, results):
        prepare(page)
        await show_result(page, second.url, budget_s=BUDGET_S)  # viewers see it chosen
    else:  # the read opens it by its address all the same
        log.info("search.read_next_direct", engine=engine.name, url=second.url[:200])
    skipped, late = serp.read_skipped, False
    try:
        read = await _read_one(driver, page, serp, second, query, settings, deadline)
    except TimeoutError:
        read, late = None, True
    serp.read_skipped = skipped  # the top result was read: the envelope does not say otherwise
    if read is None and (late or not _on_results(page, engine)):
        await _back_to_results(driver, page, engine, results, history=not late)
    return read


async def _reopen(driver: Driver, page: Any, read: PageRead) -> None:
    """The page that answers opened again after the answer (the tab moved on to the next
    result, which lost), so viewers see the passage the brain reads out."""
    with contextlib.suppress(Exception):
        await driver.navigate(page, read.final_url, check=False, wait_until="commit")
        prepare(page)


def _read_notes(serp: SerpPage, reads: list[PageRead]) -> list[str]:
    """What the reads add after the pages read: the other page's best sentences, which
    result answered, and why a result was not read or could not be."""
    lines: list[str] = []
    also = serp.read_also
    if also:
        lines.append(
            f"\nAlso from result {also['rank']}, {also['title'] or also['url']} ({also['url']}):"
            f"\n{also['text']}"
        )
    if serp.read_choice:
        chosen = serp.read_choice["chosen"]
        lines.append(f"(Results 1 and 2 were read; result {chosen} answers the question better.)")
    if serp.read_skipped:
        lines.append(f"(The top result was not read: {serp.read_skipped}.)")
    elif serp.read_failed and not reads:
        ranks = " and ".join(str(f["rank"]) for f in serp.read_failed)
        lines.append(f"(Result {ranks} could not be opened; the results page answers.)")
    return lines


GENERIC_LABEL = (
    "A generic reading of the results page: the parser may be out of date. The links of "
    "the page's main column, with the text around them"
)


def _result_line(number: int, result: SerpResult) -> str:
    host = urlsplit(result.url).hostname or result.url
    snippet = f" - {result.snippet}" if result.snippet else ""
    return f"{number}. {result.title} ({host}){snippet}"


def _result_lines(serp: SerpPage, max_results: int) -> list[str]:
    """The parsed results; when the parse is suspect, a line that says so and the generic
    reading's links the parsed ones do not hold, under their label."""
    parsed, extra = heard(serp, max_results)
    lines = ["Top results:"] if parsed else []
    lines += [_result_line(r.rank, r) for r in parsed]
    if suspect(serp):
        reasons = "; ".join(serp.health.reasons[:3]) or "it accounts for too little of the page"
        lines.append(f"(The parse of this results page looks incomplete: {reasons}.)")
    if extra:
        lines.append(f"{GENERIC_LABEL}:")
        lines += [_result_line(len(parsed) + i, r) for i, r in enumerate(extra, 1)]
    return lines


def render_serp(
    serp: SerpPage,
    reads: list[PageRead],
    max_results: int,
    *,
    overview: str = "",
    engine: str = "Google",
) -> str:
    """Compact, speakable: Google's AI Overview (`overview`: what of it the brain hears),
    labelled as AI-generated, then the answer, then a few ranked results with their sources."""
    lines: list[str] = []
    if overview and overview_ready(serp):
        lines += [f"{LABEL}:", overview, ""]
    elif serp.ai_overview_note:
        lines.append(f"({serp.ai_overview_note}.)")
    if serp.answer:
        lines.append(f"Answer: {serp.answer}")
    panel = serp.knowledge_panel
    if panel:
        lines.append(f"About {panel.title}: {panel.description}".rstrip(": "))
        lines += [f"  {key}: {value}" for key, value in list(panel.facts.items())[:6]]
    lines += _result_lines(serp, max_results)
    if serp.people_also_ask:
        lines.append("People also ask: " + "; ".join(serp.people_also_ask[:4]))
    if serp.top_stories:
        lines.append("Top stories: " + "; ".join(s.title for s in serp.top_stories[:3]))
    for read in reads:
        lines.append(f"\nFrom {read.title or read.final_url} ({read.final_url}):\n{read.text}")
    lines += _read_notes(serp, reads)
    if lines and engine != "Google":
        lines.insert(0, f"(Searched on {engine}.)")
    return "\n".join(lines) if lines else f"{engine} found no results."


@dataclass(frozen=True)
class ParsedPage:
    """The results page a search parsed: what the tool watches (its health raises or clears
    the alert, counts in the metrics, and a suspect one is kept as a case). `html` is the
    page only when the parse is suspect or was recovered from the page's structure (its health
    gives reasons): "" otherwise, nothing kept that is not needed."""

    engine: str
    title: str
    query: str
    url: str
    serp: SerpPage
    html: str = ""


class SearchProvider:
    """The `search` action on the broadcast Chrome, on one engine (`LiveEngine`). The
    engine's refusal (its challenge, a consent wall it could not pass) rests it for
    `SB_ENGINE_REST_MIN`: the searches that follow go straight to the next engine, and
    `/v1/status` says until when (`rest.state()`)."""

    actions = frozenset({"search"})

    def __init__(self, driver: Driver, engine: LiveEngine) -> None:
        self.driver = driver
        self.engine = engine
        self.name = engine.name
        self.rest = Rest()
        self.parsed: ParsedPage | None = None

    def take_parsed(self) -> ParsedPage | None:
        """The results page the last search parsed (once; None when none was parsed)."""
        parsed, self.parsed = self.parsed, None
        return parsed

    async def run(self, request: Request, settings: Settings, deadline: Deadline) -> Answer:
        engine = self.engine
        if self.rest.active():
            raise ProviderError(
                f"{engine.title} refused a search ({self.rest.why}); it rests until "
                f"{self.rest.state()['until']}",
                failure_kind=FailureKind.ENGINE_RESTING,
                hint="the next engine searches on screen meanwhile; once the challenge is "
                "solved in the broadcast Chrome, the console's Google button brings it back",
            )
        serp, reads = await web_search(
            self.driver,
            request.query,
            settings,
            engine=engine,
            read_top=request.read_top,
            timeout=deadline.remaining(),
            on_parse=lambda serp, html, url: self._parsed(request.query, serp, html, url),
        )
        if serp.blocked:
            self._refused(serp.blocked, settings)
            raise PageBlocked(
                f"{engine.title} showed its {serp.blocked} page",
                failure_kind=serp.blocked,
                hint=f"the next engine answers instead; {engine.title} rests for "
                f"{settings.engine_rest_min:g} min (SB_ENGINE_REST_MIN)",
            )
        if not (
            ranked(serp)
            or serp.answer
            or serp.knowledge_panel
            or serp.top_stories
            or overview_ready(serp)
        ):
            # Zero results, or a layout the parser cannot read: a failed hop, so Gemini answers.
            raise ProviderError(
                f"{engine.title} showed no results the parser could read for "
                f"{request.query[:100]!r}",
                failure_kind=FailureKind.NO_RESULTS,
                hint="the next engine or Gemini answers instead; if results were shown, the "
                "page layout changed: record it with `make record` and update the parser",
            )
        return _answer(serp, reads, request, settings, engine)

    def _parsed(self, query: str, serp: SerpPage, html: str, url: str) -> None:
        if serp.blocked is None:  # a wall is not a results page: its own alert says so
            kept = html if suspect(serp) or serp.health.reasons else ""
            self.parsed = ParsedPage(self.name, self.engine.title, query, url, serp, kept)

    def _refused(self, kind: str, settings: Settings) -> None:
        if settings.engine_rest_min <= 0:
            return
        self.rest.start(kind, settings.engine_rest_min)
        log.warning(
            "search.engine_resting",
            engine=self.engine.name,
            why=kind,
            until=self.rest.state()["until"],
        )


class GoogleProvider(SearchProvider):
    """Google on the broadcast Chrome (the first engine)."""

    def __init__(self, driver: Driver) -> None:
        super().__init__(driver, GOOGLE_LIVE)


class BingProvider(SearchProvider):
    """Bing on the broadcast Chrome (where Google refuses)."""

    def __init__(self, driver: Driver) -> None:
        super().__init__(driver, BING_LIVE)


def _answer(
    serp: SerpPage,
    reads: list[PageRead],
    request: Request,
    settings: Settings,
    engine: LiveEngine,
) -> Answer:
    """The speakable body, the sources (the overview's cited ones, the results, the pages
    read) and the data of a search that found something."""
    spoken, _, _ = overview_text(serp, request.query, settings.read_max_chars)
    cited = serp.ai_overview.sources if spoken and serp.ai_overview else []
    sources = [Source(title=c.title, url=c.url) for c in cited]
    parsed, extra = heard(serp, settings.max_results)
    sources += [Source(title=r.title, url=r.url) for r in (*parsed, *extra)]
    listed: set[str] = set()
    sources = [s for s in sources if _first(s.url.split("#")[0], listed)]
    opened = [(r.title or "", r.final_url) for r in reads]
    if serp.read_choice:  # both pages read, the one that lost included
        opened = [("", str(r["url"])) for r in serp.read_choice["results"]]
    for title, url in opened:
        if url.split("#")[0] not in listed:
            sources.append(Source(title=title, url=url))
            listed.add(url.split("#")[0])
    data = serp.model_dump()
    data["reads"] = [read.model_dump() for read in reads]
    text = render_serp(serp, reads, settings.max_results, overview=spoken, engine=engine.title)
    return Answer(text, sources, data, detail=_walk_note(serp, extra))


def _walk_note(serp: SerpPage, extra: list[SerpResult]) -> str | None:
    """What the walk's hop says of an answer from a suspect parse (None: nothing to say)."""
    if not suspect(serp):
        return None
    reasons = "; ".join(serp.health.reasons[:3])
    given = (
        f"{len(extra)} links of a generic reading of the page were added"
        if extra
        else "the parsed results were given as they are"
    )
    return f"the results page's parse is suspect ({reasons}): {given}"[:300]


def _first(key: str, seen: set[str]) -> bool:
    """Whether `key` is seen for the first time (and now seen)."""
    if key in seen:
        return False
    seen.add(key)
    return True
