"""The exception tree shared by every package, and `FailureKind`: the one list of failure kinds.

    StreamBrowserError                  failure_kind "error"
    ├── SettingsError (ValueError)      "bad-settings"
    └── ProviderError                   a provider could not answer
        ├── CdpUnreachable              "cdp-unreachable"  (endpoint, hint)
        ├── OperationTimeout (TimeoutError) "timeout"
        ├── NavigationFailed            "navigation-failed" (url, status)
        ├── BlockedUrl                  "blocked-url"      (url, reason)
        ├── PageBlocked                 "captcha" / "consent" (the site refused us)
        └── gemini.GeminiError          "gemini-*"         (defined in `gemini`)

Expected outcomes (a 404 page) are values, not exceptions; these are for when a provider
has nothing to give. Messages say how to fix the problem. Every failure kind the brain can
see (in `Hop.failure_kind`, logs and the service's answers) is a member of `FailureKind`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class FailureKind(StrEnum):
    """Why a provider (or the whole call) gave no answer: the values the brain can switch on."""

    ERROR = "error"
    BAD_SETTINGS = "bad-settings"
    PROVIDER_ERROR = "provider-error"
    INTERNAL_ERROR = "internal-error"
    # the call itself
    EMPTY_QUERY = "empty-query"
    BAD_ARGUMENTS = "bad-arguments"
    DEADLINE = "deadline"
    TIMEOUT = "timeout"
    REFUSED = "refused"
    # the broadcast Chrome
    CDP_UNREACHABLE = "cdp-unreachable"
    NAVIGATION_FAILED = "navigation-failed"
    HTTP_ERROR = "http-error"
    NOT_A_PAGE = "not-a-page"
    BLOCKED_URL = "blocked-url"
    BLOCKED = "blocked"
    CAPTCHA = "captcha"
    CONSENT = "consent"
    NO_RESULTS = "no-results"
    ENGINE_RESTING = "engine-resting"
    NO_VIDEO = "no-video"
    PLAYBACK_FAILED = "playback-failed"
    NOTHING_PLAYING = "nothing-playing"
    SCREEN_HELD = "screen-held"
    # Gemini
    GEMINI_ERROR = "gemini-error"
    GEMINI_CLI_MISSING = "gemini-cli-missing"
    GEMINI_AUTH = "gemini-auth"
    GEMINI_QUOTA = "gemini-quota"
    GEMINI_TIMEOUT = "gemini-timeout"
    GEMINI_UNTRUSTED = "gemini-untrusted"
    GEMINI_CLI_ERROR = "gemini-cli-error"
    GEMINI_MODEL = "gemini-model"
    GEMINI_UNAVAILABLE = "gemini-unavailable"
    GEMINI_BAD_RESPONSE = "gemini-bad-response"
    GEMINI_INTERNAL = "gemini-internal"
    # the service and its clients
    QUEUE_FULL = "queue-full"
    SERVICE_UNAVAILABLE = "service-unavailable"
    UNAUTHORIZED = "unauthorized"


class StreamBrowserError(Exception):
    """Root of every error this project raises on purpose."""

    failure_kind: ClassVar[FailureKind] = FailureKind.ERROR

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        failure_kind: FailureKind | str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.context = context
        # A leaf may narrow its kind per instance (`PageBlocked`: captcha or consent); an
        # unknown value is a programming error and fails here, not in the brain.
        self._kind = FailureKind(failure_kind) if failure_kind else type(self).failure_kind

    @property
    def kind(self) -> FailureKind:
        """The failure kind of this instance."""
        return self._kind

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class SettingsError(StreamBrowserError, ValueError):
    """A configuration value is invalid; the message is one line naming the variable."""

    failure_kind = FailureKind.BAD_SETTINGS


class ProviderError(StreamBrowserError):
    """A provider (browser or Gemini) could not produce an answer."""

    failure_kind = FailureKind.PROVIDER_ERROR


class CdpUnreachable(ProviderError):
    """The broadcast Chrome's CDP endpoint did not answer."""

    failure_kind = FailureKind.CDP_UNREACHABLE


class ScreenHeld(ProviderError):
    """A person holds the broadcast tab from the console: no call may drive it now."""

    failure_kind = FailureKind.SCREEN_HELD


class OperationTimeout(ProviderError, TimeoutError):
    """An operation (or the wait for its turn on the owned tab) passed its deadline."""

    failure_kind = FailureKind.TIMEOUT


class NavigationFailed(ProviderError):
    """The page could not be loaded (DNS, TLS, connection, or the browser refused)."""

    failure_kind = FailureKind.NAVIGATION_FAILED


class BlockedUrl(ProviderError):
    """The navigation policy refused a URL before (or right after) it was opened."""

    failure_kind = FailureKind.BLOCKED_URL


class PageBlocked(ProviderError):
    """The site refused us (captcha, unanswerable consent); `kind` says which."""

    failure_kind = FailureKind.BLOCKED
