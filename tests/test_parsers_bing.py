"""parse_bing, detect_bing_interstitial and clean_bing_url against saved Bing pages (AQL's
approved parses, 2010-2022) and pages built to the shape of its walls and of its 2023 layout.

The rules were written looking at all 16 development pages of the shared set (8 copied here);
the other half is held out. On the 16: organic recall and precision 1.00 on every page,
titles 150/150 and snippets 149/150 as approved (on the 8 here: 79/79 and 78/79)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from search.cli import main
from search.parsers import SerpPage, clean_bing_url, detect_bing_interstitial, parse_bing

BING = Path(__file__).parent / "fixtures" / "serp-engines" / "bing"
BUILT = BING / "built"
STEMS = sorted(p.name.removesuffix(".expected.json") for p in BING.glob("*.expected.json"))


def page(stem: str) -> str:
    charset = json.loads((BING / f"{stem}.meta.json").read_text())["charset"] or "utf-8"
    return gzip.decompress((BING / f"{stem}.html.gz").read_bytes()).decode(charset)


def address(stem: str) -> str:
    return str(json.loads((BING / f"{stem}.meta.json").read_text())["archived_url"]["url"])


def approved(stem: str) -> list[dict[str, str]]:
    return list(json.loads((BING / f"{stem}.expected.json").read_text())["results"])


def norm(url: str) -> str:
    return unquote(unquote(url)).rstrip("/")


def plain(markup: str | None) -> str:
    """AQL keeps titles and snippets as HTML (<em>, entities); compare their text."""
    return " ".join(unescape(re.sub("<[^>]+>", "", markup or "")).split())


def scores(stem: str) -> tuple[float, float]:
    want = {norm(r["url"]) for r in approved(stem)}
    got = {norm(r.url) for r in parse_bing(page(stem), address(stem)).results}
    return len(want & got) / len(want), len(want & got) / max(len(got), 1)


@pytest.mark.parametrize("stem", STEMS)
def test_organic_results_should_have_recall_and_precision_of_at_least_95_percent(
    stem: str,
) -> None:
    recall, precision = scores(stem)
    assert recall >= 0.95 and precision >= 0.95, (stem, recall, precision)


def test_mean_recall_and_precision_over_the_pages_should_be_at_least_98_percent() -> None:
    found = [scores(stem) for stem in STEMS]
    recall = sum(r for r, _ in found) / len(found)
    precision = sum(p for _, p in found) / len(found)
    assert (recall, precision) >= (0.98, 0.98), found


@pytest.mark.parametrize("stem", STEMS)
def test_results_should_come_in_the_approved_order_ranked_from_1(stem: str) -> None:
    results = parse_bing(page(stem)).results
    assert [norm(r.url) for r in results] == [norm(r["url"]) for r in approved(stem)]
    assert [r.rank for r in results] == list(range(1, len(results) + 1))


def test_titles_and_snippets_should_match_the_approved_ones_once_markup_is_taken_out() -> None:
    titles = snippets = total = 0
    for stem in STEMS:
        got = {norm(r.url): r for r in parse_bing(page(stem)).results}
        for want in approved(stem):
            result = got[norm(want["url"])]
            titles += result.title == plain(want["title"])
            snippets += result.snippet == plain(want["snippet"])
            total += 1
    # 79 results: every title; every snippet but one (a result with no description of its
    # own, where AQL took the second of its Facebook posts and this parser the first).
    assert (titles, snippets, total) == (79, 78, 79)


@pytest.mark.parametrize("stem", STEMS)
def test_no_bing_link_or_ad_should_be_among_the_organic_results(stem: str) -> None:
    for result in parse_bing(page(stem), address(stem)).results:
        host = urlsplit(result.url).hostname or ""
        assert not re.search(r"(^|\.)(bing\.com|bingj\.com|microsofttranslator\.com)$", host)
        assert "/aclk" not in result.url, result


def test_people_also_ask_should_be_its_questions_and_their_sources_not_results() -> None:
    stem = "2021-04-16_bing-sweden-riots-1618569435"
    found = parse_bing(page(stem))
    assert found.people_also_ask == [
        "Where was the riot in Sweden August 28 2020?",
        "Why did the riots start in Malmo Sweden?",
        "Why are there anti Islam protests in Sweden?",
        "Where was the burning of the Quran in Sweden?",
    ]
    assert len(found.results) == 10 and found.answer is None


def test_the_side_panel_should_be_the_knowledge_panel_with_its_labelled_facts() -> None:
    panel = parse_bing(
        page("2019-04-27_bing-the-clavarioid-fungi-of-new-zealand-ron-petersen-1556393373")
    ).knowledge_panel
    assert panel is not None and panel.title == "The clavarioid fungi of New Zealand"
    assert panel.facts == {"Autor": "Ron Petersen", "Erstveröffentlichung": "1988"}
    drug = parse_bing(page("2021-03-08_bing-clobetasol-without-prescription-1615178898"))
    assert drug.knowledge_panel is not None and drug.knowledge_panel.title == "Clobetasol"
    assert drug.knowledge_panel.description.startswith("Clobetasol is used in adults")


def test_a_2023_page_should_unwrap_ck_links_and_leave_out_ads_and_bings_own_links() -> None:
    found = parse_bing((BUILT / "2023-en-ck-links.html").read_text())
    assert found.engine == "bing" and found.blocked is None  # a consent banner is no wall
    assert [r.url for r in found.results] == [
        "https://en.wikipedia.org/wiki/Great_blue_heron",
        "https://www.allaboutbirds.org/guide/Great_Blue_Heron/sounds",
        "https://www.audubon.org/field-guide/bird/great-blue-heron?lang=en&src=bing",
    ]
    assert found.results[0].title == "Great blue heron - Wikipedia"
    assert found.results[1].snippet.startswith("The most common sound is")  # no "WEB" label
    assert found.answer == "A deep, harsh croak"
    assert found.knowledge_panel is not None
    assert found.knowledge_panel.facts == {
        "Scientific name": "Ardea herodias",
        "Lifespan": "15 years",
    }


def _ck(target: str) -> str:
    wrapped = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    return f"https://www.bing.com/ck/a?!&&p=abc&ptn=3&u=a1{wrapped}&ntb=1"


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        (_ck("https://example.org/a?b=c&d=é"), "https://example.org/a?b=c&d=é"),
        (_ck("javascript:alert(1)"), None),
        ("https://www.bing.com/ck/a?!&&p=abc&u=a1%%%notbase64&ntb=1", None),
        ("https://www.bing.com/ck/a?!&&p=abc&ntb=1", None),
        ("/search?q=heron&FORM=QSRE1", None),
        ("/images/search?q=heron", None),
        ("https://www.bing.com/videos/search?q=heron", None),
        ("https://www.bing.com/aclk?ld=e8&u=aHR0cHM6Ly9leGFtcGxlLmNvbQ", None),
        ("http://cc.bingj.com/cache.aspx?q=heron&d=4500000&w=x", None),
        ("http://www.microsofttranslator.com/bv.aspx?ref=SERP&a=https%3a%2f%2fx.org", None),
        ("https://en.wikipedia.org/wiki/Heron", "https://en.wikipedia.org/wiki/Heron"),
        ("https://www.bing.com/", "https://www.bing.com/"),
    ],
)
def test_clean_bing_url_should_unwrap_ck_links_and_refuse_bings_own(
    href: str, expected: str | None
) -> None:
    assert clean_bing_url(href) == expected


@pytest.mark.parametrize(
    ("name", "url", "expected"),
    [
        ("challenge.html", None, "captcha"),
        ("challenge.html", "https://www.bing.com/turing/captcha/challenge?q=x", "captcha"),
        ("consent.html", None, "consent"),
        ("consent.html", "https://www.bing.com/search?q=wetter", "consent"),
        ("2023-en-ck-links.html", "https://www.bing.com/search?q=heron", None),
    ],
)
def test_walls_should_be_told_from_results_pages(
    name: str, url: str | None, expected: str | None
) -> None:
    assert detect_bing_interstitial((BUILT / name).read_text(), url) == expected


def test_the_challenge_address_alone_should_say_captcha() -> None:
    url = "https://www.bing.com/turing/captcha/challenge?q=weather"
    assert detect_bing_interstitial("<html><body></body></html>", url) == "captcha"


def test_a_wall_should_be_an_empty_page_with_blocked_set() -> None:
    assert parse_bing((BUILT / "challenge.html").read_text()) == SerpPage(
        engine="bing", blocked="captcha"
    )
    assert parse_bing((BUILT / "consent.html").read_text()).blocked == "consent"


@pytest.mark.parametrize("stem", STEMS)
def test_no_saved_results_page_should_be_taken_for_a_wall(stem: str) -> None:
    assert detect_bing_interstitial(page(stem), address(stem)) is None


def test_nothing_parseable_should_give_an_empty_bing_page() -> None:
    assert parse_bing("") == SerpPage(engine="bing")


def test_cli_parse_serp_should_recognise_a_bing_page_by_itself(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stem = "2022-08-15_bing-great-blue-heron-sound-1660552923"
    code = main(["--env-file", "", "parse", "serp", str(BING / f"{stem}.html.gz")])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["engine"] == "bing" and record["blocked"] is None
    assert [norm(r["url"]) for r in record["results"]] == [norm(r["url"]) for r in approved(stem)]
