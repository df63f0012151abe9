#!/usr/bin/env bash
# CI: checks the OpenAPI description that a live release server serves at
# /v1/openapi.json (issue 12):
#
#   1. openapi-spec-validator validates the document (OpenAPI 3.1);
#   2. schemathesis tests every operation against the same server, a bounded
#      number of examples per operation, with a fixed seed, and fails on any
#      server error, undocumented status code or content type, response that
#      breaks its schema, invalid request the server accepts, ignored auth…
#
# The server runs with a bearer token, on a port the kernel picks on
# 127.0.0.1, over a fresh data directory holding committed fixtures:
#
#   11111111-1111-4111-8111-111111111111  libreoffice/people.xlsx  (People)
#   22222222-2222-4222-8222-222222222222  openpyxl/many_sheets.xlsx (Alpha;
#                                         no formulas, so deletes succeed)
#   33333333-3333-4333-8333-333333333333  people.xlsx again, the only id that
#                                         DELETE /v1/spreadsheets/{id} gets
#
# Python tools go into a venv under the target directory (reused between
# runs). Needs python3 (with venv), cargo, and PyPI. Takes about a minute
# once the venv and the release binary exist.
#
# Environment:
#   SHEETD_BIN               test this binary instead of building
#                            target/release/sheetd
#   OPENAPI_CHECK_DOC        validate and test this file instead of the
#                            served document (to try a change to the
#                            description before making it in the code)
#   OPENAPI_CHECK_EXAMPLES   examples per operation and phase (default 30)
#   OPENAPI_CHECK_SEED       schemathesis seed (default 20240601)
#   OPENAPI_CHECK_KEEP=1     keep the work directory (server log, reports)
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAPI_SPEC_VALIDATOR_VERSION=0.9.0
SCHEMATHESIS_VERSION=4.32.5

target_dir=${CARGO_TARGET_DIR:-target}
venv="$target_dir/openapi-venv"
examples=${OPENAPI_CHECK_EXAMPLES:-30}
seed=${OPENAPI_CHECK_SEED:-20240601}

log() { printf '==> %s\n' "$*"; }

# --- Python tools -----------------------------------------------------------
pins="openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR_VERSION schemathesis==$SCHEMATHESIS_VERSION"
if [[ ! -x "$venv/bin/python" ]]; then
    log "creating $venv"
    python3 -m venv "$venv"
fi
if [[ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ]]; then
    log "installing $pins"
    # shellcheck disable=SC2086 # $pins is a list of requirements
    timeout 300 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $pins
    echo "$pins" >"$venv/.pins"
fi
py="$venv/bin/python"

# --- Release binary -----------------------------------------------------------
# shellcheck source=.ci/server.sh
source .ci/server.sh
release_binary

# --- Server -----------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/sheetd-openapi.XXXXXX")
keep=${OPENAPI_CHECK_KEEP:-}
on_exit_clean_up

live_id=11111111-1111-4111-8111-111111111111
flat_id=22222222-2222-4222-8222-222222222222
doomed_id=33333333-3333-4333-8333-333333333333
mkdir "$work/data"
cp fixtures/libreoffice/people.xlsx "$work/data/$live_id.xlsx"
cp fixtures/openpyxl/many_sheets.xlsx "$work/data/$flat_id.xlsx"
cp fixtures/libreoffice/people.xlsx "$work/data/$doomed_id.xlsx"

token="ci-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
log "starting $bin"
# The address the server logs, then /healthz, each with a deadline.
SHEETD_TOKENS="$token" start_server "$bin" --data-dir "$work/data"

"$py" - "$base" <<'EOF'
import sys, time, urllib.request
deadline = time.monotonic() + 20
while True:
    try:
        with urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=2) as r:
            if r.status == 200:
                break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("no 200 from /healthz within 20 s")
    time.sleep(0.1)
EOF
log "server up at $base"

# --- The document -------------------------------------------------------------
if [[ -n "${OPENAPI_CHECK_DOC:-}" ]]; then
    cp "$OPENAPI_CHECK_DOC" "$work/openapi.json"
    location="$work/openapi.json"
    log "testing $OPENAPI_CHECK_DOC instead of the served document"
else
    "$py" - "$base/v1/openapi.json" "$token" "$work/openapi.json" <<'EOF'
import sys, urllib.request
request = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]})
with urllib.request.urlopen(request, timeout=10) as r, open(sys.argv[3], "wb") as f:
    f.write(r.read())
