"""The release as a user gets it: the wheel and the sdist that `make dist` builds (`python -m
build`: an isolated build environment, the wheel built from the sdist), with the licence and
the type markers inside, and the wheel installed into a fresh virtual environment (no editable
install, no source tree on the path, run from an empty folder).

Installing the wheel's dependencies needs the package index, as `make setup` does (pip's
cache makes it quick on a machine that ran `make setup`).
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

import pytest

from browser_core.chrome import free_port

ROOT = Path(__file__).resolve().parents[1]
AEB = ROOT / "tests" / "fixtures" / "articles" / "scrapinghub-aeb"
PAGE = "65bf3048b500bbd84928d9122f99617ca898216b91add1d8b2ac09c670484a5c"  # appleinsider review
VERSION = importlib.metadata.version("stream-browser")
MARKERS = ("browser_core/py.typed", "gemini/py.typed", "search/py.typed")
CONSOLE = tuple(
    f"search/console/static/{name}"
    for name in ("console.html", "console.js", "console.css", "signin.html", "signin.js")
)
STEP_S = 240  # one build or one install, on the shared 2-core machine under load

# 80 s on the shared 2-core machine at a load average of 15: the build 23 s, the install 49 s.
pytestmark = pytest.mark.slow


@dataclass
class Dist:
    wheel: Path
    sdist: Path


@dataclass
class Installed:
    python: Path
    site: Path  # the fresh venv's site-packages
    cwd: Path  # an empty folder, far from the source tree

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return _run([str(self.python.parent / argv[0]), *argv[1:]], cwd=self.cwd, env=_env(self))


def _run(
    argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_S, check=False
    )


def _env(installed: Installed) -> dict[str, str]:
    """No PYTHONPATH, no settings from this machine, a HOME of its own."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    return {**env, "HOME": str(installed.cwd), "SB_SERVICE_URL": "off"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    out = tmp_path_factory.mktemp("dist")
    proc = _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return Dist(wheel, sdist)


@pytest.fixture(scope="module")
def installed(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel and its dependencies (constraints.txt's versions) in a new venv that sees
    nothing of this one (no --system-site-packages, the base interpreter)."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile"]
    proc = _run([*pip, "-c", str(ROOT / "constraints.txt"), str(dist.wheel)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    where = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    return Installed(python, Path(where.stdout.strip()), tmp_path_factory.mktemp("elsewhere"))


def test_the_wheel_carries_the_licence_the_markers_and_the_version(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = set(wheel.namelist())
        info = f"stream_browser-{VERSION}.dist-info"
        licence = wheel.read(f"{info}/licenses/LICENSE").decode()
        metadata = HeaderParser().parsestr(wheel.read(f"{info}/METADATA").decode())
    assert licence.startswith("MIT License") and "stream-browser contributors" in licence
    assert licence == (ROOT / "LICENSE").read_text()
    assert metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    assert set(MARKERS) <= names
    assert set(CONSOLE) <= names, "the console's page, script and style are package data"
    assert not any(name.startswith("tests/") for name in names)


def test_the_sdist_carries_the_licence_the_changelog_and_the_markers(dist: Dist) -> None:
    top = f"stream_browser-{VERSION}"
    with tarfile.open(dist.sdist) as sdist:
        names = set(sdist.getnames())
        licence = sdist.extractfile(f"{top}/LICENSE")
        assert licence is not None
        text = licence.read().decode()
    assert text == (ROOT / "LICENSE").read_text()
    assert {f"{top}/CHANGELOG.md", f"{top}/pyproject.toml", f"{top}/README.md"} <= names
    assert {f"{top}/{marker}" for marker in MARKERS} <= names
    assert not any(name.startswith(f"{top}/tests/") for name in names)  # no half test suite


def test_the_installed_command_comes_from_the_wheel_not_the_source_tree(
    installed: Installed,
) -> None:
    proc = installed.run("python", "-c", "import search; print(search.__file__)")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_relative_to(installed.site)
    assert not any(installed.site.glob("*.pth")), "an editable install or a path hook"


def test_version_says_the_metadata_version(installed: Installed) -> None:
    proc = installed.run("stream-browser", "--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"stream-browser {VERSION}\n", "")


def test_help_lists_the_commands(installed: Installed) -> None:
    proc = installed.run("stream-browser", "--help")
    assert proc.returncode == 0, proc.stderr
    for command in ("doctor", "serve", "search", "read", "mcp", "parse"):
        assert f"    {command} " in proc.stdout


def test_parse_article_reads_a_saved_page_with_the_installed_parsers(
    installed: Installed,
) -> None:
    truth = json.loads((AEB / "ground-truth.json").read_text())[PAGE]["articleBody"]
    second = [line for line in truth.splitlines() if line][1]  # the body's second paragraph
    page = installed.cwd / "review.html"
    page.write_bytes(gzip.decompress((AEB / "html" / f"{PAGE}.html.gz").read_bytes()))
    proc = installed.run("stream-browser", "parse", "article", str(page))
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["title"].startswith("16-inch MacBook Pro review")
    assert len(second) > 100 and second in record["text"]


def test_the_client_imports_and_fails_open_with_the_standard_library_alone(
    installed: Installed,
) -> None:
    # Only the installed package on the path: no site-packages (-S), no environment (-I).
    only = installed.cwd / "only-search"
    only.mkdir()
    (only / "search").symlink_to(installed.site / "search", target_is_directory=True)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); base = set(sys.modules)\n"
        "from search.client import browse_and_search\n"
        "answer = browse_and_search('x', service_url=sys.argv[2], token='t', timeout=10)\n"
        "loaded = {m.split('.')[0] for m in set(sys.modules) - base}\n"
        "print(sorted(loaded - set(sys.stdlib_module_names)), answer)\n"
    )
    nobody = f"http://127.0.0.1:{free_port()}"  # nothing listens: the client says None
    proc = _run(
        [str(installed.python), "-I", "-S", "-c", code, str(only), nobody], cwd=installed.cwd
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "['search'] None\n"
