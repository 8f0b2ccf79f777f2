"""The CLI as a client: `search`, `read`, `play`, the playback controls and `ask` through a
running service, so one process alone drives the screen and a command starts in
milliseconds (standard library and `search.client` only: no playwright, trafilatura, lxml).

A service is used when `SB_SERVICE_URL` names one (it must answer), or when the token file
exists and the default address answers; otherwise, or with `--local`, `--replay`, `--hl`,
`--gl` or `--web`, the command runs in-process as before.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any
from urllib.parse import urlsplit

from search import client
from search.cli._common import int_in

REMOTE_COMMANDS = frozenset({"search", "read", "play", "pause", "resume", "stop", "status", "ask"})
CONTROLS = ("pause", "resume", "stop", "status")
# Options that only the in-process path has: seeing one sends the command there.
LOCAL_ONLY = ("--local", "--replay", "--hl", "--gl", "--web", "--no-web")
# Commands that drive the screen, refused while STREAM_BROWSER=false.
SCREEN_COMMANDS = frozenset({"search", "read", "play", "pause", "resume", "stop"})
_ENV_KEYS = (
    "SB_SERVICE_URL",
    "SB_SERVICE_TOKEN",
    "SB_SERVICE_HOST",
    "SB_SERVICE_PORT",
    "SB_SERVICE_SOCKET",
    "SB_STATE_DIR",
    "STREAM_BROWSER",
)
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _NotForUs(Exception):
    """Arguments the remote path does not take: the in-process parser handles them."""


class _Parser(argparse.ArgumentParser):
    """Parses only: never prints (the in-process parser does, with the terminal's width),
    so its formatter takes a fixed width and argparse never imports `shutil` to ask the
    terminal (each `add_argument` builds a formatter)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        raise _NotForUs(message)


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=100)


def build_parser() -> argparse.ArgumentParser:
    """The remote commands' arguments (the in-process parser keeps the same names)."""
    parser = _Parser(prog="stream-browser", add_help=False)
    parser.add_argument("--env-file", default=".env")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    search = sub.add_parser("search", add_help=False)
    search.add_argument("query")
    search.add_argument("--read-top", type=int_in(0, 3), default=0)  # else: the usage error
    search.add_argument("--engine", default=None)  # the service refuses an unknown one
    sub.add_parser("read", add_help=False).add_argument("url")
    sub.add_parser("play", add_help=False).add_argument("target")
    for name in CONTROLS:
        sub.add_parser(name, add_help=False)
    ask = sub.add_parser("ask", add_help=False)
    ask.add_argument("query")
    ask.add_argument("--action", default="auto")
    ask.add_argument("--url")
    ask.add_argument("--broadcasting", choices=("true", "false", "none"), default="none")
    for command in sub.choices.values():
        command.add_argument("--json", action="store_true")
    return parser


def run_remote(argv: list[str]) -> int | None:
    """Run the command through the service; `None`: run it in-process instead."""
    if any(arg.split("=", 1)[0] in LOCAL_ONLY for arg in argv) or _wants_help(argv):
        return None
    try:
        args = build_parser().parse_args(argv)
    except _NotForUs:
        return None
    if _blank(args):
        return None  # the in-process command says what is missing (exit 2)
    if _env_file_unreadable(args.env_file):
        return None  # the in-process command names the file and line (exit 2)
    env = _environment(args.env_file)
    disabled = env.get("STREAM_BROWSER", "true").strip().lower() in ("false", "0", "no", "off")
    if disabled and args.command in SCREEN_COMMANDS:
        return None  # the in-process command says why it refuses
    explicit = bool(env.get("SB_SERVICE_URL", "").strip())
    bad = _bad_service_url(env.get("SB_SERVICE_URL", "").strip())
    if bad:
        print(f"stream-browser: configuration error: {bad}", file=sys.stderr)
        return EXIT_USAGE
    service = _service(env, explicit)
    if service is None:
        return None
    return _call(args, service, explicit)


def _bad_service_url(url: str) -> str | None:
    """Why `SB_SERVICE_URL` cannot name a service (one line naming it), or None."""
    if not url or url.lower() in ("off", "none", "false", "0"):
        return None
    if url.startswith("unix://") and len(url) > len("unix://"):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    usable = parts is not None and parts.scheme == "http" and bool(parts.hostname)
    if usable and port != 0 and " " not in url:
        return None
    return (
        f"SB_SERVICE_URL={url!r} is not valid: expected http://HOST:PORT, unix:///PATH "
        "or off (for example http://127.0.0.1:8765)"
    )


def _blank(args: argparse.Namespace) -> bool:
    """An empty query or URL: a usage error, never sent to the service."""
    if args.command == "ask":
        return args.action not in CONTROLS and not (args.query + (args.url or "")).strip()
    text = {"search": "query", "read": "url", "play": "target"}.get(args.command)
    return text is not None and not str(getattr(args, text)).strip()


def _wants_help(argv: list[str]) -> bool:
    return any(arg in ("-h", "--help") for arg in argv)


def _env_file_unreadable(env_file: str) -> bool:
    """The dotenv file is not UTF-8 or has a line that is not KEY=VALUE."""
    if not env_file or not os.path.isfile(env_file):
        return False
    from dotenv.parser import parse_stream  # small, pure Python

    try:
        with open(env_file, encoding="utf-8-sig") as handle:
            return any(binding.error for binding in parse_stream(handle))
    except (OSError, UnicodeDecodeError):
        return True