EOF
    location="$base/v1/openapi.json"
fi

# --- 1. openapi-spec-validator ----------------------------------------------
log "openapi-spec-validator $OPENAPI_SPEC_VALIDATOR_VERSION"
validator_status=0
"$py" - "$work/openapi.json" <<'EOF' || validator_status=$?
import json, sys
from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

with open(sys.argv[1]) as f:
    spec = json.load(f)
version = str(spec.get("openapi", ""))
validator = OpenAPIV31SpecValidator if version.startswith("3.1") else OpenAPIV30SpecValidator
problems = []
try:
    for error in validator(spec).iter_errors():
        where = "/".join(str(p) for p in error.absolute_path) or "(document)"
        problems.append(f"at /{where}: {str(error.message)[:400]}")
except Exception as error:  # e.g. referencing's PointerToNowhere: validation stops there
    ref = getattr(error, "ref", None)
    detail = f"unresolvable reference {ref}" if ref else str(error)[:400]
    problems.append(f"{type(error).__name__}: {detail}")
for problem in problems:
    print("  invalid:", problem)
if problems:
    sys.exit(f"openapi-spec-validator: the document (OpenAPI {version}) is invalid")
print(f"  valid OpenAPI {version}")
EOF

# --- 2. schemathesis ----------------------------------------------------------
cat >"$work/hooks.py" <<'EOF'
"""Schemathesis hooks for sheetd (written by .ci/openapi-check.sh)."""
import io
import os
import zipfile
import zlib

import schemathesis
from schemathesis import GenerationMode

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
with open(os.environ["SHEETD_CHECK_SAMPLE_XLSX"], "rb") as f:
    SAMPLE = f.read()

