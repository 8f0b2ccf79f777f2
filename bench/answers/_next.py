"""`python -m bench.answers --next`: when should a search that reads open the next result?

In-process, per language and budget, on results pages whose top two organic results lead to
built pages where the answer lies in the first, in the second, or in neither (the other
pages are other articles of the same set, dealt deterministically): the share of questions
for which the brain gets the answer (in context, as `hits` counts it), how often the next
result is opened, and how often a page that held the answer was traded for one that did
not, for each confidence threshold, beside reading the top result alone. The reads are
`select` on each page's extracted text with the question (the rule the tool applies:
open the next result when the top one's `confidence` is below the threshold, keep the
next one only when its confidence is higher by more than a margin). A first read's
confidence on pages with and without the answer is printed as quartiles, to set the
threshold by.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

from bench.answers._eval import Item, Page, normalise

__all__ = ["CASES", "THRESHOLDS", "next_result_figures"]

CASES = ("first", "second", "neither")
THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.8, 1.01)
MARGINS = (0.0, 0.1, 0.2, 0.3)


def _others(pages: Sequence[Page], page: int) -> tuple[int, int]:
    """Two other pages of the same language, the next ones in order (wrapping round)."""
    same = [n for n, p in enumerate(pages) if p.language == pages[page].language]
    at = same.index(page)
    return same[(at + 1) % len(same)], same[(at + 2) % len(same)]


def _read(module: ModuleType, page: Page, item: Item, budget: int) -> tuple[bool, float]:
    chosen = module.select(page.text, item.question, budget)
    return item.needle in normalise(chosen.text), float(chosen.confidence)


def _quartiles(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    picks = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.1, 0.25, 0.5, 0.75)]
    return " ".join(f"{v:.2f}" for v in picks)


def next_result_figures(
    module: ModuleType, pages: Sequence[Page], items: Sequence[Item], budgets: Sequence[int]
) -> dict[str, Any]:
    """Per language and budget, per threshold: answered (first / second / neither cases),
    pages opened a question and trades; and the first read's confidence quartiles."""
    langs = sorted({i.language for i in items})
    print(
        "\nthe next result: top two results lead to the answer's page in the first, the "
        "second or neither place (other articles of the set elsewhere);\n"
        "per threshold: answered when the answer is in the first | in the second, pages "
        "opened a question, pages with the answer traded away"
    )
    figures: dict[str, Any] = {}
    for budget in budgets:
        for lang in langs:
            mine = [i for i in items if i.language == lang]
            if len({i.page for i in mine}) < 3:
                continue
            reads = []
            for item in mine:
                other, third = _others(pages, item.page)
                answer = _read(module, pages[item.page], item, budget)
                wrong = _read(module, pages[other], item, budget)
                wrong2 = _read(module, pages[third], item, budget)
                reads.append((answer, wrong, wrong2))
            on = [a[1] for a, _, _ in reads]
            off = [w[1] for _, w, _ in reads]
            print(
                f"  {lang} {budget}: {len(mine)} questions; confidence p10 p25 p50 p75 with the "
                f"answer on the page {_quartiles(on)}, without {_quartiles(off)}"
            )
            rows = {}
            for threshold in THRESHOLDS:
                for margin in MARGINS:
                    row = _tally(reads, threshold, margin)
                    rows[f"{threshold:g}/{margin:g}"] = row
                    print(
                        f"    below {threshold:<4g} margin {margin:<3g}: {row['first']:6.2f}% | "
                        f"{row['second']:6.2f}%, {row['pages']:.2f} pages, {row['traded']} traded"
                    )
            figures[f"{lang}/{budget}"] = {
                "questions": len(mine),
                "confidence_with_answer": sorted(on)[len(on) // 2],
                "confidence_without": sorted(off)[len(off) // 2],
                "thresholds": rows,
            }
    return figures


Read = tuple[bool, float]


def _tally(reads: list[tuple[Read, Read, Read]], threshold: float, margin: float) -> dict[str, Any]:
    """The rule at one threshold over the three cases of every question."""
    got = dict.fromkeys(CASES, 0)
    opened = 0
    traded = 0
    for answer, wrong, wrong2 in reads:
        for case, (first, second) in zip(
            CASES, ((answer, wrong), (wrong, answer), (wrong, wrong2)), strict=True
        ):
            found, pages = _rule(first, second, threshold, margin)
            got[case] += found
            opened += pages
            traded += case == "first" and first[0] and not found
    total = len(reads)
    return {
        "first": 100.0 * got["first"] / total,
        "second": 100.0 * got["second"] / total,
        "neither": 100.0 * got["neither"] / total,
        "pages": opened / (3 * total),
        "traded": traded,
    }


def _rule(first: Read, second: Read, threshold: float, margin: float) -> tuple[bool, int]:
    """What the brain gets (whether it holds the answer) and the pages opened: the next
    result when the first's confidence is under `threshold`, kept when its confidence is
    more than `margin` above the first's."""
    if first[1] >= threshold:
        return first[0], 1
    return (second[0] if second[1] > first[1] + margin else first[0]), 2
