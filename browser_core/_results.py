"""The result envelope every provider returns to the brain, defined once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from ._errors import FailureKind


class Source(BaseModel):
    """One web source behind an answer."""

    title: str = ""
    url: str


class Hop(BaseModel):
    """One provider tried while answering a call."""

    provider: str
    ok: bool
    elapsed_ms: int
    failure_kind: FailureKind | None = None
    detail: str | None = None
    hint: str | None = None


def utcnow() -> datetime:
    return datetime.now(UTC)


class ToolExecutionResult(BaseModel):
    """What `browse_and_search` and every provider hand back.

    `reply_text` is the UNTRUSTED WEB EXTRACT envelope (see `browser_core.wrap_untrusted`)
    around a compact, speakable body; `data` holds the structured result of the action.
    """

    success: bool
    reply_text: str
    provider: str
    action: str = "search"
    query: str = ""
    sources: list[Source] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)
    elapsed_ms: int = 0
    retrieved_at: datetime = Field(default_factory=utcnow)
    truncated: bool = False
    # Set on a result that failed in a way the user should hear (`success=False`): playback
    # that did not start, a control with nothing to act on.
    failure_kind: FailureKind | None = None
    # What the tool itself did around the answer, in its own words (trusted, speakable):
    # "Paused the video to show the results; say resume to continue."
    note: str | None = None
    chain: list[Hop] = Field(default_factory=list)
