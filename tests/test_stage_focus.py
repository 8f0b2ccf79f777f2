"""The screen follows the answer, checked the way a viewer sees it: a headful Chromium on an Xvfb
display of its own, offline pages, and the state of the screen when the call returns (the
highlighted passage in view, the page's DOM untouched, the player filling the frame, the
optional caption holding our words only), with pixels read from the display itself."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from structlog.testing import capture_logs

from bench._common.display import Display
from browser_core import ChromeProcess, Driver, Settings, SyncDriver, launch_chrome, stop_pid
from browser_core.chrome import free_port
from browser_core.recording import replay_hook
from browser_core.stage import CONTEXT, PASSAGE, RESULT, show_passage, show_player, show_result
from browser_core.stage._caption import TAG, caption_for, clean
from search.providers.read import read_page
from search.providers.youtube import caption_subject, control
from search.recordings import load_case, run_action
from tests._rest import REST_S, at_rest, highlight_pixels
from tests._server import LocalServer, Reply
from tests._web import fixture_text
from tests.conftest import make_settings

# What the screen shows depends on the stage finishing its bounded work in time (a highlight
# drawn or not): `make test` runs it alone, after the rest.
pytestmark = pytest.mark.serial


RECORDINGS = Path(__file__).parent / "recordings"
PARAGRAPHS = [
    f"On day {i} high water in the harbour comes fifty minutes later than on day {i - 1}, "
    f"and the ferry to island {i} waits for it at the old stone pier."
    for i in range(1, 13)
]
# The page watches its own DOM once parsed: anything we add would be recorded.
WATCHER = """<script>
window.__records = [];
window.__observer = new MutationObserver((m) => window.__records.push(...m));
window.__observer.observe(document, {subtree: true, childList: true, attributes: true,
  characterData: true});
document.addEventListener('DOMContentLoaded', () => {  // the parser's own last nodes
  window.__observer.takeRecords(); window.__records.length = 0;
  window.__html = document.documentElement.outerHTML; });
</script>"""
ARTICLE = (
    "<html lang='en'><head><title>Tide tables</title><style>body{font:18px serif}</style>"
    "</head><body><nav><ul>"
    + "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(60))
    + "</ul></nav><article><h1>Tide tables</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    + "</article><footer>Cookie settings</footer>"
    f"{WATCHER}</body></html>"
)
SEEN_JS = """(name) => {
  const h = CSS.highlights.get(name);
  const ranges = h ? [...h] : [];
  const r = ranges.length ? ranges[0].getBoundingClientRect() : null;
  return {ranges: ranges.length, first: ranges.length ? ranges[0].toString() : '',
    rect: r && {top: r.top, bottom: r.bottom, left: r.left, right: r.right},
    vw: innerWidth, vh: innerHeight, scrollY,
    records: (window.__records || []).length
      + (window.__observer ? window.__observer.takeRecords().length : 0),
    sameHtml: window.__html === undefined ? null
      : window.__html === document.documentElement.outerHTML,
    sheets: document.styleSheets.length, adopted: document.adoptedStyleSheets.length};
}"""
PLAYER_JS = """() => { const p = document.querySelector('#movie_player');
  const r = p.getBoundingClientRect();
  return {width: r.width, height: r.height, top: r.top, left: r.left,
    vw: innerWidth, vh: innerHeight, fullscreen: !!document.fullscreenElement,
    theater: !!document.querySelector('ytd-watch-flexy[theater]')}; }"""
# A stand-in of YouTube's theater mode, to the real page's shape: `ytd-watch-flexy[theater]`,
# its size button, and the `t` key (ignored while typing in a field).
THEATER_PAGE = """<!DOCTYPE html><html><head><title>Stand-in - YouTube</title><style>
body { margin: 0 } ytd-watch-flexy { display: block; padding: 56px 24px 0 }
#movie_player { width: 640px; height: 360px; background: #000 }
ytd-watch-flexy[theater] { padding: 56px 0 0 }
ytd-watch-flexy[theater] #movie_player { width: 100vw; height: 56.25vw;
  max-height: calc(100vh - 56px) }
</style></head><body><input id=search placeholder=Search>
<ytd-watch-flexy><div id=movie_player class=html5-video-player>
<video src="/test-video.webm" muted loop></video>
<button class=ytp-size-button>theater</button></div></ytd-watch-flexy><script>
const flexy = document.querySelector('ytd-watch-flexy');
const toggle = () => flexy.toggleAttribute('theater');
document.querySelector('.ytp-size-button').addEventListener('click', toggle);
document.addEventListener('keydown', (e) => {
  if (e.key === 't' && !/INPUT|TEXTAREA/.test(document.activeElement.tagName)) toggle(); });
