"""The screen follows the answer: the spoken passage scrolled to and highlighted, the result a
search opens marked on the results page, the player in theater mode (or fullscreen).

Nothing here changes the page's DOM: scripts run in an isolated world of our own
(`Page.createIsolatedWorld`), the marks are CSS Custom Highlights, and their style lives in a
DevTools inspector stylesheet (`CSS.createStyleSheet`), which is in no `document.styleSheets`,
no `adoptedStyleSheets` and no MutationObserver record of the page. (Chromium 156 keeps one
`CSS.highlights` registry per window: the page's own scripts can list our highlight's name and
delete it, but never see an element, attribute or style of ours.) Every step is bounded: the
answer waits at most `BUDGET_S` for it; the rest finishes in the background, capped, or not at
all, and never raises.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any

import structlog

from ._covers import SCROLL_JS, Covers
from ._perpage import PerPage

log = structlog.get_logger("browser_core.stage")

BUDGET_S = 0.1  # the most an answer ever waits for the stage
CAP_S = 5.0  # what is still unfinished then gives up after this long, in the background
WORLD = "stream-browser-stage"
PASSAGE = "stream-browser-passage"
CONTEXT = "stream-browser-context"
RESULT = "stream-browser-result"
STYLE = (
    f"::highlight({PASSAGE}) {{ background-color: rgba(255, 221, 0, 0.55); color: inherit; }}\n"
    f"::highlight({CONTEXT}) {{ background-color: rgba(255, 221, 0, 0.14); color: inherit; }}\n"
    f"::highlight({RESULT}) {{ background-color: rgba(255, 221, 0, 0.75); color: inherit;"
    " text-decoration: underline 3px rgb(230, 120, 0); }\n"
)
# Where no theater mode of the site's own answered (a layout change, a stand-in page): the
# player fills the viewport by our stylesheet, still without touching the page's DOM.
PLAYER_FILL = (
    "#movie_player, .html5-video-player { position: fixed !important; inset: 0 !important;"
    " width: 100vw !important; height: 100vh !important; max-width: none !important;"
    " max-height: none !important; z-index: 2147483646 !important; background: #000 }\n"
    "#movie_player video, .html5-video-player video { width: 100% !important;"
    " height: 100% !important; left: 0 !important; top: 0 !important;"
    " object-fit: contain !important }\n"
)
MAX_PARAGRAPHS = 80
MAX_NODES = 20000
MATCH_MS = 40  # the text match's own time limit, inside the page

# The scroll to a mark leaves room for the bars the page pins (`_covers.SCROLL_JS`).
_SCROLL_JS = (
    SCROLL_JS
    + r"""
