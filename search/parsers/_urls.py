"""What every engine's link handling shares: a page address's host (lower-cased) and path."""

from __future__ import annotations

from urllib.parse import urlsplit


def host_path(url: str | None) -> tuple[str, str]:
    if not url:
        return "", ""
    parts = urlsplit(url)
    return (parts.hostname or "").lower(), parts.path