document.getElementById('search').focus();
</script></body></html>"""


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    screen = Display()
    yield screen
    screen.close()


@pytest.fixture(scope="module")
def headful(
    tmp_path_factory: pytest.TempPathFactory, server: LocalServer, display: Display
) -> Iterator[ChromeProcess]:
    """A headful broadcast Chrome on this module's own display, filling it."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DISPLAY", display.name)
        proc = launch_chrome(
            port=free_port(),
            user_data_dir=str(tmp_path_factory.mktemp("headful-profile")),
            headless=False,
            window=display.size,
            extra_args=("--window-position=0,0",),
            allow_hosts=(f"127.0.0.1:{server.port}",),
        )
    yield proc
    stop_pid(proc.pid)


@pytest.fixture
def stage_settings(headful: ChromeProcess, tmp_path: Path) -> Settings:
    # Consent answering off: these tests count the page-visible footprint of the marks alone,
    # and autoconsent's prehide adds (then removes) a <style> on every page it watches.
    return make_settings(headful, tmp_path, consent="off")


@pytest.fixture
def drv(stage_settings: Settings) -> Iterator[SyncDriver]:
    driver = SyncDriver(stage_settings)
    yield driver
    driver.shutdown()


def on_tab(drv: SyncDriver, fn: Any, timeout: float = 20) -> Any:
    return drv.run("test.look", fn, timeout=timeout)


def seen(drv: SyncDriver, name: str = PASSAGE) -> dict[str, Any]:
    async def look(page: Any) -> dict[str, Any]:
        value: dict[str, Any] = await page.evaluate(SEEN_JS, name)
        return value

    result: dict[str, Any] = on_tab(drv, look)
    return result


def inside(rect: dict[str, float], vw: float, vh: float) -> bool:
    return rect["top"] >= 0 and rect["bottom"] <= vh and rect["left"] >= 0 and rect["right"] <= vw


def dark_share(screen: np.ndarray) -> float:
    """The share of pixels that are not near white (the mouse pointer is a few)."""
    return float((screen < 200).any(axis=2).mean())


def test_a_read_answers_first_then_highlights_the_passage_in_view_with_the_dom_untouched(
    drv: SyncDriver, http: LocalServer, stage_settings: Settings, display: Display
) -> None:
    url = http.route("/tides", Reply(ARTICLE))
    with capture_logs() as logs:
        read = drv.call(read_page(drv.driver, url, stage_settings), 30)
        view = seen(drv)  # the next call takes the tab once the stage is done with it
    events = [e["event"] for e in logs]
    assert "stage.shown" not in events, "the answer waited on the stage"
    shown = [e for e in logs if e["event"] == "stage.after" and e["what"] == "passage"]
    assert shown and shown[0]["ok"], shown
    answered = next(
        i for i, e in enumerate(logs) if e["event"] == "driver.op" and e["op"] == "read"
    )
    assert answered < logs.index(shown[0]), "the passage was marked before the answer returned"
    assert read.outcome == "ok" and read.text.startswith("Tide tables\nOn day 1")
    assert view["ranges"] == 1 and view["first"] == "Tide tables"  # one passage, strongly
    assert seen(drv, CONTEXT)["ranges"] >= len(PARAGRAPHS) - 1  # the rest, lightly

    assert view["scrollY"] > 0, "the article starts below the fold: the tab scrolled to it"
    assert inside(view["rect"], view["vw"], view["vh"]), view
    assert view["records"] == 0 and view["sameHtml"] is True  # the page saw no change of ours
    assert (view["sheets"], view["adopted"]) == (1, 0)  # its own stylesheet, nothing added
    # the last stretch of the smooth scroll, then the screen itself (bounded)
    assert highlight_pixels(at_rest(display.grab, marked=True)) > 1000


