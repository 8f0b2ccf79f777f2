"""Google search and page reads on a real Chromium, with google.com routed to saved pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, quote

import pytest

from browser_core import Deadline, PageBlocked, Settings, SyncDriver, parse_envelope, wrap_answer
from search._types import Request
from search.providers.google import GoogleProvider, google_search, search_url
from tests._web import FIXTURES, FakeWeb, Page, fixture_text

CROW = "serp/aql-wayback/2020-12-20_google-crow-names-1608438374"
CAPTCHA = "serp/zlurad-serp-parser/desktop/recaptcha.html"
CONSENT = "consent/google-before-you-continue.html"


@pytest.fixture
def web(settings: Settings) -> Iterator[tuple[SyncDriver, FakeWeb]]:
    fake = FakeWeb()
    drv = SyncDriver(settings)
    drv.driver.page_hooks.append(fake.hook)

    async def fresh_profile(page: Any) -> None:
        await page.context.clear_cookies()  # the session Chrome keeps cookies between tests

    drv.run("clear-cookies", fresh_profile)
    yield drv, fake
    drv.shutdown()


def redirect(location: str) -> Page:
    """A script redirect. Google answers with HTTP 302 here, but Playwright 1.65 cannot fulfil
    a 3xx for a navigation in Chromium 156 (the request then fails as if unrouted)."""
    target = json.dumps(location)
    return Page(f"<html><head><script>location.replace({target})</script></head></html>")


def expected_urls(name: str) -> list[str]:
    data = json.loads((FIXTURES / f"{name}.expected.json").read_text(encoding="utf-8"))
    return [r["url"] for r in data["results"]]


def current_url(drv: SyncDriver) -> str:
    async def where(page: Any) -> str:
        return str(page.url)

    return str(drv.run("where", where))


def test_search_shows_the_real_address_and_parses_results_in_order(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(fixture_text(f"{CROW}.html.gz")))
    serp, reads = drv.call(google_search(drv.driver, "crow names", settings), 30)
    assert [r.url for r in serp.results] == expected_urls(CROW)[: len(serp.results)]
    assert len(serp.results) >= 5 and reads == []
    assert current_url(drv) == search_url("crow names", settings)
    assert current_url(drv).startswith("https://www.google.com/search?q=crow+names&hl=en&gl=us")


JA = "serp/aql-wayback/2020-12-25_google-chi-zhen-nzhong-rong-keteru-1608917828"
# Hand-written to the shape of a 2020 desktop result page (no Korean-query page was found in
# any public test suite): two organic results with Korean titles and descriptions.
KO_PAGE = (
    '<html lang="ko"><head><title>서울 날씨 - Google 검색</title></head><body><div id="rso">'
    + "".join(
        f'<div class="g"><div class="rc"><a href="{url}"><h3>{title}</h3></a>'
        f'<div><span class="aCOpRe">{text}</span></div></div></div>'
        for url, title, text in (
            (
                "https://weather.example.kr/seoul",
                "서울 날씨 예보",
                "오늘 서울은 맑고 기온은 12도입니다.",
            ),
            ("https://news.example.kr/w", "주간 날씨", "이번 주 전국 날씨를 알려 드립니다."),
        )
    )
    + "</div></body></html>"
)


def localized(pages: dict[tuple[str, str], str]) -> Any:
    """A stand-in for google.com that answers only the language and region asked for."""

    def answer(request: Any) -> Page:
        query = parse_qs(request.url.split("?", 1)[1])
        body = pages.get((query["hl"][0], query["gl"][0]))
        return Page(body) if body else Page("<html><body>wrong language</body></html>", 404)

    return answer


def test_a_korean_query_asks_google_in_korean_for_korea(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    assert settings.google_hl == "auto"  # the default, from playwright.config.toml
    fake.add("https://www.google.com/search", localized({("ko", "kr"): KO_PAGE}))
    serp, _ = drv.call(google_search(drv.driver, "서울 날씨", settings), 30)
    requested = [url for url in fake.seen if url.startswith("https://www.google.com/search")]
    assert parse_qs(requested[0].split("?", 1)[1])["hl"] == ["ko"]
    assert "&hl=ko&gl=kr" in requested[0]
    assert [r.title for r in serp.results] == ["서울 날씨 예보", "주간 날씨"]
    assert serp.results[0].snippet == "오늘 서울은 맑고 기온은 12도입니다."


def test_a_japanese_query_gets_the_recorded_japanese_page(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add(
        "https://www.google.com/search",
        localized({("ja", "jp"): fixture_text(f"{JA}.html.gz")}),
    )
    serp, _ = drv.call(google_search(drv.driver, "歯 真ん中溶けてる", settings), 30)
    assert "&hl=ja&gl=jp" in current_url(drv)
    assert [r.url for r in serp.results] == expected_urls(JA)[: len(serp.results)]
    assert len(serp.results) >= 5


def test_a_fixed_language_setting_wins_over_the_query(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fixed = settings.model_copy(update={"google_hl": "en", "google_gl": "us"})
    fake.add("https://www.google.com/search", localized({("en", "us"): KO_PAGE}))
    serp, _ = drv.call(google_search(drv.driver, "서울 날씨", fixed), 30)
    assert "&hl=en&gl=us" in current_url(drv) and len(serp.results) == 2


def test_the_provider_answers_with_a_speakable_body_that_the_envelope_wraps(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(fixture_text(f"{CROW}.html.gz")))
    provider = GoogleProvider(drv.driver)
    answer = drv.call(
        provider.run(Request(action="search", query="crow names"), settings, Deadline(20)), 30
    )
    assert answer.failure_kind is None
    assert [s.url for s in answer.sources] == expected_urls(CROW)[: settings.max_results]
    result = wrap_answer(answer, provider=provider.name, action="search", query="crow names")
    envelope = parse_envelope(result.reply_text)
    assert envelope.header["provider"] == "google"
    assert "1. " in envelope.body and "wikipedia" in envelope.body.lower()
    assert result.success and result.data["results"][0]["url"] == answer.sources[0].url


def test_read_top_reads_the_first_result(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add("https://www.google.com/search", Page(fixture_text(f"{CROW}.html.gz")))
    first = expected_urls(CROW)[0]
    fake.add(
        first,
        Page(
            "<html><head><title>Crow names</title></head><body><article>"
            + "<p>Corvus is a fine name for a clever black bird.</p>" * 10
            + "</article></body></html>"
        ),
    )
    _, reads = drv.call(google_search(drv.driver, "crow names", settings, read_top=1), 30)
    assert len(reads) == 1
    assert reads[0].final_url == first and "Corvus is a fine name" in reads[0].text


def test_the_captcha_is_detected_never_solved_and_reported_as_blocked(
    web: tuple[SyncDriver, FakeWeb], settings: Settings
) -> None:
    drv, fake = web
    fake.add(
        "https://www.google.com/search", redirect("https://www.google.com/sorry/index?continue=x")
    )
    fake.add("https://www.google.com/sorry/", Page(fixture_text(CAPTCHA), status=429))
    serp, _ = drv.call(google_search(drv.driver, "crow names", settings), 30)
    assert serp.blocked == "captcha" and serp.results == []
    provider = GoogleProvider(drv.driver)
    with pytest.raises(PageBlocked) as info:
        drv.call(
            provider.run(Request(action="search", query="crow names"), settings, Deadline(20)), 30
        )
    assert info.value.kind == "captcha"
    # Never solved: the page was shown and read, nothing was sent back (the form posts to
    # /sorry/index; reCAPTCHA's own answers are POSTs too).
    assert "https://www.google.com/sorry/index?continue=x" in fake.seen
    assert [(method, url) for method, url in fake.methods if method != "GET"] == []


def serve_consent_wall(fake: FakeWeb, target: str, wall: str, field: str) -> list[str]:
    """Google's search behind a consent wall (`wall`) until the SOCS cookie is set; returns
    the values of the posted form's `field`, one per answer."""
    answered: list[str] = []

    def search(request: Any) -> Page:
        if "SOCS=" in (request.headers.get("cookie") or ""):
            return Page(fixture_text(f"{CROW}.html.gz"))
        return redirect("https://consent.google.com/ml?continue=" + quote(target, safe=""))

    def save(request: Any) -> Page:
        form = parse_qs(request.post_data or "")
        answered.append(form[field][0])
        page = redirect(form["continue"][0] if "continue" in form else target)
        page.headers["Set-Cookie"] = "SOCS=CAE; Domain=.google.com; Path=/; Secure; SameSite=Lax"
        return page

    fake.add("https://www.google.com/search", search)
    fake.add("https://consent.google.com/ml", Page(wall))
    fake.add("https://consent.google.com/save", save)
    return answered


