#!/bin/sh
# Container entrypoint: warn about a missing Gemini login, start the broadcast Chrome on a
# virtual display (Debian chromium on Xvfb, behind the egress guard), then run the service
# as the main process (exec: it receives SIGTERM from `docker stop` and drains).
#
# SB_ENTRYPOINT_DRY_RUN=1 prints the commands instead of running them (used by the tests).
set -eu

APP_DIR="${SB_APP_DIR:-/app}"
SB="${SB_BIN:-stream-browser}"

say() { printf 'entrypoint: %s\n' "$*" >&2; }

run() {
    if [ "${SB_ENTRYPOINT_DRY_RUN:-}" = "1" ]; then
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

if [ "$(lower "${GEMINI_AUTH:-oauth}")" = "oauth" ] && ! gemini_login_seeded; then
    say "warning: GEMINI_AUTH=oauth but no Gemini login is seeded, so the Gemini fallback"
    say "  will fail (gemini-auth). Sign in once with an interactive \`gemini\` on another"
    say "  machine and bind-mount its ~/.gemini at $APP_DIR/docker/gemini-oauth"
    say "  (docker run -v \$HOME/.gemini:$APP_DIR/docker/gemini-oauth:ro ...), or set"
    say "  GEMINI_OAUTH_DIR to such a folder, or use GEMINI_AUTH=apikey with GEMINI_API_KEY."
fi

case "$(lower "${STREAM_BROWSER:-true}")" in
    false|0|no|off)
        say "STREAM_BROWSER=false: no broadcast Chrome is started; every search uses Gemini"
        ;;
    *)
        # Attaches when CDP already answers; otherwise starts chromium (on Xvfb :1 when
        # there is no DISPLAY). It keeps running when the service stops.
        run "$SB" chrome
        ;;
esac

if [ -z "${SB_SERVICE_TOKEN:-}" ] && [ "${SB_SERVICE_HOST:-127.0.0.1}" != "127.0.0.1" ]; then
    say "note: SB_SERVICE_HOST=${SB_SERVICE_HOST} needs SB_SERVICE_TOKEN (the service refuses"
    say "  to listen beyond loopback without one); pass -e SB_SERVICE_TOKEN=<long random secret>"
fi

if [ "${SB_ENTRYPOINT_DRY_RUN:-}" = "1" ]; then
    printf 'would exec: %s serve %s\n' "$SB" "$*"
    exit 0
fi
exec "$SB" serve "$@"
