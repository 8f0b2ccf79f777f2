"""The benches' layout (bench/README.md): every bench target of the Makefile runs a module that
starts and answers `--help`, whose package's docstring names that target, and the README's
table lists it. A file moved without the Makefile, or a target without its package's word on
what its figure means, fails here instead of at the next `make bench`."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TARGET = re.compile(r"^([a-z-]+): .*\n(?:\t.*\n)*?\t@(?:nice )?\$\(PY\) -m (bench[.\w]*)", re.M)


def bench_targets() -> dict[str, str]:
    """Each Makefile target that runs a bench module, and the module."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return dict(TARGET.findall(makefile))


def test_the_makefile_runs_every_bench_as_a_module() -> None:
    assert bench_targets() == {
        "bench": "bench.warm",
        "screens": "bench.stage.screens",
        "soak": "bench.soak",
        "bench-extract": "bench.extract",
        "bench-answers": "bench.answers",
    }


@pytest.mark.parametrize(("target", "module"), sorted(bench_targets().items()))
def test_each_bench_target_starts_and_its_package_names_it(target: str, module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: ")
    package = importlib.import_module(".".join(module.split(".")[:2]))
    assert f"`make {target}`" in (package.__doc__ or "")
    assert f"| `make {target}` | `python -m {module}` |" in (
        ROOT / "bench" / "README.md"
    ).read_text(encoding="utf-8")