const sbReady = (capMs) => document.readyState !== 'loading' ? null : new Promise((done) => {
  document.addEventListener('DOMContentLoaded', done, {once: true});
  setTimeout(done, capMs);
});
const sbRect = (range) => {
  const r = range.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
          vw: innerWidth, vh: innerHeight};
};
"""
)

_PASSAGE_JS = (
    r"""async ({paragraphs, best, name, context, maxNodes, maxMs, capMs}) => {
"""
    + _SCROLL_JS
    + r"""
  await sbReady(capMs);
  const t0 = performance.now();
  const root = document.body || document.documentElement;
  if (!root) return {found: 0, why: 'no document'};
  const skip = /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|TEXTAREA|SELECT|OPTION|TITLE)$/;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode: (n) =>
    n.parentElement && skip.test(n.parentElement.tagName)
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  // Whitespace is dropped on both sides: the DOM and the extractor space text differently.
  const nodes = [], mapNode = [], mapOff = [];
  let flat = '';
  for (let n = walker.nextNode(); n && nodes.length < maxNodes; n = walker.nextNode()) {
    const text = n.data, index = nodes.length;
    nodes.push(n);
    let kept = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c.trim() === '') continue;
      kept += c; mapNode.push(index); mapOff.push(i);
    }
    flat += kept;
  }
  const ranges = [], light = [];
  let cursor = 0;
  for (let k = 0; k < paragraphs.length; k++) {
    const para = paragraphs[k];
    if (performance.now() - t0 > maxMs) break;
    const needle = para.replace(/\s+/g, '');
    if (needle.length < 2) continue;
    const head = needle.slice(0, 48), tail = needle.slice(-32);
    let at = flat.indexOf(head, cursor);
    if (at < 0) at = flat.indexOf(head);
    if (at < 0) continue;
    let end = flat.indexOf(tail, at + Math.max(0, head.length - tail.length));
    if (end < 0 || end - at > needle.length * 1.5 + 64) {
      end = Math.min(at + needle.length, flat.length) - tail.length;
    }
    end = Math.min(end + tail.length, flat.length);
    const range = new Range();
    range.setStart(nodes[mapNode[at]], mapOff[at]);
    range.setEnd(nodes[mapNode[end - 1]], mapOff[end - 1] + 1);
    (k === best ? ranges : light).push(range);
    cursor = end;
  }
  if (light.length) CSS.highlights.set(context, new Highlight(...light));
  if (!ranges.length) return {found: 0, light: light.length, why: 'the passage did not match',
                              nodes: nodes.length};
  CSS.highlights.set(name, new Highlight(...ranges));
  sbScrollTo(ranges[0]);
  return {found: ranges.length, light: light.length, of: paragraphs.length,
          rect: sbRect(ranges[0]), ms: Math.round(performance.now() - t0)};
}"""
)

_RESULT_JS = (
    r"""async ({url, name, capMs}) => {
"""
    + _SCROLL_JS
    + r"""
  await sbReady(capMs);
  const wanted = (href) => {
    if (href === url) return true;
    try {
      const u = new URL(href);
      const q = u.searchParams.get('q') || u.searchParams.get('url');
      return u.pathname === '/url' && q === url;
    } catch (e) { return false; }
  };
  const anchors = document.querySelectorAll('a[href]');
  let best = null;
  for (let i = 0; i < anchors.length && i < 5000; i++) {
    const a = anchors[i];
    if (!wanted(a.href)) continue;
    const title = a.querySelector('h3') || (a.closest('h3'));
    if (title) { best = title; break; }
    if (!best && a.textContent.trim()) best = a;
  }
  if (!best) return {found: 0, why: 'the result is not on the page'};
  const range = new Range();
  range.selectNodeContents(best);
  CSS.highlights.set(name, new Highlight(range));
  sbScrollTo(range);
  return {found: 1, rect: sbRect(range)};
}"""
)

_PLAYER_JS = r"""async ({fullscreen}) => {
  const player = document.querySelector('#movie_player, .html5-video-player');
  if (!player) return {mode: 'none', why: 'no player on the page'};
  const flexy = document.querySelector('ytd-watch-flexy');
  const rect = () => { const r = player.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
            width: r.width, height: r.height, vw: innerWidth, vh: innerHeight}; };
  const fills = () => rect().width >= 0.95 * innerWidth;
  if (fullscreen) {
    if (!document.fullscreenElement) {
      try { await player.requestFullscreen(); } catch (e) { return {mode: 'none', why: String(e)}; }
    }
    return {mode: 'fullscreen', rect: rect()};
  }
  const theater = () => !!(flexy && (flexy.hasAttribute('theater') || flexy.theater)) || fills();
  if (theater()) return {mode: 'theater', rect: rect(), already: true};
  const button = document.querySelector('.ytp-size-button');
  if (button) {
    button.click();
    for (let i = 0; i < 10 && !theater(); i++) await new Promise((r) => requestAnimationFrame(r));
    if (theater()) return {mode: 'theater', rect: rect(), by: 'button'};
  }
  return {mode: 'none', why: 'no theater control answered', rect: rect()};
}"""

_BLUR_JS = r"""() => { const a = document.activeElement;
  if (a && (a.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName))) a.blur();
  const f = document.querySelector('ytd-watch-flexy');
  return !!(f && (f.hasAttribute('theater') || f.theater)); }"""


class World:
    """Our isolated world in the page's main frame, over a CDP session of its own."""

    def __init__(self, session: Any, frame_id: str, context_id: int) -> None:
        self.session = session
        self.frame_id = frame_id
        self.context_id = context_id

    @classmethod
    async def open(cls, page: Any) -> World:
        session = await page.context.new_cdp_session(page)
        try:
            tree = await session.send("Page.getFrameTree")
            frame_id = tree["frameTree"]["frame"]["id"]
            world = await session.send(
                "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}
            )
        except BaseException:
            await _detach(session)
            raise
        return cls(session, frame_id, int(world["executionContextId"]))

    async def call(self, function: str, arg: Any = None, *, gesture: bool = False) -> Any:
        """Run `function(arg)` in our world; its JSON value (None when it threw)."""
        reply = await self.session.send(
            "Runtime.evaluate",
            {
                "expression": f"({function})({json.dumps(arg)})",
                "contextId": self.context_id,
                "returnByValue": True,
                "awaitPromise": True,
                "userGesture": gesture,
            },
        )
        if "exceptionDetails" in reply:
            detail = reply["exceptionDetails"]
            log.debug("stage.script_failed", error=str(detail.get("text", ""))[:200])
            return None
        return reply.get("result", {}).get("value")

    async def style(self, text: str) -> None:
        """Our stylesheet for this document (DevTools' inspector sheet: no DOM node)."""
        send = self.session.send
        await send("DOM.enable")
        await send("CSS.enable")
        try:
            sheet = await send("CSS.createStyleSheet", {"frameId": self.frame_id})
            await send(
                "CSS.setStyleSheetText", {"styleSheetId": sheet["styleSheetId"], "text": text}
            )
        finally:
            await send("CSS.disable")
            await send("DOM.disable")

    async def close(self) -> None:
        await _detach(self.session)


