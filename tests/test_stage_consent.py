"""Consent banners on the broadcast screen: answered by autoconsent in a real Chromium.

Stand-ins (tests/pages/consent/) are written to the DOM shape autoconsent's rules look for
(OneTrust, Cookiebot, Didomi, Quantcast Choice/TCF, Usercentrics, Sourcepoint in a cross-site
frame); each records which of its buttons was clicked. A read goes through the real driver
and read provider; the banner must then leave the visible page, by its own reject button.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess, Settings, SyncDriver
from browser_core.stage import _consent
from browser_core.stage._consent import (
    consent_mode,
    consent_problem,
    controller_for,
    describe,
    find_bundle,
)
from search.providers.read import read_page
from tests._server import PAGES, LocalServer, Reply
from tests.conftest import make_settings

FIXTURES = Path(__file__).parent / "fixtures"
needs_package = pytest.mark.skipif(
    find_bundle() is None, reason="@duckduckgo/autoconsent is not installed: run `make tools`"
)

# platform -> (stand-in page, JS that is true while the banner is on the visible page)
SHOWN = {
    "onetrust": "(() => { const b = document.getElementById('onetrust-banner-sdk');"
    " return !!b && getComputedStyle(b).display !== 'none'; })()",
    "cookiebot": "(() => { const b = document.getElementById('CybotCookiebotDialog');"
    " return !!b && getComputedStyle(b).display !== 'none'; })()",
    "didomi": "!!document.getElementById('didomi-notice')",
    "quantcast": "!!document.getElementById('qc-cmp2-ui')",
    "usercentrics": "!!document.getElementById('usercentrics-root').shadowRoot"
    ".querySelector('[data-testid=uc-container]')",
    "sourcepoint": "!!document.querySelector('div[id^=sp_message_container_]')",
}
# What the platform's own SDK writes, for the stand-in that has no JS of its own to decide.
# True when a viewer can see the article's first lines: nothing (banner, backdrop, a banner
# hidden but still over the page) is on top of them.
UNCOVERED = (
    "(() => { const p = document.querySelector('article p'); const r = p.getBoundingClientRect();"
    " const top = document.elementFromPoint(r.left + 5, r.top + 5); return p.contains(top); })()"
)
PLATFORM_NAMES = {
    "onetrust": "Onetrust",
    "cookiebot": "Cybotcookiebot",
    "didomi": "didomi",
    "quantcast": "quantcast",
    "usercentrics": "usercentrics-api",
    "sourcepoint": "Sourcepoint-frame",
}


@pytest.fixture
def consent_http(http: LocalServer) -> LocalServer:
    # Sourcepoint's message frame is served at /index.html (autoconsent checks that path).
    http.route("/index.html", Reply((PAGES / "consent" / "sourcepoint-message.html").read_text()))
    return http


def _driver(settings: Settings) -> SyncDriver:
    """A plain driver: the clean screen installs consent on the tab it takes by itself."""
    return SyncDriver(settings)


@pytest.fixture
def consent_settings(chrome: ChromeProcess, tmp_path: Path) -> Settings:
    return make_settings(chrome, tmp_path, allow_hosts=("127.0.0.1", "localhost"))


@pytest.fixture
def consent_driver(consent_settings: Settings) -> Iterator[SyncDriver]:
    drv = _driver(consent_settings)
    yield drv
    drv.shutdown()


def _url(http: LocalServer, platform: str) -> str:
    url = http.url(f"/consent/{platform}.html")
    # localhost is another site than 127.0.0.1: Chrome puts the frame in its own process.
    return url + "?frame_host=localhost" if platform == "sourcepoint" else url


def _read(drv: SyncDriver, url: str, settings: Settings) -> Any:
    return drv.call(read_page(drv.driver, url, settings), 30)


def _screen(drv: SyncDriver, script: str) -> Any:
    async def look(page: Any) -> Any:
        return await page.evaluate(script)

    return drv.run("look", look)


def _wait_for(drv: SyncDriver, script: str, timeout_s: float = 8.0) -> Any:
    until = time.monotonic() + timeout_s
    while True:
        value = _screen(drv, script)
        if value or time.monotonic() > until:
            return value
        time.sleep(0.1)


@needs_package
@pytest.mark.parametrize("platform", sorted(SHOWN))
def test_a_read_leaves_the_banner_rejected_and_off_the_screen(
    platform: str, consent_driver: SyncDriver, consent_http: LocalServer, consent_settings: Settings
) -> None:
    page = _read(consent_driver, _url(consent_http, platform), consent_settings)
    assert page.outcome == "ok" and "fifty minutes later" in page.text
    clicked = _wait_for(consent_driver, "document.documentElement.dataset.consentClicked")
    assert clicked == "reject", f"{platform}: clicked {clicked!r}"
    assert _wait_for(consent_driver, f"!({SHOWN[platform]})"), f"{platform} still on screen"
    assert _wait_for(consent_driver, UNCOVERED), f"{platform}: something still covers the text"
    controller = controller_for(consent_driver.driver._tab.page)  # type: ignore[arg-type]
    assert controller is not None
    results = [(e.cmp, e.result) for e in controller.answered()]
    assert (PLATFORM_NAMES[platform], True) in results


@needs_package
def test_accept_clicks_the_accept_button(
    chrome: ChromeProcess, tmp_path: Path, consent_http: LocalServer
) -> None:
    settings = make_settings(chrome, tmp_path, consent="accept")
    drv = _driver(settings)
    try:
        _read(drv, _url(consent_http, "onetrust"), settings)
        assert _wait_for(drv, "document.documentElement.dataset.consentClicked") == "accept"
    finally:
        drv.shutdown()


@needs_package
def test_consent_off_answers_no_banner(
    chrome: ChromeProcess, tmp_path: Path, consent_http: LocalServer
) -> None:
    """Nothing is clicked and the banner stays in the page, unanswered; where it lies over
    the passage, the stage's own style takes it off the stream like any other cover."""
    settings = make_settings(chrome, tmp_path, consent="off")
    drv = _driver(settings)
    try:
        page = _read(drv, _url(consent_http, "quantcast"), settings)
        assert page.outcome == "ok"
        time.sleep(1.5)  # autoconsent answers within about a second when it runs
        assert _screen(drv, SHOWN["quantcast"]) is True
        assert _screen(drv, "document.documentElement.dataset.consentClicked || null") is None
        assert controller_for(drv.driver._tab.page) is None  # type: ignore[arg-type]
    finally:
        drv.shutdown()