def _environment(env_file: str) -> dict[str, str]:
    """These few variables from the environment, else from the dotenv file."""
    values = {key: os.environ[key] for key in _ENV_KEYS if key in os.environ}
    if env_file and os.path.isfile(env_file) and len(values) < len(_ENV_KEYS):
        from dotenv import dotenv_values  # small, pure Python

        for key, value in dotenv_values(env_file).items():
            if key in _ENV_KEYS and key not in values and value is not None:
                values[key] = value
    return values


def _service(env: dict[str, str], explicit: bool) -> client.Service | None:
    saved = {key: os.environ.get(key) for key in _ENV_KEYS}
    os.environ.update(env)  # `find_service` reads the environment
    try:
        service = client.find_service()
        token_file = os.path.isfile(client.token_file())
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
    if service is None or not (explicit or token_file):
        return None
    service.agent = client.CLI_AGENT  # the console shows the call came from the CLI
    return service


def _body(args: argparse.Namespace) -> dict[str, Any]:
    if args.command == "ask":
        broadcasting = {"true": True, "false": False, "none": None}[args.broadcasting]
        return {
            "query": args.query,
            "action": args.action,
            "url": args.url,
            "broadcasting": broadcasting,
        }
    if args.command == "search":
        body = {"query": args.query, "action": "search", "read_top": args.read_top}
        return body | ({"engine": args.engine} if args.engine else {})
    if args.command == "read":
        return {"query": args.url, "action": "read", "url": args.url}
    if args.command == "play":
        return {"query": args.target, "action": "play"}
    return {"query": "", "action": args.command}


def _call(args: argparse.Namespace, service: client.Service, explicit: bool) -> int | None:
    try:
        status, data = client.exchange("POST", "/v1/browse", _body(args), service=service)
    except (ConnectionRefusedError, FileNotFoundError):
        if not explicit:
            return None  # no service at the default address: nothing ran, run in-process
        print(
            f"stream-browser: no service answers at {service.url} (SB_SERVICE_URL): start it "
            "with `stream-browser serve`, or unset SB_SERVICE_URL, or add --local",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except Exception as exc:  # the call may have run: never retried in-process
        print(f"stream-browser: the service at {service.url} failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if status != 200 or not isinstance(data, dict):
        return _refused(status, data)
    return print_answer(args, data)


def _refused(status: int, data: dict[str, Any] | str) -> int:
    error = _reason(data)
    print(f"stream-browser: the service answered {status}: {error}", file=sys.stderr)
    return EXIT_USAGE if status == 422 else EXIT_FAILED


def _reason(data: dict[str, Any] | str) -> str:
    """The service's reason: `{"error": ...}`, or a request validation error's `detail`
    list (`read_top: Input should be less than or equal to 3`), else the body's start."""
    if not isinstance(data, dict):
        return str(data)[:300] or "no reason given"
    if data.get("error"):
        return client.error_message(data)  # {"error": {"kind", "message", "fix"}}: one line
    detail = data.get("detail")
    if isinstance(detail, list) and detail:
        parts = []
        for item in detail[:3]:
            if isinstance(item, dict):
                loc = [str(p) for p in item.get("loc", []) if p != "body"]
                parts.append(f"{'.'.join(loc) or 'request'}: {item.get('msg', 'not valid')}")
        if parts:
            return "; ".join(parts)
    if isinstance(detail, str) and detail:
        return detail
    return json.dumps(data)[:300]


def print_answer(args: argparse.Namespace, answer: dict[str, Any]) -> int:
    """Print what the tool answered (`{"result", "chain"}`), the same through the service
    and in-process; the exit code says whether it succeeded."""
    result = answer.get("result")
    chain = answer.get("chain") or []
    if args.json:
        print(json.dumps(_json_payload(args, result, chain), ensure_ascii=False))
    elif isinstance(result, dict):
        print(result.get("reply_text", ""))
    for hop in chain:
        if not hop.get("ok"):
            detail = f" ({hop['detail']})" if hop.get("detail") else ""
            fix = f"; {hop['hint']}" if hop.get("hint") else ""
            print(
                f"  {hop.get('provider')}: {hop.get('failure_kind')} after "
                f"{hop.get('elapsed_ms')} ms{detail}{fix}",
                file=sys.stderr,
            )
    if not isinstance(result, dict):
        print(
            "stream-browser: every provider failed; the brain would fall back to its own search",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK if result.get("success") else EXIT_FAILED


def _json_payload(
    args: argparse.Namespace, result: dict[str, Any] | None, chain: list[Any]
) -> dict[str, Any]:
    """`ask --json` prints what the brain gets; the others print the action's data, the
    same shape as their in-process `--json`."""
    ok = isinstance(result, dict) and bool(result.get("success"))
    if args.command == "ask" or not isinstance(result, dict) or not result.get("data"):
        return {"ok": ok, "result": result, "chain": chain}  # a refusal has no data: why
    data = dict(result.get("data") or {})
    if args.command == "search":
        data = {"query": result.get("query", args.query), **data}
    return data
