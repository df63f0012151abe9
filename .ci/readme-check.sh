#!/usr/bin/env bash
# CI: the README's API examples (the sh block under "## Using the API") run
# top to bottom against a release server started on a fresh data directory,
# as a user would run them after `cargo run --release`: every curl must get
# a 2xx or 3xx answer (curl --fail-with-body), in order.
#
# The block is run from a scratch directory holding a link to fixtures/, so
# that its uploads find their files and its downloads land outside the
# repository. `127.0.0.1:8080` in the block is replaced by the port the
# kernel picked.
#
# Environment:
#   SHEETD_BIN          test this binary instead of building target/release/sheetd
#   README_CHECK_KEEP=1 keep the work directory (server log, the script run)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

log() { printf '==> %s\n' "$*"; }


work=$(mktemp -d "${TMPDIR:-/tmp}/sheetd-readme.XXXXXX")
keep=${README_CHECK_KEEP:-}
# shellcheck source=.ci/server.sh
source .ci/server.sh
release_binary
on_exit_clean_up

# A fresh start: the data directory does not exist, so sheetd makes it with
# the sample workbook the examples use.
start_server "$bin" --data-dir "$work/data"
log "server up at $base"

# The examples, as a script.
python3 - "$repo/README.md" "$base" >"$work/examples.sh" <<'EOF'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("## Using the API", 1)[1]
block = section.split("```sh\n", 1)[1].split("```", 1)[0]
print(block.replace("http://127.0.0.1:8080", sys.argv[2]))
EOF
ln -s "$repo/fixtures" "$work/fixtures"

log "running the README's examples"
cd "$work"
bash -euo pipefail -c '
curl() {
    printf "+ curl %s\n" "$*" >&2
    command curl --silent --show-error --fail-with-body "$@"
    echo
}
source ./examples.sh
'
log "every example answered 2xx or 3xx"