def test_a_read_with_a_question_highlights_the_passage_that_answers_it_not_the_opening(
    drv: SyncDriver, http: LocalServer, stage_settings: Settings, display: Display
) -> None:
    answer = "The ferry to the lighthouse island was replaced by a bridge in 1931."
    paragraphs = [*PARAGRAPHS * 6, answer, *PARAGRAPHS[:4]]
    html = ARTICLE.replace(
        "".join(f"<p>{p}</p>" for p in PARAGRAPHS), "".join(f"<p>{p}</p>" for p in paragraphs)
    )
    url = http.route("/tides-long", Reply(html))
    question = "When was the ferry to the lighthouse island replaced by a bridge?"
    read = drv.call(read_page(drv.driver, url, stage_settings, question=question), 30)
    view, light = seen(drv), seen(drv, CONTEXT)
    assert answer in read.text and read.shown[read.shown_best] == answer
    assert view["ranges"] == 1 and view["first"] == answer  # the answer, strongly
    assert inside(view["rect"], view["vw"], view["vh"]), view  # scrolled into view
    assert view["scrollY"] > 3 * view["vh"], "the answer is far below the opening"
    assert light["ranges"] >= 1 and light["first"] != answer  # the rest, lightly
    assert highlight_pixels(at_rest(display.grab, marked=True)) > 1000


def test_a_real_article_is_highlighted_from_its_first_paragraph(
    drv: SyncDriver, http: LocalServer, stage_settings: Settings
) -> None:
    html = fixture_text(
        "articles/scrapinghub-aeb/html/"
        "9da36ae4714bfccc72374c6c146e9d1cd3cca39e2110bd67ccdbcc806f4cf139.html.gz"
    )
    read = drv.call(read_page(drv.driver, http.route("/news", Reply(html)), stage_settings), 30)
    until = time.monotonic() + REST_S  # on a busy machine the mark may land after the answer
    while (view := seen(drv))["ranges"] == 0 and time.monotonic() < until:
        time.sleep(0.1)
    first = next(line for line in read.text.splitlines() if line.strip())
    assert view["ranges"] == 1 and seen(drv, CONTEXT)["ranges"] >= 2
    assert " ".join(view["first"].split())[:40] == " ".join(first.split())[:40]
    assert inside(view["rect"], view["vw"], view["vh"]), view


def test_a_busy_page_never_holds_the_answer_past_the_stage_budget(
    drv: SyncDriver, http: LocalServer
) -> None:
    stall_s = 2.5
    busy = ARTICLE.replace(
        "</body>",
        "<script>setTimeout(() => { const t = Date.now();"
        f" while (Date.now() - t < {stall_s * 1000:.0f}) {{}} }}, 0);</script></body>",
    )
    calm, url = http.route("/calm", Reply(ARTICLE)), http.route("/busy", Reply(busy))

    def shown_on(address: str) -> tuple[float, Any]:
        async def op(page: Any) -> tuple[float, Any]:
            await page.goto(address, wait_until="commit")
            started = time.perf_counter()
            shown = await show_passage(page, PARAGRAPHS)
            return time.perf_counter() - started, shown

        waited, shown = on_tab(drv, op)
        return waited, shown

    usual, _ = shown_on(calm)  # the same step on a page that lets it run
    waited, shown = shown_on(url)
    assert shown is None  # too late for this answer (it may still appear afterwards)
    # far from the page's stall: the stage's budget, not the page, decides
    assert waited < usual + stall_s / 2, f"waited {waited:.2f} s (usual {usual:.2f} s)"


def test_the_result_a_search_opens_is_marked_on_the_results_page(
    drv: SyncDriver, http: LocalServer
) -> None:
    html = fixture_text("serp/zlurad-serp-parser/desktop/google.html.gz")
    url = http.route("/serp", Reply(html))
    from search.parsers.google import parse_serp

    target = parse_serp(html, "https://www.google.com/search?q=x").results[1]

    async def op(page: Any) -> Any:
        await page.goto(url)
        return await show_result(page, target.url, budget_s=2.0)

    shown = on_tab(drv, op)
    view = seen(drv, RESULT)
    assert shown and shown["found"] == 1
    assert view["first"].strip() == target.title.strip()
    assert inside(view["rect"], view["vw"], view["vh"]), view


def test_a_recorded_search_returns_with_its_top_result_marked(
    stage_settings: Settings,
) -> None:
    case = load_case(RECORDINGS / "google-crow-names-en")
    settings = case.settings_for(stage_settings)
    driver = SyncDriver(settings)
    driver.driver = Driver(settings, page_hooks=(replay_hook(str(case.har)),))
    try:
        outcome = driver.call(run_action(driver.driver, "search", case.arg, settings), 40)
        # The answer does not wait for the results page to render (about a second on a real
        # one); the mark follows once its DOM is there.
        until = time.monotonic() + REST_S
        while (view := seen(driver, RESULT))["ranges"] == 0 and time.monotonic() < until:
            time.sleep(0.1)
    finally:
        driver.shutdown()
    top = outcome.payload["result"]["sources"][0]["title"]
    assert outcome.ok and view["ranges"] == 1
    assert view["first"].strip()[:30] == top.strip()[:30]


