"""A results page's parse checked against its page: today's pages say "ok"; a page whose
results the parser cannot find says "suspect", why, and reads the page without its markup."""

from __future__ import annotations

import gzip
from pathlib import Path
from urllib.parse import unquote

import pytest

from search.parsers import SerpPage, parse_bing, parse_results, parse_serp
from tests._rewrites import h3_to_span

FIXTURES = Path(__file__).parent / "fixtures"


def read(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


GOOGLE_PAGES = sorted(
    p for p in (FIXTURES / "serp").rglob("*") if p.name.endswith((".html", ".html.gz"))
)
BING_PAGES = sorted((FIXTURES / "serp-engines" / "bing").glob("*.html.gz"))


def _name(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


@pytest.mark.parametrize("path", GOOGLE_PAGES + BING_PAGES, ids=_name)
def test_todays_pages_should_parse_ok(path: Path) -> None:
    page = parse_results(read(path))
    assert page.health.state == "ok", page.health.reasons
    assert page.health.reasons == [] and page.generic == []


def _urls(page: SerpPage) -> set[str]:
    return {unquote(r.url).rstrip("/") for r in page.results}


# Pages of each layout the project keeps: 2009, 2021 (JS desktop), no-JS, 2025, 2026 built.
LOST_TITLES = [
    "serp/aql-wayback/2009-04-18_google-ocolc-826746-1240020639.html.gz",
    "serp/aql-wayback/2021-08-11_google-243-1628713922.html.gz",
    "serp/zlurad-serp-parser/desktop/google.html.gz",
    "serp/nwatab-search-navigator/2025-05-25_all_quantum-field-theory_ja-UI_tokyo.html.gz",
    "serp/built/2026-en-overview.html",
    "serp/built/2026-ko-overview.html",
]


@pytest.mark.parametrize("name", LOST_TITLES)
def test_a_parse_that_loses_most_results_should_say_suspect_and_read_the_page(name: str) -> None:
    html = read(FIXTURES / name)
    truth = _urls(parse_results(html))
    changed = parse_results(h3_to_span(html))  # titles in a big <span>: not an <h3> any more
    found = _urls(changed) & truth
    if len(found) * 2 >= len(truth):
        return  # the parser still finds them: nothing to say
    assert changed.health.state == "suspect"
    codes = {reason.split(":")[0] for reason in changed.health.reasons}
    assert codes & {"nothing-parsed", "unaccounted-links", "claimed-block"}
    generic = {unquote(r.url).rstrip("/") for r in changed.generic}
    assert len(generic & truth) >= 0.8 * len(truth), changed.generic
    assert [r.rank for r in changed.generic] == list(range(1, len(changed.generic) + 1))
    assert any(len(r.snippet) >= 20 for r in changed.generic)


_PAGE = """<html><body><div id="{column}">
<div><div><a href="https://example.org/a"><span class="t">First page about cats</span></a>
<div>Cats are small carnivorous mammals kept as pets.</div></div></div>
<div><div><a href="https://example.net/b"><span class="t">Second page about cats</span></a>
<div>The cat is a domestic species of small carnivorous mammal.</div></div></div>
<div><div><a href="https://example.com/c"><span class="t">Third page about cats</span></a>
<div>Cats sleep for most of the day, people say.</div></div>
</div>{more}</div></body></html>"""


def test_a_page_with_links_and_nothing_parsed_should_say_so_with_its_counts() -> None:
    page = parse_serp(_PAGE.format(column="rso", more=""))
    assert page.results == []
    assert page.health.state == "suspect"
    assert page.health.reasons == ["nothing-parsed: 3 outside links in the main column, 0 parsed"]
    assert [(r.rank, r.title, r.url) for r in page.generic] == [
        (1, "First page about cats", "https://example.org/a"),
        (2, "Second page about cats", "https://example.net/b"),
        (3, "Third page about cats", "https://example.com/c"),
    ]
    assert page.generic[2].snippet == "Cats sleep for most of the day, people say."


_RESULT = """<div><div><a href="https://{host}/page"><span>{title}</span>
<div><cite>{host} › page</cite></div></a><div>{text}</div></div></div>"""


def test_results_without_headings_should_be_found_by_their_shape_and_say_so() -> None:
    rows = [
        ("example.org", "First page about cats", "Cats are small carnivorous mammals."),
        ("example.net", "Second page about cats", "The cat is a domestic species."),
        ("example.com", "Third page about cats", "Cats sleep for most of the day."),
    ]
    blocks = "".join(_RESULT.format(host=h, title=t, text=x) for h, t, x in rows)
    page = parse_serp(f'<html><body><div id="main">{blocks}</div></body></html>')
    assert [(r.title, r.url, r.snippet) for r in page.results] == [
        (t, f"https://{h}/page", x) for h, t, x in rows
    ]
    assert page.health.state == "ok"


def test_engine_links_and_ads_should_not_count_as_outside_links() -> None:
    more = (
        '<a href="/search?q=cats+pictures">Cat pictures and more cat pictures</a>'
        '<a href="https://accounts.google.com/ServiceLogin">Sign in to your account now</a>'
        '<div aria-label="Ads"><a href="https://ads.example/x">Buy cat food today, cheap</a></div>'
    )
    page = parse_serp(_PAGE.format(column="rso", more=more))
    assert [r.url for r in page.generic] == [
        "https://example.org/a",
        "https://example.net/b",
        "https://example.com/c",
    ]


def test_a_bing_page_with_links_and_nothing_parsed_should_say_suspect_too() -> None:
    page = parse_bing(_PAGE.format(column="b_results", more=""))
    assert page.engine == "bing" and page.health.state == "suspect"
    assert page.health.reasons[0].startswith("nothing-parsed: 3 outside links")
    assert len(page.generic) == 3
