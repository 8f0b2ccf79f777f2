"""`make test`'s serial part runs its two lanes on two workers, each lane on one of them
(tests/_lanes.py): a real pytest-xdist run over test files of its own, each test noting the
worker it ran on."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests._lanes import lane_of

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """\
import pytest
from tests._lanes import make_lane_scheduler

@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return make_lane_scheduler(config, log, {"test_screen_a.py", "test_screen_b.py"})
"""

TESTS = """\
import os, time, pytest

@pytest.mark.parametrize("n", range(4))
def test_notes_its_worker(n):
    time.sleep(0.05)
    with open("ran.txt", "a") as out:
        out.write(f"{__name__} {os.environ['PYTEST_XDIST_WORKER']}\\n")
"""


def test_a_lane_runs_on_one_worker_beside_the_other(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    names = ("test_screen_a", "test_screen_b", "test_timed_a", "test_timed_b", "test_timed_c")
    for name in names:
        (tmp_path / f"{name}.py").write_text(TESTS)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    workers: dict[str, set[str]] = defaultdict(set)
    for line in (tmp_path / "ran.txt").read_text().splitlines():
        module, worker = line.split()
        workers["screen" if module.startswith("test_screen") else "timed"].add(worker)
    assert len(workers["screen"]) == 1 and len(workers["timed"]) == 1, dict(workers)
    assert workers["screen"] != workers["timed"], "both lanes ran on one worker"


def test_the_lane_is_read_from_the_node_ids_file_with_or_without_xdists_suffix() -> None:
    screen = {"tests/test_stage_screen.py"}
    assert lane_of("tests/test_stage_screen.py::test_x[a]", screen) == "screen"
    assert lane_of("tests/test_stage_screen.py::test_x[a]@screen", screen) == "screen"
    assert lane_of("tests/test_burst.py::test_y", screen) == "timed"
