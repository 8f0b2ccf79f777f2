"""Which saved pages the bench and soak use: a heavy Google results page and article pages.

The local set (tests/fixtures) is preferred; the shared evaluation set (../shared/fixtures,
or any folder passed with --fixtures) is the fallback. Every choice is printed by the caller.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from bench._common.serve import read_page

ROOT = Path(__file__).resolve().parents[2]
LOCAL_FIXTURES = ROOT / "tests" / "fixtures"
SHARED_FIXTURES = ROOT.parent / "shared" / "fixtures"
# Preferred heavy pages: real 2024-2025 desktop result pages, 0.5-2 MB (first found wins).
HEAVY_NAMES = (
    "full_html_response.html",
    "2025-05-25_all_quantum-field-theory_ja-UI_tokyo.html.gz",
    "2025-05-25_all_quantum-field-theory_ja-UI_tokyo.html",
)


def default_sets(explicit: list[Path] | None = None) -> list[Path]:
    """`--fixtures` folders if given, else tests/fixtures then the shared set (those present)."""
    if explicit:
        return [p.expanduser() for p in explicit]
    return [p for p in (LOCAL_FIXTURES, SHARED_FIXTURES) if p.is_dir()]


def html_files(folder: Path) -> Iterator[Path]:
    for pattern in ("*.html", "*.html.gz"):
        yield from folder.rglob(pattern)


def find_heavy(fixtures: list[Path], explicit: Path | None = None) -> Path:
    """The heavy results page: `--heavy`, else a preferred name, else the largest SERP 0.5-2 MB."""
    if explicit:
        return explicit
    for folder in fixtures:
        for name in HEAVY_NAMES:
            found = sorted(folder.rglob(name))
            if found:
                return found[0]
    for folder in fixtures:
        serps = [p for p in html_files(folder) if "serp" in str(p).lower()]
        sized = [(len(read_page(p)), p) for p in serps]
        fits = [item for item in sized if 500_000 <= item[0] <= 2_000_000]
        if fits:
            return max(fits)[1]
    raise SystemExit("no heavy Google results page found: pass --heavy FILE or --fixtures DIR")


def article_files(fixtures: list[Path]) -> list[tuple[int, Path]]:
    """Article pages (paths with "article" in them) with sizes, from the first set having any."""
    for folder in fixtures:
        files = [p for p in html_files(folder) if "article" in str(p.relative_to(folder))]
        if files:
            return sorted((len(read_page(p)), p) for p in files)
    return []


def find_light(fixtures: list[Path], explicit: Path | None = None) -> Path:
    """A light article: `--light`, else the median-sized article of 20-60 kB."""
    if explicit:
        return explicit
    small = [item for item in article_files(fixtures) if 20_000 <= item[0] <= 60_000]
    if not small:
        raise SystemExit("no light article page found: pass --light FILE or --fixtures DIR")
    return small[len(small) // 2][1]
