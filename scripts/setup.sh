#!/usr/bin/env bash
# Installs what Offstage needs on a fresh Debian 12 machine: the Debian
# packages listed in scripts/packages-*.txt (only those missing; apt-get update
# runs only when something is missing). Idempotent; sourced by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
command -v swift >/dev/null 2>&1 || { echo "setup: Swift 6 is needed (swift not found on PATH or in /opt/swift)" >&2; exit 1; }
# An older Swift first on PATH fails much later, in the build, on the tools version.
swift_version="$(swift --version 2>&1 || true)"
swift_major="$(printf '%s\n' "$swift_version" | sed -n 's/.*Swift version \([0-9]*\)\..*/\1/p' | head -n 1)"
if [ -z "$swift_major" ] || [ "$swift_major" -lt 6 ]; then
    echo "setup: Swift 6 or later is needed; $(command -v swift) says: $(printf '%s\n' "$swift_version" | head -n 1)" >&2
    exit 1
fi

mapfile -t wanted < <(cat scripts/packages-*.txt | sed -e 's/#.*//' -e 's/[[:space:]]//g' | grep -v '^$' | sort -u)
missing=()
for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
