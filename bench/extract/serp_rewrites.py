"""`python -m bench.extract.serp --rewrites DIR...`: the results-page parsers on pages
rewritten the ways engines change theirs (tests/_rewrites.py), against each page's own parse.

Per rewrite and per half of the pages (split by a hash of the file's name, so a half can be
kept out of development): mean organic recall and precision, the lowest recall, the AI
Overviews still found, and "silent": parses that lost more than half of their results and
still said "ok".
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean, median

import lxml.html

from search.parsers import SerpPage, engine_for, other_tab
from tests._rewrites import REWRITES

from .serp import norm, read_text


@dataclass
class Tally:
    """One rewrite's figures over a set of pages."""

    recall: list[float] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    overviews: int = 0
    overviews_found: int = 0
    silent: list[str] = field(default_factory=list)
    suspect: int = 0
    ms: list[float] = field(default_factory=list)
    low: list[str] = field(default_factory=list)
    # The answer box and the knowledge panel: on the page before, found after, found after only.
    answers: list[int] = field(default_factory=lambda: [0, 0, 0])
    panels: list[int] = field(default_factory=lambda: [0, 0, 0])

    def line(self, label: str) -> str:
        if not self.recall:
            return f"{label:34} no pages"
        return (
            f"{label:34} pages={len(self.recall):3} recall={mean(self.recall):.3f}"
            f" (min {min(self.recall):.2f}) precision={mean(self.precision):.3f}"
            f" overview={self.overviews_found}/{self.overviews}"
            f" suspect={self.suspect} silent={len(self.silent)}"
            f" answer={self.answers[1]}/{self.answers[0]}+{self.answers[2]}"
            f" panel={self.panels[1]}/{self.panels[0]}+{self.panels[2]}"
            f" parse={median(self.ms):.0f}ms"
        )


def pages(roots: list[Path]) -> list[Path]:
    """The saved results pages under `roots`, each file name once."""
    found: dict[str, Path] = {}
    for root in roots:
        for path in sorted([*root.rglob("*.html"), *root.rglob("*.html.gz")]):
            found.setdefault(path.name, path)
    return [found[name] for name in sorted(found)]


def half(path: Path) -> str:
    return "A" if hashlib.sha1(path.name.encode()).digest()[0] % 2 == 0 else "B"


def score(tally: Tally, before: SerpPage, after: SerpPage, name: str) -> None:
    truth = {norm(r.url) for r in before.results}
    ours = {norm(r.url) for r in after.results}
    hits = len(truth & ours)
    recall = hits / len(truth)
    tally.recall.append(recall)
    if recall < 0.9:
        tally.low.append(f"{name} {recall:.2f}")
    tally.precision.append(hits / len(ours) if ours else 0.0)
    if before.ai_overview is not None:
        tally.overviews += 1
        tally.overviews_found += after.ai_overview is not None
    for counts, was, now in (
        (tally.answers, before.answer, after.answer),
        (tally.panels, before.knowledge_panel, after.knowledge_panel),
    ):
        counts[0] += was is not None
        counts[1] += was is not None and now is not None
        counts[2] += was is None and now is not None
    suspect = after.health.state == "suspect"
    tally.suspect += suspect
    if recall < 0.5 and not suspect:
        tally.silent.append(name)


def run(argv: list[str]) -> int:
    only, verbose = None, argv[:1] == ["-v"]
    argv = argv[1:] if verbose else argv
    if argv[:1] == ["--only"]:
        only, argv = argv[1].split(","), argv[2:]
    names = [n for n in REWRITES if only is None or n in only]
    tallies = {(n, h): Tally() for n in names for h in ("A", "B")}
    for path in pages([Path(a) for a in argv]):
        html = read_text(path)
        engine = engine_for(html)  # told by the page before its rewrite (live: by its address)
        before = engine.parse(html, None)
        tab = other_tab(html, None, lxml.html.fromstring(html))
        if before.blocked or len(before.results) < 3 or tab is not None:
            continue  # a wall, a page of another tab (images, news): not the web results
        for name in names:
            changed = REWRITES[name](html)
            started = time.perf_counter()
            after = engine.parse(changed, None)
            tally = tallies[(name, half(path))]
            tally.ms.append((time.perf_counter() - started) * 1000)
            score(tally, before, after, path.name)
    for name in names:
        a, b = tallies[(name, "A")], tallies[(name, "B")]
        both = Tally(
            a.recall + b.recall,
            a.precision + b.precision,
            a.overviews + b.overviews,
            a.overviews_found + b.overviews_found,
            a.silent + b.silent,
            a.suspect + b.suspect,
            a.ms + b.ms,
            a.low + b.low,
            [x + y for x, y in zip(a.answers, b.answers, strict=True)],
            [x + y for x, y in zip(a.panels, b.panels, strict=True)],
        )
        for label, tally in ((f"{name} [A]", a), (f"{name} [B]", b), (name, both)):
            print(tally.line(label))
        for page in both.silent[:5]:
            print(f"    silent: {page}")
        if verbose:
            print("    recall < 0.9:", ", ".join(both.low))
    return 0
