"""Time a piece of code in a fresh Python: a runaway regular expression holds the GIL, so it
cannot be interrupted in-process, only killed with its process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests._service_proc import ROOT


def seconds_in_fresh_python(code: str, timeout: float, what: str) -> float:
    """Run `code` (which prints its elapsed seconds last) in a new interpreter from the
    checkout; fail the test, naming `what`, if it outlasts `timeout`."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} took more than {timeout:.0f} s")
    return float(out.stdout.strip().splitlines()[-1])
