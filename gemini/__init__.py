"""Gemini grounded search as fail-open providers: the Gemini CLI (account login) and the
REST API (key), picked by `GEMINI_AUTH`. The fakes for tests live in `gemini.testing`."""

from ._cli import ask_cli, find_gemini_binary, gemini_oauth_ready
from ._errors import (
    GeminiAuthError,
    GeminiBadResponse,
    GeminiCliError,
    GeminiCliMissing,
    GeminiError,
    GeminiModelError,
    GeminiQuotaError,
    GeminiTimeout,
    GeminiUnavailable,
    GeminiUntrusted,
)
from ._models import Citation, GeminiAnswer, render_answer
from ._rest import ask_rest
from ._search import (
    acli_search,
    answer_of,
    arest_search,
    asearch,
    ask,
    cli_search,
    provider_name,
    rest_search,
    search,
    to_result,
)

__all__ = [
    "Citation",
    "GeminiAnswer",
    "GeminiAuthError",
    "GeminiBadResponse",
    "GeminiCliError",
    "GeminiCliMissing",
    "GeminiError",
    "GeminiModelError",
    "GeminiQuotaError",
    "GeminiTimeout",
    "GeminiUnavailable",
    "GeminiUntrusted",
    "acli_search",
    "answer_of",
    "arest_search",
    "asearch",
    "ask",
    "ask_cli",
    "ask_rest",
    "cli_search",
    "find_gemini_binary",
    "gemini_oauth_ready",
    "provider_name",
    "render_answer",
    "rest_search",
    "search",
    "to_result",
]
