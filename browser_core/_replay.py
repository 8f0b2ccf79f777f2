"""Serving the owned tab's network from a recording (HAR), so sessions re-run offline.

Unmatched requests are aborted, never sent to the internet.
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.async_api import Page

from ._errors import StreamBrowserError

# Where named recordings live: `SB_RECORDINGS_DIR`, else `tests/recordings` under the
# working directory (the repository, for `make demo`, `make test` and the dev commands).
RECORDINGS_DIR = Path("tests") / "recordings"


def recordings_dir() -> Path:
    """The folder of named recordings, resolved when it is needed (a parameter, not a
    path baked into the installed package)."""
    return Path(os.environ.get("SB_RECORDINGS_DIR") or RECORDINGS_DIR).expanduser().resolve()


def resolve_har(name_or_har: str, folder: Path | None = None) -> Path:
    """A HAR path, or the HAR of `<recordings>/NAME/`; a clear error when neither exists."""
    folder = folder or recordings_dir()
    candidate = Path(name_or_har).expanduser()
    if candidate.is_dir():
        candidate = candidate / "session.har"
    elif not candidate.suffix:
        candidate = folder / name_or_har / "session.har"
    if not candidate.is_file():
        known = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        where = (
            ""
            if folder.is_dir()
            else f"; {folder} does not exist: run from the project folder, or set SB_RECORDINGS_DIR"
        )
        raise StreamBrowserError(
            f"no recording {name_or_har!r} (looked for {candidate})",
            hint=f"pass a .har file or one of: {', '.join(known) or 'none recorded yet'}{where}",
        )
    return candidate


def replay_hook(name_or_har: str):  # type: ignore[no-untyped-def]
    """A driver page hook that serves every request of the owned tab from the recording."""
    har = resolve_har(name_or_har)

    async def hook(page: Page) -> None:
        await page.route_from_har(har, not_found="abort")

    return hook
