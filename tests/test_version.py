"""The one version (search/_version.py): pyproject's `version`, as the install wrote it into the
package metadata, and `unknown`, never a guess, for a source tree that was never installed."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import search
from search._version import UNKNOWN, version

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_pyprojects_as_installed() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version() == importlib.metadata.version("stream-browser") == declared
    assert search.__version__ == declared


def test_a_source_tree_that_was_never_installed_says_unknown(tmp_path: Path) -> None:
    # Only the package itself on the path: no site-packages (-S), no dist-info, no egg-info.
    (tmp_path / "search").symlink_to(ROOT / "search", target_is_directory=True)
    code = "import sys; sys.path.insert(0, sys.argv[1]); import search; print(search.__version__)"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == UNKNOWN == "unknown"
