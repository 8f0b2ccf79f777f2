"""When Google refuses, the search goes on on screen: Bing, on the same tab, before Gemini
(issue 56). A real Chromium with google.com and bing.com routed to saved and built pages;
Gemini is a stand-in that records whether it was asked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser_core import Driver, Settings
from browser_core.stage import PASSAGE, RESULT
from search import BrowseTool, ToolContext
from search._tool import default_registry
from search.testing import FakeProvider
from tests._web import FakeWeb, Page, fixture_text

LIVE = ToolContext(broadcasting=True)
CAPTCHA = "serp/zlurad-serp-parser/desktop/recaptcha.html"
BING = "serp-engines/bing/2021-04-16_bing-sweden-riots-1618569435.html.gz"
BING_CHALLENGE = "serp-engines/bing/built/challenge.html"
BING_CONSENT = "serp-engines/bing/built/consent.html"
GOOGLE = "serp/aql-wayback/2020-12-20_google-crow-names-1608438374.html.gz"
QUERY = "sweden riots"


def bing_results() -> str:
    return fixture_text(BING)


class Stage:
    """The tool on a real Chromium, its web routed, its Gemini a stand-in."""

    def __init__(self, settings: Settings) -> None:
        self.web = FakeWeb()
        self.gemini = FakeProvider("gemini")
        driver = Driver(settings)
        driver.page_hooks.append(self.web.hook)
        self.tool = BrowseTool(
            settings, driver=driver, registry=default_registry(driver, self.gemini)
        )

    def search(self, query: str = QUERY, **kw: Any) -> Any:
        return self.tool.run_sync(query, action="search", ctx=LIVE, **kw)

    def where(self) -> str:
        async def url(page: Any) -> str:
            return str(page.url)

        return str(self.tool.loop.run(self.tool.driver.run("where", url), 10))

    def asked(self, host: str) -> list[str]:
        return [u for u in self.web.seen if u.startswith(f"https://{host}/")]


@pytest.fixture
def stage(settings: Settings) -> Iterator[Stage]:
    reading = settings.model_copy(update={"search_read": "never"})
    made = Stage(reading)
    yield made
    made.tool.close()


def chain(walk: Any) -> list[tuple[str, bool, str | None]]:
    return [(h.provider, h.ok, h.failure_kind) for h in walk.chain]


def test_a_search_google_refuses_is_answered_by_bing_on_screen_then_google_rests(
    stage: Stage,
) -> None:
    stage.web.add("https://www.google.com/search", Page(fixture_text(CAPTCHA)))
    stage.web.add("https://www.bing.com/search", Page(bing_results()))
    walk = stage.search()
    assert chain(walk) == [("google", False, "captcha"), ("bing", True, None)]
    result = walk.result
    assert result is not None and result.provider == "bing" and result.success
    assert "(Searched on Bing.)" in result.reply_text and result.data["engine"] == "bing"
    assert len(result.data["results"]) >= 5 and not stage.gemini.calls
    assert stage.where().startswith("https://www.bing.com/search?q=sweden+riots")
    # The next search goes straight to Bing: Google's challenge is not shown again.
    stage.web.seen.clear()
    again = stage.search("sweden riots 2021")
    assert chain(again)[0] == ("google", False, "engine-resting")
    assert chain(again)[1] == ("bing", True, None)
    assert not stage.asked("www.google.com") and stage.asked("www.bing.com")
    state = stage.tool.registry.providers["google"].rest.state()  # type: ignore[attr-defined]
    assert state["resting"] and state["why"] == "captcha" and state["until"]


def test_when_bing_refuses_too_gemini_answers(stage: Stage) -> None:
    stage.web.add("https://www.google.com/search", Page(fixture_text(CAPTCHA)))
    stage.web.add("https://www.bing.com/search", Page(fixture_text(BING_CHALLENGE)))
    walk = stage.search()
    assert chain(walk) == [
        ("google", False, "captcha"),
        ("bing", False, "captcha"),
        ("gemini", True, None),
    ]
    assert walk.result is not None and walk.result.provider == "gemini"


def test_bings_consent_wall_is_answered_and_the_search_goes_on(stage: Stage) -> None:
    wall = fixture_text(BING_CONSENT)
    answered: list[str] = []

    def bing(request: Any) -> Page:
        if answered:
            return Page(bing_results())
        return Page(wall + CONSENT_SCRIPT)

    def record(request: Any) -> Page:
        answered.append(request.url)
        return Page("", 204)

    stage.web.add("https://www.google.com/search", Page(fixture_text(CAPTCHA)))
    stage.web.add("https://www.bing.com/search", bing)
    stage.web.add("https://www.bing.com/consent-answer", record)
    walk = stage.search()
    assert chain(walk)[-1] == ("bing", True, None), chain(walk)
    assert answered and "reject" in answered[0]  # SB_GOOGLE_CONSENT's choice: reject


# The wall's buttons, as the real dialog's script does: the choice is sent, the page reloads.
CONSENT_SCRIPT = """<script>
for (const choice of ['accept', 'reject']) {
  document.getElementById('bnp_btn_' + choice).addEventListener('click', async () => {
    await fetch('/consent-answer?choice=' + choice);
    location.reload();
  });
}
</script>"""


def test_the_engine_setting_in_order_and_google_alone_keeps_todays_route(
    settings: Settings,
) -> None:
    alone = Stage(settings.model_copy(update={"search_engines": ("google",)}))
    try:
        alone.web.add("https://www.google.com/search", Page(fixture_text(CAPTCHA)))
        alone.web.add("https://www.bing.com/search", Page(bing_results()))
        walk = alone.search()
        assert chain(walk) == [("google", False, "captcha"), ("gemini", True, None)]
        assert not alone.asked("www.bing.com")
    finally:
        alone.tool.close()


def test_the_brain_can_ask_for_an_engine_by_name_and_an_unknown_one_is_refused(
    stage: Stage,
) -> None:
    stage.web.add("https://www.bing.com/search", Page(bing_results()))
    walk = stage.search(engine="bing")
    assert chain(walk) == [("bing", True, None)] and not stage.asked("www.google.com")
    with pytest.raises(ValueError, match="engine must be one of google, bing, not 'yahoo'"):
        stage.search(engine="yahoo")


MARKED_JS = """(name) => { const h = CSS.highlights.get(name);
  return h ? [...h].map((r) => r.toString().trim()) : []; }"""
ARTICLE = (
    "<html><head><title>Riots</title></head><body><article><h1>The riots of 2021</h1>"
    + "".join(
        f"<p>Paragraph {i}: the unrest in Sweden in April 2021 began after a rally, and the "
        "police reported damage in several districts of the city.</p>"
        for i in range(10)
    )
    + "</article></body></html>"
)


def test_on_bing_the_result_is_marked_then_opened_and_read_as_on_google(
    settings: Settings,
) -> None:
    import time

    from search.parsers import parse_results

    reading = Stage(settings.model_copy(update={"search_read": "auto"}))
    try:
        page = bing_results()
        top = parse_results(page, "https://www.bing.com/search?q=x").results[0]
        reading.web.add("https://www.google.com/search", Page(fixture_text(CAPTCHA)))
        reading.web.add("https://www.bing.com/search", Page(page))
        reading.web.add(top.url.split("#")[0], Page(ARTICLE))
        walk = reading.search()
        result = walk.result
        assert result is not None and result.provider == "bing"
        assert [r["final_url"] for r in result.data["reads"]] == [top.url.split("#")[0]]
        assert "the unrest in Sweden in April 2021" in result.reply_text
        assert reading.where() == top.url.split("#")[0]  # the tab shows the page read

        async def passage(page: Any) -> list[str]:
            found: list[str] = await page.evaluate(MARKED_JS, PASSAGE)
            return found

        until = time.monotonic() + 5
        while not reading.tool.loop.run(reading.tool.driver.run("look", passage), 10):
            assert time.monotonic() < until, "no passage highlighted"
            time.sleep(0.05)
    finally:
        reading.tool.close()


def test_on_bing_the_result_the_answer_leads_with_is_marked(stage: Stage) -> None:
    import time

    from search.parsers import parse_results

    page = bing_results()
    top = parse_results(page, "https://www.bing.com/search?q=x").results[0]
    stage.web.add("https://www.google.com/search", Page(fixture_text(CAPTCHA)))
    stage.web.add("https://www.bing.com/search", Page(page))
    assert stage.search().result is not None

    async def marked(page: Any) -> list[str]:
        found: list[str] = await page.evaluate(MARKED_JS, RESULT)
        return found

    until = time.monotonic() + 5
    while (mark := stage.tool.loop.run(stage.tool.driver.run("look", marked), 10)) != [top.title]:
        assert time.monotonic() < until, mark
        time.sleep(0.05)


def test_once_the_rest_ends_the_next_search_asks_google_first_again(stage: Stage) -> None:
    stage.web.add("https://www.google.com/search", Page(fixture_text(CAPTCHA)))
    stage.web.add("https://www.bing.com/search", Page(bing_results()))
    stage.search()  # Google refuses: it rests
    assert stage.tool.end_rests() == ["google"]  # a person solved it (the console's give back)
    stage.web.add("https://www.google.com/search", Page(fixture_text(GOOGLE)))
    walk = stage.search("crow names")
    assert chain(walk) == [("google", True, None)]


def _screen(stage: Stage, settings: Settings, tmp: Any) -> tuple[str, str, list[str]]:
    """After the stage is done: the owned tab's address, its text, and every tab's address
    as Chrome itself lists them (CDP), with a screenshot kept in `tmp` to look at."""
    import json
    import urllib.request

    stage.tool.loop.run(stage.tool.driver.stage_done(), 10)

    async def look(page: Any) -> tuple[str, str]:
        await page.screenshot(path=str(tmp / "screen.png"))
        return str(page.url), str(await page.inner_text("body"))

    url, text = stage.tool.loop.run(stage.tool.driver.run("look", look), 10)
    with urllib.request.urlopen(settings.cdp_endpoint + "/json/list", timeout=5) as answer:
        tabs = [t["url"] for t in json.load(answer) if t["type"] == "page"]
    return url, text, tabs


def test_when_every_engine_fails_the_stream_shows_a_calm_page_never_chromes_error_page(
    stage: Stage, settings: Settings, tmp_path: Any
) -> None:
    """Google's page holds nothing readable and Bing cannot be reached: Chrome would show
    "This site can't be reached" for Bing's address; the audience sees a page of ours."""
    empty = "<html><body><p>nothing here</p></body></html>"
    stage.web.add("https://www.google.com/search", Page(empty))  # bing.com: aborted
    walk = stage.search()
    assert chain(walk)[:2] == [
        ("google", False, "no-results"),
        ("bing", False, "navigation-failed"),
    ]
    url, text, tabs = _screen(stage, settings, tmp_path)
    assert not any(t.startswith("chrome-error://") for t in tabs), tabs
    assert not url.startswith("chrome-error://")
    assert "Searching elsewhere" in text and "can’t be reached" not in text


def test_an_engine_that_cannot_be_reached_gives_the_screen_back_to_the_last_results_page(
    stage: Stage, settings: Settings, tmp_path: Any
) -> None:
    stage.web.add("https://www.google.com/search", Page(fixture_text(GOOGLE)))
    first = stage.search("crow names", engine="google")
    assert chain(first) == [("google", True, None)]
    shown = stage.where()
    walk = stage.search("crow names", engine="bing")  # bing.com: aborted
    assert chain(walk)[0] == ("bing", False, "navigation-failed")
    url, text, tabs = _screen(stage, settings, tmp_path)
    assert url == shown and "Crow - Wikipedia" in text
    assert not any(t.startswith("chrome-error://") for t in tabs), tabs
