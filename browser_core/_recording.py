"""Recording what the owned tab does: a HAR of its network, a Playwright trace, highlights.

Both use the CDP default context without closing it (closing it would disconnect Playwright).
What is written is scrubbed: cookies, auth and API-key headers, key-bearing URLs and failed
entries (a failed entry makes `route_from_har` hang instead of aborting) never reach disk.
Requests of other tabs in the same Chrome are left out of the HAR.

Playwright's HAR takes a response's body when its request finishes (`Network.loadingFinished`,
then `Network.getResponseBody`); an entry whose request is still loading when the HAR is
stopped is written with an empty body, silently. The driver answers from the document's body
as Chrome's network stack has it, before the page's renderer has finished taking it in (a
1.7 MB results page: often tens of ms later), so `stop()` first waits for the owned tab's
documents to finish, and a document that still has no body in the written HAR is an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import structlog
from playwright.async_api import BrowserContext, Page, Request, Route
from playwright.async_api import Error as PlaywrightError

from ._errors import StreamBrowserError

log = structlog.get_logger("browser_core.recording")

PageHook = Callable[[Page], Awaitable[None]]

# Header names (lower case) that never reach a written HAR.
SECRET_HEADERS = frozenset(
    {
        "cookie",
        "set-cookie",
        "set-cookie2",
        "authorization",
        "proxy-authorization",
        "x-goog-api-key",
        "x-goog-authuser",
        "x-goog-visitor-id",
        "x-youtube-identity-token",
        "x-client-data",
    }
)
# Query parameters that carry a key or token: entries with them are dropped (not replayable).
SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "access_token", "token", "auth"})
# Resource types kept by a slim recording (what the parsers and the player need).
SLIM_TYPES = frozenset({"document", "media", "xhr", "fetch"})
# How long `stop()` waits for the owned tab's documents still loading (their bodies).
DOCUMENTS_WAIT_S = 10.0
# Statuses of a document response that has no body by definition.
_BODYLESS = frozenset({204, 205, 304})
# Markers of a page served to a signed-in Google account (its name and e-mail are in it).
_SIGNED_IN_MARKERS = ("SignOutOptions", "accounts.google.com/Logout")


@dataclass
class ScrubReport:
    """What scrubbing removed from a HAR."""

    headers: int = 0
    cookies: int = 0
    dropped_failed: int = 0
    dropped_secret_urls: int = 0
    dropped_other: int = 0
    kept: int = 0
    signed_in: bool = False


def _has_secret_param(url: str) -> bool:
    query = urlsplit(url).query
    return any(name.lower() in SECRET_PARAMS for name, _ in parse_qsl(query))


def _secret_header(header: dict[str, Any]) -> bool:
    """A credential header, or one naming a key-bearing URL (`Referer`, `Location`, ...)."""
    value = str(header.get("value", ""))
    if str(header.get("name", "")).lower() in SECRET_HEADERS:
        return True
    return "?" in value and _has_secret_param(value)


def _scrub_message(message: dict[str, Any], report: ScrubReport) -> None:
    headers = message.get("headers") or []
    kept = [h for h in headers if not _secret_header(h)]
    report.headers += len(headers) - len(kept)
    message["headers"] = kept
    if _has_secret_param(str(message.get("redirectURL") or "")):
        message["redirectURL"] = ""
    report.cookies += len(message.get("cookies") or [])
    message["cookies"] = []


def _keep_entry(
    entry: dict[str, Any], report: ScrubReport, urls: set[str] | None, types: frozenset[str] | None
) -> bool:
    request, response = entry.get("request", {}), entry.get("response", {})
    url = str(request.get("url", ""))
    if int(response.get("status", 0) or 0) <= 0:
        report.dropped_failed += 1
        return False
    if _has_secret_param(url):
        report.dropped_secret_urls += 1
        return False
    if urls is not None and url not in urls:
        report.dropped_other += 1
        return False
    if types is not None and entry.get("_resourceType", "document") not in types:
        report.dropped_other += 1
        return False
    return True


def scrub_har_data(
    data: dict[str, Any],
    *,
    only_urls: Iterable[str] | None = None,
    resource_types: Iterable[str] | None = None,
) -> ScrubReport:
    """Scrub a parsed HAR in place; keep only `only_urls` / `resource_types` when given."""
    report = ScrubReport()
    urls = set(only_urls) if only_urls is not None else None
    types = frozenset(resource_types) if resource_types is not None else None
    log_ = data.setdefault("log", {})
    entries = []
    for entry in log_.get("entries", []):
        if not _keep_entry(entry, report, urls, types):
            continue
        _scrub_message(entry.setdefault("request", {}), report)
        _scrub_message(entry.setdefault("response", {}), report)
        text = str(entry["response"].get("content", {}).get("text", ""))
        report.signed_in = report.signed_in or any(m in text for m in _SIGNED_IN_MARKERS)
        entries.append(entry)
    entries = _without_cut_short(entries, report)
    log_["entries"] = entries
    report.kept = len(entries)
    return report


def _without_cut_short(entries: list[dict[str, Any]], report: ScrubReport) -> list[dict[str, Any]]:
    """Entries with an empty body dropped where the same request came again with its body:
    a navigation cut short by the one that followed (a page moving on by itself, our goto
    made again from a blank page), which a replay would otherwise answer with nothing."""

    def key(entry: dict[str, Any]) -> tuple[str, str]:
        request = entry.get("request", {})
        return str(request.get("method", "GET")), str(request.get("url", ""))

    def body(entry: dict[str, Any]) -> bool:
        return bool(entry.get("response", {}).get("content", {}).get("text"))

    answered = {key(e) for e in entries if body(e)}
    kept = [e for e in entries if body(e) or key(e) not in answered]
    report.dropped_failed += len(entries) - len(kept)
    return kept


def scrub_har(
    path: Path,
    *,
    only_urls: Iterable[str] | None = None,
    resource_types: Iterable[str] | None = None,
) -> ScrubReport:
    """Scrub the HAR file at `path` in place (see `scrub_har_data`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    report = scrub_har_data(data, only_urls=only_urls, resource_types=resource_types)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    log.info(
        "recording.scrubbed",
        path=str(path),
        kept=report.kept,
        headers_removed=report.headers,
        jars_emptied=report.cookies,
        dropped_failed=report.dropped_failed,
        dropped_credential_urls=report.dropped_secret_urls,
        dropped_other=report.dropped_other,
    )
    if report.signed_in:
        log.warning(
            "recording.signed_in",
            path=str(path),
            hint="a page was served to a signed-in Google account; record on a profile "
            "that is not signed in, or the account name and e-mail end up in the HAR",
        )
    return report


# -- the recorder ---------------------------------------------------------------------------


@dataclass
class _Document:
    """A document request of the recorded tab, followed until it ends."""

    request: Request
    page: Page
    outcome: str = "loading"  # "finished", "failed" or "closed" (its tab went first)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def end(self, outcome: str) -> None:
        if self.outcome == "loading":
            self.outcome = outcome
            self.done.set()


@dataclass
class SessionRecorder:
    """A driver page hook that records the owned tab's session: trace and/or HAR.

    Pass `hook` in the driver's `page_hooks`; call `stop()` before the driver is closed.
    `stop()` raises `StreamBrowserError` (and writes no HAR) when a document the tab loaded
    would be recorded without its body.
    """

    trace_path: Path | None = None
    har_path: Path | None = None
    title: str = "stream-browser"
    slim: bool = True
    keep_trace: bool = True
    urls: list[str] = field(default_factory=list)
    _context: BrowserContext | None = None
    _started: float = 0.0
    _documents: list[_Document] = field(default_factory=list)

    async def hook(self, page: Page) -> None:
        context = page.context
        page.on("request", lambda request: self._seen(request, page))
        page.on("requestfinished", lambda request: self._ended(request, "finished"))
        page.on("requestfailed", lambda request: self._ended(request, "failed"))
        page.on("close", lambda _: self._closed(page))
        if context is self._context:
            return
        if self._context is not None:
            log.warning("recording.reconnected", hint="the part before the reconnect is lost")
        self._context = context
        self._started = time.monotonic()
        if self.trace_path is not None:
            await context.tracing.start(screenshots=True, snapshots=True, title=self.title)
        if self.har_path is not None:
            self.har_path.parent.mkdir(parents=True, exist_ok=True)
            await context.tracing.start_har(self.har_path, content="embed", mode="minimal")
        log.info("recording.started", trace=self.trace_path is not None, har=str(self.har_path))

    def _seen(self, request: Request, page: Page) -> None:
        self.urls.append(request.url)
        self._ended(request.redirected_from, "finished")  # a redirect hop ends with the next
        if request.resource_type == "document":
            self._documents.append(_Document(request, page))

    def _ended(self, request: Request | None, outcome: str) -> None:
        for document in self._documents:
            if document.request is request:
                document.end(outcome)

    def _closed(self, page: Page) -> None:
        for document in self._documents:
            if document.page is page:
                document.end("closed")

    async def stop(self, *, keep_trace: bool | None = None) -> Path | None:
        """Write the HAR (scrubbed) and the trace; return the trace path if one was written."""
        context, self._context = self._context, None
        if context is None:
            log.warning("recording.not_started", hint="the action never reached the owned tab")
            return None
        lost = await self._write_har(context) if self.har_path is not None else []
        trace = await self._stop_trace(context, keep_trace)
        if lost and self.har_path is not None:
            self.har_path.unlink(missing_ok=True)
            log.error("recording.body_lost", documents=lost, har=str(self.har_path))
            raise StreamBrowserError(
                f"the recording lost the body of {'; '.join(lost)}, so no HAR was written",
                hint="record again; if it happens every time, the page may be too large "
                "or the tab moved on before it finished loading",
            )
        return trace

    async def _write_har(self, context: BrowserContext) -> list[str]:
        """Stop and scrub the HAR once the tab's documents are in; the ones without a body."""
        assert self.har_path is not None
        await self._wait_for_documents()
        await context.tracing.stop_har()
        resource_types = SLIM_TYPES if self.slim else None
        scrub_har(self.har_path, only_urls=self.urls, resource_types=resource_types)
        data = json.loads(self.har_path.read_text(encoding="utf-8"))
        return [why for url in empty_documents(data) if (why := await self._lost(url))]

    async def _wait_for_documents(self) -> None:
        """Wait (bounded) for the documents still loading: the HAR takes a body only when
        its request has finished."""
        loading = [d for d in self._documents if d.outcome == "loading"]
        if not loading:
            return
        started = time.monotonic()
        waits = [asyncio.ensure_future(d.done.wait()) for d in loading]
        _, pending = await asyncio.wait(waits, timeout=DOCUMENTS_WAIT_S)
        for wait in pending:
            wait.cancel()
        log.info(
            "recording.documents_waited",
            documents=len(loading),
            still_loading=len(pending),
            waited_ms=int((time.monotonic() - started) * 1000),
        )

    async def _lost(self, url: str) -> str | None:
        """Why the document at `url` has no body in the HAR, or None when it truly had none
        (an empty page) or never finished coming (a navigation the page cut short)."""
        documents = [d for d in self._documents if d.request.url == url]
        outcomes = {d.outcome for d in documents}
        if "loading" in outcomes:
            return f"{url[:200]} (still loading {DOCUMENTS_WAIT_S:g} s after the action)"
        if "closed" in outcomes:
            return f"{url[:200]} (its tab closed before it finished loading)"
        for document in documents:
            if document.outcome == "finished" and await _had_body(document.request):
                return f"{url[:200]} (it loaded, but Chrome did not hand its body over)"
        if not documents:
            return f"{url[:200]} (a document the recorder never saw start)"
        log.info("recording.cut_short", url=url[:200], hint="the page moved on before it loaded")
        return None

    async def _stop_trace(self, context: BrowserContext, keep_trace: bool | None) -> Path | None:
        if self.trace_path is None:
            return None
        keep = self.keep_trace if keep_trace is None else keep_trace
        if not keep:
            await context.tracing.stop()
            return None
        self.trace_path.parent.mkdir(parents=True, exist_ok=True)
        await context.tracing.stop(path=self.trace_path)
        log.info(
            "recording.trace_saved",
            path=str(self.trace_path),
            elapsed_ms=int((time.monotonic() - self._started) * 1000),
        )
        return self.trace_path


def empty_documents(data: dict[str, Any]) -> list[str]:
    """The URLs of a HAR's document entries that should carry a body and carry none."""
    urls = []
    for entry in data.get("log", {}).get("entries", []):
        response = entry.get("response", {})
        status = int(response.get("status", 0) or 0)
        if entry.get("_resourceType", "document") != "document" or not 200 <= status < 300:
            continue
        if status not in _BODYLESS and not response.get("content", {}).get("text"):
            urls.append(str(entry.get("request", {}).get("url", "")))
    return urls


async def _had_body(request: Request) -> bool:
    """Whether the network delivered any body bytes for `request` (True when unknown)."""
    try:
        sizes = await asyncio.wait_for(request.sizes(), 5)
    except (PlaywrightError, TimeoutError):
        return True
    return int(sizes.get("responseBodySize", 1)) != 0


# -- watching: highlights, step timings, slow motion ------------------------------------------

# Draws a labelled red box over an element for a while, without touching its styles.
OUTLINE_JS = """(el, args) => {
  const [label, ms] = args || ['', 1500];
  if (!el || !el.getBoundingClientRect) return false;
  const r = el.getBoundingClientRect();
  const box = document.createElement('div');
  box.setAttribute('data-sb-highlight', '');
  Object.assign(box.style, {position: 'fixed', left: (r.left - 3) + 'px', top: (r.top - 3) + 'px',
    width: (r.width + 6) + 'px', height: (r.height + 6) + 'px', border: '3px solid #e91e63',
    borderRadius: '4px', boxShadow: '0 0 0 4000px rgba(0,0,0,0.08)', zIndex: 2147483647,
    pointerEvents: 'none', boxSizing: 'border-box'});
  if (label) {
    const tag = document.createElement('span');
    tag.textContent = label;
    Object.assign(tag.style, {position: 'absolute', left: '0', top: r.top < 24 ? '2px' : '-22px',
      padding: '1px 6px',
      background: '#e91e63', color: '#fff', font: '12px sans-serif', borderRadius: '3px'});
    box.appendChild(tag);
  }
  (document.body || document.documentElement).appendChild(box);
  setTimeout(() => box.remove(), ms);
  return true;
}"""

# Outlines every element the driver clicks, types into or focuses (trusted input events).
_WATCH_INPUT_JS = (
    "(() => { if (window.__sbWatch) return; window.__sbWatch = true;\n"
    "const outline = " + OUTLINE_JS + ";\n"
    "const describe = (el) => (el.tagName || '').toLowerCase() + (el.id ? '#' + el.id : '') +"
    " (el.getAttribute && el.getAttribute('aria-label') ? '[' + el.getAttribute('aria-label')"
    " + ']' : '');\n"
    "let last = {el: null, type: '', at: 0};\n"
    "for (const type of ['pointerdown', 'keydown', 'focusin']) {\n"
    "  document.addEventListener(type, (e) => { if (!e.isTrusted || !e.target) return;\n"
    "    const now = Date.now();\n"
    "    if (last.el === e.target && last.type === type && now - last.at < 1000) return;\n"
    "    last = {el: e.target, type, at: now};\n"
    "    outline(e.target, [type === 'pointerdown' ? 'click' : type, 2000]);\n"
    "    console.debug('[sb-acted] ' + type + ' ' + describe(e.target)); }, true); }\n"
    "})();"
)


async def highlight(
    page: Page, selector: str, label: str = "", *, limit: int = 1, ms: int = 1500
) -> int:
    """Outline up to `limit` elements matching `selector` on screen; return how many."""
    shown = 0
    locator = page.locator(selector)
    with contextlib.suppress(PlaywrightError):
        count = min(await locator.count(), limit)
        if count:
            await locator.first.scroll_into_view_if_needed(timeout=2000)
        for index in range(count):
            text = f"{label} {index + 1}".strip() if limit > 1 else label
            if await locator.nth(index).evaluate(OUTLINE_JS, [text, ms], timeout=2000):
                shown += 1
    return shown


async def highlight_inputs(page: Page) -> None:
    """A page hook: outline what the driver acts on, and log each act as `debug.acted_on`."""
    await page.add_init_script(script=_WATCH_INPUT_JS)
    with contextlib.suppress(PlaywrightError):
        await page.evaluate(_WATCH_INPUT_JS)

    def on_console(message: Any) -> None:
        text = str(message.text)
        if text.startswith("[sb-acted] "):
            log.info("debug.acted_on", what=text[len("[sb-acted] ") :][:200], url=page.url[:200])

    page.on("console", on_console)


def step_timer() -> PageHook:
    """A page hook that logs the page's steps (navigations, DOM ready, load) with their time
    since the owned tab was taken (`at_ms`)."""
    origin: list[float] = []

    def since() -> int:
        return int((time.monotonic() - origin[0]) * 1000)

    async def hook(page: Page) -> None:
        origin[:] = [time.monotonic()]

        def navigated(frame: Any) -> None:
            if frame == page.main_frame:
                log.info("debug.step", step="navigated", url=frame.url[:200], at_ms=since())

        page.on("framenavigated", navigated)
        page.on("domcontentloaded", lambda _: log.info("debug.step", step="dom", at_ms=since()))
        page.on("load", lambda _: log.info("debug.step", step="load", at_ms=since()))

    return hook


def _is_top_document(request: Request) -> bool:
    if request.resource_type != "document":
        return False
    try:
        return request.frame.parent_frame is None
    except PlaywrightError:  # a service worker's request has no frame
        return False


def slow_motion(delay_ms: int) -> PageHook:
    """A page hook that holds every document request for `delay_ms` before it goes out.

    Each page stays on screen that much longer before the next one replaces it, and the
    outline of a clicked element stays visible while its navigation waits. It works with
    `route_from_har` replay (it falls back to the recording's route afterwards).
    """

    async def on_route(route: Route) -> None:
        if _is_top_document(route.request):
            log.info("debug.slowmo", url=route.request.url[:200], delay_ms=delay_ms)
            await asyncio.sleep(delay_ms / 1000)
        with contextlib.suppress(PlaywrightError):
            await route.fallback()

    async def hook(page: Page) -> None:
        await page.route("**/*", on_route)

    return hook


def document_entry(
    url: str, status: int, content_type: str, body: bytes, status_text: str = ""
) -> dict[str, Any]:
    """One HAR entry for a document written directly (not recorded from the tab): a
    recorded redirect's last page, a kept results page exported as a recording."""
    return {
        "startedDateTime": "1970-01-01T00:00:00.000Z",
        "time": 0,
        "request": {
            "method": "GET",
            "url": url,
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": [],
            "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query)],
            "headersSize": -1,
            "bodySize": -1,
        },
        "response": {
            "status": status,
            "statusText": status_text,
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": [{"name": "content-type", "value": content_type}],
            "content": {
                "size": len(body),
                "mimeType": content_type,
                "text": body.decode("utf-8", "replace"),
            },
            "headersSize": -1,
            "bodySize": -1,
            "redirectURL": "",
        },
        "cache": {},
        "timings": {"send": -1, "wait": -1, "receive": 0},
        "_resourceType": "document",
    }
