"""The answer model and its rendering (gemini/_models.py), and the package's public names."""

from __future__ import annotations

import gemini
from browser_core import Source
from gemini._models import Citation, cite_text, urls_in_text


def test_all_is_sorted_and_every_name_exists() -> None:
    assert gemini.__all__ == sorted(gemini.__all__)
    assert all(hasattr(gemini, name) for name in gemini.__all__)
    public = {n for n in vars(gemini) if not n.startswith("_")} - {"testing"}
    assert public == set(gemini.__all__)


def test_error_leaves_share_one_root_with_stable_kinds() -> None:
    leaves = {
        gemini.GeminiCliMissing: "gemini-cli-missing",
        gemini.GeminiAuthError: "gemini-auth",
        gemini.GeminiQuotaError: "gemini-quota",
        gemini.GeminiTimeout: "gemini-timeout",
        gemini.GeminiUntrusted: "gemini-untrusted",
        gemini.GeminiCliError: "gemini-cli-error",
        gemini.GeminiModelError: "gemini-model",
        gemini.GeminiUnavailable: "gemini-unavailable",
        gemini.GeminiBadResponse: "gemini-bad-response",
    }
    for leaf, kind in leaves.items():
        assert issubclass(leaf, gemini.GeminiError)
        assert leaf("x").kind == kind
    assert issubclass(gemini.GeminiTimeout, TimeoutError)


def test_cite_text_snaps_an_offset_inside_a_character_forward_and_clamps() -> None:
    text = "夕焼け!"
    inside = Citation(start=0, end=1, source_indices=(0,))  # inside the first character
    beyond = Citation(start=0, end=999, source_indices=(1, 7))  # past the end; 7 is unknown
    assert cite_text(text, [inside, beyond], n_sources=2) == "夕[1]焼け![2]"


def test_cite_text_merges_markers_at_the_same_offset_without_repeats() -> None:
    text = "Blau."
    cites = [
        Citation(start=0, end=5, source_indices=(1, 0)),
        Citation(start=0, end=5, source_indices=(0,)),
    ]
    assert cite_text(text, cites, n_sources=2) == "Blau.[2][1]"


def test_render_answer_without_sources_is_just_the_text() -> None:
    answer = gemini.GeminiAnswer(text=" Hello. ", auth="oauth")
    assert gemini.render_answer(answer) == "Hello."


def test_render_answer_lists_untitled_sources_by_url() -> None:
    answer = gemini.GeminiAnswer(
        text="A.",
        auth="apikey",
        sources=[Source(url="https://a.example/x")],
        citations=[Citation(start=0, end=2, source_indices=(0,))],
    )
    assert gemini.render_answer(answer) == "A.[1]\n\nSources:\n[1] https://a.example/x"


def test_urls_in_text_trims_punctuation_and_unbalanced_parentheses() -> None:
    text = (
        "See https://en.wikipedia.org/wiki/Mercury_(planet), [NASA](https://nasa.gov/x). "
        "Again https://nasa.gov/x."
    )
    assert [(s.title, s.url) for s in urls_in_text(text)] == [
        ("en.wikipedia.org", "https://en.wikipedia.org/wiki/Mercury_(planet)"),
        ("nasa.gov", "https://nasa.gov/x"),
    ]
