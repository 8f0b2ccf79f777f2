"""A walk as an MCP tool result: the envelope as text, the result as structured content, a
failure as a tool error naming its failure kind and fix in its text (what every host shows
the model) and as a `ToolFailure` that matches the declared output schema (the TypeScript SDK
rejects a result whose structured content does not, errors included)."""

from __future__ import annotations

from mcp import types

from browser_core import FailureKind, Hop, ToolExecutionResult

from .._routing import Walk
from ._tools import ToolFailure

# What to do about a failure whose hop carries no hint of its own.
FIXES: dict[str, str] = {
    FailureKind.EMPTY_QUERY: "say what to look for (a non-empty query)",
    FailureKind.DEADLINE: "retry; raise SB_CALL_DEADLINE_S if this keeps happening",
    FailureKind.TIMEOUT: "retry; raise SB_OP_TIMEOUT_S or SB_CALL_DEADLINE_S if it persists",
    FailureKind.CDP_UNREACHABLE: "start the broadcast Chrome with `stream-browser chrome` (or "
    "point CDP_PORT / CDP_URL at it)",
    FailureKind.BLOCKED_URL: "use a public http(s) address; internal addresses are refused "
    "on purpose (SB_ALLOW_HOSTS opens explicit exceptions)",
    FailureKind.CAPTCHA: "Google showed its unusual-traffic page: wait, or answer the "
    "captcha once on the broadcast screen",
    FailureKind.NO_VIDEO: "try a different query, or pass a YouTube watch URL",
    FailureKind.NOTHING_PLAYING: "play something first with the `play` tool",
    FailureKind.GEMINI_AUTH: "sign the Gemini CLI in once interactively (or set "
    "GEMINI_AUTH=apikey with GEMINI_API_KEY)",
    FailureKind.GEMINI_CLI_MISSING: "install the Gemini CLI (npm i -g @google/gemini-cli) or "
    "set GEMINI_CLI",
    FailureKind.GEMINI_QUOTA: "wait for the Gemini quota to reset, or use another model",
    FailureKind.QUEUE_FULL: "the service is busy with other calls: retry in a few seconds",
    FailureKind.SERVICE_UNAVAILABLE: "the service is shutting down or not running: retry "
    "shortly, or start it with `stream-browser serve`",
    FailureKind.INTERNAL_ERROR: "this is a bug: the server log (stderr) has the traceback",
}


def _fix(hop: Hop) -> str:
    return hop.hint or FIXES.get(hop.failure_kind or "", "") or "retry later"


def success_result(walk: Walk) -> types.CallToolResult:
    """The envelope as text, the whole result as structured content."""
    assert walk.result is not None
    data = walk.result.model_dump(mode="json")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=walk.result.reply_text)],
        structuredContent=data,
        isError=False,
    )


def error_result(
    tool: str,
    kind: str,
    fix: str,
    *,
    message: str,
    chain: list[Hop] | None = None,
    result: ToolExecutionResult | None = None,
) -> types.CallToolResult:
    """A tool error the model can act on: what failed, its failure kind, how to fix it."""
    chain = chain or []
    lines = [f"{tool} failed: {message}", f"failure_kind: {kind}", f"fix: {fix}"]
    for hop in chain:
        state = "ok" if hop.ok else f"{hop.failure_kind} after {hop.elapsed_ms} ms"
        line = f"- {hop.provider}: {state}" + (f" ({hop.detail})" if hop.detail else "")
        if hop.hint and hop.hint != fix:
            line += f"; fix: {hop.hint}"
        lines.append(line)
    failure = ToolFailure(
        failure_kind=_known_kind(kind), message=message, fix=fix, chain=chain, result=result
    )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="\n".join(lines))],
        structuredContent=failure.model_dump(mode="json"),  # matches the output schema
        isError=True,
    )


def _known_kind(kind: str) -> FailureKind:
    try:
        return FailureKind(kind)
    except ValueError:
        return FailureKind.ERROR


def walk_result(tool: str, walk: Walk) -> types.CallToolResult:
    """Turn a walk into the MCP result: the answer, a refusal, or every provider's failure."""
    failed = [hop for hop in walk.chain if not hop.ok]
    if walk.result is not None and walk.result.success:
        return success_result(walk)
    if walk.result is not None:  # refused, or a failure the user should hear (no video)
        hop = failed[0] if failed else None
        kind = (hop.failure_kind if hop else None) or walk.result.failure_kind
        return error_result(
            tool,
            kind or FailureKind.REFUSED,
            (_fix(hop) if hop else FIXES.get(kind or "")) or walk.result.reply_text,
            message=walk.result.reply_text,
            chain=walk.chain,
            result=walk.result,
        )
    if not failed:
        return error_result(
            tool, FailureKind.PROVIDER_ERROR, "retry later", message="no provider could answer"
        )
    first = failed[0]
    kinds = ", ".join(f"{hop.provider}: {hop.failure_kind}" for hop in failed)
    return error_result(
        tool,
        first.failure_kind or FailureKind.PROVIDER_ERROR,
        _fix(first),
        message=f"every provider failed ({kinds})",
        chain=walk.chain,
    )
