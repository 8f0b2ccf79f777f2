"""Nothing the page draws covers the passage the assistant talks about, as a viewer sees it: a
headful Chromium filling an Xvfb display of this module's own (1280x720, a 720p stream),
started as `stream-browser chrome` starts it, and stand-ins of pages that draw over their own
text (tests/_onair.py: a fixed 170 px header, a newsletter modal 0.8 s after load, a consent
dialog no rule knows, an advertisement interstitial that locks scrolling, an app sheet over
half the viewport).

Two seconds after a read with a question returns: the element at the centre of the
highlighted passage's first line belongs to the passage, that line is inside the viewport,
the highlight's colour is on the display itself, the page scrolls (html and body are not
`overflow: hidden`, and `scrollBy` moves it), the tab strip holds our tab alone, the page's
own text is all still in its DOM, and the next read takes its usual time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench._common.display import Display
from browser_core import ChromeProcess, Settings, cdp_targets, launch_chrome, stop_pid
from browser_core._cdp_raw import cdp_calls
from browser_core.chrome import free_port, save_state
from browser_core.stage._covers import Covers
from search import BrowseTool, ToolContext, client
from tests import _onair
from tests._rest import at_rest, highlight_pixels
from tests._server import LocalServer
from tests._service_proc import start_service
from tests.conftest import make_settings

# What the screen shows depends on the stage finishing its bounded work in time (a highlight
# drawn or not): `make test` runs it alone, after the rest.
pytestmark = pytest.mark.serial


LIVE = ToolContext(broadcasting=True)
SIZE = (1280, 720)
AFTER_S = 2.0  # when a viewer looks: two seconds after the call returned
# page -> the page's own element that must still be in its DOM (hidden or not) afterwards
KEPT = {
    "header": ".site-top",
    "sticky": ".site-top",
    "sticky-later": ".site-top",
    "sticky-float": ".site-top",
    "header-over": ".site-top",
    "newsletter": ".layer-box",
    "consent": "#pv-box",
    "interstitial": ".ad-gate",
    "sheet": ".app-sheet",
    "portal": ".portal .layer-box",
}
SHOWN = (
    "header",
    "sticky",
    "sticky-later",
    "sticky-float",
    "header-over",
)  # the page's own bars: room is left for them, they stay

LOOK_JS = """(() => {
  const h = CSS.highlights.get('stream-browser-passage');
  const ranges = h ? [...h] : [];
  const se = document.scrollingElement, html = document.documentElement;
  const words = document.body.innerText.length;
  if (!ranges.length) return {found: 0, words};
  const range = ranges[0], r = range.getClientRects()[0];
  const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  const anc = range.commonAncestorContainer;
  const top = anc.nodeType === 1 ? anc : anc.parentElement;
  return {found: ranges.length, text: range.toString().slice(0, 60), words,
    line: {top: r.top, bottom: r.bottom, left: r.left, right: r.right},
    vw: innerWidth, vh: innerHeight,
    hit: hit ? hit.outerHTML.slice(0, 100) : null,
    belongs: !!hit && top.contains(hit) && range.intersectsNode(hit),
    overflow: [getComputedStyle(html).overflowY, getComputedStyle(document.body).overflowY],
    scrollable: se.scrollHeight > se.clientHeight};
})()"""
SCROLLS_JS = """(() => { const se = document.scrollingElement, y = se.scrollTop;
  window.scrollBy({top: y > 100 ? -60 : 60, behavior: 'instant'});
  const moved = se.scrollTop !== y; window.scrollTo({top: y, behavior: 'instant'});
  return moved; })()"""


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    screen = Display(SIZE)
    yield screen
    screen.close()


@pytest.fixture(scope="module")
def pages(server: LocalServer) -> dict[str, str]:
    return _onair.route_all(server)


@pytest.fixture(scope="module")
def headful(
    tmp_path_factory: pytest.TempPathFactory, server: LocalServer, display: Display
) -> Iterator[tuple[ChromeProcess, Path]]:
    """The broadcast Chrome on this module's display, its start tab recorded as ours."""
    tmp = tmp_path_factory.mktemp("covers")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DISPLAY", display.name)
        proc = launch_chrome(
            port=free_port(),
            user_data_dir=str(tmp / "profile"),
            window=display.size,
            allow_hosts=(f"127.0.0.1:{server.port}",),
        )
    save_state(str(tmp / "state"), proc)
    yield proc, tmp
    stop_pid(proc.pid)
    if proc.egress_pid:
        stop_pid(proc.egress_pid)


