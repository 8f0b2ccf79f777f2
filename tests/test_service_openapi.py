"""The service's OpenAPI schema says what the service does, and a client generated from it
works: `/openapi.json` of a real `stream-browser serve` validates (openapi-spec-validator),
names the bearer scheme on every route but `/healthz`, declares every error status with one
error body, the actions as an enum; `openapi-python-client` generates a client (into
tmp_path) that reads a local page and parses a 401, a 422 and a 429.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess
from search._types import ACTIONS
from tests._server import LocalServer, Reply
from tests._service_proc import ServiceProc, close_owned_tab, start_service, wait_until

ARTICLE = (
    "<html><head><title>Harbour news</title></head><body><article><h1>Harbour news</h1>"
    + "<p>The ferry to the islands now leaves every forty minutes in winter.</p>" * 6
    + "</article></body></html>"
)
GENERATOR = Path(sys.executable).parent / "openapi-python-client"
OUTPUT = ("--output-path", "sbclient", "--fail-on-warning")


@pytest.fixture(scope="module")
def svc(chrome: ChromeProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProc]:
    state = tmp_path_factory.mktemp("openapi-service")
    service = start_service(chrome, state, SB_QUEUE_MAX="1")
    yield service
    assert service.stop() == 0
    close_owned_tab(chrome, state)


def _schema(service: ServiceProc) -> dict[str, Any]:
    from search import client

    answer = client.request(
        "GET", "/openapi.json", service=client.Service(service.url, service.token)
    )
    assert answer is not None and answer[0] == 200 and isinstance(answer[1], dict)
    return answer[1]


def test_openapi_json_validates(svc: ServiceProc) -> None:
    from openapi_spec_validator import validate

    schema = _schema(svc)
    validate(schema)  # raises on an invalid document
    assert schema["info"]["version"] == importlib.metadata.version("stream-browser")


def test_every_route_but_healthz_declares_the_bearer_scheme_and_its_refusals(
    svc: ServiceProc,
) -> None:
    schema = _schema(svc)
    assert schema["components"]["securitySchemes"]["bearer"] == {
        **schema["components"]["securitySchemes"]["bearer"],
        "type": "http",
        "scheme": "bearer",
    }
    assert schema["security"] == [{"bearer": []}]
    for path, item in schema["paths"].items():
        for operation in item.values():
            if path == "/healthz":
                assert operation["security"] == []
                continue
            assert "security" not in operation  # the document's: bearer
            assert {"401", "403", "503"} <= set(operation["responses"]), path


def test_one_error_body_everywhere(svc: ServiceProc) -> None:
    schema = _schema(svc)
    browse = schema["paths"]["/v1/browse"]["post"]["responses"]
    assert {"400", "401", "403", "413", "422", "429", "503"} <= set(browse)
    for path, item in schema["paths"].items():
        for operation in item.values():
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref == "#/components/schemas/ErrorBody", (path, status)
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    assert "Retry-After" in browse["429"]["headers"]


def test_action_is_an_enum_and_broadcasting_has_one_type(svc: ServiceProc) -> None:
    body = _schema(svc)["components"]["schemas"]["BrowseBody"]["properties"]
    assert body["action"]["enum"] == list(ACTIONS)
    assert body["broadcasting"]["type"] == "boolean" and "anyOf" not in body["broadcasting"]


@pytest.fixture(scope="module")
def generated(svc: ServiceProc, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A client generated from the running service's schema, imported from tmp_path."""
    if not GENERATOR.exists() and shutil.which("openapi-python-client") is None:
        pytest.skip("openapi-python-client is not installed (pip install -e '.[dev]')")
    where = tmp_path_factory.mktemp("generated")
    (where / "openapi.json").write_text(json.dumps(_schema(svc)))
    env_path = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # its ruff post-hooks
    subprocess.run(
        [str(GENERATOR), "generate", "--path", "openapi.json", "--meta", "none", *OUTPUT],
        cwd=where,
        env={"PATH": env_path, "HOME": str(where)},
        check=True,
        capture_output=True,
        timeout=120,
    )
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("sbclient")
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m == "sbclient" or m.startswith("sbclient.")]:
            del sys.modules[name]


def _browse(generated: Any, token: str, base: str, **body: Any) -> Any:
    api = importlib.import_module("sbclient.api.default.browse_v1_browse_post")
    models = importlib.import_module("sbclient.models")
    with generated.AuthenticatedClient(base_url=base, token=token, timeout=60) as client:
        return api.sync_detailed(client=client, body=models.BrowseBody(**body))


def test_the_generated_client_reads_a_page(
    generated: Any, svc: ServiceProc, http: LocalServer
) -> None:
    models = importlib.import_module("sbclient.models")
    page = http.route("/harbour-openapi", Reply(ARTICLE))
    answer = _browse(
        generated,
        svc.token,
        svc.url,
        query="ferry",
        action=models.BrowseBodyAction.READ,
        url=page,
        broadcasting=True,
    )
    assert answer.status_code == 200
    assert isinstance(answer.parsed, models.BrowseReply)
    assert answer.parsed.result.provider == "read", answer.content[:500]
    assert "forty minutes" in answer.parsed.result.reply_text


def test_the_generated_client_parses_a_401_and_a_422(generated: Any, svc: ServiceProc) -> None:
    models = importlib.import_module("sbclient.models")
    wrong = _browse(generated, "not-the-token", svc.url, query="x")
    assert wrong.status_code == 401 and isinstance(wrong.parsed, models.ErrorBody)
    assert wrong.parsed.error.kind == models.FailureKind.UNAUTHORIZED
    assert "SB_SERVICE_TOKEN" in wrong.parsed.error.fix
    invalid = _browse(generated, svc.token, svc.url, query="x", read_top=7)
    assert invalid.status_code == 422 and isinstance(invalid.parsed, models.ErrorBody)
    assert invalid.parsed.error.kind == models.FailureKind.BAD_ARGUMENTS
    assert "read_top" in invalid.parsed.error.message


def test_the_generated_client_parses_a_429(
    generated: Any, svc: ServiceProc, http: LocalServer
) -> None:
    """SB_QUEUE_MAX=1: one call running (a slow page), one waiting, the third is refused."""
    models = importlib.import_module("sbclient.models")
    slow = http.route("/openapi-slow", Reply(ARTICLE, delay_s=3.0))
    calls = [
        threading.Thread(
            target=_browse,
            args=(generated, svc.token, svc.url),
            kwargs={"query": "x", "url": slow, "action": models.BrowseBodyAction.READ},
        )
        for _ in range(2)
    ]
    calls[0].start()
    assert wait_until(lambda: any(p.startswith("/openapi-slow") for p in http.requests))
    calls[1].start()
    assert wait_until(lambda: '"waiting": 1' in _status(svc))
    full = _browse(generated, svc.token, svc.url, query="x", action=models.BrowseBodyAction.STATUS)
    for call in calls:
        call.join(30)
    assert full.status_code == 429 and isinstance(full.parsed, models.ErrorBody)
    assert full.parsed.error.kind == models.FailureKind.QUEUE_FULL
    assert int(full.headers["retry-after"]) >= 1


def _status(service: ServiceProc) -> str:
    from search import client

    answer = client.request("GET", "/v1/status", service=client.Service(service.url, service.token))
    return json.dumps(answer[1]["queue"]) if answer and isinstance(answer[1], dict) else ""
