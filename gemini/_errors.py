"""The Gemini exception tree; every leaf names the `failure_kind` the routing layer logs.

    browser_core.ProviderError
    └── GeminiError                         "gemini-error"
        ├── GeminiCliMissing                "gemini-cli-missing"   (no `gemini` binary)
        ├── GeminiAuthError                 "gemini-auth"          (no/expired login, bad key)
        ├── GeminiQuotaError                "gemini-quota"         (retry_after_s, final)
        ├── GeminiTimeout (TimeoutError)    "gemini-timeout"       (the CLI passed its deadline)
        ├── GeminiUntrusted                 "gemini-untrusted"     (CLI exit 55)
        ├── GeminiCliError                  "gemini-cli-error"     (exit_code)
        ├── GeminiModelError                "gemini-model"         (models tried)
        ├── GeminiUnavailable               "gemini-unavailable"   (5xx, network, REST timeout)
        └── GeminiBadResponse               "gemini-bad-response"  (unusable answer)

Messages say what happened, `hint` says how to fix it; neither ever contains an API key.
"""

from __future__ import annotations

from typing import Any

from browser_core import FailureKind, ProviderError


class GeminiError(ProviderError):
    """Gemini (CLI or REST) could not answer."""

    failure_kind = FailureKind.GEMINI_ERROR


class GeminiCliMissing(GeminiError):
    """No `gemini` executable was found."""

    failure_kind = FailureKind.GEMINI_CLI_MISSING


class GeminiAuthError(GeminiError):
    """No usable login: missing/expired Google-account login, or a missing/invalid API key."""

    failure_kind = FailureKind.GEMINI_AUTH


class GeminiQuotaError(GeminiError):
    """Rate limit or quota exhausted; `final` when it will not clear today."""

    failure_kind = FailureKind.GEMINI_QUOTA

    def __init__(
        self,
        message: str,
        *,
        retry_after_s: float | None = None,
        final: bool = False,
        hint: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, hint=hint, retry_after_s=retry_after_s, final=final, **context)
        self.retry_after_s = retry_after_s
        self.final = final


class GeminiTimeout(GeminiError, TimeoutError):
    """Gemini did not answer in time (the CLI was killed, or the REST call timed out)."""

    failure_kind = FailureKind.GEMINI_TIMEOUT


class GeminiUntrusted(GeminiError):
    """The CLI refused to run in an untrusted folder (exit 55)."""

    failure_kind = FailureKind.GEMINI_UNTRUSTED


class GeminiCliError(GeminiError):
    """The CLI failed for another reason; `exit_code` says how it exited."""

    failure_kind = FailureKind.GEMINI_CLI_ERROR

    def __init__(self, message: str, *, exit_code: int | None = None, **context: Any) -> None:
        super().__init__(message, exit_code=exit_code, **context)
        self.exit_code = exit_code


class GeminiModelError(GeminiError):
    """No configured model exists (every model answered 404) or none is configured."""

    failure_kind = FailureKind.GEMINI_MODEL


class GeminiUnavailable(GeminiError):
    """The service is down or unreachable: 5xx, connection refused/reset, request timeout."""

    failure_kind = FailureKind.GEMINI_UNAVAILABLE


class GeminiBadResponse(GeminiError):
    """An answer arrived but could not be used (not JSON, no candidates, no text)."""

    failure_kind = FailureKind.GEMINI_BAD_RESPONSE
