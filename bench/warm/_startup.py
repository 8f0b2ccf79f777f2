"""The CLI's start-up alone, beside the interpreter's: no call is made, so the figure is what
every `stream-browser search ...` through a service pays before it asks anything.

Interleaved in a shuffled order, each a fresh process: a bare `python -c pass`, the
standard-library client's import (`python -c "import search.client"`), `stream-browser
--version`, and `stream-browser status` through a service address where nothing listens
(a bound socket that never listens: refused at once, exit 1 with "no service answers"), that
is the whole remote path up to its request. `cli-startup` is the last over the client's import.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# name -> the table's label: row 7 itself, then its controls
LABELS = {
    "remote": "7 CLI via service, to request",
    "version": "  stream-browser --version",
    "client": "  python: import search.client",
    "bare": "  python -c pass",
}
REMOTE_SAYS = "no service answers"  # the remote path's refusal: it got as far as asking


@dataclass(frozen=True)
class Command:
    name: str
    argv: list[str]
    env: dict[str, str]
    exit_code: int


@contextmanager
def refusing_address() -> Iterator[str]:
    """A loopback address that refuses connections, held for the block (no one else binds it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def commands(python: Path, cli: Path, env: dict[str, str], url: str, tmp: Path) -> list[Command]:
    remote_env = {**env, "SB_SERVICE_URL": url, "SB_SERVICE_TOKEN": os.urandom(24).hex()}
    no_env = ["--env-file", str(tmp / "no.env")]
    return [
        Command("bare", [str(python), "-c", "pass"], env, 0),
        Command("client", [str(python), "-c", "import search.client"], env, 0),
        Command("version", [str(cli), "--version"], env, 0),
        Command("remote", [str(cli), *no_env, "status"], remote_env, 1),
    ]


def run_once(command: Command, cwd: Path) -> float:
    """Milliseconds from the start to the exit of one process; raises if it did not do what
    the row says (a remote path that ran in-process, or failed otherwise, is not measured)."""
    started = time.perf_counter()
    proc = subprocess.run(
        command.argv, env=command.env, cwd=cwd, capture_output=True, text=True, timeout=60
    )
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != command.exit_code or (
        command.name == "remote" and REMOTE_SAYS not in proc.stderr
    ):
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return elapsed


def measure_startup(
    python: Path, cli: Path, env: dict[str, str], tmp: Path, rounds: int, seed: int = 11
) -> tuple[dict[str, list[float]], dict[str, list[str]]]:
    """{name: milliseconds} and {name: failures}, `rounds` interleaved rounds (one untimed
    round first: the page cache)."""
    times: dict[str, list[float]] = {name: [] for name in LABELS}
    failures: dict[str, list[str]] = {name: [] for name in LABELS}
    shuffle = random.Random(seed)
    with refusing_address() as url:
        todo = commands(python, cli, env, url, tmp)
        for round_no in range(rounds + 1):
            shuffle.shuffle(todo)
            for command in todo:
                try:
                    ms = run_once(command, tmp)
                except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                    failures[command.name].append(f"{type(exc).__name__}: {str(exc)[:300]}")
                    continue
                if round_no:
                    times[command.name].append(ms)
    return times, failures