async def _detach(session: Any) -> None:
    try:
        await session.detach()
    except Exception:  # the page or Chrome is gone: nothing left to detach
        return


# Whether another call is waiting for the tab, asked while the show after an answer runs (the
# driver sets it for that show; its steps inherit it). Then the show is cut to what the
# audience must see: the passage scrolled to and marked, the result marked; the covers'
# check and the late-covers watch are dropped (the next call replaces the page anyway).
_SOMEONE_WAITS: ContextVar[Callable[[], bool]] = ContextVar(
    "stream_browser_someone_waits", default=lambda: False
)


def someone_waits() -> bool:
    """Is another call waiting for the tab while this show runs? (False outside a show.)"""
    try:
        return bool(_SOMEONE_WAITS.get()())
    except Exception:  # a check that fails says nothing: the full show runs
        return False


def waiting_check(check: Callable[[], bool]) -> None:
    """For the show about to start in this context: `check()` says whether a call waits."""
    _SOMEONE_WAITS.set(check)


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve a background step's outcome so no 'exception was never retrieved' is printed."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("stage.step_failed", error=str(task.exception())[:200])


_PENDING: set[asyncio.Future[Any]] = set()


_WATCHES: set[asyncio.Future[Any]] = set()


def start(step: Awaitable[Any], *, watch: bool = False) -> asyncio.Future[Any]:
    """Begin a stage step in the background, capped at `CAP_S`, its failure swallowed. A
    `watch` (the late covers' check) is not waited for by `drain`: it is cancelled there."""
    task = asyncio.ensure_future(asyncio.wait_for(step, CAP_S))
    task.add_done_callback(_consume)
    pending = _WATCHES if watch else _PENDING
    pending.add(task)
    task.add_done_callback(pending.discard)
    return task


async def drain(timeout: float = 1.0) -> int:
    """Let the stage's background steps finish (at most `timeout`) before the event loop
    ends: a one-shot command exits right after its answer, and would cut a mark half-made.
    A watch for late covers is cancelled instead (a one-shot command does not wait seconds
    for a modal that may never come). Returns how many steps were still running then."""
    loop = asyncio.get_running_loop()
    mine = {task for task in _PENDING if task.get_loop() is loop}  # this loop's steps only
    if mine:
        await asyncio.wait(mine, timeout=timeout)
    watches = {task for task in _WATCHES if task.get_loop() is loop}
    for task in watches:
        task.cancel()
    if watches:
        await asyncio.wait(watches, timeout=0.5)
    return sum(not task.done() for task in mine)


async def finish(
    what: str,
    task: asyncio.Future[Any],
    budget_s: float = BUDGET_S,
    *,
    since: float = 0.0,
    after: bool = False,
) -> Any:
    """Wait at most `budget_s` more for a started step; its value, or None when it is late
    (it keeps going in the background and may still show its mark) or failed. Logs
    `stage.shown` with the time the answer waited for it (counted from `since`, if given),
    or `stage.after` with the time the step took when it ran after the answer."""
    started = since or time.perf_counter()
    done, _ = await asyncio.wait({task}, timeout=budget_s)
    waited_ms = round((time.perf_counter() - started) * 1000, 1)
    value = None
    if done and not task.cancelled() and task.exception() is None:
        value = task.result()
    if after:  # no answer waits on it: the tab is held for it (see Driver.run)
        log.info("stage.after", what=what, took_ms=waited_ms, late=not done, ok=value is not None)
        return value
    # A step given the whole cap runs beside other work (the player while playback is
    # confirmed): no answer waits on it, so it is not reported as a wait.
    event = "stage.background" if budget_s >= CAP_S else "stage.shown"
    log.info(event, what=what, waited_ms=waited_ms, late=not done, ok=value is not None)
    return value