# The columns of the fixture sheets, so that positive cases reach the write
# and read paths instead of stopping at "no such column" (a schema cannot
# name a sheet's columns).
COLUMNS = {"People": ["name", "age", "city", "joined", "active", "score"], "Alpha": ["k", "v"]}
OPERATORS = ["eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "in"]


def _pick(items, text):
    return items[zlib.crc32(str(text).encode("utf-8", "replace")) % len(items)]


def _row(row, columns):
    if not isinstance(row, dict):
        return row
    out = {}
    for i, value in enumerate(row.values()):
        out[columns[i % len(columns)]] = value
    return out


def _filter(expression, columns):
    if not isinstance(expression, str):
        return expression
    value = expression.split(":", 2)[2] if expression.count(":") >= 2 else expression
    return f"{_pick(columns, expression)}:{_pick(OPERATORS, expression + '#')}:{value}"


def _filters(value, columns):
    if isinstance(value, list):
        return [_filter(v, columns) for v in value]
    return _filter(value, columns)


def _sheet_name(name, index, seen):
    """A generated sheet name within the rules JSON Schema cannot state: at
    most 31 UTF-16 code units, not History, and (within one body) not
    another's name ignoring case."""
    if not isinstance(name, str):
        return name
    while len(name.encode("utf-16-le")) > 62:
        name = name[:-1]
    name = name.rstrip("'")
    if not name or name.lower() == "history" or name.lower() in seen:
        name = f"Sheet {index}"
    seen.add(name.lower())
    return name


def _columns(columns):
    if isinstance(columns, list):
        return ["_row_" if c == "_row" else c for c in columns]
    return columns


def _new_sheets(body):
    """Positive JSON bodies of POST /v1/spreadsheets, PUT
    /v1/spreadsheets/{id} and POST /v1/data/{id}."""
    if not isinstance(body, dict):
        return
    seen = set()
    sheets = body.get("sheets") if isinstance(body.get("sheets"), list) else [body]
    for index, sheet in enumerate(sheets):
        if isinstance(sheet, dict) and "name" in sheet:
            sheet["name"] = _sheet_name(sheet["name"], index, seen)
            sheet["columns"] = _columns(sheet.get("columns"))


@schemathesis.hook
def map_case(context, case):
    meta = case.meta
    if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
        return case
    # A conditional header names a version the workbook is not (a random
    # tag or date): the request is well formed, and its 304 or 412 is right,
    # but no positive case can know the current version, so none sends one.
    for name in ("If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"):
        if case.headers:
            case.headers.pop(name, None)
    if case.operation.path in (
        "/v1/spreadsheets",
        "/v1/spreadsheets/{spreadsheet_id}",
        "/v1/data/{spreadsheet_id}",
    ):
        _new_sheets(case.body)
    sheet = (case.path_parameters or {}).get("sheet_name")
    columns = COLUMNS.get(sheet)
    if not columns:
        return case
    body = case.body
    if isinstance(body, dict):
        data = body.get("data")
        if isinstance(data, list):
            body["data"] = [_row(r, columns) for r in data]
        elif isinstance(data, dict):
            body["data"] = _row(data, columns)
        if "filter" in body:
            body["filter"] = _filters(body["filter"], columns)
    if case.query and "filter" in case.query:
        case.query["filter"] = _filters(case.query["filter"], columns)
    return case


def _as_bytes(value):
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    data = getattr(value, "data", None)  # schemathesis' Binary wrapper
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    if isinstance(value, str):
        return value.encode("utf-8", "replace")
    return repr(value).encode()


@schemathesis.serializer(XLSX, "application/octet-stream")
def xlsx_body(ctx, value):
    # No schema says "a readable workbook": positive cases upload a real one,
    # negative cases the generated bytes, which the server must refuse. (The
    # upload is the only binary body; octet-stream is covered in case the
    # description offers it as an alternative media type.)
    meta = ctx.case.meta
    if meta is not None and meta.generation.mode == GenerationMode.POSITIVE:
        return SAMPLE
    return _as_bytes(value)


@schemathesis.deserializer(XLSX, "application/octet-stream")
def xlsx_response(ctx, response):
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        if "xl/workbook.xml" not in archive.namelist():
            raise ValueError("a zip archive, but no xlsx workbook")
    # A binary body as JSON Schema sees it: a string (`type: string` with
    # `format: binary` or `contentMediaType`).
    return response.content.decode("latin-1")
EOF

cat >"$work/schemathesis.toml" <<EOF
seed = $seed
workers = 1
continue-on-failure = true
request-timeout = 30
hooks = "$work/hooks.py"

[headers]
Authorization = "Bearer $token"

[generation]
max-examples = $examples
database = "none"

[warnings]
fail-on = ["unresolvable_reference", "missing_deserializer"]

[checks]
not_a_server_error = { enabled = true }
status_code_conformance = { enabled = true }
content_type_conformance = { enabled = true }
response_schema_conformance = { enabled = true }
response_headers_conformance = { enabled = true }
negative_data_rejection = { enabled = true }
positive_data_acceptance = { enabled = true }
missing_required_header = { enabled = true }
unsupported_method = { enabled = true }
allow_header_conformance = { enabled = true }
ignored_auth = { enabled = true }
use_after_free = { enabled = true }
ensure_resource_availability = { enabled = true }

[dictionaries]
live = { values = ["$live_id", "$flat_id"] }
doomed = { values = ["$doomed_id"] }
sheets = { values = ["People", "Alpha"] }

[parameters]
"path.spreadsheet_id" = { dictionary = "live", probability = 0.8 }
"path.sheet_name" = { dictionary = "sheets", probability = 0.8 }

# Only the spare copy may be removed, so the others stay for every phase.
[[operations]]
include-name = "DELETE /v1/spreadsheets/{spreadsheet_id}"
parameters = { "path.spreadsheet_id" = { dictionary = "doomed", probability = 0.8 } }

# Which columns and filters a sheet takes depends on its data, which no
# schema can say, so a schema-valid row may still be refused (400).
[[operations]]
include-path = "/v1/data/{spreadsheet_id}/{sheet_name}"
checks = { positive_data_acceptance = { enabled = false } }

# A batch's operations are row requests, with the same dependence on the
# sheets' data, and which fields go with which op no schema says either.
[[operations]]
include-path = "/v1/batch/{spreadsheet_id}"
checks = { positive_data_acceptance = { enabled = false } }
EOF

log "schemathesis $SCHEMATHESIS_VERSION: $examples examples per operation, seed $seed"
schemathesis_status=0
SHEETD_CHECK_SAMPLE_XLSX="$PWD/fixtures/libreoffice/people.xlsx" \
    timeout 480 "$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" --no-color \
    run "$location" --url "$base" \
    --report junit,ndjson --report-dir "$work/report" \
    || schemathesis_status=$?

if [[ $validator_status -ne 0 || $schemathesis_status -ne 0 ]]; then
    echo "openapi-check: FAILED (openapi-spec-validator exit $validator_status, schemathesis exit $schemathesis_status)" >&2
    exit 1
fi
log "openapi-check: the document is valid and the server conforms to it"
