"""Chrome's own word on downloads, for tests: `Browser.downloadWillBegin` and
`Browser.downloadProgress` over a DevTools session of the test's own.

Looking for the page's file name on disk proves nothing while Playwright is attached: it has
Chrome save downloads under random names in a temporary folder of its own, deleted when it
disconnects (see /work/shared/ENVIRONMENT.md, "Downloads while Playwright is attached"). A
download Chrome reports `completed` was written somewhere; one refused at once (the driver's
`deny`: no file, no download bubble) ends `canceled` before a single byte arrived; one cancelled
later (the driver's `download.cancel()`, a preference) ends `canceled` after some.

Chrome sends these events only to a session that asked with `Browser.setDownloadBehavior`,
which also sets the behavior (the last session to set it wins, and a session that detaches
puts it back to Chrome's default). So a watch asks with `behavior="default"` when it starts,
before any driver attaches (the driver's own setting then wins, as in production), and the
driver under test is closed before the watch. `behavior="allow"` stands for another DevTools
client letting downloads through, for the driver's last defense (its `download.cancel()`).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from browser_core import cdp_version
from browser_core._cdp_raw import CdpSocket, RawCdpError, _read_text

FINAL = ("completed", "canceled")


class DownloadWatch:
    """Records every download Chrome starts and how each ends; use as a context manager."""

    def __init__(self, endpoint: str, behavior: str = "default", path: Path | None = None):
        ws_url = cdp_version(endpoint)["webSocketDebuggerUrl"]
        self._cdp = CdpSocket(ws_url, 10.0)
        params: dict[str, Any] = {"behavior": behavior, "eventsEnabled": True}
        if path is not None:
            params["downloadPath"] = str(path)
        self._cdp.call("Browser.setDownloadBehavior", params)
        self._names: dict[str, str] = {}  # guid -> suggested file name
        self._states: dict[str, str] = {}  # guid -> the latest state
        self._bytes: dict[str, int] = {}  # guid -> the most bytes Chrome had received
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def __enter__(self) -> DownloadWatch:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._cdp.close()
        self._reader.join(5)

    def _read(self) -> None:
        while True:
            try:
                message = json.loads(_read_text(self._cdp._sock, time.monotonic() + 3600))
            except (RawCdpError, OSError, ValueError):
                return  # closed
            params = message.get("params", {})
            with self._lock:
                if message.get("method") == "Browser.downloadWillBegin":
                    self._names[params["guid"]] = params.get("suggestedFilename", "")
                    self._states.setdefault(params["guid"], "begun")
                elif message.get("method") == "Browser.downloadProgress":
                    guid = params["guid"]
                    self._states[guid] = params.get("state", "")
                    got = int(params.get("receivedBytes") or 0)
                    self._bytes[guid] = max(self._bytes.get(guid, 0), got)

    def began(self) -> list[str]:
        """The file names of every download Chrome started, in order."""
        with self._lock:
            return list(self._names.values())

    def completed(self) -> list[str]:
        """The file names of downloads Chrome finished writing (somewhere)."""
        with self._lock:
            return [
                self._names.get(g, g) for g, state in self._states.items() if state == "completed"
            ]

    def outcome(self, name: str, timeout: float = 10.0) -> str:
        """How the download of `name` ended, waiting for it: `completed`, `refused` (ended
        before any byte arrived), `canceled` (after some); `never began` when Chrome started
        none, `unfinished` when it is still going."""
        until = time.monotonic() + timeout
        while True:
            with self._lock:
                ours = [g for g, n in self._names.items() if n == name]
                ended = [g for g in ours if self._states.get(g) in FINAL]
                if ended and len(ended) == len(ours):
                    if any(self._states[g] == "completed" for g in ours):
                        return "completed"
                    return "canceled" if any(self._bytes.get(g) for g in ours) else "refused"
            if time.monotonic() > until:
                return "unfinished" if ours else "never began"
            time.sleep(0.05)