@pytest.mark.parametrize("fullscreen", [False, True])
def test_the_player_fills_the_frame_once_playing(
    drv: SyncDriver, http: LocalServer, fullscreen: bool
) -> None:
    url = http.route("/watch", Reply(THEATER_PAGE))

    async def op(page: Any) -> tuple[Any, dict[str, Any]]:
        await page.goto(url)
        shown = await show_player(page, fullscreen=fullscreen, budget_s=2.0)
        return shown, await page.evaluate(PLAYER_JS)

    shown, player = on_tab(drv, op)
    assert player["width"] >= 0.99 * player["vw"], player
    if fullscreen:
        assert shown["mode"] == "fullscreen" and player["fullscreen"]
        assert player["height"] >= 0.99 * player["vh"]
    else:  # YouTube's own theater mode, by its `t` key (after leaving the search field)
        assert shown["mode"] == "theater" and player["theater"] and not player["fullscreen"]


def test_a_player_without_a_theater_control_is_framed_by_our_stylesheet_alone(
    drv: SyncDriver, http: LocalServer
) -> None:
    page_html = (Path(__file__).parent / "pages" / "yt-watch.html").read_text()
    page_html = page_html.replace("AD_CLASS", "").replace("</body>", WATCHER + "</body>", 1)
    url = http.route("/plain-watch", Reply(page_html))

    async def op(page: Any) -> tuple[Any, dict[str, Any], int]:
        await page.goto(url)
        shown = await show_player(page, budget_s=2.0)
        records = await page.evaluate(
            "() => window.__observer.takeRecords().length + window.__records.length"
        )
        return shown, await page.evaluate(PLAYER_JS), records

    shown, player, records = on_tab(drv, op)
    assert shown["mode"] == "fill"
    assert player["width"] == player["vw"] and player["height"] == player["vh"]
    assert records == 0


def test_a_recorded_play_fills_the_frame_and_stop_leaves_a_neutral_page(
    stage_settings: Settings, display: Display
) -> None:
    case = load_case(RECORDINGS / "youtube-play-first-result-ru")
    settings = case.settings_for(stage_settings)
    driver = SyncDriver(settings)
    driver.driver = Driver(settings, page_hooks=(replay_hook(str(case.har)),))
    try:
        outcome = driver.call(run_action(driver.driver, "play", case.arg, settings), 40)

        async def look(page: Any) -> dict[str, Any]:
            value: dict[str, Any] = await page.evaluate(PLAYER_JS)
            return value

        player = on_tab(driver, look)
        playing_screen = display.grab()[120:, :, :]
        stopped = driver.call(control(driver.driver, "stop", settings), 20)
        driver.call(driver.driver.stage_done(), 5)  # the stage's step after the answer
        stopped_screen = display.grab()[120:, :, :]  # below Chrome's tab strip and toolbar

        async def where(page: Any) -> dict[str, Any]:
            shown: dict[str, Any] = await page.evaluate(
                "() => ({url: location.href, media: document.querySelectorAll('video').length,"
                " fullscreen: !!document.fullscreenElement})"
            )
            return shown

        after = on_tab(driver, where)
        assert outcome.ok, outcome.text
        assert player["width"] >= 0.99 * player["vw"] and player["height"] >= 0.99 * player["vh"]
        assert stopped.video_id is None
        assert after == {"url": "about:blank", "media": 0, "fullscreen": False}
        # What the viewer sees once stop has returned and the stage is done: a blank page, not
        # the video's last frame (which Chromium keeps on screen until the next page paints).
        assert dark_share(playing_screen) > 0.3
        assert dark_share(stopped_screen) < 0.01, "the video's last frame is still on screen"
    finally:
        driver.shutdown()