def test_without_the_package_a_read_works_and_doctor_says_how_to_fix(
    chrome: ChromeProcess, tmp_path: Path, consent_http: LocalServer, monkeypatch: Any
) -> None:
    monkeypatch.setattr(_consent, "_SEARCH_DIRS", (tmp_path / "nothing",))
    _consent._find_bundle.cache_clear()
    try:
        settings = make_settings(chrome, tmp_path)
        assert find_bundle() is None
        problem = consent_problem()
        assert problem is not None and "will show" in problem and "make setup" in problem
        assert "NOT answered" in describe(settings)
        drv = _driver(settings)
        try:
            page = _read(drv, _url(consent_http, "quantcast"), settings)
            assert page.outcome == "ok" and "fifty minutes later" in page.text
            assert _screen(drv, SHOWN["quantcast"]) is True
        finally:
            drv.shutdown()
    finally:
        _consent._find_bundle.cache_clear()


@needs_package
def test_the_page_cannot_see_or_call_the_consent_script(
    consent_driver: SyncDriver, consent_http: LocalServer, consent_settings: Settings
) -> None:
    _read(consent_driver, _url(consent_http, "cookiebot"), consent_settings)
    assert _wait_for(consent_driver, "document.documentElement.dataset.consentClicked")
    seen = _screen(
        consent_driver,
        "[typeof window.autoconsentReceiveMessage, typeof window.autoconsentSendMessage,"
        " typeof window.__sbConsentSend]",
    )
    assert seen == ["undefined", "undefined", "undefined"]  # it runs in its own world


@needs_package
def test_google_inline_consent_dialogs_in_the_fixtures_get_reject_all(
    consent_driver: SyncDriver, consent_http: LocalServer, consent_settings: Settings
) -> None:
    """The saved results pages that carry Google's "Before you continue" dialog (the only
    fixtures with a banner autoconsent knows, besides the full-page walls below)."""
    names = ("featured-snippet", "google", "no-results")
    for name in names:
        html = gzip.decompress(
            (FIXTURES / f"serp/zlurad-serp-parser/desktop/{name}.html.gz").read_bytes()
        )
        spy = b"<script>document.addEventListener('click', e => {"
        spy += b" const b = e.target.closest('button');"
        spy += (
            b" document.documentElement.dataset.consentClicked = b ? b.id : '?'; }, true)</script>"
        )
        url = consent_http.route(f"/serp-{name}", Reply(spy + html))
        consent_driver.run("nav", lambda page, url=url: consent_driver.driver.navigate(page, url))
        clicked = _wait_for(consent_driver, "document.documentElement.dataset.consentClicked")
        assert clicked == "W0wltc", f"{name}: clicked {clicked!r}"  # "Reject all", not L2AGLb


@needs_package
def test_google_and_youtube_consent_walls_are_left_to_the_providers(
    consent_driver: SyncDriver, consent_http: LocalServer
) -> None:
    """The providers answer the full-page walls themselves (with the same choice); a second
    click from autoconsent would race their wait for the navigation."""
    for name in ("google-before-you-continue", "youtube-before-you-continue"):
        html = (FIXTURES / "consent" / f"{name}.html").read_text()
        url = consent_http.route(f"/{name}", Reply(html))
        consent_driver.run("nav", lambda page, url=url: consent_driver.driver.navigate(page, url))
        time.sleep(1.5)
        controller = controller_for(consent_driver.driver._tab.page)  # type: ignore[arg-type]
        assert controller is not None
        assert not [e for e in controller.events if e.cmp == "google-consent-standalone"]


def test_sb_consent_follows_sb_google_consent_unless_set(tmp_path: Path) -> None:
    base = make_settings(None, tmp_path)
    assert consent_mode(base) == "reject"
    assert consent_mode(make_settings(None, tmp_path, google_consent="accept")) == "accept"
    both = make_settings(None, tmp_path, google_consent="accept", consent="off")
    assert consent_mode(both) == "off"


@needs_package
def test_rules_sent_to_a_page_are_the_generic_ones_plus_those_for_its_site() -> None:
    bundle = find_bundle()
    assert bundle is not None
    plain = bundle.rules_for("http://127.0.0.1:1/a", main_frame=True, opt_in=False)
    site = bundle.rules_for("https://www.bbc.co.uk/news", main_frame=True, opt_in=False)
    frame = bundle.rules_for("http://127.0.0.1:1/a", main_frame=False, opt_in=False)
    assert len(site) > len(plain) > len(frame) > 1000
    assert '"optIn"' in bundle.rules_for("http://x/", main_frame=True, opt_in=True)
