"""The stage the bench, the soak and the fault tests share: a local HTTPS server for saved
pages, one Chromium of our own whose resolver sends Google/YouTube to that server, settings
pointing at both, and a temp folder. Closing it stops what it started, and nothing else."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common.serve import MAPPED_HOSTS, BenchServer
from browser_core import ChromeProcess, Settings, build_settings, launch_chrome, stop_pid
from browser_core.testing import free_port


@dataclass
class Stage:
    """What one run owns: server, Chromium (pid), settings, temp folder."""

    tmp: Path
    server: BenchServer
    chrome: ChromeProcess
    settings: Settings
    owns_tmp: bool = True

    @property
    def endpoint(self) -> str:
        return self.chrome.endpoint

    def child_env(self, state: str, gemini: str, **extra: str) -> dict[str, str]:
        """The environment for a `stream-browser` child process on this stage: this Chrome,
        the local server allowed, its own state folder, and nothing of the caller's settings
        or keys."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and not k.startswith(("SB_", "GEMINI_", "CDP_"))
        }
        env.update(
            {
                "CDP_PORT": str(self.chrome.port),
                "SB_ALLOW_HOSTS": "127.0.0.1",
                "SB_STATE_DIR": str(self.tmp / state),
                "SB_LOG_LEVEL": "warning",
                "GEMINI_CLI": str(self.tmp / gemini),
                **extra,
            }
        )
        return env

    def restart_chrome(self) -> ChromeProcess:
        """Start Chrome again on the same port and profile (after a kill)."""
        self.chrome = launch_chrome(
            port=self.chrome.port,
            user_data_dir=self.chrome.user_data_dir,
            headless=self.chrome.headless,
            extra_args=self.server.chrome_args(),
            **guard_args(self.server, self.chrome.egress_port is not None),
        )
        return self.chrome

    def close(self) -> None:
        stop_pid(self.chrome.pid)
        self.server.stop()
        if self.owns_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def stage_settings(port: int, tmp: Path, **extra: Any) -> Settings:
    """Product defaults, except: this Chrome, the local article host allowed, no cache, and a
    Gemini CLI path that does not exist (so a browser failure is not hidden by a fallback)."""
    values: dict[str, Any] = {
        "cdp_port": port,
        "allow_hosts": ("127.0.0.1",),
        "state_dir": str(tmp / "state"),
        "cache_ttl_s": 0,
        "gemini_cli": str(tmp / "no-gemini-here"),
    }
    values.update(extra)
    return build_settings(**values)


def guard_args(server: BenchServer, egress: bool = True) -> dict[str, Any]:
    """`launch_chrome` arguments for the egress guard: the mapped hosts go to `server` (the
    guard does what `--host-resolver-rules` does without a proxy), every other name fails,
    and the server's own address is allowed."""
    target = f"127.0.0.1:{server.port}"
    return {
        "egress": egress,
        "allow_hosts": (target,),
        "host_map": {**{host: target for host in MAPPED_HOSTS}, "*": ""},
    }


def open_stage(
    *, headful: bool = False, tmp: Path | None = None, egress: bool = True, **settings: Any
) -> Stage:
    """Start the server and a Chromium mapped to it; add routes with `stage.server.add`.

    Chromium runs behind the egress guard unless `egress=False` (the bench compares both)."""
    owns = tmp is None
    folder = Path(tempfile.mkdtemp(prefix="sb-stage-")) if tmp is None else tmp
    server = BenchServer(folder / "cert")
    port = free_port()
    try:
        chrome = launch_chrome(
            port=port,
            user_data_dir=str(folder / "profile"),
            headless=not headful,
            extra_args=server.chrome_args(),
            **guard_args(server, egress),
        )
    except BaseException:
        server.stop()
        raise
    return Stage(folder, server, chrome, stage_settings(port, folder, **settings), owns)


def proc_tree(root: int) -> list[int]:
    """`root` and every descendant, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _status_kb(pid: int, field: str, file: str = "status") -> int:
    try:
        with open(f"/proc/{pid}/{file}", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_memory_mb(pids: list[int]) -> tuple[float, float]:
    """(RSS, PSS) in MB summed over `pids`; RSS overcounts shared pages, PSS does not."""
    rss = sum(_status_kb(pid, "VmRSS") for pid in pids)
    pss = sum(_status_kb(pid, "Pss", "smaps_rollup") for pid in pids)
    return rss / 1024, pss / 1024
