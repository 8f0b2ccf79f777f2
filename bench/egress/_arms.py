"""The Chromiums the egress comparison loads the same pages in, one per arm, each started the
same way (`launch_chrome`: the same switches, the same pinned profile preferences, a fresh
profile, one tab of ours) but for the one thing the arm is about:

- `guard`: behind our egress guard (the product's launch, `--proxy-server` to the guard);
- `bare`: the same launch without the proxy switch;
- `control`: a second `bare` (what two identical Chromiums differ by);
- `socks`: behind a plain pass-through SOCKS5 server (`_socks`, none of the guard's code);
- `unchecked`: behind our guard with its policy checks off (`_socks`, bench only);
- `stage`: the bench's own Chromium (behind the guard, the tool's tab beside the measured one,
  a profile every row has used): how the comparison was made before.

Every arm's names fail the same way: the mapped hosts go to the bench's server, every other
name fails when it is connected to (a refused local port without a proxy, the proxy's
host-unreachable reply behind one), never as "not found" inside Chromium.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common.serve import MAPPED_HOSTS, BenchServer
from bench._common.stage import Stage
from bench.egress._socks import start_proxy
from browser_core import ChromeProcess, launch_chrome, stop_pid
from browser_core.testing import LOCAL_STATE_PREFS, SCREEN_PREFS, egress_args, free_port

ARMS = ("guard", "bare", "control", "socks", "unchecked", "stage")
DEFAULT_ARMS = ("guard", "bare", "control")
LABELS = {
    "guard": "behind the guard",
    "bare": "without",
    "control": "control, a second Chromium without the guard",
    "socks": "socks, behind a plain pass-through SOCKS5 server",
    "unchecked": "unchecked, behind the guard with its policy checks off",
    "stage": "stage, the bench's own Chromium (guard, the tool's tab beside)",
}
_PROXIED = ("guard", "socks", "unchecked", "stage")


@dataclass
class Arm:
    """One arm's Chromium, the proxy it is behind (if any) and the proxy's log."""

    name: str
    chrome: ChromeProcess
    proxy_pid: int | None = None
    proxy_log: Path | None = None
    owned: bool = True  # started here (the `stage` arm is the bench's own)

    @property
    def proxied(self) -> bool:
        return self.name in _PROXIED


class Refuser:
    """A bound local port that listens to nothing: a connection to it is refused at once."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])

    def close(self) -> None:
        self.sock.close()


def resolver_rules(server: BenchServer, refused_port: int) -> tuple[str, ...]:
    """The switches every arm gets: the mapped hosts to the bench's server, every other name
    to a refused port (inert behind a proxy, which gets the names unresolved)."""
    rules = [f"MAP {host} 127.0.0.1:{server.port}" for host in MAPPED_HOSTS]
    rules += [f"MAP * 127.0.0.1:{refused_port}", "EXCLUDE 127.0.0.1"]
    return (f"--host-resolver-rules={', '.join(rules)}", "--ignore-certificate-errors")


def host_map(server: BenchServer) -> dict[str, str]:
    """The proxies' map: what `resolver_rules` does, for names that reach a proxy."""
    target = f"127.0.0.1:{server.port}"
    return {**{host: target for host in MAPPED_HOSTS}, "*": ""}


def launch_arm(name: str, stage: Stage, refuser: Refuser) -> Arm:
    """Start arm `name`'s Chromium (and its proxy) in a fresh profile under the stage's folder."""
    if name == "stage":
        return Arm(name, stage.chrome, stage.chrome.egress_pid, _guard_log(stage.chrome), False)
    server, folder = stage.server, stage.tmp / f"egress-{name}"
    common = resolver_rules(server, refuser.port)
    launch: dict[str, Any] = {
        "port": free_port(),
        "user_data_dir": str(folder / "profile"),
        "headless": stage.chrome.headless,
    }
    if name == "guard":
        target = f"127.0.0.1:{server.port}"
        chrome = launch_chrome(
            **launch, extra_args=common, allow_hosts=(target,), host_map=host_map(server)
        )
        return Arm(name, chrome, chrome.egress_pid, _guard_log(chrome))
    # The guard's own switches, but the proxy server: in the same order as `egress_args`.
    proxy_port = free_port() if name in _PROXIED else None
    switches = egress_args(proxy_port or 0)
    if proxy_port is None:
        switches = switches[1:]
    proxy_pid, log = None, None
    if proxy_port is not None:
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "socks.log"
        proxy_pid = start_proxy(
            name if name == "unchecked" else "pass", proxy_port, host_map(server), log
        )
    try:
        chrome = launch_chrome(**launch, egress=False, extra_args=(*switches, *common))
    except BaseException:
        if proxy_pid is not None:
            stop_pid(proxy_pid)
        raise
    return Arm(name, chrome, proxy_pid, log)


