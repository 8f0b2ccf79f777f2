#!/bin/sh
# Container entrypoint: warn about a missing Gemini login, start the broadcast Chrome on a
# virtual display (Debian chromium on Xvfb, behind the egress guard, in its own sandbox when
# the container allows it), then run the service as the main process (exec: it receives
# SIGTERM from `docker stop` and drains).
#
# Host networking (--network=host) shares the host's loopback ports and abstract X sockets:
# Xvfb takes the first display free on the host too (-displayfd), and a CDP port something
# already answers on before our Chrome starts (the host's own Chrome) is refused.
#
# SB_SERVICE_TOKEN_FILE names a file holding the token (a mounted Secret), when
# SB_SERVICE_TOKEN is not set.
#
# SB_ENTRYPOINT_DRY_RUN=1 prints the commands instead of running them (used by the tests).
set -eu

APP_DIR="${SB_APP_DIR:-/opt/stream-browser}"
SB="${SB_BIN:-stream-browser}"
PORT_FILE="${SB_PORT_FILE:-/tmp/stream-browser-service-port}"
NO_SANDBOX_CHROME="${SB_NO_SANDBOX_CHROME:-/usr/local/bin/chromium-no-sandbox}"

say() { printf 'entrypoint: %s\n' "$*" >&2; }

dry_run() { [ "${SB_ENTRYPOINT_DRY_RUN:-}" = "1" ]; }

run() {
    if dry_run; then
        printf 'would run: %s\n' "$*"
    else
        "$@"
    fi
}

lower() { printf '%s' "$1" | tr '[:upper:]' '[:lower:]'; }

# A seeded Gemini CLI login: GEMINI_OAUTH_DIR, the docker/gemini-oauth bind mount, or
# ~/.gemini; each may be the .gemini folder itself or a home holding one.
gemini_login_seeded() {
    for dir in "${GEMINI_OAUTH_DIR:-}" "$APP_DIR/docker/gemini-oauth" "${HOME:-/root}"; do
        [ -n "$dir" ] || continue
        for candidate in "$dir/oauth_creds.json" "$dir/.gemini/oauth_creds.json"; do
            [ -f "$candidate" ] && return 0
        done
    done
    return 1
}

warn_gemini_login() {
    [ "$(lower "${GEMINI_AUTH:-oauth}")" = "oauth" ] && ! gemini_login_seeded || return 0
    say "warning: GEMINI_AUTH=oauth but no Gemini login is seeded, so the Gemini fallback"
    say "  will fail (gemini-auth). Sign in once with an interactive \`gemini\` on another"
    say "  machine and bind-mount its ~/.gemini at $APP_DIR/docker/gemini-oauth"
    say "  (docker run -v \$HOME/.gemini:$APP_DIR/docker/gemini-oauth:ro ...), or set"
    say "  GEMINI_OAUTH_DIR to such a folder, or use GEMINI_AUTH=apikey with GEMINI_API_KEY."
}

# The port `serve` will listen on (`--port N` wins over SB_SERVICE_PORT), for the HEALTHCHECK.
service_port() {
    port="${SB_SERVICE_PORT:-8765}"
    while [ $# -gt 0 ]; do
        case "$1" in
            --port) [ $# -gt 1 ] && port="$2" ;;
            --port=*) port="${1#--port=}" ;;
        esac
        shift
    done
    printf '%s' "$port"
}

# Something accepts TCP connections on 127.0.0.1:$1 (standard-library Python, 1 s).
port_answers() {
    python3 -c 'import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
except OSError:
    sys.exit(1)' "$1"
}

# Before our Chrome starts, nothing in the container's own network listens on the CDP port;
# an answer there is a program of the host's (--network=host), which we must not drive.
refuse_taken_cdp_port() {
    [ -z "${CDP_URL:-}" ] || return 0
    case "${CDP_HOST:-127.0.0.1}" in 127.0.0.1 | localhost | ::1) ;; *) return 0 ;; esac
    cdp_port="${CDP_PORT:-9222}"
    port_answers "$cdp_port" || return 0
    say "error: something already listens on 127.0.0.1:$cdp_port (CDP_PORT) before this"
    say "  container started its Chrome: with --network=host that is a program of the host"
    say "  (its own Chrome would be driven on air). Pass -e CDP_PORT=<a free port>, or run"
    say "  without --network=host (publish the service with -p 127.0.0.1:8765:8765)."
    exit 2
}

