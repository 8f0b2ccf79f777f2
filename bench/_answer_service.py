"""`bench/answers.py --service`: the same questions read as the brain reads them.

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

from bench._answer_eval import READERS, Item, Page, hits, median, normalise, percentile, read_with
from bench._serve import Served
from bench._stage import Stage, open_stage

__all__ = ["ServiceProcess", "service_figures"]

ROOT = Path(__file__).resolve().parents[1]
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


def _envelopes(
    service: ServiceProcess, stage: Stage, pages: Sequence[Page], items: Sequence[Item]
) -> tuple[list[str], list[float], int]:
    """The envelope for each item (empty when the call failed), seconds per call, failures."""
    from search.client import browse_and_search

    envelopes, seconds, failed = [], [], 0
    for item in items:
        started = time.perf_counter()
        result = browse_and_search(
            item.question,
            action="read",
            url=stage.server.origin + pages[item.page].path,
            broadcasting=True,
            service_url=service.url,
            token=service.token,
        )
        seconds.append(time.perf_counter() - started)
        text = str((result or {}).get("reply_text") or "")
        failed += not text
        envelopes.append(text)
    return envelopes, seconds, failed


def service_figures(
    passages: ModuleType, pages: Sequence[Page], items: Sequence[Item], budgets: Sequence[int]
) -> dict[str, Any]:
    """Per language and budget: the service's envelope against the in-process readers on
    the same sampled questions."""
    langs = sorted({i.language for i in items})
    print(
        "\nthrough stream-browser serve and the standard-library client: "
        + ", ".join(f"{sum(i.language == lang for i in items)} {lang}" for lang in langs)
        + " questions (sampled), one real Chromium"
    )
    stage = open_stage()
    figures: dict[str, Any] = {}
    try:
        for page_index in sorted({i.page for i in items}):
            page = pages[page_index]
            stage.server.add(page.path, Served(page.html.encode("utf-8")))
        print(
            f"{'lang':<5}{'budget':>7} {'n':>5} {'service':>8} | in-process: "
            + " ".join(f"{r:>8}" for r in READERS)
            + " | s/read median p90, failed"
        )
        for budget in budgets:
            service = ServiceProcess(stage, budget)
            try:
                envelopes, seconds, failed = _envelopes(service, stage, pages, items)
            finally:
                service.stop()
            local = {r: hits(pages, items, budget, read_with(r, passages)) for r in READERS}
            for lang in langs:
                mine = [n for n, i in enumerate(items) if i.language == lang]
                found = sum(items[n].needle in normalise(envelopes[n]) for n in mine)
                shares = {r: 100.0 * sum(local[r][n] for n in mine) / len(mine) for r in READERS}
                times = [seconds[n] for n in mine]
                lost = sum(not envelopes[n] for n in mine)
                print(
                    f"{lang:<5}{budget:>7} {len(mine):>5} {100.0 * found / len(mine):7.2f}% | "
                    + "             "
                    + " ".join(f"{shares[r]:7.2f}%" for r in READERS)
                    + f" | {median(times):.2f} {percentile(times, 0.9):.2f}, {lost}"
                )
                figures[f"{lang}/{budget}"] = {
                    "questions": len(mine),
                    "service": 100.0 * found / len(mine),
                    **{f"in_process_{r}": shares[r] for r in READERS},
                    "median_s": median(times),
                    "p90_s": percentile(times, 0.9),
                    "failed": lost,
                }
            if failed:
                print(f"  {failed} calls at {budget} gave no envelope (see the service's log)")
    finally:
        stage.close()
    return figures
