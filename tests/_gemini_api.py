"""A loopback stand-in of the Gemini API that the real Gemini CLI (0.61) can run a turn against.

Point the CLI's `GOOGLE_GEMINI_BASE_URL` at `base_url` (with an API key and API-key auth
selected in its settings). It answers the calls one `gemini -p` run makes, as measured
(ENVIRONMENT.md): the router's `generateContent` (a JSON complexity score), the main
model's `streamGenerateContent?alt=sse` (first a `google_web_search` call, then, once the
tool's result comes back, the answer with `[n]` markers), and the search tool's own
`generateContent` with the `googleSearch` tool (text plus `groundingMetadata` for two
pages). Error scenarios replace the main model's stream: a final 429 (a per-day quota, so
the CLI does not retry it), a 500, a stream whose JSON breaks off. The "tool-calls"
scenario plays a model that calls the functions it is given (an MCP server's tools, as the
CLI declares them) one after another and then answers by quoting what each returned, so a
test sees whether a tool's result reached the model. Loopback only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote

from gemini.testing import LoopbackApi, LoopbackHTTPServer

SEARCH_TEXT = "The sky is blue because air molecules scatter blue light more than red light."
PAGES = (
    ("wikipedia.org", "https://en.wikipedia.org/wiki/Rayleigh_scattering"),
    ("nasa.gov", "https://www.nasa.gov/science/why-is-the-sky-blue/"),
)
# The answer cites both pages and a third that does not exist: [3] must not reach the brain.
ANSWER_PARTS = (
    "The sky is blue because air scatters blue light more than red [1][2].",
    " Sunsets look red for the same reason [3].",
)
ANSWER = "".join(ANSWER_PARTS)
SEARCH_QUERY = "why is the sky blue"
SCENARIOS = ("success", "quota", "server-error", "malformed", "tool-calls")

_RPC = "type.googleapis.com/google.rpc."
_QUOTA_DAY = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {
                "@type": _RPC + "QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/"
                        "generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                    }
                ],
            }
        ],
    }
}
_SERVER_ERROR = {
    "error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}
}
_USAGE = {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20}


ToolCall = tuple[str, dict[str, Any]]  # a function's name as the model sees it, its arguments


@dataclass(frozen=True)
class Call:
    """One request the stand-in answered: which model, which method, what it sent."""

    model: str
    method: str  # "generateContent" or "streamGenerateContent"
    body: dict[str, Any]
    api_key: str


def _candidate(parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", **extra}


def router_reply() -> dict[str, Any]:
    """The numerical classifier's JSON: a simple question (the flash model answers)."""
    text = json.dumps({"complexity_reasoning": "A short factual question.", "complexity_score": 5})
    return {"candidates": [_candidate([{"text": text}])], "usageMetadata": _USAGE}


def search_reply() -> dict[str, Any]:
    """What Google Search grounding returns to the CLI's `google_web_search` tool."""
    end = len(SEARCH_TEXT.encode("utf-8"))
    grounding = {
        "webSearchQueries": [SEARCH_QUERY],
        "groundingChunks": [{"web": {"uri": uri, "title": title}} for title, uri in PAGES],
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": end, "text": SEARCH_TEXT},
                "groundingChunkIndices": [0, 1],
            }
        ],
    }
    return {
        "candidates": [_candidate([{"text": SEARCH_TEXT}], groundingMetadata=grounding)],
        "usageMetadata": _USAGE,
    }


def _has_function_response(body: dict[str, Any]) -> bool:
    contents = body.get("contents") or [{}]
    return any("functionResponse" in part for part in contents[-1].get("parts") or [])


def main_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The main model's stream: search first; the answer (in two chunks) once results came."""
    if not _has_function_response(body):
        call = {"functionCall": {"name": "google_web_search", "args": {"query": SEARCH_QUERY}}}
        return [{"candidates": [_candidate([call])], "usageMetadata": _USAGE}]
    first, *rest = ANSWER_PARTS
    head = {"candidates": [{"content": {"role": "model", "parts": [{"text": first}]}}]}
    tail = {"candidates": [_candidate([{"text": "".join(rest)}])], "usageMetadata": _USAGE}
    return [head, tail]


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every `functionResponse` the CLI has sent back in this conversation, oldest first."""
    return [
        part["functionResponse"]
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if "functionResponse" in part
    ]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def relayed(response: dict[str, Any]) -> str:
    """How the stand-in's final answer quotes one function response: every string in it."""
    return f"{response.get('name')} returned: " + " ".join(_strings(response.get("response")))


def tool_call_chunks(body: dict[str, Any], calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    """The model of the "tool-calls" scenario: the next of `calls` while some have no
    function response yet, then a final text quoting every response (see `relayed`)."""
    done = function_responses(body)
    if len(done) < len(calls):
        name, args = calls[len(done)]
        part = {"functionCall": {"name": name, "args": args}}
        return [{"candidates": [_candidate([part])], "usageMetadata": _USAGE}]
    text = "\n".join(relayed(response) for response in done)
    return [{"candidates": [_candidate([{"text": text}])], "usageMetadata": _USAGE}]


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackHTTPServer[GeminiApiStandIn]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        tail = self.path.split("/models/", 1)[-1].split("?", 1)[0]
        model, _, method = unquote(tail).partition(":")
        call = Call(model, method, body, self.headers.get("x-goog-api-key", ""))
        self.server.api.calls.append(call)
        self.server.api.answer(self, call)

    def send_body(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, status: int, payload: Any) -> None:
        self.send_body(status, json.dumps(payload).encode(), "application/json; charset=UTF-8")

    def send_events(self, data: bytes) -> None:
        self.send_body(200, data, "text/event-stream")


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n" for chunk in chunks)


class GeminiApiStandIn(LoopbackApi):
    """The stand-in on 127.0.0.1:0; `scenario` (one of SCENARIOS) decides the main model's
    stream. `calls` lists what was asked, in order. Use as a context manager."""

    def __init__(self, scenario: str = "success", tool_calls: tuple[ToolCall, ...] = ()) -> None:
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; use one of {SCENARIOS}")
        self.scenario = scenario
        self.tool_calls = tool_calls
        self.calls: list[Call] = []
        super().__init__(_Handler)

    def main_calls(self) -> list[Call]:
        """The main model's turns (the streamed calls)."""
        return [call for call in self.calls if call.method == "streamGenerateContent"]

    def answer(self, handler: _Handler, call: Call) -> None:
        if call.method == "streamGenerateContent":
            self._stream(handler, call)
        elif any("googleSearch" in tool for tool in call.body.get("tools") or []):
            handler.send_json(200, search_reply())
        else:
            handler.send_json(200, router_reply())

    def _stream(self, handler: _Handler, call: Call) -> None:
        if self.scenario == "quota":
            handler.send_json(429, _QUOTA_DAY)
        elif self.scenario == "server-error":
            handler.send_json(500, _SERVER_ERROR)
        elif self.scenario == "tool-calls":
            handler.send_events(sse(tool_call_chunks(call.body, self.tool_calls)))
        elif self.scenario == "malformed":
            handler.send_events(b'data: {"candidates": [{"content": {"parts": [{"te\r\n\r\n')
        else:
            handler.send_events(sse(main_chunks(call.body)))