@pytest.fixture(scope="module")
def settings(headful: tuple[ChromeProcess, Path]) -> Settings:
    proc, tmp = headful
    return make_settings(proc, tmp, settle_ms=300)


@pytest.fixture(scope="module")
def tool(settings: Settings) -> Iterator[BrowseTool]:
    tool = BrowseTool(settings)
    yield tool
    tool.close()


def read(tool: BrowseTool, url: str) -> tuple[Any, float]:
    started = time.monotonic()
    result = tool.call(_onair.QUESTION, action="read", url=url, ctx=LIVE)
    return result, time.monotonic() - started


def tabs(settings: Settings) -> list[dict[str, str]]:
    return [t for t in cdp_targets(settings.cdp_endpoint) if t.get("type") == "page"]


def evaluate(settings: Settings, expression: str) -> Any:
    """`expression` in the page's own world over raw CDP (as any script of the page)."""
    (tab,) = tabs(settings)
    reply = cdp_calls(
        tab["webSocketDebuggerUrl"],
        [("Runtime.evaluate", {"expression": expression, "returnByValue": True})],
        5.0,
    )
    return reply["result"]["result"].get("value")


def viewer_looks(display: Display) -> np.ndarray:
    """The display when a viewer looks: `AFTER_S` after the call returned (the page's own late
    layers, such as the newsletter 0.8 s after load, have come), once the screen is at rest
    with the highlight painted (bounded: on a loaded machine the stage finishes later)."""
    time.sleep(AFTER_S)
    return at_rest(display.grab, marked=True)


@pytest.fixture(scope="module")
def usual(tool: BrowseTool, pages: dict[str, str]) -> float:
    """The plain article's read time in this run (the next call is compared with it)."""
    times = [read(tool, pages["plain"])[1] for _ in range(3)]
    return sorted(times)[1]


@pytest.mark.parametrize("name", list(KEPT))
def test_two_seconds_after_a_read_nothing_the_page_drew_covers_the_highlighted_passage(
    tool: BrowseTool,
    settings: Settings,
    pages: dict[str, str],
    display: Display,
    usual: float,
    tmp_path: Path,
    name: str,
) -> None:
    result, _ = read(tool, pages[name])
    assert result is not None and result.success, result
    shot = viewer_looks(display)
    display.save_png(tmp_path / f"{name}.png")  # for a person looking at a failure
    look = evaluate(settings, LOOK_JS)
    where = json.dumps(look)[:600] + f" (screen: {tmp_path / name}.png)"
    assert look["found"], where
    assert look["belongs"], where
    line, vh, vw = look["line"], look["vh"], look["vw"]
    assert line["top"] >= 0 and line["bottom"] <= vh and 0 <= line["left"] < vw, where
    assert highlight_pixels(shot) > 3000, where
    assert look["scrollable"] and "hidden" not in look["overflow"], where
    assert evaluate(settings, SCROLLS_JS), where
    assert look["words"] >= sum(len(p) for p in _onair.PARAGRAPHS), where  # no text removed
    kept = evaluate(
        settings,
        f"(() => {{ const e = document.querySelector('{KEPT[name]}');"
        " return e && getComputedStyle(e).visibility; })()",
    )
    assert kept == "visible" if name in SHOWN else kept, (name, kept)
    own = _onair.PAGES[name].count(" style=")  # the page's own style attributes
    assert evaluate(settings, "document.querySelectorAll('[style]').length") == own  # none ours
    assert len(tabs(settings)) == 1
    after, took = read(tool, pages["plain"])
    assert after is not None and after.success
    assert took < 3 * usual + 0.5, (took, usual)


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "one-shot"])
@pytest.mark.parametrize(
    "name", ["header", "sticky", "sticky-later", "sticky-float", "header-over"]
)
def test_a_read_without_a_question_shows_the_opening_below_the_pages_own_header(
    tool: BrowseTool,
    settings: Settings,
    pages: dict[str, str],
    display: Display,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    watched: bool,
) -> None:
    """A read with no question highlights the article's opening and scrolls to it, with room
    for the header the page pins at the top: fixed, sticky and stuck where the page opens, or
    sticky under a masthead and stuck only once the page has scrolled (it was not yet stuck
    when the scroll was measured), or fixed and laid over the opening itself, which no scroll
    brings lower (the page is given the room at its top). The opening's first line is below
    the header, as a viewer sees it: on the display, the highlight's colour is below the
    header's bottom edge and none of it above; and the header stays. The first scroll must be
    right by itself: a one-shot command (the CLI) has no late-cover watch to scroll again
    after it."""
    if not watched:
        monkeypatch.setattr(Covers, "watch", _no_watch)
    result = tool.call(pages[name], action="read", url=pages[name], ctx=LIVE)
    assert result is not None and result.success, result
    shot = viewer_looks(display)
    look = evaluate(settings, LOOK_JS)
    header = evaluate(
        settings,
        "(() => { const e = document.querySelector('.site-top'), b = e.getBoundingClientRect();"
        " return {top: b.top, bottom: b.bottom, shown: getComputedStyle(e).visibility}; })()",
    )
    display.save_png(tmp_path / f"{name}.png")  # for a person looking at a failure
    where = f"{name}: {look} header {header} (screen: {tmp_path / name}.png)"
    assert look["found"] and look["belongs"], where
    assert header["shown"] == "visible", where
    assert look["line"]["top"] >= header["bottom"] - 1, where
    assert look["line"]["bottom"] <= look["vh"], where
    page_top = SIZE[1] - look["vh"]  # the page's first row on the display, below Chrome's bars
    edge = page_top + round(header["bottom"])
    assert highlight_pixels(shot[page_top:edge]) == 0, where  # nothing marked shows in the bar
    assert highlight_pixels(shot[edge:]) > 3000, where


