"""`make bench-answers`: does a read that carries the question hand the brain the answer?

Per language and budget (6,000, 1,500 and 600 characters by default), the share of questions
whose answer, with a few characters of its own context, is in what the brain gets, for
three readers: the opening (today), plain BM25 over the page's paragraphs, and the new read
(`search._passages.select`, or the module given with --passages), and with --model the new
read with the reading model (search/_meaning.py) beside it, with its time per read. Pages are
Wikipedia-shaped (bench/answers/_pages.py) and read by `extract_article` in-process; with
--service, a sample is read through `stream-browser serve` and the standard-library client on
a real Chromium.
--folds K cross-validates the passage module's settings over articles; --next measures when
a search that reads should open the next result (bench/answers/_next.py, _hard.py);
--next-service N searches N questions a language through the service, the answer's page and
the page sharing most of its words as the top two results (bench/answers/_next_service.py).

    python -m bench.answers [FILE_OR_FOLDER ...] [--budgets 6000 1500 600] [--model]
                            [--service] [--folds 5] [--next] [--next-service N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.answers._cv import DEFAULT_GRID, cross_validate, parse_grid
from bench.answers._data import QuestionSet, load_sets
from bench.answers._eval import (
    MODEL,
    READERS,
    Item,
    Meaning,
    Page,
    hits,
    load_passages,
    median,
    percentile,
    prepare,
    question_kind,
    read_with,
    tally,
    thin,
    timed_select,
)

ROOT = Path(__file__).resolve().parents[2]

DEFAULT_SETS = (ROOT / "tests" / "fixtures" / "answers",)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.answers", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument(
        "sets",
        nargs="*",
        type=Path,
        help="SQuAD-format .json files or folders of them (default: tests/fixtures/answers)",
    )
    parser.add_argument("--budgets", type=int, nargs="+", default=[6000, 1500, 600])
    parser.add_argument("--passages", type=Path, help="the passage module to test (a .py file)")
    parser.add_argument(
        "--model",
        action="store_true",
        help="the new read with the reading model too, side by side (and --folds tunes it)",
    )
    parser.add_argument("--per-page", type=int, default=0, help="at most N questions a page")
    parser.add_argument("--losses", type=int, default=3, help="lost questions shown a language")
    parser.add_argument("--service", action="store_true", help="also read through the service")
    parser.add_argument("--sample", type=int, default=100, help="questions a language, --service")
    parser.add_argument("--folds", type=int, default=0, help="cross-validate the settings")
    parser.add_argument("--cv-per-page", type=int, default=5, help="questions a page, --folds")
    parser.add_argument(
        "--folds-only", action="store_true", help="with --folds: no table, only the folds"
    )
    parser.add_argument("--grid", help="NAME=v1,v2;NAME=... (default: a small grid)")
    parser.add_argument(
        "--next", action="store_true", help="the next result: answered per confidence threshold"
    )
    parser.add_argument(
        "--next-service",
        type=int,
        default=0,
        metavar="N",
        help="only the next result through the service, N questions a language",
    )
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if any(b < 200 for b in args.budgets):
        parser.error("a budget is at least 200 characters (SB_READ_MAX_CHARS' floor)")
    return args


def describe_sets(sets: list[QuestionSet], pages: list[Page], items: list[Item]) -> None:
    for qset in sets:
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(qset.dropped.items()))
        print(
            f"{qset.language} {qset.name}: {len(qset.articles)} pages, {qset.questions} questions"
            + (f" (questions: {dropped})" if dropped else "")
        )
    print("\nextraction keeps the answer's context (answer ± 8 chars in extract_article's text):")
    for lang in languages(items):
        mine = [i for i in items if i.language == lang]
        kept = sum(i.survived for i in mine)
        lengths = sorted(len(pages[p].text) for p in {i.page for i in mine})
        print(
            f"  {lang}: {kept}/{len(mine)} ({100 * kept / len(mine):.2f}%); page text "
            f"{lengths[len(lengths) // 2]:,} chars at the median, {lengths[-1]:,} at most"
        )
        for item in [i for i in mine if not i.survived][:3]:
            print(f"    lost: {pages[item.page].article.title!r}: {item.answer!r} ({item.qid})")


def languages(items: Sequence[Item]) -> list[str]:
    return sorted({i.language for i in items})


def run_readers(
    passages: ModuleType,
    pages: list[Page],
    items: list[Item],
    budgets: list[int],
    meaning: Meaning | None = None,
) -> dict[int, dict[str, list[bool]]]:
    readers = (*READERS, MODEL) if meaning is not None else READERS
    return {
        budget: {r: hits(pages, items, budget, read_with(r, passages, meaning)) for r in readers}
        for budget in budgets
    }


def report(
    pages: list[Page], items: list[Item], results: dict[int, dict[str, list[bool]]]
) -> dict[str, Any]:
    """The table: per language and budget, all questions and those on longer pages."""
    print(
        "\nin-process: the answer (± 8 chars of its paragraph, whitespace ignored) "
        "in what the brain gets"
    )
    readers = list(next(iter(results.values())))
    names = " ".join(f"{r:>7}" for r in readers)
    print(f"{'lang':<5}{'budget':>7} | {'all':>6} {names} | {'longer':>6} {names}")
    figures: dict[str, Any] = {}
    for lang in languages(items):
        for budget, found in results.items():
            everything = tally(items, found, [i.language == lang for i in items])
            longer = tally(
                items,
                found,
                [i.language == lang and len(pages[i.page].text) > budget for i in items],
            )
            row = [f"{everything.share(r):6.2f}%" for r in readers]
            row_long = [f"{longer.share(r):6.2f}%" for r in readers]
            print(
                f"{lang:<5}{budget:>7} | {everything.total:>6} {' '.join(row)} | "
                f"{longer.total:>6} {' '.join(row_long)}"
            )
            figures[f"{lang}/{budget}"] = {
                "questions": everything.total,
                **{r: everything.share(r) for r in readers},
                "longer_questions": longer.total,
                **{f"longer_{r}": longer.share(r) for r in readers},
            }
    return figures


def report_losses(
    pages: list[Page], items: list[Item], results: dict[int, dict[str, list[bool]]], shown: int
) -> None:
    """Where the new read misses: by question kind (pages longer than the budget), and the
    first few questions it lost that plain BM25 or the opening kept."""
    print("\nthe new read by question kind (pages longer than the budget): new / bm25, questions")
    for budget, found in results.items():
        for lang in languages(items):
            kinds: dict[str, list[int]] = {}
            for n, item in enumerate(items):
                if item.language != lang or len(pages[item.page].text) <= budget:
                    continue
                counts = kinds.setdefault(question_kind(item), [0, 0, 0])
                counts[0] += 1
                counts[1] += found["new"][n]
                counts[2] += found["bm25"][n]
            cells = [
                f"{kind} {100 * c[1] / c[0]:.0f}/{100 * c[2] / c[0]:.0f}% of {c[0]}"
                for kind, c in sorted(kinds.items(), key=lambda kv: -kv[1][0])
            ]
            print(f"  {lang} {budget}: " + "; ".join(cells))
    print("\nquestions the new read lost that plain BM25 kept:")
    for budget, found in results.items():
        for lang in languages(items):
            lost = [
                n
                for n, i in enumerate(items)
                if i.language == lang and found["bm25"][n] and not found["new"][n]
            ]
            print(f"  {lang} {budget}: {len(lost)} questions")
            for n in lost[:shown]:
                item = items[n]
                print(
                    f"    {item.question!r} -> {item.answer!r} "
                    f"({pages[item.page].article.title!r}, paragraph {item.paragraph + 1})"
                )


def report_times(
    passages: ModuleType,
    pages: list[Page],
    items: list[Item],
    budgets: list[int],
    model: bool = False,
) -> dict[str, Any]:
    load = os.getloadavg()[0]
    print(
        f"\nselect() per read, ms (measured on a busy machine: load {load:.1f} on "
        f"{os.cpu_count()} cores): all pages | pages longer than the budget | no question"
    )
    figures: dict[str, Any] = {"load": load}
    for lang in languages(items):
        mine = thin([i for i in items if i.language == lang], 3)
        for budget in budgets:
            with_q, without, longer = timed_select(passages, pages, mine, budget)
            long_q = [t for t, is_long in zip(with_q, longer, strict=True) if is_long]
            row = {
                "median_ms": median(with_q),
                "p90_ms": percentile(with_q, 0.9),
                "longer_median_ms": median(long_q),
                "longer_p90_ms": percentile(long_q, 0.9),
                "without_question_median_ms": median(without),
                "reads": len(with_q),
                "longer_reads": len(long_q),
            }
            print(
                f"  {lang} {budget}: median {row['median_ms']:.2f}, p90 {row['p90_ms']:.2f} "
                f"({len(with_q)} reads) | median {row['longer_median_ms']:.2f}, "
                f"p90 {row['longer_p90_ms']:.2f} ({len(long_q)}) | "
                f"median {row['without_question_median_ms']:.3f}"
            )
            figures[f"{lang}/{budget}"] = row
    if model:
        figures["model"] = report_model_times(passages, pages, items, budgets)
    return figures


def report_model_times(
    passages: ModuleType, pages: list[Page], items: list[Item], budgets: list[int]
) -> dict[str, Any]:
    """`select` per read with the reading model (nothing cached but the question, as in the
    service), beside the same reads without it, interleaved."""
    from search import _meaning

    print(
        f"\nselect() per read with the reading model, ms (load {os.getloadavg()[0]:.1f}): "
        "median without / with / added, p90 with"
    )
    figures: dict[str, Any] = {}
    for lang in languages(items):
        mine = thin([i for i in items if i.language == lang], 2)
        for budget in budgets:
            plain, _, _ = timed_select(passages, pages, mine, budget)
            fused, _, _ = timed_select(passages, pages, mine, budget, _meaning._similarities)
            added = [b - a for a, b in zip(plain, fused, strict=True)]
            row = {
                "median_ms": median(plain),
                "model_median_ms": median(fused),
                "added_median_ms": median(added),
                "model_p90_ms": percentile(fused, 0.9),
                "reads": len(fused),
            }
            print(
                f"  {lang} {budget}: {row['median_ms']:.1f} / {row['model_median_ms']:.1f} / "
                f"+{row['added_median_ms']:.1f}, p90 {row['model_p90_ms']:.1f} ({len(fused)} reads)"
            )
            figures[f"{lang}/{budget}"] = row
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        sets = load_sets(args.sets or list(DEFAULT_SETS))
        passages = load_passages(args.passages)
        grid = parse_grid(args.grid) if args.grid else DEFAULT_GRID
        meaning = Meaning() if args.model else None
    except (ValueError, OSError, ImportError) as exc:
        print(f"python -m bench.answers: {exc}", file=sys.stderr)
        return 2
    print(f"passage module: {getattr(passages, '__file__', passages.__name__)}")
    pages, items = prepare(sets)
    items = thin(items, args.per_page)
    describe_sets(sets, pages, items)
    out: dict[str, Any] = {}
    if args.next_service:
        from bench.answers._next_service import next_service_figures

        out["next_service"] = next_service_figures(passages, pages, items, args.next_service)
    elif not (args.folds and args.folds_only):
        results = run_readers(passages, pages, items, args.budgets, meaning)
        out["in_process"] = report(pages, items, results)
        report_losses(pages, items, results, args.losses)
        out["select_ms"] = report_times(passages, pages, items, args.budgets, args.model)
    if args.folds:
        out["cross_validation"] = cross_validate(
            passages,
            pages,
            items,
            args.budgets,
            args.folds,
            grid,
            per_page=args.cv_per_page,
            seed=args.seed,
            meaning=meaning,
        )
    if args.next:
        from bench.answers._hard import hard_next_figures
        from bench.answers._next import next_result_figures

        out["next_result"] = next_result_figures(passages, pages, items, args.budgets)
        out["next_result_hard"] = hard_next_figures(passages, pages, items, meaning=meaning)
    if args.service:
        from bench.answers._service import service_figures

        sample = sample_items(items, args.sample, args.seed)
        out["service"] = service_figures(passages, pages, sample, args.budgets)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


def sample_items(items: list[Item], per_language: int, seed: int) -> list[Item]:
    """`per_language` questions of each language, drawn at random (seeded), in page order."""
    rng = random.Random(seed)
    out: list[Item] = []
    for lang in languages(items):
        mine = [i for i in items if i.language == lang]
        out.extend(sorted(rng.sample(mine, min(per_language, len(mine))), key=lambda i: i.page))
    return out


if __name__ == "__main__":
    sys.exit(main())