def close_arm(arm: Arm) -> None:
    if not arm.owned:
        return
    stop_pid(arm.chrome.pid)
    if arm.proxy_pid is not None and arm.proxy_pid != arm.chrome.egress_pid:
        stop_pid(arm.proxy_pid)


def _guard_log(chrome: ChromeProcess) -> Path:
    return Path(chrome.user_data_dir) / "egress-guard.log"


# -- are the arms the same but for the proxy? ---------------------------------------------------

_VARYING = (
    (re.compile(r"^(--remote-debugging-port=)\d+$"), r"\1PORT"),
    (re.compile(r"^(--user-data-dir=).*$"), r"\1PROFILE"),
    (re.compile(r"^(--proxy-server=socks5://127\.0\.0\.1:)\d+$"), r"\1PORT"),
)


def switches(pid: int) -> list[str]:
    """The Chromium's command line as it runs (after Debian's wrapper added its own), with
    ports and the profile folder written as PORT and PROFILE."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    out = []
    for arg in (a.decode("utf-8", "replace") for a in raw.split(b"\0")[1:] if a):
        for pattern, replacement in _VARYING:
            arg = pattern.sub(replacement, arg)
        out.append(arg)
    return out


# Pinned before every start, then Chrome's own while it runs (it marks the profile as in use).
_RUNTIME_PREFS = ("profile.exit_type", "profile.exited_cleanly")


def pinned_prefs(chrome: ChromeProcess) -> dict[str, object]:
    """The preferences `launch_chrome` pins, as the running Chromium's profile holds them
    (but those Chrome itself changes while it runs, `_RUNTIME_PREFS`)."""
    folder = Path(chrome.user_data_dir)
    prefs, local = (
        _read_json(folder / "Default" / "Preferences"),
        _read_json(folder / "Local State"),
    )
    values: dict[str, object] = {
        "webrtc.ip_handling_policy": _get(prefs, "webrtc", "ip_handling_policy")
    }
    for source, wanted in ((prefs, SCREEN_PREFS), (local, LOCAL_STATE_PREFS)):
        for key, value in wanted.items():
            if not isinstance(value, dict):
                values[key] = source.get(key)
                continue
            for name in value:
                values[f"{key}.{name}"] = _get(source, key, name)
    for path in _RUNTIME_PREFS:
        values.pop(path, None)
    return values


def differences(arms: list[Arm]) -> list[str]:
    """Lines saying how each arm's switches and pinned preferences differ from `bare` (or the
    first arm); a difference other than the proxy server is reported as UNFAIR."""
    base = next((a for a in arms if a.name == "bare"), arms[0])
    base_switches, base_prefs = switches(base.chrome.pid), pinned_prefs(base.chrome)
    lines = [
        f"  switches: {len(base_switches)} on {base.name}'s command line; pinned preferences: "
        f"{', '.join(f'{k}={v}' for k, v in base_prefs.items())}"
    ]
    for arm in arms:
        if arm is base:
            continue
        mine = switches(arm.chrome.pid)
        extra = [s for s in mine if s not in base_switches]
        missing = [s for s in base_switches if s not in mine]
        prefs = {k: v for k, v in pinned_prefs(arm.chrome).items() if base_prefs.get(k) != v}
        unfair = [s for s in extra + missing if not s.startswith("--proxy-server=")] or prefs
        said = "; ".join([*(f"added {s}" for s in extra), *(f"lacks {s}" for s in missing)])
        lines.append(
            f"  {arm.name:<9} against {base.name}: {said or 'the same'}"
            + (f"; preferences {prefs}" if prefs else "")
            + ("  UNFAIR: not only the proxy differs" if unfair else "")
        )
    return lines


def _read_json(path: Path) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            return data
    return {}


def _get(data: dict[str, Any], key: str, name: str) -> object:
    section = data.get(key)
    return section.get(name) if isinstance(section, dict) else None