@pytest.mark.parametrize(("choice", "clicked"), [("reject", "true"), ("accept", "false")])
def test_a_swedish_wall_without_the_usual_forms_is_answered_by_its_button_names(
    web: tuple[SyncDriver, FakeWeb], settings: Settings, choice: str, clicked: str
) -> None:
    """The wall as a Swedish visitor sees it ("Avvisa alla" / "Godkänn alla"), its forms
    without the field the usual selector keys on: the buttons are found by name."""
    drv, fake = web
    settings = settings.model_copy(update={"google_consent": choice})
    wall = (
        fixture_text(CONSENT)
        .replace('name="set_eom"', 'name="choice"')
        .replace("Reject all", "Avvisa alla")
        .replace("Accept all", "Godkänn alla")
    )
    answered = serve_consent_wall(fake, search_url("crow names", settings), wall, "choice")
    serp, _ = drv.call(google_search(drv.driver, "crow names", settings), 30)
    assert answered == [clicked]
    assert serp.blocked is None and serp.results


@pytest.mark.parametrize(("choice", "set_eom"), [("reject", "true"), ("accept", "false")])
def test_the_consent_wall_is_answered_and_the_search_continues(
    web: tuple[SyncDriver, FakeWeb], settings: Settings, choice: str, set_eom: str
) -> None:
    drv, fake = web
    settings = settings.model_copy(update={"google_consent": choice})
    target = search_url("crow names", settings)
    answered = serve_consent_wall(fake, target, fixture_text(CONSENT), "set_eom")
    serp, _ = drv.call(google_search(drv.driver, "crow names", settings), 30)
    assert answered == [set_eom]
    assert serp.blocked is None
    assert [r.url for r in serp.results][:3] == expected_urls(CROW)[:3]
    # The choice persists (a cookie in the dedicated profile): no wall the second time.
    drv.call(google_search(drv.driver, "crow names", settings), 30)
    assert answered == [set_eom]