def caption_state(drv: SyncDriver) -> dict[str, Any]:
    async def look(page: Any) -> dict[str, Any]:
        host = await page.evaluate(
            "(tag) => { const h = document.querySelector(tag);"
            " return h ? {open: h.shadowRoot !== null, text: h.textContent} : null; }",
            TAG,
        )
        session = await page.context.new_cdp_session(page)
        try:  # DevTools sees into closed shadow roots; the page does not
            tree = await session.send("DOM.getDocument", {"depth": -1, "pierce": True})
        finally:
            await session.detach()
        return {"host": host, "shadow_text": _shadow_text(tree["root"])}

    result: dict[str, Any] = on_tab(drv, look)
    return result


def _shadow_text(node: dict[str, Any], under: bool = False) -> str:
    here = under or node.get("localName") == TAG
    texts = [node.get("nodeValue", "")] if here and node.get("nodeType") == 3 else []
    for child in node.get("children", []) + node.get("shadowRoots", []):
        texts.append(_shadow_text(child, here))
    return "".join(texts)


@pytest.mark.parametrize("enabled", [False, True])
def test_the_caption_shows_only_when_asked_and_holds_our_words_only(
    drv: SyncDriver, http: LocalServer, stage_settings: Settings, enabled: bool
) -> None:
    hostile = ARTICLE.replace("<title>Tide tables</title>", "<title>IGNORE ME</title>")
    url = http.route("/caption", Reply(hostile))
    settings = stage_settings.model_copy(update={"caption": enabled})
    drv.call(read_page(drv.driver, url, settings), 30)
    state = caption_state(drv)
    if not enabled:
        assert state["host"] is None and state["shadow_text"] == ""
        return
    assert state["host"] == {"open": False, "text": ""}  # closed: the page reads nothing
    assert state["shadow_text"] == "Reading: 127.0.0.1"


def test_caption_text_is_one_clean_short_line() -> None:
    assert caption_for("search", "why is\nthe sky blue") == "Searching: why is the sky blue"
    assert caption_for("read", "https://www.example.org/a?b") == "Reading: example.org"
    # Our words, not the video's title (its uploader chose it): the query, or for a URL none.
    assert caption_for("play", caption_subject("lofi beats")) == "Playing: lofi beats"
    url = "https://www.youtube.com/watch?v=OdpZycY8jbM"
    assert caption_for("play", caption_subject(url)) == "Playing: the requested video"
    assert clean("a\u202ebc\x00d" + "x" * 200).startswith("abc d")
    assert len(clean("x" * 200)) == 80


OVERVIEW_STATE_JS = """() => {
  const control = document.querySelector('[aria-controls="m-x-content"]');
  const box = document.getElementById('m-x-content').closest('[data-fh]');
  return {expanded: control.getAttribute('aria-expanded'),
          clipped: box.scrollHeight > box.clientHeight + 1};
}"""


def test_a_search_the_overview_answers_opens_it_and_highlights_what_the_brain_heard(
    stage_settings: Settings, display: Display, tmp_path: Path
) -> None:
    from browser_core import Deadline
    from search._types import Request
    from search.providers.google import GoogleProvider
    from tests import _serp_pages as pages
    from tests._web import FakeWeb, Page

    fake = FakeWeb()
    fake.add("https://www.google.com/search", Page(pages.page_2026("why is the sky blue")))
    settings = stage_settings.model_copy(update={"search_read": "auto"})
    driver = SyncDriver(settings)
    driver.driver.page_hooks.append(fake.hook)
    try:
        found = driver.call(
            GoogleProvider(driver.driver).run(
                Request(action="search", query="why is the sky blue"),
                settings,
                Deadline(20),
            ),
            25,
        )
        view = seen(driver)  # the next use of the tab waits for the stage to finish
        state = on_tab(driver, lambda page: page.evaluate(OVERVIEW_STATE_JS))
        lightly = seen(driver, CONTEXT)
        until = time.monotonic() + REST_S  # the screen shows what the tab holds: a frame or two
        while (pixels := highlight_pixels(screen := display.grab())) < 500:
            assert time.monotonic() < until, f"no highlight on screen ({pixels} pixels)"
            time.sleep(0.05)
        display.save_png(tmp_path / "stage-overview.png")
    finally:
        driver.shutdown()
    spoken = found.data["ai_overview"]["text"]
    assert state == {"expanded": "true", "clipped": False}, "opened by its own Show more"
    assert view["ranges"] == 1 and view["first"].strip() in spoken
    assert lightly["ranges"] >= 3  # the rest of what the brain heard, lightly
    assert inside(view["rect"], view["vw"], view["vh"]), view
    assert dark_share(screen) > 0.01
