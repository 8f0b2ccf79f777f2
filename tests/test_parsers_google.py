"""parse_serp and detect_interstitial against saved Google pages and their shipped ground truth."""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import Callable
from html import unescape
from pathlib import Path
from urllib.parse import unquote

import pytest

from search.parsers import SerpPage, clean_google_url, detect_interstitial, parse_serp

FIXTURES = Path(__file__).parent / "fixtures"
SERP = FIXTURES / "serp"


def read(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")


def page_for(stem: Path) -> str:
    for suffix in (".html.gz", ".html"):
        if stem.with_name(stem.name + suffix).exists():
            return read(stem.with_name(stem.name + suffix))
    raise FileNotFoundError(stem)


def norm(url: str) -> str:
    return unquote(unquote(url)).rstrip("/")


def plain(markup: str) -> str:
    """AQL keeps titles as HTML (entities, <em>); compare their text."""
    return unescape(re.sub("<[^>]+>", "", markup))


AQL = sorted(p.name.removesuffix(".expected.json") for p in (SERP / "aql-wayback").glob("*.json"))
AQL_DISAGREE = {"2021-07-17_google-bill-easley-sophisticated-prelude-1626498182"}


@pytest.mark.parametrize("stem", sorted(set(AQL) - AQL_DISAGREE))
def test_parse_serp_should_match_approved_organic_urls_and_titles_in_order(stem: str) -> None:
    expected = json.loads((SERP / "aql-wayback" / f"{stem}.expected.json").read_text())["results"]
    page = parse_serp(page_for(SERP / "aql-wayback" / stem))
    truth = [
        (norm(clean_google_url(r["url"]) or r["url"]), plain(r["title"])) for r in expected or []
    ]
    assert [(norm(r.url), r.title) for r in page.results] == truth
    assert [r.rank for r in page.results] == list(range(1, len(truth) + 1))


def test_parse_serp_should_leave_out_google_internal_links_that_aql_counts() -> None:
    """AQL ranks a google.com/search?... entity link; we leave Google's own navigation out."""
    stem = "2021-07-17_google-bill-easley-sophisticated-prelude-1626498182"
    expected = json.loads((SERP / "aql-wayback" / f"{stem}.expected.json").read_text())["results"]
    page = parse_serp(page_for(SERP / "aql-wayback" / stem))
    external = [norm(clean_google_url(r["url"]) or "") for r in expected]
    assert [norm(r.url) for r in page.results] == [u for u in external if u]
    assert len(page.results) == len(expected) - 1


def partial(name: str) -> dict[str, object]:
    data = json.loads((SERP / f"{name}.expected.partial.json").read_text())
    return dict(data["expected"])


def test_desktop_layout_should_give_asserted_results_and_top_stories() -> None:
    facts = partial("zlurad-serp-parser/desktop/google")
    page = parse_serp(page_for(SERP / "zlurad-serp-parser/desktop/google"))
    assert len(page.results) == facts["organic_count"]
    assert page.results[1].url == facts["organic[1].url"]
    assert page.results[3].title == facts["organic[3].title"]
    assert page.results[3].snippet == facts["organic[3].snippet"]
    story = facts["topStories[1]"]
    assert isinstance(story, dict)
    assert (page.top_stories[1].title, page.top_stories[1].url) == (story["title"], story["url"])
    assert page.top_stories[1].source == story["publisher"]
    assert page.knowledge_panel is not None and page.knowledge_panel.title == "Google"
    assert "Founded" in page.knowledge_panel.facts
    assert "What does Google stand for?" in page.people_also_ask


def test_featured_snippet_should_be_the_answer_and_its_source_the_first_result() -> None:
    facts = partial("zlurad-serp-parser/desktop/featured-snippet")
    page = parse_serp(page_for(SERP / "zlurad-serp-parser/desktop/featured-snippet"))
    assert len(page.results) == facts["organic_count"]
    assert page.results[0].title == facts["organic[0].title"]
    assert page.results[0].snippet == facts["organic[0].snippet"]
    assert page.answer == facts["organic[0].snippet"]


CROW = "aql-wayback/2020-12-20_google-crow-names-1608438374"
RECORDINGS = Path(__file__).parent / "recordings"


def recorded_body(case: str) -> str:
    """The Google page a recording serves (the first HTML response of its HAR)."""
    har = json.loads((RECORDINGS / case / "session.har").read_text(encoding="utf-8"))
    for entry in har["log"]["entries"]:
        if "html" in entry["response"]["content"].get("mimeType", ""):
            return str(entry["response"]["content"]["text"])
    raise AssertionError(f"{case}: no HTML response in its HAR")


@pytest.mark.parametrize(
    "html",
    [
        pytest.param(lambda: page_for(SERP / CROW), id="fixture"),
        pytest.param(lambda: recorded_body("google-crow-names-en"), id="recording"),
    ],
)
def test_snippets_should_be_descriptions_never_breadcrumbs(html: Callable[[], str]) -> None:
    page = parse_serp(html())
    assert len(page.results) == 10
    for result in page.results:
        assert "›" not in result.snippet and not result.snippet.startswith("www."), result
    # Result 1 is the featured snippet's source: its description is the featured list.
    first = page.results[0]
    assert first.url.startswith("https://www.kidadl.com/articles/best-crow-and-raven-names")
    assert first.snippet.startswith('Bartram (Scandinavian origin) meaning "bright raven".')
    assert "Brainard" in first.snippet
    assert page.results[1].snippet.startswith("A crow is a bird of the genus Corvus")


def test_a_result_with_only_a_breadcrumb_should_get_no_snippet() -> None:
    html = (
        '<html><body><div id="rso"><div class="g"><a href="https://ex.org/a/b"><h3>Title A</h3>'
        "</a><div><cite>ex.org<span> › a › b</span></cite><span>https://ex.org › a › b</span>"
        '</div></div><div class="g"><a href="https://ex.org/c"><h3>Title C</h3></a>'
        "<div><cite>ex.org</cite><span>Plain words that describe the page well.</span></div>"
        "</div></div></body></html>"
    )
    page = parse_serp(html)
    assert [r.snippet for r in page.results] == ["", "Plain words that describe the page well."]


@pytest.mark.parametrize("name", ["google-nojs", "matrix-nojs"])
def test_basic_html_layout_should_unwrap_url_q_redirects(name: str) -> None:
    facts = partial(f"zlurad-serp-parser/nojs/{name}")
    page = parse_serp(page_for(SERP / "zlurad-serp-parser/nojs" / name))
    assert len(page.results) == facts["organic_count"]
    assert all(not r.url.startswith("/url") and "google.com/url" not in r.url for r in page.results)
    for key, value in facts.items():
        if key.startswith("organic[") and isinstance(value, str):
            index, field = int(key[8 : key.index("]")]), key.split(".")[1]
            got = page.results[index]
            if field == "url":
                assert got.url == value
            elif field == "title":
                assert got.title == value
            elif field.startswith("snippet"):
                assert value in got.snippet


@pytest.mark.parametrize(
    "name",
    [
        "2025-08-07_all_something_en_usa_infinite-scroll",
        "2025-05-25_all_quantum-field-theory_ja-UI_tokyo",
    ],
)
def test_rendered_2025_layouts_should_find_the_navigable_results(name: str) -> None:
    facts = partial(f"nwatab-search-navigator/{name}")
    page = parse_serp(page_for(SERP / "nwatab-search-navigator" / name))
    count = facts["organic_results_count"]
    assert isinstance(count, int)
    # nwatab also counts the link inside an expanded People-also-ask answer; we do not.
    expected = count - 1 if "infinite" in name else count
    assert len(page.results) == expected
    assert all(r.url.startswith("https://") and r.title for r in page.results)


def test_infinite_scroll_results_below_the_fold_should_be_kept_and_paa_left_out() -> None:
    name = "2025-08-07_all_something_en_usa_infinite-scroll"
    page = parse_serp(page_for(SERP / "nwatab-search-navigator" / name))
    urls = [r.url for r in page.results]
    assert "https://dictionary.cambridge.org/us/dictionary/english/something" in urls
    assert not any("dictionary/mean" in u for u in urls)
    assert "What do we mean by something?" in page.people_also_ask


@pytest.mark.parametrize(
    "name", ["organic_result1/general_result", "organic_result2/with_site_links"]
)
def test_2024_result_block_should_give_title_url_and_description(name: str) -> None:
    expected = json.loads((SERP / "kjellberg-serp_parser" / f"{name}.json").read_text())
    page = parse_serp(read(SERP / "kjellberg-serp_parser" / f"{name}.html"))
    assert page.results[0].title == expected["title"]
    assert norm(page.results[0].url) == norm(expected["url"])
    assert " ".join(expected["description"].split()) in page.results[0].snippet


def test_captcha_page_should_be_blocked_not_raised() -> None:
    html = read(SERP / "zlurad-serp-parser/desktop/recaptcha.html")
    assert detect_interstitial(html, None) == "captcha"
    assert parse_serp(html) == SerpPage(blocked="captcha")


@pytest.mark.parametrize(
    "url",
    [
        "https://www.google.com/sorry/index?continue=https://www.google.com/search%3Fq%3Dx",
        "https://sorry.google.com/sorry/Captcha?continue=x",
    ],
)
def test_sorry_urls_should_be_captcha_whatever_the_body(url: str) -> None:
    assert detect_interstitial("<html><body>x</body></html>", url) == "captcha"


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("google-before-you-continue.html", None),
        ("google-before-you-continue.html", "https://consent.google.com/ml?continue=x"),
        ("youtube-before-you-continue.html", None),
        ("youtube-before-you-continue.html", "https://consent.youtube.com/m?continue=x"),
    ],
)
def test_consent_walls_should_be_detected(name: str, url: str | None) -> None:
    html = read(FIXTURES / "consent" / name)
    assert detect_interstitial(html, url) == "consent"
    assert parse_serp(html, url).blocked == "consent"