def _serp(parsed: int, generic: list[str], state: str = "suspect") -> Any:
    from search.parsers._models import ParseHealth, SerpPage, SerpResult

    def result(rank: int, url: str) -> SerpResult:
        return SerpResult(rank=rank, title=f"Title {url[-1]}", url=url, snippet="said here")

    urls = [f"https://site.example/{n}" for n in range(parsed)]
    return SerpPage(
        results=[result(n + 1, u) for n, u in enumerate(urls)],
        health=ParseHealth(state=state, reasons=["2 outside links in the main column"]),
        generic=[result(n + 1, u) for n, u in enumerate(generic)],
    )


def test_a_suspect_parse_is_heard_parsed_results_first_then_the_generic_ones_not_there() -> None:
    from search.providers.google import GENERIC_LABEL, render_serp

    serp = _serp(
        2, ["https://site.example/1#frag", "https://site.example/7", "https://site.example/8"]
    )
    body = render_serp(serp, [], 5)
    assert body.index("1. Title 0") < body.index(GENERIC_LABEL) < body.index("3. Title 7")
    assert "4. Title 8" in body and body.count("Title 1") == 1, (
        "a link already parsed is not repeated"
    )
    assert "The parse of this results page looks incomplete: 2 outside links" in body
    # Within SB_MAX_RESULTS in all: parsed results that fill it leave no room.
    assert GENERIC_LABEL not in render_serp(_serp(5, ["https://site.example/9"]), [], 5)
    # An ok parse never mentions any of it.
    ok = render_serp(_serp(2, ["https://site.example/7"], state="ok"), [], 5)
    assert GENERIC_LABEL not in ok and "incomplete" not in ok and "Title 7" not in ok
