"""The results-page parsers on real pages rewritten the ways engines change theirs
(tests/_rewrites.py): titles out of `<h3>`, class names and ids renamed, the overview's heading
reworded, wrappers inserted, links sent through a click tracker. Each keeps what today's page
gives, or the parse says it is suspect."""

from __future__ import annotations

import gzip
from pathlib import Path
from urllib.parse import unquote

import pytest

from search.parsers import SerpPage, parse_bing, parse_serp
from tests._rewrites import REWRITES, reword_overview

FIXTURES = Path(__file__).parent / "fixtures"


def read(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def urls(page: SerpPage) -> set[str]:
    return {unquote(r.url).rstrip("/") for r in page.results}


# One page of each layout the project keeps (2009, 2021 JS, no-JS, 2025, 2026 built).
GOOGLE = [
    "serp/aql-wayback/2009-04-18_google-ocolc-826746-1240020639.html.gz",
    "serp/aql-wayback/2021-08-11_google-243-1628713922.html.gz",
    "serp/aql-wayback/2020-12-20_google-crow-names-1608438374.html.gz",
    "serp/zlurad-serp-parser/desktop/featured-snippet.html.gz",
    "serp/zlurad-serp-parser/nojs/matrix-nojs.html.gz",
    "serp/nwatab-search-navigator/2025-05-25_all_quantum-field-theory_ja-UI_tokyo.html.gz",
    "serp/built/2026-en-overview.html",
    "serp/built/2026-ja-overview.html",
]
KINDS = ["rename", "h3-role-heading", "h3-span", "wrap-divs", "articles", "tracking", "all"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GOOGLE)
def test_google_results_should_survive_each_rewrite(name: str, kind: str) -> None:
    html = read(FIXTURES / name)
    before = parse_serp(html)
    after = parse_serp(REWRITES[kind](html))
    found = len(urls(after) & urls(before)) / len(urls(before))
    # a video carousel's cards lose what told them from a video result: 2 of 10 may go
    assert found >= 0.75 or after.health.state == "suspect", (found, after.results)
    # what the structure finds beside the results (answers' sources) stays a minority
    assert len(urls(after) - urls(before)) * 2 <= len(urls(after)), urls(after) - urls(before)
    if before.ai_overview is not None:
        assert after.ai_overview is not None
        assert after.ai_overview.text == before.ai_overview.text


@pytest.mark.parametrize("kind", ["rename", "all"])
@pytest.mark.parametrize(
    "name",
    [
        "serp/aql-wayback/2021-08-11_google-243-1628713922.html.gz",
        "serp/nwatab-search-navigator/2025-08-07_all_something_en_usa_infinite-scroll.html.gz",
        "serp/zlurad-serp-parser/desktop/google.html.gz",
    ],
)
def test_a_knowledge_panel_should_be_found_by_its_shape(name: str, kind: str) -> None:
    # The side block with a title heading and "label: value" rows, its class names renamed.
    html = read(FIXTURES / name)
    before = parse_serp(html).knowledge_panel
    after = parse_serp(REWRITES[kind](html)).knowledge_panel
    assert before is not None
    assert after is not None, kind
    assert after.title == before.title
    assert set(after.facts) & set(before.facts), (after.facts, before.facts)


@pytest.mark.parametrize("kind", ["rename", "all"])
def test_a_featured_snippet_should_be_found_by_its_shape(kind: str) -> None:
    # The prose above its source's title link, in the first result's block.
    html = read(FIXTURES / "serp/zlurad-serp-parser/desktop/featured-snippet.html.gz")
    before = parse_serp(html).answer
    after = parse_serp(REWRITES[kind](html)).answer
    assert before is not None and after is not None
    assert before[:60] in after, (before, after)


def test_no_answer_box_or_panel_should_be_made_up_on_rewritten_pages() -> None:
    # Pages with neither: a rewrite never gives them one (results' own "label:" rows and
    # descriptions are not a panel or an answer).
    for name in GOOGLE:
        html = read(FIXTURES / name)
        before = parse_serp(html)
        for kind in KINDS:
            after = parse_serp(REWRITES[kind](html))
            if before.answer is None:
                assert after.answer is None, (name, kind, after.answer)
            if before.knowledge_panel is None:
                assert after.knowledge_panel is None, (name, kind, after.knowledge_panel)


@pytest.mark.parametrize(
    "name",
    [
        "serp/aql-wayback/2019-06-11_google-can-ju-ying-yu-1560296360.html.gz",
        "serp-engines/bing/2010-05-22_bing-obama-speech-1274497739.html.gz",
    ],
)
def test_a_renamed_page_read_whole_should_not_be_called_suspect(name: str) -> None:
    # Its main column's ids renamed: the column is found around the results it parsed, not
    # taken to be the whole page (whose side panel and footer links would make it "suspect").
    html = read(FIXTURES / name)
    parse = parse_bing if "bing" in name else parse_serp
    before = parse(html)
    after = parse(REWRITES["rename"](html))
    assert urls(after) == urls(before)
    assert after.health.state == "ok", after.health.reasons


def test_a_missed_column_of_one_sites_videos_should_make_the_parse_suspect() -> None:
    # 2021 "fer palacio": its results are YouTube videos; with titles out of <h3> they look
    # like a carousel's cards and 1 of 9 is read. One site, many addresses: suspect, not ok.
    html = read(FIXTURES / "serp/aql-wayback/2021-09-08_google-fer-palacio-1631069534.html.gz")
    assert parse_serp(html).health.state == "ok"
    after = parse_serp(REWRITES["h3-role-heading"](html))
    assert len(after.results) < 5
    assert after.health.state == "suspect", after.health.reasons


BING = sorted((FIXTURES / "serp-engines" / "bing").glob("*.html.gz"))


@pytest.mark.parametrize("name", ["rename", "tracking", "all"])
@pytest.mark.parametrize("path", BING, ids=lambda p: p.name[:40])
def test_bing_results_should_survive_renamed_classes_and_click_trackers(
    path: Path, name: str
) -> None:
    # Its results list found by its shape (repeated blocks of a titled outside link and a
    # description) when its class names say nothing.
    html = read(path)
    before = parse_bing(html)
    after = parse_bing(REWRITES[name](html))
    found = len(urls(after) & urls(before)) / max(1, len(urls(before)))
    assert found >= 0.95, (found, after.health, [r.url for r in after.results])
    assert len(urls(after) - urls(before)) * 5 <= len(urls(after)), urls(after) - urls(before)


@pytest.mark.parametrize(
    ("name", "state"),
    [
        ("2026-en-unavailable", "unavailable"),
        ("2026-ko-unavailable", "unavailable"),
        ("2026-en-error", "error"),
        ("2026-ja-error", "error"),
        ("2026-en-loading", "loading"),
        ("2026-en-no-overview", None),
    ],
)
def test_a_reworded_overview_heading_should_keep_the_overviews_state(
    name: str, state: str | None
) -> None:
    # The short block headed as generated says its state in words (a hidden template's other
    # message does not count); a page without an overview block gets no state (no 3 s wait).
    html = (FIXTURES / "serp" / "built" / f"{name}.html").read_text()
    assert parse_serp(html).ai_overview_state == state
    for kind in ("overview-reworded", "all"):
        assert parse_serp(REWRITES[kind](html)).ai_overview_state == state, kind


@pytest.mark.parametrize("name", ["2026-en-overview", "2026-ko-overview", "2025-en-sge-overview"])
def test_a_reworded_overview_heading_should_still_give_the_overview(name: str) -> None:
    html = (FIXTURES / "serp" / "built" / f"{name}.html").read_text()
    before = parse_serp(html)
    for wording in ("Overview from AI", "Resumen creado por IA", "AI 요약"):
        changed = reword_overview(html).replace(reword_overview_wording(html), wording)
        after = parse_serp(changed)
        assert after.ai_overview is not None, wording
        assert after.ai_overview.text == before.ai_overview.text  # type: ignore[union-attr]
        assert after.ai_overview_state == "ready"


def reword_overview_wording(html: str) -> str:
    """The wording `reword_overview` chose for this page."""
    changed = reword_overview(html)
    from tests._rewrites import OVERVIEW_WORDINGS

    return next(w for w in OVERVIEW_WORDINGS if w in changed)


def test_an_overview_heading_inside_people_also_ask_should_not_make_the_page_wait() -> None:
    html = (FIXTURES / "serp" / "built" / "2026-en-no-overview.html").read_text()
    quoted = (
        '<div role="button"><span>Why is the sunset red?</span></div>'
        "<div><h2>AI Overview</h2><div>Generating</div></div>"
    )
    changed = html.replace(
        '<div role="button"><span>Why is the sunset red?</span></div>', quoted, 1
    )
    assert changed != html
    page = parse_serp(changed)
    assert page.ai_overview is None and page.ai_overview_state is None
