"""Page read on the broadcast tab: open the URL visibly, extract the main text, and show
viewers the passage the answer carries (scrolled to and highlighted by the stage).

Waits for the DOM plus a capped settle (never an unbounded networkidle). Non-HTML
responses, downloads and HTTP errors are outcomes with their status, not exceptions: the
answer says what happened and is no success (`not-a-page`, `http-error`). A page with no
readable text, or Google's or YouTube's consent wall or captcha where the page should be, is
no answer at all: the call moves on to Gemini.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field

from browser_core import (
    Answer,
    BlockedUrl,
    Deadline,
    Driver,
    FailureKind,
    PageBlocked,
    Peeked,
    ProviderError,
    Settings,
    Source,
    document_html,
    is_allowed,
    trim_heap,
)
from browser_core.stage import passage_paragraphs, prepare, show_caption, show_passage
from search._language import count_words
from search._meaning import meaning_for
from search._passages import GAP, select
from search._types import Request
from search.parsers.google import detect_interstitial

# Fewer words (`count_words`: a Chinese or Japanese character is one) in the raw HTML: the
# page is probably rendered by script.
BODY_ENOUGH_WORDS = 80
Outcome = Literal["ok", "http-error", "not-html", "download", "empty"]
# Hosts whose consent wall and "unusual traffic" page `detect_interstitial` knows.
_WALL_HOSTS = re.compile(r"(^|\.)(google\.[a-z.]{2,6}|youtube\.com)$")
# The HTTP status of the document now in the tab (after a script or meta refresh moved it).
_DOCUMENT_STATUS = (
    "() => { const e = performance.getEntriesByType('navigation')[0];"
    " return (e && e.responseStatus) || null; }"
)


class KeptPassage(BaseModel):
    """A passage a read kept for its question: offsets in the whole text, BM25 score."""

    start: int
    end: int
    score: float
    lead: bool = False  # the page's opening sentences, kept for orientation
    best: bool = False  # the passage the answer most likely comes from (highlighted)


class Highlight(BaseModel):
    """One of the sentences most likely to hold the answer: its text and offsets in the whole
    text, and the same sentence with the one before and after it in its paragraph."""

    text: str
    start: int
    end: int
    score: float
    context: str
    context_start: int
    context_end: int


class PageRead(BaseModel):
    """What a page read found. `text` is cut to the budget when `truncated`: for a read with
    a question, the passages that answer it (`passages`, `focused`), else the opening."""

    url: str
    final_url: str
    status: int | None = None
    outcome: Outcome = "ok"
    content_type: str = ""
    title: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    text: str = ""
    word_count: int = 0
    text_chars: int = 0  # length of the whole text, before the SB_READ_MAX_CHARS cut
    truncated: bool = False
    blocked: str | None = None  # "consent" or "captcha": a wall, not the page asked for
    focused: bool = False  # `text` holds the passages chosen for the question, gaps marked
    passages: list[KeptPassage] = Field(default_factory=list)
    # For a read with a question: its best few sentences, best first, and how much of the
    # question the best of them covers (0 to 1; a search reads the next result below
    # SB_SEARCH_READ_CONFIDENCE).
    highlights: list[Highlight] = Field(default_factory=list)
    confidence: float = 0.0
    # The same from the question's words alone (the reading model left out): what
    # SB_SEARCH_READ_CONFIDENCE's threshold was chosen on, for a search without the peek.
    lexical_confidence: float = 0.0
    # What the stage shows: the kept passages' texts in page order, and the best one's index.
    shown: list[str] = Field(default_factory=list, exclude=True)
    shown_best: int = Field(default=0, exclude=True)


async def read_in_page(
    driver: Driver,
    page: Any,
    url: str,
    settings: Settings,
    *,
    checked: bool = False,
    question: str | None = None,
    hints: Sequence[str] = (),
) -> PageRead:
    """Read `url` in `page` (the caller holds the tab); `checked`: the policy already ran.

    The text is extracted from the HTTP response body as soon as it has arrived, while the
    page keeps rendering for viewers; only a page with too little text there (rendered by
    script) is read again from the DOM after it settles. With a `question` (and `hints`:
    the passage a search showed for the page), a text longer than the budget is cut to the
    passages that answer it (`search._passages`), not to its opening.
    """
    nav = await driver.navigate(page, url, check=not checked, wait_until="commit")
    if nav.download:
        return PageRead(url=url, final_url=url, outcome="download")
    base = {
        "url": url,
        "final_url": nav.url,
        "status": nav.status,
        "content_type": nav.content_type,
    }
    if not nav.is_html:
        return PageRead(**base, outcome="not-html")
    prepare(page)  # the stage's world and stylesheet, while the text is extracted
    from search.parsers.article import extract_article  # trafilatura is slow to import

    body = nav.body if nav.body is not None else await _response_html(nav.response)
    article = await asyncio.to_thread(extract_article, body, nav.url) if body else None
    text = article.text.strip() if article else ""
    html = body or ""
    if count_words(text) < BODY_ENOUGH_WORDS or page.url != nav.url:
        await page.wait_for_load_state("domcontentloaded")
        await driver.settle(page)

        async def reopen() -> None:  # the page went on moving where ours should be
            await driver.navigate(page, url, check=not checked, from_blank=True)

        html = await document_html(page, reopen=reopen, ours=nav.url)
        article = await asyncio.to_thread(extract_article, html, page.url)
        text = article.text.strip() or (await page.inner_text("body", timeout=3000)).strip()
    final_url = base["final_url"] = await _followed(page, nav.url, settings)
    status = nav.status
    if final_url != nav.url:  # the text is the new document's: so is the status
        status = base["status"] = await page.evaluate(_DOCUMENT_STATUS) or nav.status
    assert article is not None
    trim_heap()  # the page body and its parse tree are gone: give their pages back
    budget = settings.read_max_chars
    return PageRead(
        **base,
        outcome=_outcome(status, text),
        blocked=_wall(html, final_url),
        title=article.title or await page.title() or None,
        author=article.author,
        date=article.date,
        language=article.language,
        word_count=count_words(text),
        text_chars=len(text),
        truncated=len(text) > budget,
        **await asyncio.to_thread(_kept, text, question, settings, hints),
    )


def _kept(
    text: str, question: str | None, settings: Settings, hints: Sequence[str]
) -> dict[str, Any]:
    """The text the envelope carries, and what the stage shows of it (the reading model
    loaded, and asked, only for a read with a question). CPU work: run it in a thread."""
    meaning = meaning_for(settings) if question and question.strip() else None
    chosen = select(text, question, settings.read_max_chars, hints=hints, meaning=meaning)
    best = chosen.best
    found: dict[str, Any] = {
        "highlights": [
            Highlight(
                text=h.text(text),
                start=h.start,
                end=h.end,
                score=round(h.score, 3),
                context=h.context(text),
                context_start=h.before,
                context_end=h.after,
            )
            for h in chosen.highlights
        ],
        "confidence": chosen.confidence,
        "lexical_confidence": chosen.lexical,
    }
    if not chosen.focused:  # the opening from its top; or the whole text, where it answers
        shown = [best.text(text)] if best else passage_paragraphs(chosen.text)
        return {"text": chosen.text, "shown": shown, "shown_best": 0, **found}
    kept = [
        KeptPassage(
            start=p.start,
            end=p.end,
            score=round(p.score, 3),
            lead=p is chosen.lead,
            best=p is best,
        )
        for p in chosen.passages
    ]
    return {
        "text": chosen.text,
        "focused": True,
        "passages": kept,
        "shown": [p.text(text) for p in chosen.passages],
        "shown_best": next((i for i, p in enumerate(kept) if p.best), 0),
        **found,
    }


class PeekRead(BaseModel):
    """A page read for its question without being shown (`Driver.peek`): its `confidence`, or
    None when the peek cannot tell (the load failed or was refused, the text is drawn by
    script); a page that is no page (an HTTP error, a file, a wall) answers nothing: 0."""

    url: str
    confidence: float | None = None
    outcome: str = "ok"  # ok | http-error | not-html | blocked | script | failed
    error: str | None = None
    ms: int = 0


def judge_peek(peeked: Peeked, question: str, settings: Settings) -> PeekRead:
    """How well a page loaded unseen (`Driver.peek`) answers `question`: its text extracted
    and judged as a read's would be (`select`'s confidence). CPU work: run it in a thread."""
    started = time.monotonic()
    url = peeked.url

    def done(outcome: str, confidence: float | None, error: str | None = None) -> PeekRead:
        ms = peeked.ms + round((time.monotonic() - started) * 1000)
        return PeekRead(url=url, confidence=confidence, outcome=outcome, error=error, ms=ms)

    if peeked.error is not None:
        return done("failed", None, peeked.error)
    if peeked.status is not None and peeked.status >= 400:
        return done("http-error", 0.0)
    if not peeked.is_html:
        return done("not-html", 0.0)
    if not peeked.body:
        return done("failed", None, "the body could not be decoded")
    if _wall(peeked.body, url):
        return done("blocked", 0.0)
    from search.parsers.article import extract_article  # trafilatura is slow to import

    text = extract_article(peeked.body, url).text.strip()
    if count_words(text) < BODY_ENOUGH_WORDS:  # drawn by script: only the tab would know
        return done("script", None)
    chosen = select(text, question, settings.read_max_chars, meaning=meaning_for(settings))
    return done("ok", chosen.confidence)


async def _followed(page: Any, committed: str, settings: Settings) -> str:
    """Where the page is now. A meta refresh or a script may have moved it after the response
    we read: the policy and the envelope's `sources:` follow it, never the approved URL."""
    final = str(page.url)
    if final in (committed, "", "about:blank"):
        return committed
    if not is_allowed(final, settings.allow_hosts):
        await page.goto("about:blank")
        raise BlockedUrl(
            f"refused: the page moved itself to {final[:200]}", url=final[:200], reason="redirect"
        )
    return final