def test_real_result_pages_should_not_look_like_walls() -> None:
    for path in [*SERP.rglob("*.html.gz"), *SERP.rglob("*.html")]:
        if path.name == "recaptcha.html":
            continue
        assert detect_interstitial(read(path), "https://www.google.com/search?q=x") is None, path


def test_clean_google_url_should_unwrap_redirects_and_drop_navigation() -> None:
    wrapped = "/url?q=https://example.org/a%3Fb%3D1&sa=U"
    assert clean_google_url(wrapped) == "https://example.org/a?b=1"
    assert (
        clean_google_url("https://www.google.com/url?url=https://x.org/&sa=t") == "https://x.org/"
    )
    assert clean_google_url("/search?q=more&start=10") is None
    assert clean_google_url("https://www.google.com/search?q=x") is None
    assert clean_google_url("https://developers.google.com/search/docs") is not None
    assert clean_google_url("javascript:void(0)") is None


def test_parse_serp_should_take_well_under_200_ms_on_a_2_mb_page() -> None:
    html = page_for(SERP / "zlurad-serp-parser/desktop/google") * 3  # about 2 MB
    assert len(html) > 1_900_000
    started = time.perf_counter()
    parse_serp(html)
    assert time.perf_counter() - started < 0.5  # measured ~60 ms; slack for slow CI machines


def test_empty_and_non_html_input_should_give_an_empty_page() -> None:
    assert parse_serp("") == SerpPage()
    assert parse_serp("just words").results == []
