"""A page cannot stall the read: article extraction's patterns are linear in the page.

`extract_article` runs on a worker thread, but Python's `re` holds the GIL: a slow match
freezes every thread of the process, the deadline's too, so the call cannot fail open. Each
page here is small (5 KB to 300 KB) and took minutes before its fix. The read passes the
whole response body to `extract_article`; `<pre>` text keeps its whitespace through
trafilatura, so a line can hold a run of spaces as long as the page.
"""

from __future__ import annotations

import pytest

from search.parsers import article
from tests._timed import seconds_in_fresh_python

_BODY = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 30 + "</p>"


def _page(inner: str) -> str:
    return (
        "'<html><head><title>Page</title></head><body><article><h1>Head</h1>"
        f"{_BODY}' + {inner} + '{_BODY}</article></body></html>'"
    )


@pytest.mark.parametrize(
    "markup",  # not `page`: that name is pytest-playwright's fixture, and starts its browser
    [
        # the <title> pattern rescanned to the 300 KB window's end from every `<title`
        "'<html><head>' + '<title>' * 42_000 + '</head><body><p>x</p></body></html>'",
        # furniture, a comment counter: `\s*[:(]?\s*\d*\s*` cubic in a run of spaces
        _page("'<pre>comments' + ' ' * 3_000 + 'x</pre>'"),
        # furniture, a reading time: `\s*:?\s*` quadratic
        _page("'<pre>Lesezeit' + ' ' * 100_000 + 'x</pre>'"),
        # "click to tweet": searched from inside every run of spaces, quadratic
        _page("'<pre>a' + ' ' * 200_000 + 'b</pre>'"),
    ],
    ids=["title-openers", "comment-counter-spaces", "reading-time-spaces", "space-run"],
)
def test_a_hostile_page_is_extracted_in_linear_time(markup: str) -> None:
    code = (
        "import time; from search.parsers.article import extract_article; "
        f"html = {markup}; started = time.monotonic(); "
        "extract_article(html, 'https://example.com/a'); "
        "print(round(time.monotonic() - started, 2))"
    )
    assert seconds_in_fresh_python(code, 30, "extracting the page") < 5.0


def test_a_page_past_the_markup_cap_is_read_from_its_beginning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the first MAX_HTML_CHARS of a page are extracted from (4 MB; 20,000 here)."""
    monkeypatch.setattr(article, "MAX_HTML_CHARS", 20_000)
    opening = "<p>" + "The kestrel hovers over the meadow before it drops on a vole. " * 8 + "</p>"
    html = (
        f"<html><head><title>Kestrels</title></head><body><article>{opening * 3}"
        + "<p>filler words for the long middle of the page.</p>" * 2_000
        + "<p>A sentence past the cap that is never read.</p></article></body></html>"
    )
    text = article.extract_article(html).text
    assert "kestrel hovers" in text
    assert "past the cap" not in text
