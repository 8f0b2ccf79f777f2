"""The one typed settings model.

Precedence, highest first, all pydantic-settings sources (nothing writes to `os.environ`):
explicit keyword arguments, the process environment, a `.env` file (entry points only, via
`load_settings`; never at import or in tests), `playwright.config.toml`, code defaults.
A bad value (an unknown key in the TOML file included) raises `SettingsError` whose message
is one line naming the variable and what it accepts, never a secret; the CLI exits 2 on it.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import socket
import tomllib
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings import SettingsError as _SourceError

from ._errors import SettingsError

CONFIG_FILE_NAME = "playwright.config.toml"

# TOML section.key -> settings field name.
_TOML_KEYS: dict[str, str] = {
    "cdp.host": "cdp_host",
    "cdp.port": "cdp_port",
    "cdp.connect_timeout_s": "connect_timeout_s",
    "chrome.binary": "chrome_binary",
    "chrome.window_size": "window_size",
    "chrome.user_data_dir": "chrome_user_data_dir",
    "timeouts.operation_s": "op_timeout_s",
    "timeouts.navigation_s": "nav_timeout_s",
    "timeouts.settle_ms": "settle_ms",
    "timeouts.call_deadline_s": "call_deadline_s",
    "google.hl": "google_hl",
    "google.hl_fallback": "google_hl_fallback",
    "google.gl": "google_gl",
    "google.udm14": "google_udm14",
    "google.consent": "google_consent",
    "google.search_read": "search_read",
    "google.search_read_confidence": "search_read_confidence",
    "google.overview_wait_s": "google_overview_wait_s",
    "search.engines": "search_engines",
    "search.engine_rest_min": "engine_rest_min",
}

# What each variable accepts, for one-line error messages.
_ACCEPTS: dict[str, str] = {
    "bool": "true or false",
    "int": "a whole number",
    "float": "a number",
}
_WINDOW = re.compile(r"\s*(\d{3,5})\s*[,x]\s*(\d{3,5})\s*", re.ASCII)
# A host name, an IPv4 address or a bracketed IPv6 address (no scheme, port, path or space).
_HOST = re.compile(r"[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]", re.ASCII)
_ALLOW_ENTRY = re.compile(r"(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?", re.ASCII)
_INSTANCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", re.ASCII)
_IPV6 = re.compile(r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*", re.ASCII)
WINDOW_RANGE = (200, 10000)


def _host_name() -> str:
    """The host's name as an instance name (a pod's name under Kubernetes)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname()).strip("-._")[:63]
    return name or "stream-browser"


def _env(name: str, default: Any) -> Any:
    return Field(default=default, validation_alias=AliasChoices(name))