async def _response_html(response: Any) -> str | None:
    if response is None:
        return None
    try:
        return str(await response.text())
    except (PlaywrightError, UnicodeDecodeError):
        return None


_OUTCOME_KINDS = {
    "http-error": FailureKind.HTTP_ERROR,
    "not-html": FailureKind.NOT_A_PAGE,
    "download": FailureKind.NOT_A_PAGE,
}


def _outcome(status: int | None, text: str) -> Outcome:
    if status is not None and status >= 400:
        return "http-error"
    return "ok" if text else "empty"


def _wall(html: str, url: str) -> str | None:
    """Google's or YouTube's consent wall or captcha page, where the read landed instead."""
    host = (urlsplit(url).hostname or "").lower()
    return detect_interstitial(html, url) if _WALL_HOSTS.search(host) else None


async def read_page(
    driver: Driver,
    url: str,
    settings: Settings,
    timeout: float | None = None,
    *,
    question: str | None = None,
) -> PageRead:
    """Read one page on the owned tab, queued behind other operations; with a `question`,
    the passages that answer it.

    The navigation policy runs first, so a refused URL never waits for (or needs) Chrome.
    """
    url = await driver.check(url)

    async def op(page: Any) -> PageRead:
        return await read_in_page(driver, page, url, settings, checked=True, question=question)

    async def show(page: Any, read: PageRead) -> None:
        await show_read(page, read, settings)

    return await driver.run("read", op, timeout=timeout, show=show)