# A display of our own: Xvfb picks the first number free here and on the host (-displayfd),
# so host networking cannot put the broadcast on the host's X server.
start_display() {
    [ -z "${DISPLAY:-}" ] || return 0
    size="$(printf '%s' "${SB_WINDOW_SIZE:-1280,800}" | tr ',' 'x')"
    if dry_run; then
        printf 'would run: Xvfb -displayfd 3 -screen 0 %sx24 -nolisten tcp -nocursor\n' "$size"
        return 0
    fi
    number_file="$(mktemp)"
    Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp -nocursor 3>"$number_file" >/dev/null 2>&1 &
    tries=0
    while [ ! -s "$number_file" ] && [ "$tries" -lt 100 ]; do
        sleep 0.05
        tries=$((tries + 1))
    done
    number="$(tr -dc '0-9' <"$number_file")"
    rm -f "$number_file"
    [ -n "$number" ] || { say "error: Xvfb did not start (is the xvfb package installed?)"; exit 1; }
    export DISPLAY=":$number"
    say "Xvfb on display $DISPLAY (${size}); watch it with a VNC server on that display"
}

# Chrome's own sandbox needs user namespaces; a container whose seccomp profile refuses them
# (Docker's default) gets Chrome with --no-sandbox instead, and this line says why.
choose_sandbox() {
    if [ "$(id -u)" = 0 ]; then
        say "warning: running as root, so Chrome runs with --no-sandbox; run as the image's"
        say "  user (the default; drop --user 0) to keep Chrome's own sandbox"
        return 0
    fi
    if [ -n "${SB_CHROME_BINARY:-}" ] || unshare --user --pid --net --fork true 2>/dev/null; then
        return 0
    fi
    say "warning: Chrome's sandbox is unavailable (this container may not create user"
    say "  namespaces), so Chrome runs with --no-sandbox. To keep the sandbox, allow them:"
    say "  docker run --security-opt seccomp=<a profile allowing unshare/clone of user"
    say "  namespaces> (or seccomp=unconfined); see docs/service.md"
    export SB_CHROME_BINARY="$NO_SANDBOX_CHROME"
}

start_chrome() {
    case "$(lower "${STREAM_BROWSER:-true}")" in
        false | 0 | no | off)
            say "STREAM_BROWSER=false: no broadcast Chrome is started; every search uses Gemini"
            return 0
            ;;
    esac
    refuse_taken_cdp_port
    start_display
    choose_sandbox
    # Starts chromium behind the egress guard; it keeps running when the service stops.
    run "$SB" chrome
}

# The token from a file when SB_SERVICE_TOKEN is not set: a Kubernetes Secret mounted as
# files, one key per replica, the file named by the pod (deploy/kubernetes/statefulset.yaml).
read_token_file() {
    file="${SB_SERVICE_TOKEN_FILE:-}"
    [ -n "$file" ] && [ -z "${SB_SERVICE_TOKEN:-}" ] || return 0
    if [ ! -r "$file" ] || [ -d "$file" ]; then
        say "error: SB_SERVICE_TOKEN_FILE=$file cannot be read. Under Kubernetes the Secret"
        say "  stream-browser-tokens needs a key named after this pod (${SB_INSTANCE:-its name}):"
        say "  kubectl create secret generic stream-browser-tokens --from-literal=NAME=TOKEN ..."
        exit 2
    fi
    SB_SERVICE_TOKEN="$(tr -d '\r\n' <"$file")"
    if [ -z "$SB_SERVICE_TOKEN" ]; then
        say "error: SB_SERVICE_TOKEN_FILE=$file is empty; put a long random secret in it"
        exit 2
    fi
    export SB_SERVICE_TOKEN
}

warn_gemini_login
read_token_file
port="$(service_port "$@")"
dry_run || printf '%s\n' "$port" >"$PORT_FILE" 2>/dev/null || true
start_chrome

if [ -z "${SB_SERVICE_TOKEN:-}" ] && [ "${SB_SERVICE_HOST:-127.0.0.1}" != "127.0.0.1" ]; then
    say "note: SB_SERVICE_HOST=${SB_SERVICE_HOST} needs SB_SERVICE_TOKEN (the service refuses"
    say "  to listen beyond loopback without one); pass -e SB_SERVICE_TOKEN=<long random secret>"
fi

if dry_run; then
    printf 'would exec: %s serve %s\n' "$SB" "$*"
    exit 0
fi
exec "$SB" serve "$@"
