"""Serving the owned tab's network from a recording (HAR), so sessions re-run offline.

Unmatched requests are aborted, never sent to the internet.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page

from ._errors import StreamBrowserError

RECORDINGS_DIR = Path(__file__).resolve().parents[1] / "tests" / "recordings"


def resolve_har(name_or_har: str) -> Path:
    """A HAR path, or the HAR of `tests/recordings/NAME/`; a clear error when neither exists."""
    candidate = Path(name_or_har).expanduser()
    if candidate.is_dir():
        candidate = candidate / "session.har"
    elif not candidate.suffix:
        candidate = RECORDINGS_DIR / name_or_har / "session.har"
    if not candidate.is_file():
        known = sorted(p.name for p in RECORDINGS_DIR.iterdir()) if RECORDINGS_DIR.is_dir() else []
        raise StreamBrowserError(
            f"no recording {name_or_har!r} (looked for {candidate})",
            hint=f"pass a .har file or one of: {', '.join(known) or 'none recorded yet'}",
        )
    return candidate


def replay_hook(name_or_har: str):  # type: ignore[no-untyped-def]
    """A driver page hook that serves every request of the owned tab from the recording."""
    har = resolve_har(name_or_har)

    async def hook(page: Page) -> None:
        await page.route_from_har(har, not_found="abort")

    return hook