async def show_read(
    page: Any, read: PageRead, settings: Settings, *, budget_s: float | None = None
) -> None:
    """The screen follows the answer: the passage the answer comes from highlighted and
    scrolled to (the rest of what the envelope carries marked lightly), the caption naming
    the site. Runs after the answer is handed back (`budget_s=None`), or within `budget_s`."""
    if read.outcome != "ok" or read.blocked:
        return
    await asyncio.gather(
        show_passage(page, read.shown, read.shown_best, budget_s=budget_s),
        show_caption(page, "read", read.final_url, settings, budget_s=budget_s),
    )


def describe(read: PageRead) -> str:
    """A compact, speakable body for the envelope."""
    if read.outcome == "download":
        return f"{read.url} is a file download, not a page; nothing was downloaded."
    if read.outcome == "not-html":
        kind = read.content_type.split(";")[0] or "unknown type"
        return f"{read.final_url} is not a web page ({kind}, HTTP {read.status}); not read."
    head = read.title or read.final_url
    meta = ", ".join(x for x in (read.author, read.date) if x)
    lines = [f"{head}" + (f" ({meta})" if meta else "")]
    if read.outcome == "http-error":
        lines.append(f"The page answered HTTP {read.status}.")
    if read.outcome == "empty":
        lines.append("The page has no readable text.")
    lines.append(read.text)
    if read.focused:
        lines.append(
            f"[excerpts for the question: {len(read.text)} of {read.text_chars} characters"
            f" shown, {GAP} marks what was left out]"
        )
    elif read.truncated:
        lines.append(f"[truncated: {len(read.text)} of {read.text_chars} characters shown]")
    return "\n".join(line for line in lines if line)


class ReadProvider:
    """The `read` action on the broadcast Chrome."""

    name = "read"
    actions = frozenset({"read"})

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    async def run(self, request: Request, settings: Settings, deadline: Deadline) -> Answer:
        url = request.url or request.query
        question = request.query if request.url and request.query != request.url else None
        read = await read_page(
            self.driver, url, settings, timeout=deadline.remaining(), question=question
        )
        if read.blocked:  # the text would be the wall's, not the page's: never a success
            raise PageBlocked(
                f"the read of {url[:200]} landed on the site's {read.blocked} page "
                f"({read.final_url[:200]})",
                failure_kind=read.blocked,
                hint="the Gemini fallback answers instead",
            )
        if read.outcome == "empty":
            raise ProviderError(
                f"{read.final_url[:200]} has no readable text",
                failure_kind=FailureKind.PROVIDER_ERROR,
                hint="the Gemini fallback answers instead; a page that shows its text only "
                "after a login or a click cannot be read on the stream",
            )
        source = Source(title=read.title or "", url=read.final_url)
        # An error page, a file or a download is read out as such, and is no success: the
        # brain says what happened.
        kind = _OUTCOME_KINDS.get(read.outcome)
        return Answer(describe(read), [source], read.model_dump(), failure_kind=kind)
