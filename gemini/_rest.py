"""generateContent client with Google Search grounding (`GEMINI_AUTH=apikey`), stdlib only.

The key travels only in the `x-goog-api-key` header: never in a URL, a log event or an error
message (any text we surface is scrubbed of it). Models are tried in order; 404 moves on to
the next one. urllib runs in a worker thread with the timeout on the socket.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import structlog

from browser_core import Settings, Source

from ._errors import (
    GeminiAuthError,
    GeminiBadResponse,
    GeminiError,
    GeminiModelError,
    GeminiQuotaError,
    GeminiTimeout,
    GeminiUnavailable,
)
from ._models import Citation, GeminiAnswer

log = structlog.get_logger("gemini.rest")

KEY_HINT = (
    "set GEMINI_API_KEY to a key from https://aistudio.google.com/apikey, "
    "or switch to GEMINI_AUTH=oauth (Gemini CLI login)"
)
FORBIDDEN_HINT = "enable the Generative Language API for the key's project, or use another key"
QUOTA_HINT = "wait and retry, or switch to GEMINI_AUTH=oauth"
DAILY_QUOTA_HINT = "the daily quota is spent: it resets at midnight Pacific time"
MODEL_HINT = "set GEMINI_MODEL / GEMINI_FALLBACK_MODELS to current model ids (see ai.google.dev)"
UNAVAILABLE_HINT = "retry later; check the network and GEMINI_API_BASE"
MAX_BODY = 8 * 1024 * 1024
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


@dataclass(frozen=True)
class HttpReply:
    """One HTTP exchange: the status and the raw body."""

    status: int
    body: bytes


def endpoint(base: str, model: str) -> str:
    """The generateContent URL for `model` (no key in it, ever)."""
    name = model.removeprefix("models/")
    return f"{base.rstrip('/')}/v1beta/models/{quote(name, safe='.-_')}:generateContent"


def request_body(query: str) -> bytes:
    body = {"contents": [{"parts": [{"text": query}]}], "tools": [{"google_search": {}}]}
    return json.dumps(body).encode("utf-8")


def scrub(text: str, key: str) -> str:
    """Remove the key from any text we are about to surface."""
    return text.replace(key, "<redacted>") if key else text


def _read(response: Any, deadline: float) -> bytes:
    """The body, checked against the deadline as each piece arrives: `read1` returns what one
    socket read got (`read(n)` waits for all n bytes, so a reply trickled a byte at a time
    would pass every per-read timeout and hold the worker thread long past the deadline)."""
    chunks, size = [], 0
    while chunk := response.read1(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BODY or time.monotonic() > deadline:
            raise TimeoutError("the response took too long or was too large")
    return b"".join(chunks)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: urllib would re-send the key header to the new host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _exchange(request: urllib.request.Request, timeout_s: float) -> HttpReply:
    deadline = time.monotonic() + timeout_s
    try:
        with _OPENER.open(request, timeout=timeout_s) as response:
            return HttpReply(response.status, _read(response, deadline))
    except urllib.error.HTTPError as exc:
        with exc:
            return HttpReply(exc.code, _read(exc, deadline))


def post(url: str, body: bytes, key: str, timeout_s: float) -> HttpReply:
    """Blocking POST (run in a worker thread); network failures become GeminiUnavailable."""
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"content-type": "application/json", "x-goog-api-key": key},
    )
    try:
        return _exchange(request, timeout_s)
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        detail = scrub(f"{type(reason).__name__}: {reason}", key)
        if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
            raise GeminiTimeout(
                f"Gemini API did not answer within {timeout_s:.1f} s",
                hint="raise GEMINI_REST_TIMEOUT_S, or check the network",
                timeout=True,
            ) from None
        raise GeminiUnavailable(
            f"Gemini API unreachable: {detail}", hint=UNAVAILABLE_HINT
        ) from None


# --- errors -----------------------------------------------------------------------------


def _details(error: dict[str, Any], suffix: str) -> list[dict[str, Any]]:
    details = error.get("details")
    return (
        [
            d
            for d in details or []
            if isinstance(d, dict) and str(d.get("@type", "")).endswith(suffix)
        ]
        if isinstance(details, list)
        else []
    )


def retry_after(error: dict[str, Any]) -> float | None:
    """`RetryInfo.retryDelay` ("33s", "1.5s") in seconds."""
    for detail in _details(error, "google.rpc.RetryInfo"):
        match = _DELAY.match(str(detail.get("retryDelay", "")))
        if match:
            return float(match.group(1))
    return None


def is_daily_quota(error: dict[str, Any]) -> bool:
    """A `QuotaFailure` naming a per-day quota: it will not clear by retrying today."""
    for detail in _details(error, "google.rpc.QuotaFailure"):
        for violation in detail.get("violations") or []:
            if not isinstance(violation, dict):
                continue
            ids = f"{violation.get('quotaId', '')} {violation.get('quotaMetric', '')}"
            if re.search(r"per.?day", ids, re.I):
                return True
    return False


def _reasons(error: dict[str, Any]) -> set[str]:
    return {str(d.get("reason")) for d in _details(error, "google.rpc.ErrorInfo")}


def _api_error(reply: HttpReply) -> dict[str, Any]:
    try:
        payload = json.loads(reply.body)
    except ValueError:
        return {}
    error = payload.get("error") if isinstance(payload, dict) else None
    return error if isinstance(error, dict) else {}


def _quota_error(error: dict[str, Any], message: str, model: str) -> GeminiQuotaError:
    delay, final = retry_after(error), is_daily_quota(error)
    text = f"Gemini API quota exhausted for {model}" + (
        " (per-day quota: final for today)" if final else ""
    )
    if delay is not None and not final:
        text += f"; retry in {delay:g} s"
    return GeminiQuotaError(
        f"{text}: {message}",
        retry_after_s=delay,
        final=final,
        model=model,
        hint=DAILY_QUOTA_HINT if final else QUOTA_HINT,
        status=429,
    )


def error_for(reply: HttpReply, model: str, key: str) -> GeminiError:
    """Map a non-200 reply (other than 404) to its GeminiError leaf."""
    error = _api_error(reply)
    message = scrub(str(error.get("message") or f"HTTP {reply.status}"), key)[:300]
    if reply.status == 429:
        return _quota_error(error, message, model)
    if (
        reply.status in (401, 403)
        or "API_KEY_INVALID" in _reasons(error)
        or (reply.status == 400 and "api key" in message.lower())
    ):
        hint = FORBIDDEN_HINT if reply.status == 403 else KEY_HINT
        return GeminiAuthError(
            f"Gemini API refused the key (HTTP {reply.status}): {message}",
            hint=hint,
            status=reply.status,
        )
    if reply.status >= 500 or not error:
        return GeminiUnavailable(
            f"Gemini API error (HTTP {reply.status}): {message}",
            hint=UNAVAILABLE_HINT,
            status=reply.status,
        )
    return GeminiBadResponse(
        f"Gemini API rejected the request (HTTP {reply.status}): {message}",
        hint=MODEL_HINT,
        status=reply.status,
    )


# --- answers ----------------------------------------------------------------------------


def _sources(chunks: list[Any]) -> tuple[list[Source], dict[int, int]]:
    """Sources deduplicated by URL, and chunk index -> source index."""
    sources: list[Source] = []
    by_url: dict[str, int] = {}
    index_of: dict[int, int] = {}
    for i, chunk in enumerate(chunks):
        web = chunk.get("web") if isinstance(chunk, dict) else None
        if not isinstance(web, dict) or not web.get("uri"):
            continue
        url = str(web["uri"])
        if url not in by_url:
            by_url[url] = len(sources)
            sources.append(Source(title=str(web.get("title") or ""), url=url))
        index_of[i] = by_url[url]
    return sources, index_of


def _citations(supports: list[Any], index_of: dict[int, int]) -> list[Citation]:
    citations = []
    for support in supports:
        segment = support.get("segment") if isinstance(support, dict) else None
        if not isinstance(segment, dict) or "endIndex" not in segment:
            continue
        indices = tuple(
            dict.fromkeys(
                index_of[i] for i in support.get("groundingChunkIndices") or [] if i in index_of
            )
        )
        citations.append(
            Citation(
                start=int(segment.get("startIndex") or 0),
                end=int(segment["endIndex"]),
                source_indices=indices,
            )
        )
    return citations


def parse_answer(payload: Any, model: str) -> GeminiAnswer:
    """A generateContent reply as a GeminiAnswer; GeminiBadResponse when it has no text."""
    candidates = payload.get("candidates") if isinstance(payload, dict) else None
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        blocked = (payload or {}).get("promptFeedback", {}) if isinstance(payload, dict) else {}
        raise GeminiBadResponse(
            f"Gemini API returned no answer (blockReason={blocked.get('blockReason')})",
            hint="rephrase the query, or try another model",
        )
    candidate = candidates[0]
    parts = (candidate.get("content") or {}).get("parts") or []
    text = "".join(
        str(p.get("text", "")) for p in parts if isinstance(p, dict) and not p.get("thought")
    )
    if not text.strip():
        raise GeminiBadResponse(
            f"Gemini API answer has no text (finishReason={candidate.get('finishReason')})",
            hint="retry, rephrase the query, or try another model",
        )
    grounding = candidate.get("groundingMetadata") or {}
    sources, index_of = _sources(grounding.get("groundingChunks") or [])
    return GeminiAnswer(
        text=text,
        sources=sources,
        search_queries=[str(q) for q in grounding.get("webSearchQueries") or []],
        citations=_citations(grounding.get("groundingSupports") or [], index_of),
        model=str(payload.get("modelVersion") or model),
        auth="apikey",
    )


def scrub_payload(payload: Any, key: str) -> Any:
    """Every string in a decoded reply scrubbed of the key (a reply that echoes it, by
    accident or by a hostile endpoint, must not reach the envelope)."""
    if isinstance(payload, str):
        return scrub(payload, key)
    if isinstance(payload, list):
        return [scrub_payload(item, key) for item in payload]
    if isinstance(payload, dict):
        return {scrub(str(k), key): scrub_payload(v, key) for k, v in payload.items()}
    return payload


def _decode(reply: HttpReply, model: str, key: str) -> GeminiAnswer:
    try:
        payload = json.loads(reply.body)
    except ValueError as exc:
        raise GeminiBadResponse(
            f"Gemini API returned malformed JSON ({len(reply.body)} bytes)", hint=UNAVAILABLE_HINT
        ) from exc
    return parse_answer(scrub_payload(payload, key), model)


# --- the entry point --------------------------------------------------------------------


def models_to_try(settings: Settings) -> list[str]:
    """`GEMINI_MODEL` (if set), then `GEMINI_FALLBACK_MODELS`, without repeats."""
    return list(
        dict.fromkeys(m for m in (settings.gemini_model, *settings.gemini_fallback_models) if m)
    )


def api_key(settings: Settings) -> str:
    secret = settings.gemini_api_key
    key = secret.get_secret_value().strip() if secret is not None else ""
    if not key:
        raise GeminiAuthError("GEMINI_AUTH=apikey but no GEMINI_API_KEY is set", hint=KEY_HINT)
    if not key.isascii() or not key.isprintable() or " " in key:
        raise GeminiAuthError(
            "GEMINI_API_KEY contains a space, line break or control character", hint=KEY_HINT
        )
    return key


async def _ask_model(query: str, model: str, key: str, settings: Settings) -> HttpReply:
    url = endpoint(settings.gemini_api_base, model)
    timeout = settings.gemini_rest_timeout_s
    return await asyncio.to_thread(post, url, request_body(query), key, timeout)


async def ask_rest(query: str, settings: Settings) -> GeminiAnswer:
    """Ask generateContent with Google Search grounding; raise a GeminiError leaf on failure."""
    if not query or not query.strip():
        raise ValueError("the query is empty")
    key = api_key(settings)
    models = models_to_try(settings)
    for model in models:
        started = time.monotonic()
        reply = await _ask_model(query, model, key, settings)
        log.debug(
            "gemini.rest.replied",
            model=model,
            status=reply.status,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )
        if reply.status == 404:
            log.info("gemini.rest.model_not_found", model=model)
            continue
        if reply.status != 200:
            raise error_for(reply, model, key)
        return _decode(reply, model, key)
    raise GeminiModelError(
        f"no usable Gemini model: tried {', '.join(models) or 'none'}",
        hint=MODEL_HINT,
        models=models,
    )
