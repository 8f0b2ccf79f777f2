"""Cross-validation of the passage module's settings (`--folds K`): articles, not questions,
are split into folds, so no page is both tuned on and scored.

Each setting in a small grid of the module's constants (set on the module, restored after)
is scored once on every sampled question; then for each fold the setting with the best mean
share over the other folds (every language and budget weighing alike) is chosen, and its
share on the held-out fold is reported beside the module's own setting's. Only questions on
pages longer than the budget are scored: a page that fits is returned whole by every setting.
"""

from __future__ import annotations

import contextlib
import itertools
import random
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

from bench.answers._eval import Item, Meaning, Page, hits, read_with, thin

__all__ = ["DEFAULT_GRID", "cross_validate", "parse_grid", "patched"]

DEFAULT_GRID: dict[str, tuple[float, ...]] = {
    "SENTENCE_BUDGET": (0, 1500, 6000),
    "PASSAGE_WEIGHT": (0.25, 0.5, 1.0),
    "SENTENCE_POOL": (4, 8, 16),
}
Setting = tuple[tuple[str, float], ...]


def parse_grid(text: str) -> dict[str, tuple[float, ...]]:
    """`NAME=v1,v2;NAME=v3` as a grid; a clear error for anything else."""
    grid: dict[str, tuple[float, ...]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, values = part.partition("=")
        try:
            grid[name.strip()] = tuple(float(v) for v in values.split(",") if v.strip())
        except ValueError as exc:
            raise ValueError(f"--grid: {part!r} is not NAME=number,number ({exc})") from exc
        if not name.strip() or not grid[name.strip()]:
            raise ValueError(f"--grid: {part!r} is not NAME=number,number")
    return grid


@contextlib.contextmanager
def patched(module: ModuleType, setting: Setting) -> Iterator[None]:
    """The module's constants set to `setting` for the block, restored after."""
    saved = {name: getattr(module, name) for name, _ in setting}
    try:
        for name, value in setting:
            current = saved[name]
            setattr(module, name, int(value) if isinstance(current, int) else value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def _settings(
    module: ModuleType, grid: dict[str, tuple[float, ...]]
) -> tuple[Setting, list[Setting]]:
    names = [n for n in grid if hasattr(module, n)]
    missing = [n for n in grid if n not in names]
    if missing:
        print(f"  the module has no {', '.join(missing)}: left out of the grid")
    current: Setting = tuple((n, float(getattr(module, n))) for n in names)
    combos = [
        tuple(zip(names, values, strict=True))
        for values in itertools.product(*(grid[n] for n in names))
    ]
    if current not in combos:
        combos.insert(0, current)
    return current, combos


def _folds(pages: Sequence[Page], items: Sequence[Item], k: int, seed: int) -> dict[int, int]:
    """Each page's fold: the pages of each language shuffled (seeded) and dealt round."""
    fold: dict[int, int] = {}
    for lang in sorted({i.language for i in items}):
        ids = sorted({i.page for i in items if i.language == lang})
        random.Random(f"{seed}-{lang}").shuffle(ids)
        for n, page in enumerate(ids):
            fold[page] = n % k
    return fold


def _share(found: list[bool], keep: list[bool]) -> float:
    total = sum(keep)
    return (
        100.0 * sum(f for f, w in zip(found, keep, strict=True) if w) / total
        if total
        else float("nan")
    )


def cross_validate(
    module: ModuleType,
    pages: Sequence[Page],
    items: Sequence[Item],
    budgets: Sequence[int],
    k: int,
    grid: dict[str, tuple[float, ...]],
    *,
    per_page: int = 5,
    seed: int = 34,
    meaning: Meaning | None = None,
) -> dict[str, Any]:
    """Score every setting, choose per fold on the others, report the held-out shares (of
    the read with the reading model when `meaning` is given)."""
    current, combos = _settings(module, grid)
    langs = sorted({i.language for i in items})
    groups = [(lang, b) for lang in langs for b in budgets]
    sampled = {
        b: thin([i for i in items if len(pages[i.page].text) > b], per_page) for b in budgets
    }
    print(
        f"\ncross-validation: {k} folds over articles, {len(combos)} settings, "
        + ", ".join(f"{len(sampled[b])} questions at {b}" for b in budgets)
        + " (pages longer than the budget)"
    )
    scores: dict[Setting, dict[int, list[bool]]] = {}
    for combo in combos:
        with patched(module, combo):
            reader = read_with("model" if meaning else "new", module, meaning)
            scores[combo] = {b: hits(pages, sampled[b], b, reader) for b in budgets}
    fold = _folds(pages, items, k, seed)

    def mean_share(combo: Setting, folds: set[int]) -> float:
        shares = []
        for lang, b in groups:
            keep = [i.language == lang and fold[i.page] in folds for i in sampled[b]]
            if any(keep):
                shares.append(_share(scores[combo][b], keep))
        return sum(shares) / len(shares) if shares else float("nan")

    rows: list[dict[str, Any]] = []
    for f in range(k):
        train = set(range(k)) - {f}
        best = max(combos, key=lambda c: (mean_share(c, train), c == current))
        held: dict[str, Any] = {}
        for lang, b in groups:
            keep = [i.language == lang and fold[i.page] == f for i in sampled[b]]
            held[f"{lang}/{b}"] = {
                "chosen": _share(scores[best][b], keep),
                "module": _share(scores[current][b], keep),
                "questions": sum(keep),
            }
        rows.append({"fold": f, "chosen": dict(best), "held_out": held})
        cells = "; ".join(
            f"{g} {v['chosen']:.1f} (module {v['module']:.1f}, {v['questions']})"
            for g, v in held.items()
        )
        print(f"  fold {f}: chosen {_label(best)}: {cells}")
    everything = set(range(k))
    overall = max(combos, key=lambda c: (mean_share(c, everything), c == current))
    print(
        f"  on all folds: best {_label(overall)} {mean_share(overall, everything):.2f}; "
        f"module's own {_label(current)} {mean_share(current, everything):.2f}"
    )
    summary = {}
    for lang, b in groups:
        chosen = [r["held_out"][f"{lang}/{b}"]["chosen"] for r in rows]
        own = [r["held_out"][f"{lang}/{b}"]["module"] for r in rows]
        summary[f"{lang}/{b}"] = {"chosen": _mean(chosen), "module": _mean(own)}
        print(
            f"  {lang} {b}: held-out mean {_mean(chosen):.2f} (module's setting {_mean(own):.2f})"
        )
    return {
        "folds": rows,
        "best_overall": dict(overall),
        "module": dict(current),
        "summary": summary,
    }


def _mean(values: list[float]) -> float:
    real = [v for v in values if v == v]
    return sum(real) / len(real) if real else float("nan")


def _label(setting: Setting) -> str:
    return " ".join(f"{n}={v:g}" for n, v in setting)