async def _no_watch(self: Covers, seconds: float = 0.0) -> None:
    """The late-cover watch of a one-shot command: cancelled at once."""
    await self.close()


def test_a_page_whose_article_is_inside_a_fixed_layer_keeps_it(
    tool: BrowseTool, settings: Settings, pages: dict[str, str], display: Display
) -> None:
    """A web app's shell (the whole article in one fixed layer that scrolls on its own) is
    the page itself: what holds the passage is never taken for a cover."""
    result, _ = read(tool, pages["shell"])
    assert result is not None and result.success
    shot = viewer_looks(display)
    look = evaluate(settings, LOOK_JS)
    assert look["found"] and look["belongs"], look
    assert highlight_pixels(shot) > 3000
    shown = "getComputedStyle(document.querySelector('.shell')).visibility"
    assert evaluate(settings, shown) == "visible"


def test_through_the_service_a_late_modal_is_taken_off_the_passage_too(
    headful: tuple[ChromeProcess, Path],
    settings: Settings,
    pages: dict[str, str],
    display: Display,
) -> None:
    """The watch for late covers runs in the service's own process, after its answer (the
    service takes turns on the same tab with this module's in-process tool)."""
    proc, tmp = headful
    service = start_service(proc, tmp / "state")
    try:
        answer = client.browse(
            _onair.QUESTION,
            action="read",
            url=pages["newsletter"],
            broadcasting=True,
            service_url=service.url,
            token=service.token,
        )
        assert answer is not None and answer["result"]["success"], answer
        shot = viewer_looks(display)
        look = evaluate(settings, LOOK_JS)
        assert look["found"] and look["belongs"], look
        assert "hidden" not in look["overflow"], look
        assert highlight_pixels(shot) > 3000
        assert evaluate(settings, "!!document.querySelector('.layer-box')")  # still there
        assert len(tabs(settings)) == 1
    finally:
        service.stop()


def test_a_modal_dialog_and_its_backdrop_are_off_the_passage(
    tool: BrowseTool, settings: Settings, pages: dict[str, str], display: Display
) -> None:
    """A `<dialog>` opened with showModal() is hidden with its ::backdrop and the lock lifted.
    The page keeps it open (only the page may close it), so Chrome keeps the rest of the
    document inert: `elementFromPoint` answers the root there, while the display shows the
    passage, in its highlight's own colour (a backdrop left over it would darken that)."""
    result, _ = read(tool, pages["dialog"])
    assert result is not None and result.success
    assert highlight_pixels(viewer_looks(display)) > 3000
    look = evaluate(settings, LOOK_JS)
    assert look["found"] and "hidden" not in look["overflow"], look
    line = look["line"]
    assert line["top"] >= 0 and line["bottom"] <= look["vh"], look
    state = "(() => { const d = document.querySelector('dialog.signup');"
    state += " return [d.open, getComputedStyle(d).visibility]; })()"
    assert evaluate(settings, state) == [True, "hidden"]
