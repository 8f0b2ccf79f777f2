"""The one version (search/_version.py): pyproject's `version`, as the install wrote it into the
package metadata, and `unknown`, never a guess, for a source tree that was never installed.
Each face is checked against the metadata where it is tested (`--version` in test_cli, doctor in
test_cli_core, `/healthz` and `/v1/status` in test_service, the OpenAPI info in
test_service_openapi, MCP's `serverInfo` in test_mcp, the image's labels in test_deploy); here
the metadata, the changelog's newest release and the docs' example against pyproject."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import search
from search._version import UNKNOWN, version

ROOT = Path(__file__).resolve().parents[1]
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_version_is_pyprojects_as_installed() -> None:
    assert version() == importlib.metadata.version("stream-browser") == DECLARED
    assert search.__version__ == DECLARED


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


def test_the_changelogs_newest_release_is_pyprojects_version_under_unreleased() -> None:
    # A bump without its CHANGELOG section (or a section without the bump) fails here.
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.MULTILINE)
    assert headings[:1] == [("Unreleased", "")], headings[:2]
    newest, date = headings[1]
    assert newest == DECLARED, f"CHANGELOG's newest release is {newest}, pyproject says {DECLARED}"
    assert date, f"## [{newest}] has no date"


def test_the_healthz_example_in_the_docs_shows_pyprojects_version() -> None:
    doc = (ROOT / "docs" / "service.md").read_text(encoding="utf-8")
    shown = re.findall(r'"version": "([^"]+)"', doc)
    assert shown and set(shown) == {DECLARED}, shown