async def bounded(what: str, step: Awaitable[Any], budget_s: float | None = BUDGET_S) -> Any:
    """`step` started and waited for at most `budget_s` (see `finish`); `None`: after the
    answer, waited for until it is done (capped at `CAP_S`)."""
    if budget_s is None:
        return await finish(what, start(step), CAP_S, after=True)
    return await finish(what, start(step), budget_s)


async def on_page(
    what: str, page: Any, step: Awaitable[Any], budget_s: float | None = BUDGET_S
) -> Any:
    """Like `bounded`, but no wait at all while the document is still being parsed: the
    answer is ready before the page is (it was read from the response), and the mark lands
    when the page has its DOM, in the background. After the answer (`budget_s=None`) the
    step is waited for, its DOM included."""
    if budget_s is None:
        return await bounded(what, step, None)
    started = time.perf_counter()
    task = start(step)
    try:
        state = await asyncio.wait_for(page.evaluate("document.readyState"), budget_s)
    except Exception:  # busy, gone or moved: the step shows what it can, on its own
        state = "loading"
    if state == "loading":
        waited_ms = round((time.perf_counter() - started) * 1000, 1)
        log.info("stage.shown", what=what, waited_ms=waited_ms, late=True, ok=False, loading=True)
        return None
    left = max(0.0, budget_s - (time.perf_counter() - started))
    return await finish(what, task, left, since=started)


class Prepared:
    """Our world and stylesheet, begun on a document as soon as it commits: enabling
    DevTools' CSS agent and adding the sheet costs 60-150 ms on a real page, which then
    overlaps the text extraction instead of following it."""

    def __init__(self, page: Any, css: str = STYLE) -> None:
        self.page = page
        self.world: asyncio.Future[World] = start(World.open(page))
        self.styled = start(self._style(css))

    async def _style(self, css: str) -> None:
        await (await self.world).style(css)

    async def call(self, function: str, arg: Any, gesture: bool = False) -> Any:
        """Run `function(arg)` in the prepared world; in a fresh one if the document changed
        since (a script or meta refresh moved the page)."""
        try:
            world = await self.world
            value = await world.call(function, arg, gesture=gesture)
        except Exception:  # the world is gone with its document
            value = None
        if value is None:
            fresh = Prepared(self.page)
            try:
                return await fresh.call_once(function, arg, gesture)
            finally:
                fresh.close()
        return value

    async def call_once(self, function: str, arg: Any, gesture: bool) -> Any:
        return await (await self.world).call(function, arg, gesture=gesture)

    def close(self) -> None:
        """Detach once the stylesheet is in (in the background)."""
        start(self._close())

    async def _close(self) -> None:
        try:
            await asyncio.wait({self.styled}, timeout=CAP_S)
        finally:
            if self.world.done() and not self.world.cancelled() and not self.world.exception():
                await self.world.result().close()


_LATEST: PerPage[Prepared] = PerPage("stage_world")


def prepare(page: Any) -> Prepared:
    """Begin the stage on the document just committed in `page` (no waiting); the next mark
    shown on that page uses it."""
    old = _LATEST.pop(page)
    if old is not None:
        old.close()
    return _LATEST.set(page, Prepared(page))


async def in_world(page: Any, function: str, arg: Any, prepared: Prepared | None = None) -> Any:
    """Run our script in our world (prepared at commit, or now); the stylesheet goes in
    beside it, so the marks may take their colour a moment after the answer, never later."""
    ready = prepared or _LATEST.get(page)
    if ready is not None:  # shared by every mark on this document; closed by the next one
        return await ready.call(function, arg)
    ready = Prepared(page)
    try:
        return await ready.call(function, arg)
    finally:
        ready.close()


def passage_paragraphs(text: str, limit: int = MAX_PARAGRAPHS) -> list[str]:
    """The paragraphs of the text the envelope carries, as the page shows them (bounded)."""
    return [line.strip() for line in text.splitlines() if line.strip()][:limit]


