#!/bin/sh
# Debian's chromium with --no-sandbox: what the entrypoint points SB_CHROME_BINARY at when
# the container cannot give Chrome its own sandbox (no user namespaces), saying so in its log.
exec /usr/bin/chromium --no-sandbox "$@"
