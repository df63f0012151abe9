#!/usr/bin/env bash
# CI: the API explorer (GET /docs) in a real headless Chromium with the
# network cut off (issue 16): it loads without a token, lists every route,
# and a "try it out" call succeeds once a token is entered. The check itself
# is tools/explorer/check.mjs (Playwright's library, driving Debian's
# chromium); this script installs what it needs.
#
# Environment: SHEETD_BIN tests this binary instead of target/release/sheetd.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '==> %s\n' "$*"; }

if ! command -v chromium >/dev/null; then
    sudo=""
    if [[ "$(id -u)" -ne 0 ]]; then
        sudo="sudo"
    fi
    log "installing Debian's chromium"
    export DEBIAN_FRONTEND=noninteractive
    if ! timeout 600 $sudo apt-get install -y -q chromium >/dev/null; then
        timeout 300 $sudo apt-get update -q >/dev/null
        timeout 600 $sudo apt-get install -y -q chromium >/dev/null
    fi
fi

log "installing the check's npm packages (tools/explorer/package-lock.json)"
(cd tools/explorer && timeout 300 npm ci --no-audit --no-fund --loglevel=error)

# shellcheck source=.ci/server.sh
source .ci/server.sh
release_binary
log "checking the explorer of $bin in headless chromium"
timeout 180 node tools/explorer/check.mjs "$bin"
