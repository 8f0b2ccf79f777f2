"""The one seam for web results pages: engine_for and parse_results tell Google's pages from
Bing's, by address or by the page itself, and hand each to its engine's parser."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from search.parsers import (
    BING,
    ENGINES,
    GOOGLE,
    engine_for,
    parse_bing,
    parse_results,
    parse_serp,
)

FIXTURES = Path(__file__).parent / "fixtures"
BING_PAGES = sorted((FIXTURES / "serp-engines" / "bing").glob("*.html.gz"))
BUILT_BING = sorted((FIXTURES / "serp-engines" / "bing" / "built").glob("*.html"))
GOOGLE_PAGES = [
    FIXTURES / "serp/aql-wayback/2021-08-11_google-243-1628713922.html.gz",
    FIXTURES / "serp/aql-wayback/2009-04-18_google-ocolc-826746-1240020639.html.gz",
    FIXTURES / "serp/zlurad-serp-parser/desktop/google.html.gz",
    FIXTURES / "serp/zlurad-serp-parser/nojs/google-nojs.html",
    FIXTURES / "serp/zlurad-serp-parser/desktop/recaptcha.html",
    FIXTURES / "consent/google-before-you-continue.html",
    *sorted((FIXTURES / "serp" / "built").glob("2026-en-*.html")),
]


def read(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")


def test_the_engines_should_be_ordered_data() -> None:
    assert [engine.name for engine in ENGINES] == ["google", "bing"]


@pytest.mark.parametrize("path", BING_PAGES + BUILT_BING, ids=lambda p: p.name)
def test_a_bing_page_should_be_recognised_by_itself(path: Path) -> None:
    html = read(path)
    assert engine_for(html) is BING
    assert parse_results(html) == parse_bing(html)


@pytest.mark.parametrize("path", GOOGLE_PAGES, ids=lambda p: p.name)
def test_a_google_page_should_still_parse_as_google(path: Path) -> None:
    html = read(path)
    assert engine_for(html) is GOOGLE
    found = parse_results(html)
    assert found.engine == "google" and found == parse_serp(html)


def test_the_address_should_decide_before_the_page() -> None:
    html = read(GOOGLE_PAGES[0])
    assert engine_for(html, "https://www.bing.com/search?q=243") is BING
    assert engine_for(read(BING_PAGES[0]), "https://www.google.de/search?q=x") is GOOGLE
    assert engine_for("<html></html>", "http://www.bing.com:80/search?q=x") is BING
    assert engine_for("<html></html>", "https://cn.bing.com/search?q=x") is BING


def test_a_page_no_engine_claims_should_be_googles() -> None:
    assert engine_for("<html><body><p>hello</p></body></html>") is GOOGLE
    assert parse_results("") == parse_serp("")


def test_each_engine_should_tell_its_own_walls() -> None:
    captcha = read(FIXTURES / "serp/zlurad-serp-parser/desktop/recaptcha.html")
    assert parse_results(captcha).blocked == "captcha"
    challenge = read(FIXTURES / "serp-engines/bing/built/challenge.html")
    found = parse_results(challenge)
    assert (found.engine, found.blocked) == ("bing", "captcha")
