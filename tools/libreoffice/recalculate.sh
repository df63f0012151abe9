#!/usr/bin/env bash
# Recalculate every formula of a workbook with LibreOffice and save it as .xlsx.
#
#   tools/libreoffice/recalculate.sh IN.xlsx OUT.xlsx
#
# LibreOffice (headless, a throw-away user profile of this run only) loads
# IN, runs a hard recalculation (XCalculatable.calculateAll(), with
# "recalculate on load: always" set as well) and stores the document to OUT
# with the filter "Calc MS Excel 2007 XML".  OUT then holds LibreOffice's
# own cached value for every formula; no cached value of IN survives.
# IN is not modified; OUT is replaced only when the run succeeds.  Runs may
# go on side by side: each has its own profile and pipe name.
#
# Environment:
#   SOFFICE          the soffice to use (default: soffice)
#   UNO_PYTHON       a Python that can `import uno` (default: the first of
#                    /usr/lib/libreoffice/program/python, python3,
#                    /usr/bin/python3 that can)
#   RECALC_TIMEOUT   seconds allowed for the whole run (default: 60)
#
# Exit status: 0 on success, 1 when LibreOffice fails (message on stderr),
# 2 on a usage error or a missing requirement.
#
# Needs: LibreOffice Calc and its Python bridge
# (Debian: apt-get install -y libreoffice-calc-nogui python3-uno).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOFFICE="${SOFFICE:-soffice}"
RECALC_TIMEOUT="${RECALC_TIMEOUT:-60}"

die() { echo "recalculate.sh: $*" >&2; exit 2; }

(($# == 2)) || die "usage: $0 IN.xlsx OUT.xlsx"
in=$1
out=$2
[[ -f $in && -r $in ]] || die "cannot read $in"
[[ -d $(dirname -- "$out") ]] || die "no directory for $out"
if ! [[ $RECALC_TIMEOUT =~ ^[0-9]+$ ]] || ((RECALC_TIMEOUT == 0)); then
    die "RECALC_TIMEOUT must be a whole number of seconds > 0"
fi
command -v "$SOFFICE" >/dev/null ||
    die "'$SOFFICE' not found (apt-get install -y libreoffice-calc-nogui)"

source "$HERE/uno_python.sh"

# Everything of this run lives in one fresh directory under /tmp (short path,
# so the profile's file:// URL needs no escaping): the profile, a copy of IN
# (LibreOffice's lock file lands there, not next to IN) and OUT before it is
# moved into place.
work="$(mktemp -d "${TMPDIR:-/tmp}/sheetd-recalc.XXXXXX")"
trap 'rm -rf -- "$work"' EXIT
mkdir "$work/profile"
cp -- "$in" "$work/in.xlsx"

# recalculate.py runs in the background so that a TERM, INT or HUP sent to
# this script reaches it: it then kills its soffice and cleans up.
"$UNO_PYTHON" "$HERE/recalculate.py" --soffice "$(command -v "$SOFFICE")" \
    --profile "$work/profile" --timeout "$RECALC_TIMEOUT" --label "$in" \
    "$work/in.xlsx" "$work/out.xlsx" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true' TERM INT HUP
while :; do
    rc=0
    wait "$pid" || rc=$?
    # wait also returns when a trapped signal arrives: go on waiting.
    kill -0 "$pid" 2>/dev/null || break
done
if ((rc != 0)); then
    echo "recalculate.sh: failed on $in" >&2
    exit 1
fi
mv -f -- "$work/out.xlsx" "$out"
