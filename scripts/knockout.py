"""The knock-out run (`make knockout`): every stream-safety and screen defense switched off in
turn, and the tests that must notice run against it.

For each defense in `tests.knockout.DEFENSES` it runs that defense's tests with the defense
switched off (`pytest -p tests.knockout.plugin --knockout NAME`, which also reaches the
service, the CLI and the egress guard the tests start) and reports which of them failed. A
defense is caught when every test listed for it fails; one that a listed test survives, or
that lists none, fails the run. First the same tests run once with every defense on: a test
that fails then proves nothing, and fails the run too.

    python scripts/knockout.py                     # all defenses (minutes; not part of make test)
    python scripts/knockout.py --only print-pref   # one (repeatable)
    python scripts/knockout.py --only print-pref --tests tests/test_x.py::test_y  # try others
    python scripts/knockout.py --markdown FILE     # also write the table (docs/testing.md)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.knockout import BY_NAME, DEFENSES, Defense  # noqa: E402


@dataclass(frozen=True)
class Outcome:
    """One defense switched off: which tests failed, which did not, how long it took."""

    defense: str
    failed: tuple[str, ...]
    survived: tuple[str, ...]
    seconds: float
    note: str = ""

    @property
    def caught(self) -> bool:
        return bool(self.failed) and not self.survived and not self.note


def run_tests(tests: list[str], knockout: str | None) -> tuple[dict[str, str], str]:
    """Run `tests` (node ids) with `knockout` switched off (None: everything on); each node
    id's outcome (passed | failed | error | skipped) and pytest's last lines."""
    with tempfile.TemporaryDirectory(prefix="sb-knockout-run-") as tmp:
        report = Path(tmp) / "report.xml"
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
        argv += ["--junitxml", str(report), "-o", "junit_family=xunit1"]
        if knockout:
            argv += ["-p", "tests.knockout.plugin", "--knockout", knockout]
        proc = subprocess.run(
            [*argv, *tests],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            check=False,
        )
        tail = "\n".join(proc.stdout.strip().splitlines()[-3:])
        return (_outcomes(report) if report.exists() else {}), tail


def _outcomes(report: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        node = f"{module}::{case.get('name')}"
        kinds = {child.tag for child in case}
        state = (
            "failed"
            if "failure" in kinds
            else "error"
            if "error" in kinds
            else "skipped"
            if "skipped" in kinds
            else "passed"
        )
        found[node] = "failed" if found.get(node) == "failed" else state
    return found


def knock_out(defense: Defense, tests: list[str], explore: bool = False) -> Outcome:
    """Run `tests` with `defense` off. Exploring (`--tests`), they may be files or
    functions, and every test they hold is reported."""
    started = time.monotonic()
    if not tests:
        return Outcome(defense.name, (), (), 0.0, "no test is listed for it")
    seen, tail = run_tests(tests, defense.name)
    seconds = time.monotonic() - started
    names = sorted(seen) if explore else tests
    missing = [t for t in names if t not in seen]
    if missing or not names:
        return Outcome(defense.name, (), (), seconds, f"not run: {missing[:3]} ({tail})")
    failed = tuple(t for t in names if seen[t] in ("failed", "error"))
    survived = tuple(t for t in names if seen[t] not in ("failed", "error"))
    return Outcome(defense.name, failed, survived, seconds)


def baseline(tests: list[str]) -> list[str]:
    """The listed tests that do not pass with every defense on."""
    seen, tail = run_tests(tests, None)
    return [t for t in tests if seen.get(t) != "passed"] or ([] if seen else [tail])


def short(node: str) -> str:
    return node.removeprefix("tests/")


def table(outcomes: list[Outcome]) -> str:
    lines = [
        "| defense switched off | what it keeps off the stream | tests that failed | result |",
        "|---|---|---|---|",
    ]
    for outcome in outcomes:
        defense = BY_NAME[outcome.defense]
        failed = "<br>".join(f"`{short(t)}`" for t in outcome.failed) or "none"
        if outcome.caught:
            result = (
                f"caught ({len(outcome.failed)} of {len(outcome.failed)}, {outcome.seconds:.0f} s)"
            )
        elif outcome.note:
            result = f"NOT CAUGHT: {outcome.note}"
        else:
            kept = ", ".join(f"`{short(t)}`" for t in outcome.survived)
            result = f"NOT CAUGHT by {kept}"
        lines.append(f"| `{defense.name}` | {defense.guards} | {failed} | {result} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="DEFENSE")
    parser.add_argument("--tests", nargs="+", default=None, metavar="NODEID")
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)
    unknown = [name for name in args.only if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown defense {unknown[0]!r}; known: {', '.join(BY_NAME)}")
    chosen = [BY_NAME[name] for name in args.only] or list(DEFENSES)
    plan = {d.name: list(args.tests) if args.tests else list(d.tests) for d in chosen}
    every = sorted({t for tests in plan.values() for t in tests})
    print(f"knock-out run: {len(chosen)} defenses, {len(every)} tests", flush=True)
    broken = [] if args.skip_baseline or not every else baseline(every)
    if broken:
        print("these tests fail with every defense on, so they prove nothing:", *broken, sep="\n  ")
        return 1
    outcomes = []
    for defense in chosen:
        outcome = knock_out(defense, plan[defense.name], explore=bool(args.tests))
        outcomes.append(outcome)
        verdict = "caught" if outcome.caught else "NOT CAUGHT"
        print(
            f"{defense.name}: {verdict} ({len(outcome.failed)} failed, "
            f"{len(outcome.survived)} passed, {outcome.seconds:.0f} s)",
            flush=True,
        )
        for node in outcome.failed:
            print(f"    failed: {short(node)}")
        for node in outcome.survived:
            print(f"    passed: {short(node)}")
        if outcome.note:
            print(f"    {outcome.note}")
    text = table(outcomes)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    return 0 if all(o.caught for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
