"""A changed results page, end to end (search/_health.py): a search of a Google page the
parser no longer reads whole, on a real Chromium, through the real service on an ephemeral
port and the stdlib client. The brain still hears what the page says (the generic reading,
labelled, inside the envelope's fence); the data says the health; the alert is in
`/v1/status` and the console; the metric counts it; the audience keeps the results page; the
page is kept as a case with no key in it, and the case exported replays as a recording."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from structlog.testing import capture_logs

from browser_core import Driver, Settings, parse_envelope
from search import BrowseTool, ToolContext, client
from search._cases import CaseStore
from search._tool import default_registry
from search.providers.google import GENERIC_LABEL, search_url
from search.recordings import load_case, run_case
from search.service import prepare
from search.testing import FakeProvider
from tests import _serp_pages as pages
from tests._web import FakeWeb, Page

QUERY = "why is the sky blue"
TOKEN = "test-token-" + "9" * 24
COOKIE = "g.a000cookie-secret-4242"
API_KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"  # seeded in the page: never kept


def changed(page: str) -> str:
    """Google's page with each organic result rewritten to a shape no parser of today reads
    (a link whose title is a plain `<span>`, the text beside it in a `<div>`: no heading, no
    result markup), and a key in a script."""
    result = re.compile(
        r'<div class="MjjYud">.*?<a href="([^"]+)"[^>]*><h3[^>]*>(.*?)</h3>.*?'
        r"<span>([^<]*)</span><a .*?</div></div></div></div></div></div>",
        re.S,
    )
    page = result.sub(
        r'<div><div><a href="\1"><span class="t">\2</span></a><div>\3</div></div></div>', page
    )
    return page.replace("</body>", f"<script>var k='{API_KEY}';</script></body>")


def changed_page() -> str:
    return changed(pages.page_2026(QUERY, ov=None, extras=False))


class Served:
    """The tool on the session's Chromium (its web routed), served on 127.0.0.1:0."""

    def __init__(self, settings: Settings) -> None:
        self.web = FakeWeb()
        driver = Driver(settings)
        driver.page_hooks.append(self.web.hook)
        gemini = FakeProvider("gemini")
        self.tool = BrowseTool(settings, driver=driver, registry=default_registry(driver, gemini))
        self.prepared = prepare(settings, self.tool)
        self.thread = threading.Thread(target=self.prepared.run, daemon=True)
        self.thread.start()
        self.service = client.Service(self.prepared.url, TOKEN)

    def search(self, query: str = QUERY, **kw: Any) -> dict[str, Any]:
        answer = client.browse(
            query,
            action="search",
            broadcasting=True,
            service_url=self.prepared.url,
            token=TOKEN,
            timeout=60,
            **kw,
        )
        assert answer is not None
        return answer

    def get(self, path: str) -> Any:
        answer = client.request("GET", path, service=self.service, timeout=10)
        assert answer is not None and answer[0] == 200, answer
        return answer[1]

    def where(self) -> str:
        async def url(page: Any) -> str:
            return str(page.url)

        return str(self.tool.loop.run(self.tool.driver.run("where", url), 10))

    def stop(self) -> None:
        self.prepared.stop()
        self.thread.join(15)


@pytest.fixture
def served(settings: Settings, tmp_path: Path) -> Iterator[Served]:
    values = settings.model_copy(
        update={
            "service_port": 0,
            "service_token": SecretStr(TOKEN),
            "cases_max": 3,
            "search_read": "never",
        }
    )
    made = Served(values)
    yield made
    made.stop()


