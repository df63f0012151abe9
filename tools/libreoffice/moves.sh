#!/usr/bin/env bash
# Regenerate the "rows move" oracle (contract 11.2) from a clean checkout.
#
#   tools/libreoffice/moves.sh
#
# 1. fixtures/moves/make_moves.py writes the openpyxl sources
#    fixtures/moves/<kind>.xlsx (and target/moves-oracle/pivot_base.xlsx).
# 2. LibreOffice re-saves each unchanged as fixtures/moves/<kind>_lo.xlsx
#    and makes fixtures/moves/pivot_lo.xlsx (a pivot table on Report) from
#    pivot_base.xlsx; the LibreOffice copies get fixed dates.
# 3. LibreOffice deletes row 10 of Data, and inserts a row before row 10,
#    in every source: target/moves-oracle/<source>__<op>.xlsx, or
#    <source>__<op>.refused when LibreOffice refuses.
# 4. The Rust extractor (tests/common/elements.rs) summarises every result
#    into fixtures/moves/expected/<source>__<op>.json
#    (cargo test --test moves -- --ignored regenerate_expected).
#
# Needs python3 with openpyxl 3.1.5, LibreOffice Calc 7.4 and its Python
# bridge (apt-get install -y libreoffice-calc-nogui python3-uno), cargo.
# Environment: PYTHON (default python3), SOFFICE (default soffice),
# UNO_PYTHON (as in recalculate.sh).  See fixtures/moves/README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/../.."

PYTHON="${PYTHON:-python3}"
SOFFICE="${SOFFICE:-soffice}"
die() { echo "moves.sh: $*" >&2; exit 2; }
command -v "$SOFFICE" >/dev/null ||
    die "'$SOFFICE' not found (apt-get install -y libreoffice-calc-nogui)"
"$PYTHON" -c 'import openpyxl' 2>/dev/null || die "$PYTHON cannot import openpyxl (pip install openpyxl==3.1.5)"
source "$HERE/uno_python.sh"

profile="$(mktemp -d "${TMPDIR:-/tmp}/sheetd-moves.XXXXXX")"
trap 'rm -rf -- "$profile"' EXIT
uno() { "$UNO_PYTHON" tools/libreoffice/moves.py --soffice "$(command -v "$SOFFICE")" --profile "$profile" "$@"; }

oracle=target/moves-oracle
rm -rf "$oracle" fixtures/moves/*.xlsx
mkdir -p "$oracle"

"$PYTHON" fixtures/moves/make_moves.py
sources=(fixtures/moves/*.xlsx)
uno resave fixtures/moves "${sources[@]}"
uno pivot "$oracle/pivot_base.xlsx" fixtures/moves/pivot_lo.xlsx
"$PYTHON" fixtures/moves/make_moves.py normalize fixtures/moves/*_lo.xlsx

uno ops "$oracle" fixtures/moves/*.xlsx

rm -rf fixtures/moves/expected
cargo test --test moves -- --ignored --exact regenerate_expected
