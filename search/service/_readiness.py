"""Readiness: each part the configured mode needs (Chrome, egress guard, the fonts the
audience reads, Gemini), with its fix."""

from __future__ import annotations

from typing import Any

from browser_core import (
    CdpUnreachable,
    Settings,
    cdp_version,
    egress_status,
)
from browser_core.stage import cached_font_check


def readiness(settings: Settings) -> dict[str, dict[str, Any]]:
    """Each part the configured mode needs: ok, detail, fix. Blocking (short timeouts)."""
    from gemini import find_gemini_binary, gemini_oauth_ready

    checks: dict[str, dict[str, Any]] = {}
    if settings.stream_browser:
        try:
            browser = cdp_version(settings.cdp_endpoint).get("Browser", "?")
            checks["chrome"] = {"ok": True, "detail": f"{browser} at {settings.cdp_endpoint}"}
            checks["egress"] = _egress_check(settings)
            # Drawn once per Chrome and remembered: Hangul, kana and Han as text, not boxes.
            checks["fonts"] = cached_font_check(settings.cdp_endpoint).as_dict()
        except CdpUnreachable:
            checks["chrome"] = {
                "ok": False,
                "detail": f"nothing answers at {settings.cdp_endpoint}",
                "fix": "start it with `stream-browser chrome` (or set CDP_PORT / CDP_URL)",
            }
    if settings.gemini_auth == "oauth":
        binary = find_gemini_binary(settings)
        seeded = gemini_oauth_ready(settings)
        checks["gemini"] = {
            "ok": binary is not None and seeded,
            "detail": f"CLI {binary or 'not found'}, login {'seeded' if seeded else 'missing'}",
            "fix": "install the Gemini CLI and sign in once (or set GEMINI_OAUTH_DIR), "
            "or use GEMINI_AUTH=apikey",
        }
    else:
        present = settings.gemini_api_key is not None
        checks["gemini"] = {
            "ok": present,
            "detail": "API key present" if present else "GEMINI_API_KEY is not set",
            "fix": "set GEMINI_API_KEY",
        }
    for check in checks.values():
        if check["ok"]:
            check.pop("fix", None)
    return checks


def _egress_check(settings: Settings) -> dict[str, Any]:
    """Is the broadcast Chrome behind the egress guard? (`unknown`: not on this machine.)"""
    guard = egress_status(settings)
    check: dict[str, Any] = {"ok": guard.ok or guard.state == "unknown", "detail": guard.detail}
    if guard.hint:
        check["fix"] = guard.hint
    return check
