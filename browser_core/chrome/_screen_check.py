"""What a Chrome we attach to (one we did not start) lacks for a clean broadcast screen, for
`doctor`: its tabs, its switches (`SCREEN_SWITCHES`), the `xdg-settings` shim on its PATH
and its profile's pinned preferences, read from its process when it runs on this machine.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .._errors import CdpUnreachable
from ._cdp_http import cdp_targets
from ._profile import SHIM_DIR, pref_findings
from ._switches import SCREEN_SWITCHES


def _browser_process(port: int) -> tuple[int, list[str]] | None:
    """The pid and command line of the local browser process serving CDP on `port`."""
    wanted = f"--remote-debugging-port={port}"
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode("utf-8", "replace") for a in argv if a]
        if wanted in args and not any(a.startswith("--type=") for a in args):
            return int(entry), args
    return None


def _shim_finding(pid: int) -> list[str]:
    """Is the `xdg-settings` shim first on the PATH of Chrome's process? Only PATH is read
    from its environment (which also holds Debian's API key)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []  # another user's process: nothing to say
    path = next((e[5:].decode("utf-8", "replace") for e in environ if e.startswith(b"PATH=")), "")
    first = Path(path.split(os.pathsep)[0]) if path else None
    if first is not None and (first / "xdg-settings").is_file() and first.name == SHIM_DIR:
        return []
    return ['no xdg-settings shim first on its PATH ("Open xdg-open?" prompts from pages)']


def screen_findings(endpoint: str, port: int) -> list[str]:
    """What a Chrome at `endpoint` lacks for a clean broadcast screen (empty: nothing seen).

    Reads its command line and profile when it runs on this machine; counts its tabs."""
    found = []
    with contextlib.suppress(CdpUnreachable):
        tabs = [t for t in cdp_targets(endpoint) if t.get("type") == "page"]
        if len(tabs) > 1:
            found.append(f"{len(tabs)} tabs: the audience may see a tab strip of others")
    process = _browser_process(port)
    if process is None:
        return [*found, "its command line cannot be read here (not on this machine?)"]
    pid, args = process
    found += _shim_finding(pid)
    for switch, shows in SCREEN_SWITCHES:
        if switch not in args:
            found.append(f"no {switch} ({shows})")
    profile = next((a.split("=", 1)[1] for a in args if a.startswith("--user-data-dir=")), None)
    if profile:
        found += pref_findings(Path(profile).expanduser())
    return found