async def show_passage(
    page: Any,
    passages: Sequence[str],
    best: int = 0,
    *,
    prepared: Prepared | None = None,
    budget_s: float | None = BUDGET_S,
) -> Any:
    """Highlight `passages[best]` where it is on the page and scroll to it; the other
    passages (the rest of what the envelope carries, in page order) are marked lightly.

    Returns what was found (`found`, `rect` of the best passage) or None (late, failed,
    or nothing to show)."""
    texts = [" ".join(p.split()) for p in passages[:MAX_PARAGRAPHS]]
    if not any(texts) or not 0 <= best < len(texts):
        return None
    arg = {
        "paragraphs": texts,
        "best": best,
        "name": PASSAGE,
        "context": CONTEXT,
        "maxNodes": MAX_NODES,
        "maxMs": MATCH_MS,
        "capMs": int(CAP_S * 1000),
    }
    if budget_s is None:  # after the answer: with nothing of the page's drawn over it
        return await bounded("passage", _uncovered(page, arg, prepared), None)
    return await on_page("passage", page, in_world(page, _PASSAGE_JS, arg, prepared), budget_s)


async def _uncovered(page: Any, arg: dict[str, Any], prepared: Prepared | None) -> Any:
    """The passage marked and scrolled to (with room for the page's bars), then what the page
    draws over it hidden and its scrolling unlocked (`_covers`); what the page draws later
    is watched for in the background, without the tab (`_covers.WATCH_S`)."""
    shown = await in_world(page, _PASSAGE_JS, arg, prepared)
    if someone_waits():  # the next call takes the tab: the mark is what the audience sees
        log.info("stage.cut", what="covers", reason="a call waits for the tab")
        return shown
    ready = prepared or _LATEST.get(page)
    for borrow in (True, False):  # the world prepared at commit; a new one if it is gone
        covers = None
        try:
            covers = await _covers_for(page, ready if borrow else None)
            if covers is None:
                continue
            await covers.check()
        except Exception as exc:  # the page moved on, or went
            log.debug("stage.covers_failed", error=str(exc)[:200], borrowed=borrow)
            if covers is not None:
                await covers.close()
            continue
        start(covers.watch(), watch=True)
        break
    return shown


async def _covers_for(page: Any, ready: Prepared | None) -> Covers | None:
    """Covers over the world prepared for this document (once its stylesheet is in: its CSS
    agent is free then), or over a new one when `ready` is None."""
    if ready is None:
        return Covers(await World.open(page), PASSAGE, owns_world=True)
    world = ready.world
    if not world.done() or world.cancelled() or world.exception() is not None:
        return None
    await asyncio.wait({ready.styled}, timeout=CAP_S)
    return Covers(world.result(), PASSAGE, owns_world=False)


async def show_result(
    page: Any, url: str, *, prepared: Prepared | None = None, budget_s: float | None = BUDGET_S
) -> Any:
    """Mark the search result that links to `url` on the results page, and scroll to it."""
    arg = {"url": url, "name": RESULT, "capMs": int(CAP_S * 1000)}
    return await on_page("result", page, in_world(page, _RESULT_JS, arg, prepared), budget_s)


async def _theater(page: Any, fullscreen: bool) -> Any:
    world = await World.open(page)
    try:
        if fullscreen:
            return await world.call(_PLAYER_JS, {"fullscreen": True}, gesture=True)
        if not await world.call(_BLUR_JS):  # YouTube's own key first: `t`, focus off inputs
            await _press(world.session, "t", "KeyT", 84)
        shown = await world.call(_PLAYER_JS, {"fullscreen": False})  # a click: no activation given
        if shown and shown.get("mode") == "theater":
            return shown
        await world.style(STYLE + PLAYER_FILL)  # the site did not answer: our own frame
        return {"mode": "fill", "rect": (shown or {}).get("rect")}
    finally:
        await world.close()


async def _press(session: Any, key: str, code: str, vk: int) -> None:
    base = {"key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
    await session.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": key, **base})
    await session.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})
    await asyncio.sleep(0.03)  # the site's key handler and a frame of layout


async def show_player(page: Any, *, fullscreen: bool = False, budget_s: float = BUDGET_S) -> Any:
    """Theater mode (YouTube's `t` key, then its size button, then our own frame), or the
    player fullscreen (`SB_VIDEO_FULLSCREEN=true`, a request made with our user gesture)."""
    return await bounded("player", _theater(page, fullscreen), budget_s)


def run_all(*steps: Awaitable[Any]) -> Awaitable[list[Any]]:
    """Several stage steps at once (each already bounded): the answer waits for the slowest."""
    return asyncio.gather(*steps)


async def show_neutral(page: Any, *, budget_s: float | None = BUDGET_S) -> Any:
    """After `stop`: wait (at most `budget_s`) until the blank page is painted, so the
    screen no longer holds the video's last frame (Chromium keeps a left page's last frame
    on screen until the next one paints)."""
    frames = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
    return await bounded("neutral", page.evaluate(frames), budget_s)
