"""The request and context types of the brain-facing tool, and the provider seam."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from browser_core import Deadline, Settings, ToolExecutionResult

Action = Literal["search", "read", "play"]
ACTIONS: tuple[str, ...] = ("auto", "search", "read", "play")


@dataclass(frozen=True)
class ToolContext:
    """What the brain tells us per request. `broadcasting=None` means "no signal"."""

    broadcasting: bool | None = None
    request_id: str | None = None


@dataclass(frozen=True)
class Request:
    """One resolved request: the action is never "auto" here."""

    action: Action
    query: str
    url: str | None = None
    read_top: int = 0
    options: dict[str, str] = field(default_factory=dict)


class Provider(Protocol):
    """A source of answers. Raise a `browser_core.ProviderError` leaf when there is none."""

    name: str
    actions: frozenset[str]

    async def run(
        self, request: Request, settings: Settings, deadline: Deadline
    ) -> ToolExecutionResult: ...