class Settings(BaseSettings):
    """Everything configurable. Environment names are the ones the brain already uses."""

    model_config = SettingsConfigDict(
        case_sensitive=False,
        extra="ignore",
        populate_by_name=True,
        frozen=True,
        allow_inf_nan=False,  # SB_CALL_DEADLINE_S=inf or nan is an error, not "no deadline"
    )

    # Routing and CDP
    stream_browser: bool = _env("STREAM_BROWSER", True)
    cdp_host: str = _env("CDP_HOST", "127.0.0.1")
    cdp_port: int = Field(default=9222, ge=1, le=65535, validation_alias="CDP_PORT")
    cdp_url: str | None = _env("CDP_URL", None)
    connect_timeout_s: float = Field(
        default=5.0, gt=0, le=120, validation_alias="SB_CONNECT_TIMEOUT_S"
    )
    connect_attempts: int = Field(default=3, ge=1, le=10, validation_alias="SB_CONNECT_ATTEMPTS")

    # Deadlines
    op_timeout_s: float = Field(default=20.0, gt=0, le=600, validation_alias="SB_OP_TIMEOUT_S")
    nav_timeout_s: float = Field(default=15.0, gt=0, le=600, validation_alias="SB_NAV_TIMEOUT_S")
    settle_ms: int = Field(default=1200, ge=0, le=30000, validation_alias="SB_SETTLE_MS")
    call_deadline_s: float = Field(
        default=25.0, gt=0, le=600, validation_alias="SB_CALL_DEADLINE_S"
    )
    cache_ttl_s: float = Field(default=60.0, ge=0, le=86400, validation_alias="SB_CACHE_TTL_S")

    # Navigation policy
    allow_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), validation_alias="SB_ALLOW_HOSTS"
    )

    # Budgets
    read_max_chars: int = Field(
        default=6000, ge=200, le=1_000_000, validation_alias="SB_READ_MAX_CHARS"
    )
    # A read with a question ranks its passages with a small multilingual reading model too
    # (search/_meaning.py, fused with BM25: docs/reading.md); "off": shared words alone.
    read_model: Literal["on", "off"] = Field(default="on", validation_alias="SB_READ_MODEL")
    envelope_max_chars: int = Field(
        default=8000, ge=500, le=1_000_000, validation_alias="SB_ENVELOPE_MAX_CHARS"
    )
    max_results: int = Field(default=5, ge=1, le=20, validation_alias="SB_MAX_RESULTS")

    # Local broadcast Chrome
    chrome_binary: str = Field(default="", validation_alias="SB_CHROME_BINARY")
    chrome_user_data_dir: str = Field(
        default="~/.local/share/stream-browser/chrome-profile", validation_alias="SB_CHROME_PROFILE"
    )
    window_size: str = Field(default="1280,800", validation_alias="SB_WINDOW_SIZE")
    state_dir: str = Field(default="~/.cache/stream-browser", validation_alias="SB_STATE_DIR")
    # What the audience sees (browser_core/stage/_focus.py, _caption.py): a caption of what the
    # assistant does ("Searching: ..."), and the video fullscreen instead of theater mode.
    caption: bool = Field(default=False, validation_alias="SB_CAPTION")
    video_fullscreen: bool = Field(default=False, validation_alias="SB_VIDEO_FULLSCREEN")

    # Google
    # "auto": hl and gl follow the query's script (Hangul -> ko/kr, ...), else the fallback.
    google_hl: str = Field(default="auto", validation_alias="SB_GOOGLE_HL")
    google_hl_fallback: str = Field(default="en", validation_alias="SB_GOOGLE_HL_FALLBACK")
    google_gl: str = Field(default="us", validation_alias="SB_GOOGLE_GL")
    google_udm14: bool = Field(default=False, validation_alias="SB_GOOGLE_UDM14")
    google_consent: Literal["reject", "accept"] = Field(
        default="reject", validation_alias="SB_GOOGLE_CONSENT"
    )
    # "auto": a search whose results page holds no direct answer (answer box, featured
    # snippet, knowledge panel) opens its top result on the stream and adds the passages
    # that answer the query; "never": the results page alone.
    search_read: Literal["auto", "never"] = Field(default="auto", validation_alias="SB_SEARCH_READ")
    # With SB_SEARCH_READ=auto: the next organic result, read unseen beside the top one, is
    # opened when it answers better; without that figure (no egress guard, a page drawn by
    # script), when the top result's page answers with less confidence than this (0 to 1,
    # search/_passages.py's, from the page's own best sentences) and the deadline leaves
    # room, the next organic result is opened too and the better of the two answers; 0: never.
    # 0.28 by cross-validation (docs/reading.md, "The next result").
    search_read_confidence: float = Field(
        default=0.28, ge=0.0, le=1.0, validation_alias="SB_SEARCH_READ_CONFIDENCE"
    )
    # How long a search waits for Google's AI Overview to finish streaming in when the results
    # page shows one still being written (never past the call's deadline budget); 0: never
    # wait (an overview complete in the page is still read). docs/google.md says how it was
    # chosen.
    google_overview_wait_s: float = Field(
        default=3.0, ge=0.0, le=30.0, validation_alias="SB_GOOGLE_OVERVIEW_WAIT_S"
    )
    # The search engines the broadcast tab searches, in order: when one refuses (its
    # challenge page, a consent wall that cannot be passed) the same call searches the next
    # on screen before Gemini is asked; "google" alone keeps Google's refusal for Gemini.
    search_engines: Annotated[tuple[Literal["google", "bing"], ...], NoDecode] = Field(
        default=("google", "bing"), min_length=1, validation_alias="SB_SEARCH_ENGINES"
    )
    # After an engine refused, the searches of the next this many minutes skip it (no wall
    # shown to the audience on every call); 0: never skip.
    engine_rest_min: float = Field(
        default=30.0, ge=0.0, le=1440.0, validation_alias="SB_ENGINE_REST_MIN"
    )
    # A results page whose parse is suspect is kept in SB_STATE_DIR/cases (search/_cases.py,
    # docs/google.md): the newest this many, and this many MB in all; 0: none kept.
    cases_max: int = Field(default=20, ge=0, le=1000, validation_alias="SB_CASES_MAX")
    cases_max_mb: float = Field(
        default=50.0, ge=0.0, le=10_000.0, validation_alias="SB_CASES_MAX_MB"
    )
    # Consent banners on the broadcast screen (browser_core/stage/_consent.py); unset: follow
    # SB_GOOGLE_CONSENT. "off" leaves them on screen.
    consent: Literal["reject", "accept", "off"] | None = Field(
        default=None, validation_alias="SB_CONSENT"
    )

    # Gemini
    gemini_auth: Literal["oauth", "apikey"] = _env("GEMINI_AUTH", "oauth")
    gemini_api_key: SecretStr | None = _env("GEMINI_API_KEY", None)
    gemini_model: str | None = _env("GEMINI_MODEL", None)
    gemini_fallback_models: Annotated[tuple[str, ...], NoDecode] = Field(
        default=("gemini-2.5-flash",), validation_alias="GEMINI_FALLBACK_MODELS"
    )
    gemini_api_base: str = Field(
        default="https://generativelanguage.googleapis.com", validation_alias="GEMINI_API_BASE"
    )
    gemini_oauth_dir: str | None = _env("GEMINI_OAUTH_DIR", None)
    gemini_cli: str | None = Field(default=None, validation_alias="GEMINI_CLI")
    gemini_timeout_s: float = Field(default=30.0, gt=0, le=600, validation_alias="GEMINI_TIMEOUT_S")
    # Keep the Gemini CLI's session record of each run (~/.gemini/tmp/...): off, it is deleted
    # once its sources are read (it holds the question and the answer).
    gemini_keep_sessions: bool = Field(default=False, validation_alias="GEMINI_KEEP_SESSIONS")
    gemini_rest_timeout_s: float = Field(
        default=20.0, gt=0, le=600, validation_alias="GEMINI_REST_TIMEOUT_S"
    )
    # Time kept for the Gemini fallback inside a call, whatever the browser hop took: the
    # browser gets what is left after it (short call deadlines are raised to honour it).
    gemini_min_s: float = Field(default=12.0, ge=0, le=120, validation_alias="GEMINI_MIN_S")

    # A person holding the screen from the console: it comes back by itself after this many
    # seconds without their input; a call that needs the screen meanwhile waits at most
    # SB_SCREEN_WAIT_S for it (0: goes to its next provider, Gemini, at once).
    screen_idle_s: float = Field(default=180.0, gt=0, le=86400, validation_alias="SB_SCREEN_IDLE_S")
    screen_wait_s: float = Field(default=0.0, ge=0, le=60, validation_alias="SB_SCREEN_WAIT_S")

    # The service (`stream-browser serve`): loopback TCP by default, or a Unix socket.
    service_host: str = Field(default="127.0.0.1", validation_alias="SB_SERVICE_HOST")
    service_port: int = Field(default=8765, ge=0, le=65535, validation_alias="SB_SERVICE_PORT")
    service_socket: str | None = Field(default=None, validation_alias="SB_SERVICE_SOCKET")
    service_token: SecretStr | None = Field(default=None, validation_alias="SB_SERVICE_TOKEN")
    queue_max: int = Field(default=8, ge=1, le=1000, validation_alias="SB_QUEUE_MAX")
    # After SIGTERM the running call gets this long to finish; then every caller still
    # waiting or running is answered 503 "shutting down" before the process exits. Below
    # the engine's kill timeout (docker and podman: 10 s; Kubernetes: the pod's
    # terminationGracePeriodSeconds), with room to answer before SIGKILL.
    stop_grace_s: float = Field(default=8.0, ge=0, le=3600, validation_alias="SB_STOP_GRACE_S")
    # The name this service goes by in its log lines, metrics and /v1/status (one per
    # broadcast): unset, the host name (a Kubernetes pod's name, a container's id).
    instance: str = Field(default_factory=_host_name, validation_alias="SB_INSTANCE")

    # Logging
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", validation_alias="SB_LOG_LEVEL"
    )
    log_format: Literal["auto", "json", "console"] = Field(
        default="auto", validation_alias="SB_LOG_FORMAT"
    )

    @field_validator("allow_hosts", "gemini_fallback_models", mode="before")
    @classmethod
    def _split_csv(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("search_engines", mode="before")
    @classmethod
    def _engines(cls, value: Any) -> Any:
        """`google,bing` in order, each once (a name repeated is kept once)."""
        if isinstance(value, str):
            value = tuple(p.strip().lower() for p in value.split(",") if p.strip())
        if isinstance(value, tuple | list):
            return tuple(dict.fromkeys(value))
        return value

    @field_validator("allow_hosts", mode="before")
    @classmethod
    def _allow_entries(cls, value: Any) -> Any:
        """An entry that can never match (a URL, a bad port) must not pass silently: the
        refusal would then say "add it to SB_ALLOW_HOSTS" while it is there, and a bad port
        (`localhost:80a`) would open every port of the host."""
        parts = cls._split_csv(value)
        if not isinstance(parts, tuple):
            return value
        for entry in parts:
            match = _ALLOW_ENTRY.fullmatch(entry) if isinstance(entry, str) else None
            bad_port = (
                match is not None and match.group(1) and not 1 <= int(match.group(1)) <= 65535
            )
            bare_v6 = isinstance(entry, str) and _IPV6.fullmatch(entry) is not None
            if (match is None or bad_port) and not bare_v6:
                raise ValueError(
                    "comma-separated host or host:port entries, without scheme or path "
                    "(for example localhost:8080,intranet.example)"
                )
        return parts

    @field_validator("cdp_host")
    @classmethod
    def _cdp_host(cls, value: str) -> str:
        if not _HOST.fullmatch(value.strip()):
            raise ValueError(
                "a host name or IP address without scheme, port or spaces "
                "(for example 127.0.0.1; [::1] for IPv6); or set CDP_URL"
            )
        return value.strip()

    @field_validator("cdp_url")
    @classmethod
    def _cdp_url(cls, value: str | None) -> str | None:
        if value is not None and not _url_ok(value, ("http", "https", "ws", "wss")):
            raise ValueError(
                "the DevTools address as http://HOST:PORT (or ws://...), "
                "for example http://127.0.0.1:9222"
            )
        return value.strip() if value is not None else None

    @field_validator("gemini_api_base")
    @classmethod
    def _api_base(cls, value: str) -> str:
        if not _url_ok(value, ("http", "https")):
            raise ValueError(
                "an http(s)://HOST[:PORT] base URL, "
                "for example https://generativelanguage.googleapis.com"
            )
        return value.strip()

    @field_validator(
        "cdp_url", "gemini_model", "gemini_oauth_dir", "gemini_cli", "service_socket", mode="before"
    )
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("gemini_api_key", "service_token", mode="before")
    @classmethod
    def _empty_key_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator(
        "gemini_auth", "google_consent", "search_read", "log_level", "log_format", mode="before"
    )
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("consent", mode="before")
    @classmethod
    def _consent(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower() or None
        return value

    @field_validator("gemini_api_key", "service_token")
    @classmethod
    def _printable_secret(cls, value: SecretStr | None) -> SecretStr | None:
        """A key with a line break or control character would leak through header errors."""
        if value is not None and not _printable(value.get_secret_value().strip(" ")):
            raise ValueError(
                "a key without spaces, line breaks or control characters "
                "(a stray CR/LF from copying it or from a Windows .env?)"
            )
        return value

    @field_validator("instance", mode="before")
    @classmethod
    def _instance(cls, value: Any) -> Any:
        """A name for labels and log fields: a short DNS-label-like word, never empty."""
        if not isinstance(value, str):
            return value
        name = value.strip() or _host_name()
        if not _INSTANCE.fullmatch(name):
            raise ValueError(
                "a name of 1-63 letters, digits, '.', '_' or '-' that starts with a letter or "
                "digit (for example broadcast-1; unset, the host name is used)"
            )
        return name

    @field_validator("window_size")
    @classmethod
    def _window_size(cls, value: str) -> str:
        match = _WINDOW.fullmatch(value)
        low, high = WINDOW_RANGE
        if match is None or not all(low <= int(n) <= high for n in match.groups()):
            raise ValueError(f"WIDTH,HEIGHT in pixels, each {low}-{high} (for example 1280,800)")
        return f"{int(match.group(1))},{int(match.group(2))}"

    @property
    def cdp_endpoint(self) -> str:
        """The endpoint to attach to, re-read on every connect."""
        if self.cdp_url:
            return self.cdp_url.rstrip("/")
        return f"http://{self.cdp_host}:{self.cdp_port}"

    def secret_values(self) -> tuple[str, ...]:
        """Every secret this process holds (API key, service token), for log scrubbing."""
        values = (getattr(self, name) for name in type(self).model_fields)
        return tuple(v.get_secret_value() for v in values if isinstance(v, SecretStr) and v)

    @property
    def window(self) -> tuple[int, int]:
        width, _, height = self.window_size.partition(",")
        return int(width), int(height)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, dotenv_settings, _TomlSource(settings_cls))


def _url_ok(url: str, schemes: tuple[str, ...]) -> bool:
    """`url` has one of `schemes`, a host, a valid port if any, and no space or control."""
    text = url.strip()
    if not text or not _printable(text):
        return False
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  (raises ValueError for a port that is not 0-65535)
    except ValueError:
        return False
    return parts.scheme.lower() in schemes and bool(parts.hostname)


def _printable(text: str) -> bool:
    return all(not char.isspace() and unicodedata.category(char)[0] != "C" for char in text)


class _TomlSource(PydanticBaseSettingsSource):
    """Defaults from playwright.config.toml (the lowest-priority source)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = find_config_file()
        if path is None:
            return {}
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"{path}: not valid TOML ({exc}); fix or delete the file") from exc
        values: dict[str, Any] = {}
        for key, value in _flatten(data):
            field = _TOML_KEYS.get(key)
            if field is None:
                raise SettingsError(_unknown_key(path, key))
            values[_alias_of(field)] = value
        return values


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """`{"cdp": {"port": 1}}` as `[("cdp.port", 1)]`."""
    items: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            items.extend(_flatten(value, f"{name}."))
        else:
            items.append((name, value))
    return items


def _unknown_key(path: Path, key: str) -> str:
    """One line naming the unknown key and the nearest valid one (a typo such as `prot`)."""
    section = key.rpartition(".")[0]
    same_section = [k for k in _TOML_KEYS if k.startswith(f"{section}.")] if section else []
    nearest = difflib.get_close_matches(key, same_section, n=1, cutoff=0.4) or (
        difflib.get_close_matches(key, list(_TOML_KEYS), n=1, cutoff=0.5)
    )
    hint = f"did you mean '{nearest[0]}'?" if nearest else "valid keys: " + ", ".join(_TOML_KEYS)
    return f"{path}: unknown key '{key}'; {hint} (fix or remove it)"


def _alias_of(field_name: str) -> str:
    alias = Settings.model_fields[field_name].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return str(alias) if alias else field_name


def find_config_file() -> Path | None:
    """`STREAM_BROWSER_CONFIG`, else ./playwright.config.toml, else the one beside the package."""
    explicit = os.environ.get("STREAM_BROWSER_CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        return path if path.is_file() else None
    for candidate in (Path.cwd() / CONFIG_FILE_NAME, Path(__file__).parents[1] / CONFIG_FILE_NAME):
        if candidate.is_file():
            return candidate
    return None


def build_settings(**overrides: Any) -> Settings:
    """Settings from the environment and config file, with `overrides` on top; no `.env`.

    Raises `SettingsError` with one readable line on the first bad value.
    """
    return _build(None, overrides)


def load_settings(env_file: str | Path | None = ".env", **overrides: Any) -> Settings:
    """For entry points: as `build_settings`, plus `env_file` below the real environment."""
    use = env_file if env_file is not None and Path(env_file).is_file() else None
    if use is not None:
        check_env_file(use)
    return _build(use, overrides)


def check_env_file(path: str | Path) -> None:
    """`SettingsError` for a dotenv file that is not UTF-8 or has a line that is not
    `KEY=VALUE`: such a line would be skipped with a warning and its setting silently lost
    (an unclosed quote there would send the commands to the default Chrome). The message
    names the file and line, never the line's text (it may hold a key)."""
    from dotenv.parser import parse_stream  # pydantic-settings' own dotenv reader

    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SettingsError(
            f"{path}: not UTF-8 text; save it as UTF-8 (without the UTF-16 of some editors)"
        ) from None
    except OSError as exc:
        raise SettingsError(
            f"{path}: cannot be read ({exc.strerror}); check its permissions"
        ) from None
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            raise SettingsError(
                f"{path} line {binding.original.line}: not KEY=VALUE (an unclosed quote?); "
                "fix it, or comment it out with #"
            )


def _build(env_file: str | Path | None, overrides: dict[str, Any]) -> Settings:
    try:
        return Settings(_env_file=env_file, **overrides)
    except ValidationError as exc:
        raise SettingsError(_one_line(exc, _from_toml(exc, env_file, overrides))) from None
    except _SourceError as exc:
        raise SettingsError(f"{exc}; check the environment and .env") from None


def _from_toml(
    exc: ValidationError, env_file: str | Path | None, overrides: dict[str, Any]
) -> str | None:
    """`path: section.key` when the bad value came from playwright.config.toml (no
    argument, variable or .env line set it), so the message names what the user wrote."""
    errors = exc.errors()
    loc = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else ""
    field_name = _field_name(loc)
    toml_key = next((key for key, name in _TOML_KEYS.items() if name == field_name), None)
    path = find_config_file()
    if toml_key is None or path is None or field_name in overrides:
        return None
    alias = _alias_of(field_name).upper()
    if any(name.upper() == alias for name in os.environ):
        return None
    if env_file is not None:
        from dotenv import dotenv_values

        if any((name or "").upper() == alias for name in dotenv_values(env_file)):
            return None
    return f"{path}: {toml_key}"


def _one_line(exc: ValidationError, source: str | None = None) -> str:
    error = exc.errors()[0]
    loc = str(error["loc"][0]) if error["loc"] else "?"
    name = source or _env_name(loc)
    field = Settings.model_fields.get(_field_name(loc))
    raw = error.get("input")
    secret = field is not None and "SecretStr" in repr(field.annotation)
    shown = "<hidden>" if secret else repr(raw)
    return f"{name}={shown} is not valid: expected {_accepted(field, error)}"


def _field_name(loc: str) -> str:
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        if loc == name or loc in [str(c) for c in choices]:
            return name
    return loc


def _env_name(loc: str) -> str:
    field_name = _field_name(loc)
    if field_name in Settings.model_fields:
        return _alias_of(field_name).upper()
    return loc.upper()


def _accepted(field: Any, error: Any) -> str:
    if field is None:
        return str(error.get("msg", "a valid value"))
    ctx = error.get("ctx") or {}
    if error.get("type") == "value_error" and "error" in ctx:
        return str(ctx["error"])  # our validators say what they accept
    if "expected" in ctx:
        return f"one of {ctx['expected']}"
    if "port" in str(error["loc"][0]).lower():
        return "a port number 1-65535"
    kind = _ACCEPTS.get(getattr(field.annotation, "__name__", ""))
    if kind is None:
        return str(error.get("msg", "a valid value")).lower()
    bounds = _bounds(field)
    return f"{kind} ({', '.join(bounds)})" if bounds else kind


def _bounds(field: Any) -> list[str]:
    """The field's limits as text: `> 0`, `<= 600`."""
    symbols = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
    return [
        f"{symbol} {getattr(meta, op)}"
        for meta in field.metadata
        for op, symbol in symbols.items()
        if getattr(meta, op, None) is not None
    ]
