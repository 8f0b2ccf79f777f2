"""The HTTP bodies of `/v1/browse`: what a caller sends and what it gets back."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from browser_core import (
    Hop,
    ToolExecutionResult,
)

from .._types import ACTIONS


class BrowseBody(BaseModel):
    """`POST /v1/browse`: the tool's parameters, as the LLM declaration names them."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(default="", max_length=2000, description="what to look for")
    action: str = Field(default="auto", description="one of " + ", ".join(ACTIONS))
    url: str | None = Field(default=None, max_length=4096, description="for `read`")
    broadcasting: bool | None = Field(
        default=None, description="is the stream live? null: follow STREAM_BROWSER"
    )
    read_top: int = Field(default=0, ge=0, le=3, description="`search`: also read the top N")


class BrowseReply(BaseModel):
    """The library's answer (`null` when every provider failed) and every provider tried."""

    result: ToolExecutionResult | None
    chain: list[Hop]
