"""The REST client against a loopback stand-in for generateContent (gemini/_rest.py)."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

import gemini
from browser_core import Settings, build_settings, parse_envelope
from gemini._rest import endpoint, retry_after
from gemini._sync import run_sync
from gemini.testing import (
    GROUNDED_PARTS,
    GROUNDED_QUERIES,
    FakeGeminiApi,
    grounded_payload,
)

KEY = "AIzaSy-test-key-DO-NOT-LEAK-0123456789"
MODEL = "gemini-2.5-flash"
QUERY = "Warum ist der Himmel blau?"


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_")) or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def api_settings(api: FakeGeminiApi, **values: Any) -> Settings:
    base: dict[str, Any] = {
        "gemini_auth": "apikey",
        "gemini_api_key": KEY,
        "gemini_api_base": api.base_url,
        "gemini_fallback_models": (MODEL,),
    }
    return build_settings(**{**base, **values})


@pytest.fixture
def grounded() -> Iterator[FakeGeminiApi]:
    with FakeGeminiApi({MODEL: "grounded"}) as api:
        yield api


def ask(settings: Settings) -> gemini.GeminiAnswer:
    return run_sync(gemini.ask_rest(QUERY, settings))


def failure(settings: Settings) -> gemini.GeminiError:
    with pytest.raises(gemini.GeminiError) as info:
        ask(settings)
    assert KEY not in str(info.value) and KEY not in repr(info.value.context)
    return info.value


# --- the request -----------------------------------------------------------------------------


def test_request_is_a_grounded_generate_content_post_with_the_key_in_a_header(
    grounded: FakeGeminiApi,
) -> None:
    ask(api_settings(grounded))
    (request,) = grounded.requests
    assert request.method == "POST"
    assert request.path == f"/v1beta/models/{MODEL}:generateContent"
    assert request.headers["x-goog-api-key"] == KEY
    assert KEY not in request.path
    assert request.json == {
        "contents": [{"parts": [{"text": QUERY}]}],
        "tools": [{"google_search": {}}],
    }
    assert request.headers["content-type"] == "application/json"


def test_endpoint_keeps_the_base_and_strips_a_models_prefix() -> None:
    assert endpoint("http://h:1/", "models/gemini-x") == (
        "http://h:1/v1beta/models/gemini-x:generateContent"
    )


def test_a_missing_key_is_gemini_auth_without_a_request(grounded: FakeGeminiApi) -> None:
    error = failure(api_settings(grounded, gemini_api_key=None))
    assert error.kind == "gemini-auth" and "GEMINI_API_KEY" in (error.hint or "")
    assert grounded.requests == []


# --- grounded answers ---------------------------------------------------------------------


def test_grounded_answer_has_text_sources_queries_and_byte_offset_citations(
    grounded: FakeGeminiApi,
) -> None:
    answer = ask(api_settings(grounded))
    assert answer.text == "".join(GROUNDED_PARTS)
    assert answer.auth == "apikey" and answer.model == MODEL
    assert answer.search_queries == list(GROUNDED_QUERIES)
    assert [s.title for s in answer.sources] == ["de.wikipedia.org", "nasa.gov", "britannica.com"]
    assert [c.source_indices for c in answer.citations] == [(0, 1), (1,), (2, 0)]


def test_rendered_references_land_after_each_non_ascii_sentence(grounded: FakeGeminiApi) -> None:
    rendered = gemini.render_answer(ask(api_settings(grounded)))
    first, second, third = GROUNDED_PARTS
    assert rendered.startswith(first + "[1][2]" + second + "[2]" + third.rstrip() + "[3][1]")
    assert rendered.endswith(
        "Sources:\n"
        "[1] de.wikipedia.org - https://vertexaisearch.cloud.google.com/grounding-api-redirect/A1\n"
        "[2] nasa.gov - https://vertexaisearch.cloud.google.com/grounding-api-redirect/B2\n"
        "[3] britannica.com - https://vertexaisearch.cloud.google.com/grounding-api-redirect/C3"
    )


def test_character_offsets_would_misplace_the_markers() -> None:
    """Guards the byte/char distinction itself: the fixture text must be non-ASCII."""
    text = "".join(GROUNDED_PARTS)
    assert len(text.encode("utf-8")) > len(text)
    end = grounded_payload(MODEL)["candidates"][0]["groundingMetadata"]["groundingSupports"][0][
        "segment"
    ]["endIndex"]
    assert text[:end] != GROUNDED_PARTS[0]


def test_rest_search_wraps_the_answer_in_the_envelope(grounded: FakeGeminiApi) -> None:
    result = gemini.rest_search(QUERY, api_settings(grounded))
    assert result is not None and result.success
    assert result.provider == "gemini-api" and result.action == "search"
    assert result.data == {"search_queries": list(GROUNDED_QUERIES), "model": MODEL}
    envelope = parse_envelope(result.reply_text)
    assert envelope.header["provider"] == "gemini-api"
    assert "(Rayleigh-Streuung).[1][2]" in envelope.body
    assert len(result.sources) == 3


def test_search_and_asearch_pick_rest_for_apikey(grounded: FakeGeminiApi) -> None:
    settings = api_settings(grounded)
    result = gemini.search(QUERY, settings)
    assert result is not None and result.provider == "gemini-api"
    assert run_sync(gemini.ask(QUERY, settings)).auth == "apikey"


# --- models ------------------------------------------------------------------------------


def test_404_moves_on_to_the_next_model() -> None:
    with FakeGeminiApi({"gemini-3-flash-preview": "not-found", MODEL: "grounded"}) as api:
        answer = ask(api_settings(api, gemini_model="gemini-3-flash-preview"))
    assert answer.model == MODEL
    assert [r.model for r in api.requests] == ["gemini-3-flash-preview", MODEL]


def test_every_model_404_is_gemini_model_naming_them() -> None:
    with FakeGeminiApi(default="not-found") as api:
        error = failure(
            api_settings(api, gemini_model="a-model", gemini_fallback_models=("b-model", "a-model"))
        )
    assert error.kind == "gemini-model" and "a-model, b-model" in error.message
    assert [r.model for r in api.requests] == ["a-model", "b-model"]


# --- failures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "kind"),
    [
        ("quota", "gemini-quota"),
        ("quota-daily", "gemini-quota"),
        ("invalid-key", "gemini-auth"),
        ("leaky", "gemini-auth"),
        ("unauthorized", "gemini-auth"),
        ("forbidden", "gemini-auth"),
        ("server-error", "gemini-unavailable"),
        ("unavailable", "gemini-unavailable"),
        ("malformed", "gemini-bad-response"),
        ("blocked", "gemini-bad-response"),
        ("drop", "gemini-unavailable"),
        ("redirect", "gemini-unavailable"),
    ],
)
def test_each_failure_maps_to_its_kind_and_never_shows_the_key(scenario: str, kind: str) -> None:
    with FakeGeminiApi({MODEL: scenario}) as api:
        error = failure(api_settings(api))
    assert error.kind == kind
    assert error.hint
    assert len(api.requests) == 1  # no retries, and a redirect is not followed


def test_429_reads_retry_info_and_is_not_final_for_a_per_minute_quota() -> None:
    with FakeGeminiApi({MODEL: "quota"}) as api:
        error = failure(api_settings(api))
    assert isinstance(error, gemini.GeminiQuotaError)
    assert error.retry_after_s == 33.0 and error.final is False
    assert "retry in 33 s" in error.message


def test_a_per_day_quota_is_final_and_says_so() -> None:
    with FakeGeminiApi({MODEL: "quota-daily"}) as api:
        error = failure(api_settings(api))
    assert isinstance(error, gemini.GeminiQuotaError) and error.final is True
    assert "per-day" in error.message and "midnight" in (error.hint or "")


def test_retry_delay_accepts_fractions_and_ignores_junk() -> None:
    info = "type.googleapis.com/google.rpc.RetryInfo"
    assert retry_after({"details": [{"@type": info, "retryDelay": "1.5s"}]}) == 1.5
    assert retry_after({"details": [{"@type": info, "retryDelay": "soon"}]}) is None
    assert retry_after({"details": "nope"}) is None


def test_403_hint_names_the_api_to_enable() -> None:
    with FakeGeminiApi({MODEL: "forbidden"}) as api:
        error = failure(api_settings(api))
    assert "Generative Language API" in (error.hint or "")


@pytest.mark.serial  # held to the second: run alone
def test_a_slow_answer_past_the_timeout_is_a_gemini_timeout_quickly() -> None:
    with FakeGeminiApi({MODEL: "slow"}, slow_s=5) as api:
        started = time.monotonic()
        error = failure(api_settings(api, gemini_rest_timeout_s=0.3))
        elapsed = time.monotonic() - started
    assert error.kind == "gemini-timeout" and error.context.get("timeout") is True
    assert elapsed < 2.0


def test_a_closed_port_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = build_settings(
        gemini_auth="apikey", gemini_api_key=KEY, gemini_api_base=f"http://127.0.0.1:{port}"
    )
    error = failure(settings)
    assert error.kind == "gemini-unavailable"


# --- the key stays secret ------------------------------------------------------------------

ALL_SCENARIOS = [
    "grounded",
    "quota",
    "quota-daily",
    "invalid-key",
    "leaky",
    "unauthorized",
    "forbidden",
    "not-found",
    "server-error",
    "malformed",
    "blocked",
    "drop",
    "redirect",
]


@pytest.mark.parametrize("scenario", ALL_SCENARIOS)
def test_the_key_never_appears_in_logs_or_results(scenario: str) -> None:
    with FakeGeminiApi({MODEL: scenario}) as api, capture_logs() as logs:
        result = gemini.rest_search(QUERY, api_settings(api))
    assert (result is not None) == (scenario == "grounded")
    assert logs, "every outcome is logged"
    assert KEY not in json.dumps(logs, default=str)
    if result is not None:
        assert KEY not in result.model_dump_json()
    else:
        (failed,) = [e for e in logs if e["event"] == "gemini.failed"]
        assert failed["provider"] == "gemini-api" and failed["failure_kind"].startswith("gemini-")
        assert isinstance(failed["elapsed_ms"], int)


def test_an_answer_echoing_the_key_reaches_the_envelope_scrubbed() -> None:
    with FakeGeminiApi({MODEL: "echo"}) as api, capture_logs() as logs:
        result = gemini.rest_search(QUERY, api_settings(api))
    assert result is not None
    assert api.requests[0].headers["x-goog-api-key"] == KEY  # sent, and echoed back
    assert KEY not in result.model_dump_json() and KEY not in json.dumps(logs, default=str)
    envelope = parse_envelope(result.reply_text)
    assert "Your key is \u27e8redacted\u27e9." in envelope.body  # <redacted>, neutralised
    assert "k=\u27e8redacted\u27e9" in envelope.header["sources"]


def test_a_key_with_a_line_break_is_refused_before_any_request() -> None:
    from pydantic import SecretStr

    with FakeGeminiApi({MODEL: "grounded"}) as api:
        settings = api_settings(api).model_copy(
            update={"gemini_api_key": SecretStr(KEY + "\r\nX: y")}
        )
        error = failure(settings)
    assert error.kind == "gemini-auth" and "line break" in error.message
    assert KEY not in error.message + (error.hint or "")
    assert api.requests == []


def test_an_error_message_echoing_the_key_is_scrubbed() -> None:
    with FakeGeminiApi({MODEL: "leaky"}) as api:
        error = failure(api_settings(api))
    assert "<redacted>" in error.message
