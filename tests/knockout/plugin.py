"""The knock-out run's pytest plugin: `pytest -p tests.knockout.plugin --knockout NAME`.

Switches the defense off in this process before any conftest or test module is imported,
and in every Python process the tests start (the service, the CLI, the egress guard):
a `sitecustomize.py` in a temporary folder first on their PYTHONPATH switches it off there.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.knockout import switch_off

KNOCKOUT_FILE = Path(__file__).resolve().parent / "__init__.py"
SITE = '''"""Written by the knock-out run (tests/knockout/plugin.py): switches {name!r} off."""
import importlib.util
import sys

_spec = importlib.util.spec_from_file_location("_sb_knockout", {path!r})
_module = importlib.util.module_from_spec(_spec)
sys.modules["_sb_knockout"] = _module
_spec.loader.exec_module(_module)
_module.switch_off({name!r})
'''


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--knockout",
        metavar="DEFENSE",
        default=None,
        help="switch this stream-safety defense off for the run (tests/knockout)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: Any, args: Any) -> None:
    name = early_config.known_args_namespace.knockout
    if not name:
        return
    switch_off(name)
    site = Path(tempfile.mkdtemp(prefix="sb-knockout-"))
    atexit.register(shutil.rmtree, site, True)
    (site / "sitecustomize.py").write_text(SITE.format(name=name, path=str(KNOCKOUT_FILE)))
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), before]))


def pytest_report_header(config: pytest.Config) -> str | None:
    name = config.getoption("knockout")
    return f"knock-out run: the defense {name!r} is switched off" if name else None
