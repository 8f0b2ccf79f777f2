"""Mutation testing of the pure modules (`make mutation`): mutmut 3 changes one operator,
constant or call at a time and runs the tests that cover the changed function; a change no
test notices (a surviving mutant) is a behaviour nothing checks.

Runs in a scratch copy of the checkout (mutmut writes a `mutants/` tree next to the code), one
module at a time, with that module's tests only, under `nice`, each bounded in time. Prints
killed/total per module and every surviving mutant's diff (the figures in docs/testing.md).

    python scripts/mutation.py                       # every module (CPU-heavy: minutes each)
    python scripts/mutation.py --only policy         # one (repeatable)
    python scripts/mutation.py --markdown FILE       # also write the table
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 20 * 60  # a module taking longer is stopped and reported as such


@dataclass(frozen=True)
class Target:
    """One module to mutate and the tests that cover it."""

    key: str
    module: str
    tests: tuple[str, ...]


TARGETS = (
    Target("policy", "browser_core/safety/_policy.py", ("tests/test_policy.py",)),
    Target(
        "ranges",
        "browser_core/safety/_ranges.py",
        ("tests/test_ranges.py", "tests/test_policy.py"),
    ),
    Target(
        "envelope",
        "browser_core/safety/_envelope.py",
        ("tests/test_envelope.py", "tests/test_tool.py"),  # wrap_answer: the tool's results
    ),
    Target(
        "lookalike",
        "browser_core/safety/_lookalike.py",
        ("tests/test_lookalike.py", "tests/test_envelope.py"),
    ),
    Target("google", "search/parsers/google/_organic.py", ("tests/test_parsers_google.py",)),
    Target(
        "overview",
        "search/parsers/google/_overview.py",
        ("tests/test_parsers_google_overview.py",),
    ),
    Target("youtube", "search/parsers/youtube.py", ("tests/test_parsers_youtube.py",)),
    # The passage selection, once it is on main (its tests by the same name).
    Target("passages", "search/_passages.py", ("tests/test_passages.py",)),
)
SETUP_CFG = """[mutmut]
source_paths =
    browser_core
    search
    gemini
only_mutate =
    {module}
also_copy =
    scripts
    bench
pytest_add_cli_args_test_selection =
{tests}
"""


@dataclass
class Score:
    """What mutmut found in one module."""

    target: Target
    statuses: dict[str, str]
    seconds: float
    note: str = ""
    diffs: dict[str, str] | None = None

    def count(self, status: str) -> int:
        return sum(1 for s in self.statuses.values() if s == status)

    @property
    def survivors(self) -> list[str]:
        return sorted(name for name, s in self.statuses.items() if s == "survived")


def scratch_copy(into: Path) -> None:
    """The checkout's files (tracked and new, not ignored) copied to `into`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        source = ROOT / raw.decode()
        if source.is_symlink() or not source.is_file():
            continue
        target = into / raw.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def mutmut(folder: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`mutmut ARGS` in `folder`, niced, in a process group of its own (stopped on timeout)."""
    proc = subprocess.Popen(
        ["nice", "-n", "15", sys.executable, "-m", "mutmut", *args],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return subprocess.CompletedProcess(proc.args, -9, out, None)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, None)


_RESULT = re.compile(r"^\s+(\S+): (.+)$")


def score(target: Target, show: bool) -> Score:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sb-mutation-") as tmp:
        folder = Path(tmp)
        scratch_copy(folder)
        tests = "\n".join(f"    {t}" for t in target.tests)
        (folder / "setup.cfg").write_text(SETUP_CFG.format(module=target.module, tests=tests))
        run = mutmut(folder, "run", timeout=LIMIT_S)
        note = "" if run.returncode == 0 else f"mutmut run ended with {run.returncode}"
        if note:
            print(run.stdout[-2000:], flush=True)
        if run.returncode == -9:
            note = f"stopped after {LIMIT_S // 60} minutes"
        listed = mutmut(folder, "results", "--all", "true", timeout=120).stdout
        statuses = {m.group(1): m.group(2) for m in map(_RESULT.match, listed.splitlines()) if m}
        result = Score(target, statuses, time.monotonic() - started, note)
        if not statuses and not note:
            result.note = "no mutants (" + run.stdout.strip().splitlines()[-1:][0][:200] + ")"
        if show:
            result.diffs = {
                name: mutmut(folder, "show", name, timeout=60).stdout for name in result.survivors
            }
    return result


def table(scores: list[Score]) -> str:
    lines = [
        "| module | mutants | killed | survived | other | time |",
        "|---|---|---|---|---|---|",
    ]
    for s in scores:
        total, killed, survived = len(s.statuses), s.count("killed"), s.count("survived")
        others = Counter(v for v in s.statuses.values() if v not in ("killed", "survived"))
        other = ", ".join(f"{n} {status}" for status, n in others.most_common()) or "0"
        note = f" ({s.note})" if s.note else ""
        lines.append(
            f"| `{s.target.module}` | {total} | {killed} | {survived} | {other} | "
            f"{s.seconds / 60:.1f} min{note} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="KEY")
    parser.add_argument("--no-diffs", action="store_true", help="do not print survivors' diffs")
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)
    chosen = [t for t in TARGETS if not args.only or t.key in args.only]
    chosen = [t for t in chosen if (ROOT / t.module).exists() or t.key in args.only]
    scores = []
    for target in chosen:
        print(f"{target.module}: mutating, with {' '.join(target.tests)}", flush=True)
        result = score(target, show=not args.no_diffs)
        scores.append(result)
        print(
            f"  {result.count('killed')} of {len(result.statuses)} killed, "
            f"{len(result.survivors)} survived, {result.seconds / 60:.1f} min {result.note}"
        )
        for name, diff in (result.diffs or {}).items():
            print(f"  survived: {name}\n" + "\n".join("    " + line for line in diff.splitlines()))
    text = table(scores)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    return 0 if all(not s.note for s in scores) else 1


if __name__ == "__main__":
    sys.exit(main())
