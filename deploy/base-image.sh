#!/bin/sh
# Make the image's base, debian:trixie-slim, from Debian's own packages: for machines that
# reach a Debian mirror but no container registry. `make base-image` runs it.
#
#   deploy/base-image.sh ENGINE [TAG]      (ENGINE: docker or podman)
#
# The mirror is the one this machine's apt uses (read from /etc/apt/sources.list*, never
# written here); DEBIAN_MIRROR overrides it. Like Debian's official slim images, the base
# keeps no documentation, manual pages or translations, and no apt lists.
set -eu

ENGINE="${1:?usage: base-image.sh ENGINE [TAG]}"
TAG="${2:-docker.io/library/debian:trixie-slim}"
SUITE="${SUITE:-trixie}"

say() { printf 'base-image: %s\n' "$*" >&2; }

# The URIs of apt's sources, one a line: deb822 `URIs:` fields and one-line `deb` entries.
apt_uris() {
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        sed -n -e 's/^[[:space:]]*URIs:[[:space:]]*//p' \
            -e 's/^[[:space:]]*deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\).*/\2/p' \
            "$file" | tr ' ' '\n'
    done
}

# The first source whose path ends in /debian (the main archive, not security or others).
MIRROR="${DEBIAN_MIRROR:-$(apt_uris | grep -E '/debian/?$' | head -n 1 || true)}"
SECURITY="${DEBIAN_SECURITY_MIRROR:-$(apt_uris | grep -E '/debian-security/?$' | head -n 1 || true)}"
if [ -z "$MIRROR" ]; then
    say "error: no Debian mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR=<mirror URL>"
    exit 2
fi
command -v debootstrap >/dev/null || {
    say "error: debootstrap is not installed; run: apt-get install -y debootstrap"
    exit 2
}
[ "$(id -u)" = 0 ] || { say "error: debootstrap needs root (run with sudo)"; exit 2; }

ROOTFS="$(mktemp -d "${TMPDIR:-/tmp}/sb-rootfs.XXXXXX")"
trap 'rm -rf "$ROOTFS"' EXIT INT TERM

say "debootstrap --variant=minbase $SUITE from this machine's apt mirror (a few minutes)"
debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || {
    tail -n 20 "$ROOTFS.log" >&2
    say "error: debootstrap failed (full log: $ROOTFS.log)"
    exit 1
}
rm -f "$ROOTFS.log"

# apt's sources in the base: the same mirror, with the suite's updates and security.
{
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' \
        "$MIRROR" "$SUITE" "$SUITE"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if [ -n "$SECURITY" ]; then
        printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' \
            "$SECURITY" "$SUITE"
        printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    fi
} >"$ROOTFS/etc/apt/sources.list.d/debian.sources"
rm -f "$ROOTFS/etc/apt/sources.list"

# Slim: what Debian's official slim images leave out, for this layer and every later one.
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
# As in those images too, apt keeps no downloaded packages and fetches no translations.
cat >"$ROOTFS/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
echo 'Acquire::Languages "none";' >"$ROOTFS/etc/apt/apt.conf.d/docker-no-languages"
find "$ROOTFS/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf "$ROOTFS/usr/share/man/"* "$ROOTFS/usr/share/info/"* "$ROOTFS/usr/share/locale/"* \
    "$ROOTFS/var/lib/apt/lists/"* "$ROOTFS/var/cache/apt/"*.bin "$ROOTFS/var/cache/apt/archives/"*.deb \
    "$ROOTFS/var/log/"*.log

say "importing as $TAG"
tar -C "$ROOTFS" -c . | "$ENGINE" import \
    --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$TAG" >/dev/null
say "done: $TAG is Debian $(cat "$ROOTFS/etc/debian_version")"
"$ENGINE" image inspect --format '{{.Id}}' "$TAG"
