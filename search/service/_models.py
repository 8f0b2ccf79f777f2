"""The HTTP bodies of the service: what a caller of `/v1/browse` sends and gets back, and the
one error body every route and every refusal answers with (`{"error": {kind, message, fix}}`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from browser_core import (
    FailureKind,
    Hop,
    ToolExecutionResult,
)

from .._types import ACTIONS, ENGINE_NAMES

# The error kinds of the HTTP face, by status (a subset of the failure-kind enum).
KIND_BY_STATUS: dict[int, FailureKind] = {
    400: FailureKind.BAD_ARGUMENTS,
    401: FailureKind.UNAUTHORIZED,
    403: FailureKind.REFUSED,
    404: FailureKind.BAD_ARGUMENTS,
    405: FailureKind.BAD_ARGUMENTS,
    413: FailureKind.BAD_ARGUMENTS,
    422: FailureKind.BAD_ARGUMENTS,
    429: FailureKind.QUEUE_FULL,
    503: FailureKind.SERVICE_UNAVAILABLE,
}


def _valid_unicode(value: str | None) -> str | None:
    """A lone surrogate (`"\\ud83d"` in JSON) is valid JSON but no text: refuse it here,
    before it reaches a log line or an answer that must be UTF-8."""
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"not valid Unicode: a lone surrogate at character {exc.start} "
                "(send UTF-8 text, or a \\uD83D\\uDE00 pair for an emoji)"
            ) from None
    return value


class BrowseBody(BaseModel):
    """`POST /v1/browse`: the tool's parameters, as the LLM declaration names them."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(default="", max_length=2000, description="what to look for")
    action: str = Field(
        default="auto",
        description="what to do: auto (read when a URL is given, else search) or an action",
        json_schema_extra={"enum": list(ACTIONS)},
    )
    url: str | None = Field(default=None, max_length=4096, description="for `read`")
    broadcasting: Annotated[
        bool | None,
        WithJsonSchema(
            {
                "type": "boolean",
                "description": "is the stream live? leave it out to follow STREAM_BROWSER",
            }
        ),
    ] = None
    read_top: int = Field(default=0, ge=0, le=3, description="`search`: also read the top N")
    engine: str | None = Field(
        default=None,
        description="`search`: this engine alone on the stream (default: SB_SEARCH_ENGINES)",
        json_schema_extra={"enum": list(ENGINE_NAMES)},
    )

    @field_validator("query", "url")
    @classmethod
    def _text(cls, value: str | None) -> str | None:
        return _valid_unicode(value)

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str | None) -> str | None:
        if value is not None and value.strip().lower() not in ENGINE_NAMES:
            raise ValueError(f"engine must be one of {', '.join(ENGINE_NAMES)}, not {value!r}")
        return value.strip().lower() if value is not None else None

    @field_validator("action")
    @classmethod
    def _known_action(cls, value: str) -> str:
        if value not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {value!r}")
        return value


class BrowseReply(BaseModel):
    """The library's answer (`null` when every provider failed) and every provider tried."""

    result: ToolExecutionResult | None
    chain: list[Hop]


class ErrorDetail(BaseModel):
    """What went wrong, its failure kind, and what to do about it."""

    kind: FailureKind = Field(description="the failure kind (the same enum as every face)")
    message: str = Field(description="what happened")
    fix: str = Field(description="what to do about it")


class ErrorBody(BaseModel):
    """Every error the service answers with, whatever the route or the status."""

    error: ErrorDetail


def error_body(status: int, message: str, fix: str, kind: str | None = None) -> dict[str, Any]:
    """The one error body: `{"error": {"kind", "message", "fix"}}`."""
    chosen = kind or KIND_BY_STATUS.get(status, FailureKind.INTERNAL_ERROR)
    return {"error": {"kind": str(chosen), "message": message, "fix": fix}}
