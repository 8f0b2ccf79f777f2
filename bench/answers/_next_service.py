"""`python -m bench.answers --next-service N`: the next result as the brain meets it (issue 57).

For N sampled questions a language: a 2026-shaped Google results page (no direct answer, no
AI Overview) whose first two organic results lead to the question's page and to the page of
the same language that shares most of the question's words (`_hard`), in either order, with
snippets that do not hold the answer; searched through `stream-browser serve` (product
defaults) with the standard-library client, on one Chromium of our own behind the egress
guard. Per language and case: the share of envelopes that hold the answer (in context, as the
answers bench counts it), how often result 2 was opened, chosen, and read unseen, and the
seconds per search.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from bench._common.serve import Served
from bench._common.stage import open_stage
from bench.answers._eval import Item, Page, median, normalise, percentile
from bench.answers._hard import _hard_other
from bench.answers._service import ServiceProcess

__all__ = ["next_service_figures"]

CASES = ("answer in result 1", "answer only in result 2")


def _results_page(question: str, first: tuple[str, str], second: tuple[str, str]) -> bytes:
    from tests._serp_pages import Result, page_2026

    results = [
        Result(title, url, f"{title}: an article of the encyclopaedia.")
        for title, url in (first, second)
    ]
    results += [
        Result(f"More about it ({n})", f"https://example.org/more/{n}", "Nothing here.")
        for n in range(3)
    ]
    return page_2026(question, "en", None, results, extras=False).encode("utf-8")


def _search(service: ServiceProcess, question: str) -> tuple[dict[str, Any], str, float]:
    """The result the brain gets (empty when every provider failed), why not, seconds."""
    from search.client import browse

    started = time.perf_counter()
    answer = browse(
        question,
        action="search",
        broadcasting=True,
        service_url=service.url,
        token=service.token,
    )
    took = time.perf_counter() - started
    result = (answer or {}).get("result")
    if isinstance(result, dict):
        return result, "", took
    chain = (answer or {}).get("chain") or []
    hops = [f"{h.get('provider')}: {h.get('failure_kind')} {h.get('detail')}" for h in chain]
    why = "; ".join(hops)
    return {}, why or "the service did not answer", took


def next_service_figures(
    passages: ModuleType, pages: Sequence[Page], items: Sequence[Item], sample: int
) -> dict[str, Any]:
    """Per language and case, through the service: answered, result 2 opened and chosen, the
    peek's outcomes, seconds per search."""
    bags = [Counter(passages.tokens(p.text)) for p in pages]
    rng = random.Random("issue57-next-service")
    chosen: list[Item] = []
    for lang in sorted({i.language for i in items}):
        mine = [i for i in items if i.language == lang and i.survived]
        chosen += rng.sample(mine, min(sample, len(mine)))
    stage = open_stage()
    current: dict[str, bytes] = {}
    stage.server.add("/search", lambda _path: Served(current["serp"]))
    for page in pages:
        stage.server.add(page.path, Served(page.html.encode("utf-8")))
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    service = ServiceProcess(stage, 6000)
    try:
        for item in chosen:
            other = _hard_other(passages, pages, bags, item)
            own = (pages[item.page].article.title, stage.server.origin + pages[item.page].path)
            far = (pages[other].article.title, stage.server.origin + pages[other].path)
            for case, order in zip(CASES, ((own, far), (far, own)), strict=True):
                current["serp"] = _results_page(item.question, *order)
                result, why, took = _search(service, item.question)
                if why:
                    print(f"  failed: {item.language} {case}: {item.question!r}: {why[:300]}")
                data = result.get("data") or {}
                choice = data.get("read_choice") or {}
                peek = data.get("read_peek") or {}
                rows.setdefault((item.language, case), []).append(
                    {
                        "answered": item.needle in normalise(str(result.get("reply_text") or "")),
                        "opened": bool(choice),
                        "chosen2": choice.get("chosen") == 2,
                        "peek": peek.get("outcome") or "none",
                        "skipped": bool(data.get("read_next_skipped")),
                        "failed": not result,
                        "seconds": took,
                    }
                )
    finally:
        service.stop()
        stage.close()
    print(
        "\nthe next result through stream-browser serve and the standard-library client "
        f"(2026 results page, the other page sharing most of the question's words; {sample} "
        "questions a language):"
    )
    figures: dict[str, Any] = {}
    for (lang, case), got in sorted(rows.items()):
        n = len(got)
        seconds = [r["seconds"] for r in got]
        row = {
            "questions": n,
            "answered": sum(r["answered"] for r in got) / n,
            "opened": sum(r["opened"] for r in got) / n,
            "chosen2": sum(r["chosen2"] for r in got) / n,
            "peek": dict(Counter(r["peek"] for r in got)),
            "skipped": sum(r["skipped"] for r in got),
            "failed": sum(r["failed"] for r in got),
            "median_s": median(seconds),
            "mean_s": sum(seconds) / n,
            "p90_s": percentile(seconds, 0.9),
        }
        figures[f"{lang}/{case}"] = row
        print(
            f"  {lang} {case}: answered {row['answered']:.1%}, result 2 opened "
            f"{row['opened']:.1%}, chosen {row['chosen2']:.1%}; peek {row['peek']}; "
            f"skipped {row['skipped']}, failed {row['failed']}; "
            f"{row['median_s']:.2f} s median, {row['mean_s']:.2f} s mean, {row['p90_s']:.2f} s p90 "
            f"({n})"
        )
    return figures
