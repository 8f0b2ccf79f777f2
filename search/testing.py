"""A fake provider shipped beside the `Provider` seam, for tests of routing and the tool."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from browser_core import (
    Deadline,
    ProviderError,
    Settings,
    Source,
    ToolExecutionResult,
    envelope_result,
)
from search._types import SPECS, Request


@dataclass
class FakeProvider:
    """Answers, fails with a failure kind, crashes, or sleeps, as told; records its calls.

    `behaviour`: "ok", "fail:KIND", "crash", or "sleep:SECONDS" (then answers).
    """

    name: str
    actions: frozenset[str] = frozenset(SPECS)
    behaviour: str = "ok"
    body: str = "fake answer"
    calls: list[Request] = field(default_factory=list)

    async def run(
        self, request: Request, settings: Settings, deadline: Deadline
    ) -> ToolExecutionResult:
        self.calls.append(request)
        kind, _, arg = self.behaviour.partition(":")
        if kind == "fail":
            raise ProviderError(
                f"{self.name} failed on purpose", failure_kind=arg or "provider-error"
            )
        if kind == "crash":
            raise RuntimeError(f"{self.name} crashed on purpose")
        if kind == "sleep":
            await asyncio.sleep(float(arg))
        return envelope_result(
            f"{self.body} from {self.name} for {request.query}",
            provider=self.name,
            action=request.action,
            query=request.query,
            sources=[Source(title="fake", url=f"https://example.com/{self.name}")],
        )
