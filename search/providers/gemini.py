"""Gemini grounded search as a provider: the CLI or the REST API, by `GEMINI_AUTH`."""

from __future__ import annotations

from browser_core import Answer, Deadline, Settings
from gemini import answer_of, ask
from search._types import Request


def gemini_prompt(request: Request) -> str:
    """What Gemini is asked: the query, or for a read the page and what to look for."""
    if request.action == "read" and request.url:
        extra = (
            f" Focus on: {request.query}" if request.query and request.query != request.url else ""
        )
        return f"Summarize the web page at {request.url} in a few sentences.{extra}"
    return request.query


class GeminiProvider:
    """Gemini grounded search (CLI with a Google login, or REST with an API key)."""

    name = "gemini"
    actions = frozenset({"search", "read"})

    async def run(self, request: Request, settings: Settings, deadline: Deadline) -> Answer:
        budget = min(deadline.remaining(), settings.gemini_timeout_s)
        answer = await ask(
            gemini_prompt(request),
            settings.model_copy(
                update={
                    "gemini_timeout_s": budget,
                    "gemini_rest_timeout_s": min(budget, settings.gemini_rest_timeout_s),
                }
            ),
        )
        return answer_of(answer)
