"""Page-level tests on pytest-playwright's `page` (Debian Chromium, see conftest): the parsers
must agree on a saved page's raw HTML and on the DOM Chromium renders from it, because the
live path parses whichever it gets first. Run with `--headed --slowmo 300` to watch."""

from __future__ import annotations

from typing import Any

import pytest

from search.parsers.google import parse_serp
from search.parsers.youtube import parse_youtube_results
from tests._web import fixture_text

SERPS = [
    "serp/aql-wayback/2020-12-20_google-crow-names-1608438374.html.gz",
    "serp/kjellberg-serp_parser/2024-09-06-matkasse-goteborg.html.gz",
    "serp/zlurad-serp-parser/nojs/google-nojs.html",
]


def render(page: Any, url: str, html: str) -> str:
    """Load `html` at `url` in Chromium with every other request aborted; return the DOM."""

    def handle(route: Any) -> None:
        if route.request.url == url:
            route.fulfill(body=html, content_type="text/html; charset=utf-8")
        else:
            route.abort()

    page.route("**/*", handle)
    page.goto(url, wait_until="domcontentloaded")
    return str(page.content())


@pytest.mark.parametrize("name", SERPS)
def test_google_results_are_the_same_in_raw_and_rendered_html(page: Any, name: str) -> None:
    html = fixture_text(name)
    url = "https://www.google.com/search?q=test"
    raw = parse_serp(html, url)
    rendered = parse_serp(render(page, url, html), url)
    assert raw.results, "the saved page has organic results"
    assert [r.url for r in rendered.results] == [r.url for r in raw.results]
    assert [r.title for r in rendered.results] == [r.title for r in raw.results]


def test_youtube_results_are_the_same_in_raw_and_rendered_html(page: Any) -> None:
    html = fixture_text("youtube/search/aql-wayback/2019-07-14_youtube-pudding-1563068696.html.gz")
    url = "https://www.youtube.com/results?search_query=pudding"
    raw = parse_youtube_results(html)
    rendered = parse_youtube_results(render(page, url, html))
    assert raw.videos
    assert [v.video_id for v in rendered.videos][:5] == [v.video_id for v in raw.videos][:5]
