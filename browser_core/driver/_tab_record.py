"""The owned tab's target id, kept in the state folder so that every process (a restarted
service, a CLI call, a test run) drives the same tab: one JSON file per CDP endpoint, replaced
at once (a reader never sees half a file). Its `.lock` sibling is the turn's file lock."""

from __future__ import annotations

import json
import os
from pathlib import Path

import structlog

from .._settings import Settings

log = structlog.get_logger("browser_core.driver")


def record_path(settings: Settings) -> Path:
    """Where the owned tab of `settings.cdp_endpoint` is recorded."""
    safe = "".join(c if c.isalnum() else "_" for c in settings.cdp_endpoint)
    return Path(settings.state_dir).expanduser() / f"owned-tab-{safe}.json"


class TabRecord:
    """The saved target id of the owned tab (None: no tab recorded)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> str | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        value = data.get("target_id") if isinstance(data, dict) else None
        return str(value) if value else None

    def save(self, target_id: str | None) -> None:
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps({"target_id": target_id}), encoding="utf-8")
            os.replace(partial, path)  # readers never see half a file
        except OSError:
            log.warning("driver.state_not_saved", path=str(path))
