"""`python -m bench.answers --service`: the same questions read as the brain reads them.

A local HTTPS server serves the built pages, one Chromium of our own (behind the egress
guard, as in `make bench`) shows them, and `stream-browser serve` (one process per budget,
`SB_READ_MAX_CHARS` set) answers `search.client.browse_and_search(question, action="read",
url=page)`. What counts is the envelope (`reply_text`) the brain receives; beside it, the
in-process readers on the same sample, so the two paths can be told apart.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from bench._common.serve import Served
from bench._common.stage import Stage, open_stage
from bench.answers._eval import READERS, Item, Page, hits, median, normalise, percentile, read_with

__all__ = ["ServiceProcess", "service_figures"]

ROOT = Path(__file__).resolve().parents[2]
SB_CLI = ROOT / ".venv" / "bin" / "stream-browser"


class ServiceProcess:
    """`stream-browser serve` on this stage (ephemeral port, no cache, its own state and
    token, the given read budget); stopped with SIGTERM (drained)."""

    def __init__(self, stage: Stage, budget: int) -> None:
        env = stage.child_env("state-answers", "no-gemini-in-the-bench")
        env.update(
            {
                "SB_SERVICE_PORT": "0",
                "SB_STATE_DIR": str(stage.tmp / f"state-answers-{budget}"),
                "SB_CACHE_TTL_S": "0",
                "SB_READ_MAX_CHARS": str(budget),
                "SB_SERVICE_TOKEN": os.urandom(24).hex(),
            }
        )
        self.token = env["SB_SERVICE_TOKEN"]
        self.proc = subprocess.Popen(
            [str(SB_CLI), "--env-file", str(stage.tmp / "no.env"), "serve"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "stream-browser: serving on URL"
        if "serving on " not in line:
            self.proc.kill()
            self.proc.communicate(timeout=5)
            raise RuntimeError(f"the service did not start: {line!r}")
        self.url = line.rsplit(" ", 1)[1].strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _read(service: ServiceProcess, question: str, url: str) -> tuple[str, float]:
    """One read through the client: the envelope (empty when the call failed), seconds."""
    from search.client import browse_and_search

    started = time.perf_counter()
    result = browse_and_search(
        question,
        action="read",
        url=url,
        broadcasting=True,
        service_url=service.url,
        token=service.token,
    )
    return str((result or {}).get("reply_text") or ""), time.perf_counter() - started


def _envelopes(
    service: ServiceProcess, stage: Stage, pages: Sequence[Page], items: Sequence[Item]
) -> tuple[list[str], list[float], list[float]]:
    """The envelope for each item, seconds per read with its question, and seconds per read
    of the same page with none (the URL alone, as a read without a question is asked)."""
    envelopes, seconds, bare = [], [], []
    for item in items:
        url = stage.server.origin + pages[item.page].path
        envelope, took = _read(service, item.question, url)
        envelopes.append(envelope)
        seconds.append(took)
        bare.append(_read(service, url, url)[1])
    return envelopes, seconds, bare


def _row(
    lang: str,
    budget: int,
    items: Sequence[Item],
    reads: tuple[list[str], list[float], list[float]],
    local: dict[str, list[bool]],
) -> dict[str, Any]:
    """One language's line at one budget: the service against the in-process readers."""
    envelopes, seconds, bare = reads
    mine = [n for n, i in enumerate(items) if i.language == lang]
    found = sum(items[n].needle in normalise(envelopes[n]) for n in mine)
    row: dict[str, Any] = {
        "questions": len(mine),
        "service": 100.0 * found / len(mine),
        **{f"in_process_{r}": 100.0 * sum(local[r][n] for n in mine) / len(mine) for r in READERS},
        "median_s": median([seconds[n] for n in mine]),
        "p90_s": percentile([seconds[n] for n in mine], 0.9),
        "no_question_median_s": median([bare[n] for n in mine]),
        "failed": sum(not envelopes[n] for n in mine),
    }
    shares = " ".join(f"{row[f'in_process_{r}']:7.2f}%" for r in READERS)
    print(
        f"{lang:<5}{budget:>7} {len(mine):>5} {row['service']:7.2f}% | {shares} | "
        f"{row['median_s']:.2f} {row['p90_s']:.2f}, {row['no_question_median_s']:.2f}, "
        f"{row['failed']}"
    )
    return row


def service_figures(
    passages: ModuleType, pages: Sequence[Page], items: Sequence[Item], budgets: Sequence[int]
) -> dict[str, Any]:
    """Per language and budget: the service's envelope against the in-process readers on
    the same sampled questions, and seconds per read with the question and without one."""
    langs = sorted({i.language for i in items})
    counts = ", ".join(f"{sum(i.language == lang for i in items)} {lang}" for lang in langs)
    print(
        "\nthrough stream-browser serve and the standard-library client, one real Chromium: "
        f"{counts} questions (sampled); a read of the same page without a question after each"
    )
    print(
        f"{'lang':<5}{'budget':>7} {'n':>5} {'service':>8} | in-process "
        + " ".join(f"{r:>8}" for r in READERS)
        + " | s/read median p90, without a question, failed"
    )
    stage = open_stage()
    figures: dict[str, Any] = {}
    try:
        for page_index in sorted({i.page for i in items}):
            page = pages[page_index]
            stage.server.add(page.path, Served(page.html.encode("utf-8")))
        for budget in budgets:
            service = ServiceProcess(stage, budget)
            try:
                reads = _envelopes(service, stage, pages, items)
            finally:
                service.stop()
            local = {r: hits(pages, items, budget, read_with(r, passages)) for r in READERS}
            for lang in langs:
                figures[f"{lang}/{budget}"] = _row(lang, budget, items, reads, local)
    finally:
        stage.close()
    return figures
