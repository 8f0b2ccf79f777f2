"""`python -m bench.answers --next`: the next result against a page that shares the question's
words (issue 57), the case a search meets: the other page is not a random article but the one
of the same language that holds most of the question's terms (a results page's neighbour).

Per language, for each question: the read's confidence on the answer's page and on that
other page; then the rule the tool applies (open the next result below the threshold; both
pages' answers go to the brain, the better first), as a confusion per language:
  - answer only in result 2: answered (opened, and the answer's page not far below the other);
  - answer in result 1: result 2 opened needlessly, and the answer's page traded away (the
    other far above it, only the other's best sentences kept);
and the threshold chosen by K-fold cross-validation (the highest share answered in result 2
with at most MAX_NEEDLESS opened needlessly in every language on the training folds).

Then the rule with the next result read unseen (`Driver.peek`, search/providers/google.py):
both pages' confidences are known before the next one is opened, and it is opened when its
confidence is higher than the top one's by more than a margin, or the top one's is under a
floor. The floor and the margin are chosen the same way (the most answered less the needless
opens, at most MAX_NEEDLESS needless in every language), on the same folds.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from bench.answers._eval import Item, Meaning, Page

__all__ = ["hard_next_figures"]

MAX_NEEDLESS = 0.15
# Below this difference of confidence both pages' best sentences reach the brain in full.
MARGIN = 0.2
THRESHOLDS = tuple(x / 100 for x in range(10, 71, 2))
FLOORS = tuple(x / 100 for x in range(0, 31, 2))
PEEK_MARGINS = (-0.05, -0.02, 0.0, 0.02, 0.05, 0.1)
# The next result answers instead of the top one above this lead (google.READ_NEXT_MARGIN).
CHOICE_MARGIN = 0.1

Pair = tuple[float, float]  # confidence on the answer's page, on the other page


def _hard_other(
    module: ModuleType, pages: Sequence[Page], bags: list[Counter[str]], item: Item
) -> int:
    """The other page of the item's language that holds most of the question's terms."""
    asked = set(module.tokens(item.question))
    best, best_score = item.page, -1.0
    for n, page in enumerate(pages):
        if n == item.page or page.language != item.language:
            continue
        score = sum(1 for t in asked if t in bags[n]) + 0.001 * sum(
            min(bags[n][t], 3) for t in asked
        )
        if score > best_score:
            best, best_score = n, score
    return best


def _rates(pairs: Sequence[Pair], threshold: float) -> dict[str, float]:
    n = len(pairs) or 1
    return {
        "second_answered": sum(1 for p, q in pairs if q < threshold and p >= q - MARGIN) / n,
        "needless": sum(1 for p, _ in pairs if p < threshold) / n,
        "traded": sum(1 for p, q in pairs if p < threshold and q > p + MARGIN) / n,
        "kept": sum(1 for p, _ in pairs if p >= threshold) / n,
    }


def _peek_rates(pairs: Sequence[Pair], floor: float, margin: float) -> dict[str, float]:
    """The peek's rule on (answer's page, other page) pairs: in result 2 the answer's page is
    opened when the other (on top) is under `floor` or the answer's page leads by `margin`;
    in result 1, the other is opened needlessly the same way, and traded for above
    CHOICE_MARGIN (the answer's page then reaches the brain as its best sentences only)."""
    n = len(pairs) or 1

    def opens(top: float, nxt: float) -> bool:
        return top < floor or nxt > top + margin

    return {
        "second_answered": sum(1 for p, q in pairs if opens(q, p)) / n,
        "needless": sum(1 for p, q in pairs if opens(p, q)) / n,
        "traded": sum(1 for p, q in pairs if opens(p, q) and q > p + CHOICE_MARGIN) / n,
        "kept": sum(1 for p, q in pairs if not opens(p, q)) / n,
    }


def _choose_peek(by_lang: dict[str, list[Pair]]) -> tuple[float, float]:
    best, best_score = (FLOORS[0], PEEK_MARGINS[-1]), -9.0
    for floor in FLOORS:
        for margin in PEEK_MARGINS:
            rates = [_peek_rates(pairs, floor, margin) for pairs in by_lang.values()]
            if any(r["needless"] > MAX_NEEDLESS for r in rates):
                continue
            score = sum(r["second_answered"] - r["needless"] for r in rates)
            if score > best_score:
                best, best_score = (floor, margin), score
    return best


def _choose(by_lang: dict[str, list[Pair]]) -> float:
    """The threshold with the most answered in result 2 and at most MAX_NEEDLESS needless
    opens in every language."""
    best, best_score = THRESHOLDS[0], -1.0
    for threshold in THRESHOLDS:
        rates = [_rates(pairs, threshold) for pairs in by_lang.values()]
        if any(r["needless"] > MAX_NEEDLESS for r in rates):
            continue
        score = sum(r["second_answered"] for r in rates)
        if score > best_score:
            best, best_score = threshold, score
    return best


def hard_next_figures(
    module: ModuleType,
    pages: Sequence[Page],
    items: Sequence[Item],
    folds: int = 5,
    meaning: Meaning | None = None,
) -> dict[str, Any]:
    """Confusion per language at the module's confidence (with the reading model when
    `meaning` is given), the threshold chosen per fold."""
    extra = {"meaning": meaning} if meaning is not None else {}
    bags = [Counter(module.tokens(p.text)) for p in pages]
    pairs: list[tuple[str, Pair]] = []
    for item in items:
        if not item.survived:
            continue
        other = _hard_other(module, pages, bags, item)
        on = float(module.select(pages[item.page].text, item.question, 6000, **extra).confidence)
        off = float(module.select(pages[other].text, item.question, 6000, **extra).confidence)
        pairs.append((item.language, (on, off)))
    order = list(range(len(pairs)))
    random.Random(57).shuffle(order)
    parts = [order[k::folds] for k in range(folds)]
    langs = sorted({lang for lang, _ in pairs})
    totals: dict[str, list[dict[str, float]]] = {lang: [] for lang in langs}
    peeked: dict[str, list[dict[str, float]]] = {lang: [] for lang in langs}
    chosen, chosen_peek = [], []
    for k in range(folds):
        test = set(parts[k])
        train = {
            lang: [p for i, (lg, p) in enumerate(pairs) if lg == lang and i not in test]
            for lang in langs
        }
        threshold = _choose(train)
        chosen.append(threshold)
        floor, margin = _choose_peek(train)
        chosen_peek.append((floor, margin))
        for lang in langs:
            held = [p for i, (lg, p) in enumerate(pairs) if lg == lang and i in test]
            totals[lang].append(_rates(held, threshold))
            peeked[lang].append(_peek_rates(held, floor, margin))
    print(
        "\nthe next result against the page that shares most of the question's words "
        f"({folds}-fold cross-validation; thresholds chosen {', '.join(f'{t:g}' for t in chosen)}):"
    )
    figures: dict[str, Any] = {"thresholds": chosen, "peek": {"chosen": chosen_peek}}
    for lang in langs:
        mean = {key: sum(r[key] for r in totals[lang]) / folds for key in totals[lang][0]}
        figures[lang] = mean
        _say(lang, mean, sum(1 for lg, _ in pairs if lg == lang))
    print(
        "the next result read unseen first (floor, margin chosen "
        f"{', '.join(f'{f:g}/{m:g}' for f, m in chosen_peek)}):"
    )
    for lang in langs:
        mean = {key: sum(r[key] for r in peeked[lang]) / folds for key in peeked[lang][0]}
        figures["peek"][lang] = mean
        _say(lang, mean, sum(1 for lg, _ in pairs if lg == lang))
    return figures


def _say(lang: str, mean: dict[str, float], questions: int) -> None:
    print(
        f"  {lang}: answer only in result 2: {mean['second_answered']:.1%} answered; "
        f"answer in result 1: kept alone {mean['kept']:.1%}, result 2 opened "
        f"{mean['needless']:.1%}, the answer's page traded {mean['traded']:.2%} "
        f"({questions} questions)"
    )
