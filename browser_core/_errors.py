"""The exception tree shared by every package; each leaf names a stable `failure_kind`.

    StreamBrowserError                  failure_kind "error"
    ├── SettingsError (ValueError)      "bad-settings"
    └── ProviderError                   a provider could not answer
        ├── CdpUnreachable              "cdp-unreachable"  (endpoint, hint)
        ├── OperationTimeout (TimeoutError) "timeout"
        ├── NavigationFailed            "navigation-failed" (url, status)
        ├── BlockedUrl                  "blocked-url"      (url, reason)
        ├── PageBlocked                 "captcha" / "consent" (the site refused us)
        └── gemini.GeminiError          "gemini-*"         (defined in `gemini`)

Expected outcomes (no results, a 404 page) are values, not exceptions; these are for
when a provider has nothing to give. Messages say how to fix the problem.
"""

from __future__ import annotations

from typing import Any, ClassVar


class StreamBrowserError(Exception):
    """Root of every error this project raises on purpose."""

    failure_kind: ClassVar[str] = "error"

    def __init__(self, message: str, *, hint: str | None = None, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.context = context

    @property
    def kind(self) -> str:
        """The failure kind of this instance (subclasses may vary it per instance)."""
        return str(self.context.get("failure_kind") or self.failure_kind)

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class SettingsError(StreamBrowserError, ValueError):
    """A configuration value is invalid; the message is one line naming the variable."""

    failure_kind = "bad-settings"


class ProviderError(StreamBrowserError):
    """A provider (browser or Gemini) could not produce an answer."""

    failure_kind = "provider-error"


class CdpUnreachable(ProviderError):
    """The broadcast Chrome's CDP endpoint did not answer."""

    failure_kind = "cdp-unreachable"


class OperationTimeout(ProviderError, TimeoutError):
    """An operation (or the wait for its turn on the owned tab) passed its deadline."""

    failure_kind = "timeout"


class NavigationFailed(ProviderError):
    """The page could not be loaded (DNS, TLS, connection, or the browser refused)."""

    failure_kind = "navigation-failed"


class BlockedUrl(ProviderError):
    """The navigation policy refused a URL before (or right after) it was opened."""

    failure_kind = "blocked-url"


class PageBlocked(ProviderError):
    """The site refused us (captcha, unanswerable consent); `kind` says which."""

    failure_kind = "blocked"
