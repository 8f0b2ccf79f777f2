"""The 2025-2026 results page: the AI Overview (its text in reading order, its sources, its
states), the snippets without "Read more", and the blocks that are not organic results.

The pages are built to the shape of the real ones (tests/_serp_pages.py); each is parsed as
built and again with every class name changed, as Google changes them."""

from __future__ import annotations

import pytest

from search.parsers.google import parse_serp
from tests import _serp_pages as pages

BUILT = {
    "2026-en": lambda: pages.page_2026("why is the sky blue"),
    "2026-en-expanded": lambda: pages.page_2026("why is the sky blue", expanded=True),
    "2025-en-sge": lambda: pages.page_2025_sge("why is the sky blue"),
}
UI_TEXT = (
    "Show more",
    "AI responses may include mistakes",
    "Learn more",
    "Dive deeper",
    "Positive feedback",
    "View related links",
    "Show all",
    "Generative AI is experimental",
    "not available",
    "Can't generate",
    "source text",  # a source card's snippet
    "AI Overview",
)


@pytest.fixture(params=["as-built", "renamed"])
def variant(request: pytest.FixtureRequest) -> object:
    return pages.renamed if request.param == "renamed" else (lambda page: page)


@pytest.mark.parametrize("name", sorted(BUILT))
def test_the_overview_is_read_in_order_without_interface_text(name: str, variant: object) -> None:
    serp = parse_serp(variant(BUILT[name]()))  # type: ignore[operator]
    overview = serp.ai_overview
    assert overview is not None and serp.ai_overview_state == "ready" and overview.complete
    assert overview.paragraphs == [
        *pages.SKY.paragraphs,
        pages.SKY.section,
        *(lead + text for lead, text in pages.SKY.items),
    ]
    assert "- Sunlight: the sun emits less violet light" in overview.text
    for ui in UI_TEXT:
        assert ui not in overview.text, ui


@pytest.mark.parametrize("name", sorted(BUILT))
def test_the_overview_cites_its_sources_once_each(name: str, variant: object) -> None:
    overview = parse_serp(variant(BUILT[name]())).ai_overview  # type: ignore[operator]
    assert overview is not None
    assert [(s.title, s.url.split("#")[0]) for s in overview.sources] == [
        (title, url) for title, url, _ in pages.SKY.sources
    ]


def test_an_overview_cut_off_behind_show_more_says_so() -> None:
    assert parse_serp(BUILT["2026-en"]()).ai_overview.collapsed  # type: ignore[union-attr]
    assert not parse_serp(BUILT["2026-en-expanded"]()).ai_overview.collapsed  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("lang", "overview", "results", "heading"),
    [
        ("ko", pages.KO_OVERVIEW, pages.KO_RESULTS, "AI 개요"),
        ("ja", pages.JA_OVERVIEW, pages.JA_RESULTS, "AI による概要"),
    ],
)
def test_korean_and_japanese_overviews_are_read(
    lang: str, overview: pages.Overview, results: list[pages.Result], heading: str, variant: object
) -> None:
    serp = parse_serp(variant(pages.page_2026("q", lang, overview, results)))  # type: ignore[operator]
    assert serp.ai_overview is not None
    assert serp.ai_overview.paragraphs[0] == overview.paragraphs[0]
    assert heading not in serp.ai_overview.text
    assert pages.UI[lang]["disclaimer"].rstrip("。.") not in serp.ai_overview.text
    assert pages.UI[lang]["deeper"] not in serp.ai_overview.text
    assert [s.title for s in serp.ai_overview.sources] == [t for t, _, _ in overview.sources]


@pytest.mark.parametrize("lang", ["en", "ko", "ja"])
@pytest.mark.parametrize("state", ["unavailable", "error", "loading"])
def test_a_state_of_the_overview_is_never_an_overview(
    lang: str, state: str, variant: object
) -> None:
    page = pages.page_2026("q", lang, None, pages.SKY_RESULTS, state=state)
    serp = parse_serp(variant(page))  # type: ignore[operator]
    assert serp.ai_overview is None
    assert serp.ai_overview_state == state
    assert len(serp.results) == 3  # the results are still read


def test_a_page_without_an_overview_says_nothing_of_one() -> None:
    serp = parse_serp(pages.page_2026("q", ov=None))
    assert serp.ai_overview is None and serp.ai_overview_state is None


def test_an_overview_still_being_written_is_not_complete() -> None:
    page = pages.page_2026("q").replace(
        '<div class="FkX2oe"', '<div role="progressbar"></div><div class="FkX2oe"', 1
    )
    serp = parse_serp(page)
    assert serp.ai_overview is not None and not serp.ai_overview.complete
    assert serp.ai_overview_state == "loading"


def test_the_sge_overview_sent_as_a_deferred_script_part_is_read_from_the_raw_body() -> None:
    page = pages.page_2025_sge("q")
    assert "Generative AI is experimental" not in page.split("<script>")[0]
    serp = parse_serp(page)
    assert serp.ai_overview is not None and serp.ai_overview.footer  # the disclaimer arrived


@pytest.mark.parametrize("lang", ["en", "ko", "ja"])
def test_no_snippet_or_title_carries_read_more(lang: str, variant: object) -> None:
    results = {"en": pages.SKY_RESULTS, "ko": pages.KO_RESULTS, "ja": pages.JA_RESULTS}[lang]
    serp = parse_serp(variant(pages.page_2026("q", lang, None, results)))  # type: ignore[operator]
    assert [r.url for r in serp.results] == [r.url for r in results]
    for parsed, built in zip(serp.results, results, strict=True):
        assert parsed.title == built.title
        assert parsed.snippet.endswith(built.snippet), parsed.snippet
        assert pages.UI[lang]["read_more"] not in parsed.snippet


def test_forums_and_short_videos_are_their_own_fields_never_organic(variant: object) -> None:
    serp = parse_serp(variant(pages.page_2026("q")))  # type: ignore[operator]
    organic = [r.url for r in serp.results]
    assert organic == [r.url for r in pages.SKY_RESULTS]
    assert [d.url for d in serp.discussions] == [
        "https://www.reddit.com/r/askscience/comments/0/sky/",
        "https://www.reddit.com/r/askscience/comments/1/sky/",
        "https://forum.example.com/t/sky",
    ]
    assert [v.url for v in serp.short_videos] == [
        "https://www.youtube.com/shorts/short0",
        "https://www.youtube.com/shorts/short1",
    ]
    assert serp.top_stories == [] and serp.people_also_ask == ["Why is the sunset red?"]
