#!/usr/bin/env bash
# CI: no workbook of fixtures/fidelity and fixtures/looks gains, when sheetd writes it, a
# finding its original did not have (issue 26): schema errors, Open XML
# SDK semantic checks and Excel's repair rules, as openxml-audit (PyPI)
# ports them. Each fixture goes through what one insert does (the corpus
# example: read, append a row, write), then tools/corpus/audit.py compares
# the findings of the written file with the original's.
#
# openxml-audit goes into a venv under the target directory (reused between
# runs). Needs python3 (with venv), cargo, and PyPI. Takes well under two
# minutes once the venv and the example are built.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENXML_AUDIT_VERSION=0.8.0

target_dir=${CARGO_TARGET_DIR:-target}
venv="$target_dir/audit-venv"
log() { printf '==> %s\n' "$*"; }

pins="openxml-audit==$OPENXML_AUDIT_VERSION"
if [[ ! -x "$venv/bin/python" ]]; then
    log "creating $venv"
    python3 -m venv "$venv"
fi
if [[ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ]]; then
    log "installing $pins"
    timeout 300 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $pins
    echo "$pins" >"$venv/.pins"
fi

written="$target_dir/audit-written"
rm -rf "$written"
cargo build --locked --quiet --example corpus
status=0
for dir in fixtures/fidelity/*/ fixtures/looks/; do
    dir=${dir%/}
    compgen -G "$dir/*.xlsx" >/dev/null || continue
    log "writing $dir"
    "$target_dir/debug/examples/corpus" --show 0 --out "$written/$dir" "$dir" >/dev/null
    log "auditing $dir"
    "$venv/bin/python" tools/corpus/audit.py "$dir" "$written/$dir" || status=1
done
exit $status