def _metric(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                labels = tuple(
                    sorted((k, v) for k, v in sample.labels.items() if k != "sb_instance")
                )
                found[labels] = sample.value
    return found


def test_a_changed_results_page_is_never_silent_nor_empty_handed(served: Served) -> None:
    cookie = {"set-cookie": f"SID={COOKIE}; Path=/; Secure"}  # Google's session: never kept
    served.web.add("https://www.google.com/search", Page(changed_page(), headers=cookie))
    answer = served.search()
    result = answer["result"]
    assert result is not None and result["provider"] == "google", answer["chain"]
    data = result["data"]
    assert data["health"]["state"] == "suspect" and data["health"]["reasons"]
    # The brain hears what the page says: the generic reading, labelled, inside the fence.
    body = parse_envelope(result["reply_text"]).body
    wanted = [r.url for r in pages.SKY_RESULTS]
    heard = [s["url"].split("#")[0] for s in result["sources"]]
    assert len(set(heard) & set(wanted)) >= 3, heard
    if not data["results"]:
        assert GENERIC_LABEL in body
    assert pages.SKY_RESULTS[0].title in body
    # The walk says why it is ok.
    (hop,) = [h for h in answer["chain"] if h["provider"] == "google"]
    assert hop["ok"] and "suspect" in (hop["detail"] or "")
    # The audience keeps the same results page.
    assert served.where() == search_url(QUERY, served.tool.settings)
    # Said everywhere a person looks: /v1/status, the console, the metrics.
    status = served.get("/v1/status")
    (alert,) = [a for a in status["alerts"] if a["kind"] == "parse_suspect"]
    assert (
        alert["provider"] == "google"
        and alert["message"] == "Google's results page may have changed"
    )
    assert status["parses"]["google"]["suspect"] == 1
    console = served.get("/console/api/state")
    assert [a["message"] for a in console["alerts"]] == ["Google's results page may have changed"]
    metrics = served.get("/metrics")
    assert _metric(metrics, "stream_browser_parse_suspect_total") == {(("engine", "google"),): 1.0}
    # The page is kept, whole, with no key in it, and listed in the console.
    watch = served.tool.parses
    assert watch.keeper.flush(20)
    (case,) = served.get("/console/api/state")["cases"]
    assert case["engine"] == "google" and case["query"] == QUERY and case["reasons"]
    kept = CaseStore.for_settings(served.tool.settings).page(case["name"])
    assert pages.SKY_RESULTS[1].url in kept and API_KEY not in kept
    folder = Path(served.tool.settings.state_dir) / "cases" / case["name"]
    raw = b"".join(f.read_bytes() for f in folder.iterdir()) + kept.encode()
    assert COOKIE.encode() not in raw and API_KEY.encode() not in raw
    assert served.get("/v1/status")["alerts"][0]["case"] == case["name"]


def test_the_alert_clears_when_a_later_parse_is_ok(served: Served) -> None:
    served.web.add("https://www.google.com/search", Page(changed_page()))
    served.search()
    assert [a["kind"] for a in served.get("/v1/status")["alerts"]] == ["parse_suspect"]
    served.web.add("https://www.google.com/search", Page(pages.page_2026(QUERY, ov=None)))
    answer = served.search()
    assert answer["result"]["data"]["health"]["state"] == "ok"
    assert served.get("/v1/status")["alerts"] == []
    assert served.get("/v1/status")["parses"]["google"] == {
        "last": "ok",
        "ok": 1,
        "recovered": 0,
        "suspect": 1,
    }


def test_cases_stay_bounded_over_many_changed_pages(served: Served) -> None:
    served.web.add("https://www.google.com/search", Page(changed_page()))
    for n in range(5):
        served.search(f"{QUERY} {n}")
        assert served.tool.parses.keeper.flush(20)
    kept = served.tool.parses.cases.list()
    assert len(kept) == 3 and [c["query"] for c in kept] == [f"{QUERY} {n}" for n in (4, 3, 2)]


def test_a_kept_case_exported_replays_as_a_recording(
    settings: Settings, served: Served, tmp_path: Path
) -> None:
    from search.cli import main

    served.web.add("https://www.google.com/search", Page(changed_page()))
    live = served.search()
    assert served.tool.parses.keeper.flush(20)
    (case,) = served.tool.parses.cases.list()
    state = served.tool.settings.state_dir
    env = tmp_path / "env"
    env.write_text(f"SB_STATE_DIR={state}\n")
    code = main(
        [
            "--env-file",
            str(env),
            "cases",
            "export",
            case["name"],
            "--name",
            "google-changed",
            "--to",
            str(tmp_path / "rec"),
        ]
    )
    assert code == 0
    recording = load_case(tmp_path / "rec" / "google-changed")
    elsewhere = settings.model_copy(update={"state_dir": str(tmp_path / "replay")})
    replayed = asyncio.run(run_case(recording, elsewhere, close_tab=True))
    result = replayed["result"]
    assert result is not None and result["provider"] == "google"
    assert result["data"]["health"]["state"] == "suspect"
    assert [s["url"] for s in result["sources"]] == [s["url"] for s in live["result"]["sources"]]
    assert API_KEY not in (tmp_path / "rec" / "google-changed" / "session.har").read_text()


ARTICLE = (
    "<html><head><title>Sky</title></head><body><article><h1>Why the sky is blue</h1>"
    + "".join(
        f"<p>Paragraph {i}: sunlight is scattered by the molecules of the air, and blue light "
        "is scattered more than red light, which is why the sky looks blue.</p>"
        for i in range(12)
    )
    + "</article></body></html>"
)


def test_with_no_organic_result_parsed_the_generic_reading_s_top_link_is_read(
    settings: Settings, tmp_path: Path
) -> None:
    """SB_SEARCH_READ=auto reads the top result when the page holds no direct answer: the
    same rule, with the generic reading's first link when the parse found none."""
    web = FakeWeb()
    driver = Driver(settings.model_copy(update={"search_read": "auto"}))
    driver.page_hooks.append(web.hook)
    tool = BrowseTool(
        driver.settings, driver=driver, registry=default_registry(driver, FakeProvider("gemini"))
    )
    web.add("https://www.google.com/search", Page(changed_page()))
    for result in pages.SKY_RESULTS:
        web.add(result.url, Page(ARTICLE))
    try:
        walk = tool.run_sync(QUERY, action="search", ctx=ToolContext(broadcasting=True))
    finally:
        tool.close()
    found = walk.result
    assert found is not None and found.provider == "google"
    data = found.data
    assert data["health"]["state"] == "suspect"
    if not data["results"]:
        top = data["generic"][0]["url"]
        assert [r["final_url"] for r in data["reads"]] == [top]
        assert (
            "blue light is scattered more than red light" in parse_envelope(found.reply_text).body
        )


def test_the_console_shows_the_alert_and_the_case_kept(
    page: Any, served: Served, tmp_path: Path
) -> None:
    """The console's page (a real Chromium of pytest-playwright's): the red band says
    "Google's results page may have changed" with the reasons and the case's name, and the
    case is listed; Dismiss closes the alert (and ends no engine's rest)."""
    from playwright.sync_api import expect

    served.web.add("https://www.google.com/search", Page(changed_page()))
    served.search()
    assert served.tool.parses.keeper.flush(20)
    (case,) = served.tool.parses.cases.list()
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(served.prepared.url + "/console")
    page.fill("#token", TOKEN)
    page.click("#sign-in")
    band = page.locator("#alerts")
    expect(band).to_contain_text("Google's results page may have changed", timeout=10_000)
    expect(band).to_contain_text(case["name"])
    expect(page.locator("#cases")).to_contain_text(f"google \u201c{QUERY}\u201d", timeout=10_000)
    page.screenshot(path=str(tmp_path / "console.png"), full_page=True)
    band.get_by_role("button", name="Dismiss").click()
    expect(band).to_be_hidden(timeout=10_000)
    assert served.get("/v1/status")["alerts"] == []


BING_CHANGED = """<html><head><title>sky - Search</title></head><body><ol id="b_results">
<li><div><a href="https://example.org/a"><span>First page about the sky</span></a>
<div>Sunlight is scattered by the air, blue light more than red light.</div></div></li>
<li><div><a href="https://example.net/b"><span>Second page about the sky</span></a>
<div>The sky looks blue because of Rayleigh scattering in the atmosphere.</div></div></li>
<li><div><a href="https://example.com/c"><span>Third page about the sky</span></a>
<div>Blue light has a shorter wavelength and scatters the most, people say.</div></div></li>
</ol></body></html>"""


def test_bing_s_changed_page_raises_bing_s_own_alert(settings: Settings, tmp_path: Path) -> None:
    """Google refuses (its challenge), Bing answers from a page its parser no longer reads:
    the brain hears Bing's page, and Bing's alert stands beside Google's refusal."""
    from tests._web import fixture_text

    web = FakeWeb()
    driver = Driver(settings)
    driver.page_hooks.append(web.hook)
    registry = default_registry(driver, FakeProvider("gemini"))
    tool = BrowseTool(settings, driver=driver, registry=registry)
    web.add(
        "https://www.google.com/search",
        Page(fixture_text("serp/zlurad-serp-parser/desktop/recaptcha.html")),
    )
    web.add("https://www.bing.com/search", Page(BING_CHANGED))
    try:
        with capture_logs() as logs:
            walk = tool.run_sync(
                "why is the sky blue", action="search", ctx=ToolContext(broadcasting=True)
            )
    finally:
        tool.close()
    (said,) = [e for e in logs if e["event"] == "serp.suspect"]
    assert said["engine"] == "bing" and said["log_level"] == "warning" and said["reasons"]
    assert said["url"] == "https://www.bing.com/search?q=why+is+the+sky+blue&setlang=en&cc=us"
    found = walk.result
    assert found is not None and found.provider == "bing"
    assert found.data["health"]["state"] == "suspect"
    assert [s.url for s in found.sources] == [
        "https://example.org/a",
        "https://example.net/b",
        "https://example.com/c",
    ]
    alerts = {(a["provider"], a["kind"]): a for a in tool.alerts.active()}
    assert set(alerts) == {("google", "captcha"), ("bing", "parse_suspect")}
    assert alerts[("bing", "parse_suspect")]["message"] == "Bing's results page may have changed"


def test_a_page_read_whole_only_by_its_structure_is_kept_without_an_alert(
    served: Served,
) -> None:
    """Titles that are no longer headings, read whole from the page's structure: the brain
    hears every result, nobody is alarmed, but the page is kept (the markup has moved on, and
    the next change may leave the structure short too)."""
    from tests._rewrites import h3_to_span
    from tests._web import fixture_text

    name = "serp/aql-wayback/2021-11-16_google-lige-gardner-1637042221.html.gz"
    served.web.add("https://www.google.com/search", Page(h3_to_span(fixture_text(name))))
    with capture_logs() as logs:
        answer = served.search("lige gardner")
        assert served.tool.parses.keeper.flush(20)
    health = answer["result"]["data"]["health"]
    assert health["state"] == "ok" and health["reasons"][0].startswith("structural:")
    assert len(answer["result"]["sources"]) >= 5
    status = served.get("/v1/status")
    assert status["alerts"] == []
    assert status["parses"]["google"] == {
        "last": "recovered",
        "ok": 0,
        "recovered": 1,
        "suspect": 0,
    }
    assert [e["event"] for e in logs if e["event"] in ("serp.recovered", "serp.suspect")] == [
        "serp.recovered"
    ]
    (case,) = served.tool.parses.cases.list()
    assert case["query"] == "lige gardner"
