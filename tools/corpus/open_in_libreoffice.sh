#!/usr/bin/env bash
# Open every workbook sheetd wrote for the corpus in LibreOffice Calc
# (headless) and report which ones it cannot open (issue 13).
#
#   tools/corpus/open_in_libreoffice.sh [options] [WRITTEN_DIR [ORIGINALS_DIR]]
#
#   WRITTEN_DIR    workbooks written by sheetd       (default target/corpus/written,
#                  made by `cargo run --release --example corpus -- --out ...`)
#   ORIGINALS_DIR  the corpus they were written from (default target/corpus/files);
#                  a written workbook's original has the same file name.
#
# Options:
#   --work DIR     where copies, CSV output, logs and the report go
#                  (default target/corpus/libreoffice; emptied first)
#   --first N      only the first N written workbooks in name order (C locale):
#                  a deterministic sample for a quick run
#   --batch N      workbooks per soffice invocation (default 25)
#   --jobs N       soffice processes at once, each with its own profile
#                  (default: number of CPUs)
#   --timeout S    seconds allowed per workbook (default 60)
#   --recalc MODE  formulas on load: always (default), never, or file
#                  (LibreOffice's own choice, which depends on the
#                  Application named in docProps/app.xml, so it can differ
#                  between an original and its written form)
#   --report-only  no soffice: report again from what WORK holds
#
# What "opened" means. Each workbook is copied to WORK/<set>/in/<index>.<ext>
# (so names are short and unique, and LibreOffice's lock files never land in
# the corpus) and converted with
#   soffice --headless --calc --infilter="Calc MS Excel 2007 XML" \
#           --convert-to 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1'
# The import filter is forced: without it LibreOffice falls back to its text
# import and "opens" anything, even a file that is not a zip. A workbook
# counts as opened when soffice prints its "convert <file>" line, which it
# does only after the document loaded. soffice exits 0 even when a file did
# not load ("Error: source file could not be loaded"), so the exit code is
# only used to notice crashes and timeouts.
#
# Batches. soffice takes many files per invocation, which is much faster
# than one start per file. A batch gets --timeout seconds plus 2 s per file;
# when it crashes or times out, every workbook of it is run again alone;
# when it finishes but some workbook did not load, those are run again alone.
# The one-by-one run (--timeout seconds, `timeout -k 10`) gives the verdict,
# and its stdout/stderr are kept in WORK/<set>/logs/<index>.log.
#
# The same check runs on the original of every written workbook, so that a
# workbook LibreOffice cannot open in its original form either is reported
# as "fails on the original too", not against sheetd.
#
# Package check. LibreOffice opens some broken packages without a word:
# it drops a part that is not well-formed XML (an unbound namespace prefix
# in xl/styles.xml costs every cell format) and a picture or chart whose
# relationship id leads nowhere. So each written workbook and its original
# are also read with Python's expat, and the report lists, per workbook,
# the parts that are not well-formed only after the write (xml_errors) and
# the r:id-like references that no relationship defines (dangling_ids,
# flagged when the written workbook has more than its original).
#
# Content check. The last token (-1) of the CSV filter options makes
# LibreOffice (7.2 or later) write every sheet to <index>-<sheet>.csv, not
# only the active one; older versions write only the active sheet, so the
# inserted-row check below can miss a row on another sheet there (the script
# warns). LibreOffice also loads a workbook with a malformed part without
# complaint in headless mode (the sheet just comes out empty), so for each
# written workbook that opened the report also checks
#   - that some sheet holds the text `sheetd-corpus-insert` (the row the
#     corpus example inserted), and
#   - that every sheet of the original that has values is there, by name,
#     with values (a "partial load" otherwise).
# Rows of the original that are missing from the written workbook's sheet
# (after the one updated row) are counted per file in the report as
# information (rows_lost), and among them the rows that differ only in
# leading or trailing spaces of some cell (rows_lost_spaces). They can move
# for honest reasons too: a formula reads the updated or inserted cell, or
# the workbook has volatile formulas (RAND, NOW, ...: the volatile column).
# Formulas are recalculated on load (--recalc always) so that the values
# compared come from the same formulas on both sides, not from caches.
# A sheet whose used area reaches far (a cell at XFD1048576 makes a CSV of
# gigabytes that the timeout cuts short) is not compared: a CSV over 64 MiB
# is noted in the report (not_compared) and then replaced by an empty
# <name>.csv.too-large.
#
# Output: a summary on stdout ending with the line
#   opened X/N written workbooks; A fail on their originals too; B fail only after sheetd's write: <list>
# and WORK/report.tsv with one row per workbook. Exit status 0 when no
# workbook fails only after sheetd's write, none loads partially and none
# has a part not well-formed or more dangling ids than its original; 1
# otherwise; 2 on a usage error.
#
# Needs: bash, coreutils (timeout), python3 (standard library), soffice
# (Debian: apt-get install libreoffice-calc-nogui). About 15 minutes for
# the 1,433 written workbooks and their originals on 2 CPUs (LibreOffice
# 7.4); --report-only takes half a minute.

set -euo pipefail

written_dir=target/corpus/written
originals_dir=target/corpus/files
work=target/corpus/libreoffice
first=0
batch=25
jobs=$(nproc 2>/dev/null || echo 2)
timeout_s=60
recalc=always
report_only=false

usage() {
    sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
}

positional=()
while (($#)); do
    case $1 in
        --work) work=${2:?}; shift 2 ;;
        --first) first=${2:?}; shift 2 ;;
        --batch) batch=${2:?}; shift 2 ;;
        --jobs) jobs=${2:?}; shift 2 ;;
        --timeout) timeout_s=${2:?}; shift 2 ;;
        --recalc) recalc=${2:?}; shift 2 ;;
        --report-only) report_only=true; shift ;;
        -h | --help) usage ;;
        --*) echo "unknown option $1" >&2; usage ;;
        *) positional+=("$1"); shift ;;
    esac
done
((${#positional[@]} <= 2)) || usage
((${#positional[@]} >= 1)) && written_dir=${positional[0]}
((${#positional[@]} >= 2)) && originals_dir=${positional[1]}
for n in "$first" "$batch" "$jobs" "$timeout_s"; do
    [[ $n =~ ^[0-9]+$ ]] || { echo "not a number: $n" >&2; exit 2; }
done
((batch >= 1 && jobs >= 1 && timeout_s >= 1)) || { echo "--batch, --jobs, --timeout must be >= 1" >&2; exit 2; }
case $recalc in
    always) recalc_mode=0 ;;
    never) recalc_mode=1 ;;
    file) recalc_mode= ;;
    *) echo "--recalc is always, never or file" >&2; exit 2 ;;
esac
[[ -d $written_dir ]] || { echo "no directory $written_dir" >&2; exit 2; }
[[ -d $originals_dir ]] || { echo "no directory $originals_dir" >&2; exit 2; }
$report_only || command -v soffice >/dev/null ||
    { echo "soffice not found (apt-get install libreoffice-calc-nogui)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 2; }

readonly INFILTER='Calc MS Excel 2007 XML'
readonly CSV_FILTER='csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1'

lo_version=$($report_only || soffice --version 2>/dev/null | grep -o '[0-9]\+\.[0-9]\+' | head -n1 || true)
if [[ -n $lo_version ]] && ! printf '7.2\n%s\n' "$lo_version" | sort -V -C; then
    echo "warning: LibreOffice $lo_version exports only the active sheet to CSV;" \
        "the inserted-row check sees that sheet only" >&2
fi

if $report_only; then
    [[ -f $work/files.tsv ]] || { echo "nothing to report in $work" >&2; exit 2; }
    work=$(cd -- "$work" && pwd)
else

# A fresh work directory; the profiles live under /tmp so their file:// URLs
# need no escaping.
rm -rf -- "$work"
mkdir -p -- "$work"
work=$(cd -- "$work" && pwd)
profiles=$(mktemp -d /tmp/sheetd-lo-profiles.XXXXXX)
trap 'rm -rf -- "$profiles"' EXIT

# The written workbooks, in C-locale name order: "index<TAB>name".
LC_ALL=C find "$written_dir" -maxdepth 1 -type f \( -iname '*.xlsx' -o -iname '*.xlsm' \) -printf '%f\n' |
    LC_ALL=C sort | awk -v first="$first" 'first == 0 || NR <= first { printf "%05d\t%s\n", NR, $0 }' \
    >"$work/files.tsv"
total=$(wc -l <"$work/files.tsv")
((total > 0)) || { echo "no .xlsx/.xlsm files in $written_dir" >&2; exit 2; }

# Stage copies: WORK/<set>/in/<index>.<ext>; a missing original is noted.
for set in written original; do
    mkdir -p "$work/$set"/{in,out,logs,status}
done
while IFS=$'\t' read -r idx name; do
    ext=${name##*.}
    cp -- "$written_dir/$name" "$work/written/in/$idx.$ext"
    if [[ -f $originals_dir/$name ]]; then
        cp -- "$originals_dir/$name" "$work/original/in/$idx.$ext"
    else
        echo "missing" >"$work/original/status/$idx"
    fi
done <"$work/files.tsv"

# Batches: "<set> <index> <index> ...", one a line, written ones first.
for set in written original; do
    (cd "$work/$set/in" && LC_ALL=C ls) | xargs -r -n "$batch" echo "$set"
done | sed 's/\.[A-Za-z]*//g' >"$work/batches.txt"

# soffice on some staged files of one set, with one worker's profile.
# Prints the indexes whose "convert" line appeared; returns soffice's status.
run_soffice() {
    local profile=$1 limit=$2 set=$3 log=$4
    shift 4
    local rc=0
    timeout -k 10 "$limit" soffice "-env:UserInstallation=file://$profile" \
        --headless --norestore --nologo --calc --infilter="$INFILTER" \
        --convert-to "$CSV_FILTER" --outdir "$work/$set/out" "$@" >"$log" 2>&1 || rc=$?
    grep -o "^convert .*/$set/in/[0-9]\{5\}\." "$log" | grep -o '[0-9]\{5\}\.$' | tr -d . || true
    return "$rc"
}

# A profile left by a killed soffice may hold a stale lock: start afresh.
# A new profile takes the recalculation mode from a seeded user layer.
reset_profile() {
    rm -rf -- "$1"
    mkdir -p -- "$1/user"
    [[ -z $recalc_mode ]] && return 0
    cat >"$1/user/registrymodifications.xcu" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>$recalc_mode</value></prop></item>
</oor:items>
EOF
}

# One staged workbook alone: the verdict, in WORK/<set>/status/<index>.
run_alone() {
    local profile=$1 set=$2 idx=$3 rc=0 ok
    local file=("$work/$set/in/$idx".*)
    rm -f -- "$work/$set/out/$idx"-*.csv
    ok=$(run_soffice "$profile" "$timeout_s" "$set" "$work/$set/logs/$idx.log" "${file[0]}") || rc=$?
    if [[ $ok == "$idx" ]]; then
        if ((rc == 0)); then
            echo "opened" >"$work/$set/status/$idx"
        else
            # Loaded and converted, then did not exit in time or crashed.
            echo "opened (soffice then exited $rc)" >"$work/$set/status/$idx"
            reset_profile "$profile"
        fi
    elif ((rc == 124 || rc == 137)); then
        echo "timeout after ${timeout_s}s" >"$work/$set/status/$idx"
        reset_profile "$profile"
    elif ((rc != 0)); then
        echo "soffice exited $rc" >"$work/$set/status/$idx"
        reset_profile "$profile"
    else
        local why
        why=$(grep -m1 '^Error' "$work/$set/logs/$idx.log" || echo "no output")
        echo "not loaded: $why" >"$work/$set/status/$idx"
    fi
}

# Worker k of jobs: batches k, k+jobs, k+2*jobs, ...
worker() {
    local k=$1 profile="$profiles/$1" n=0 set idx rc ok
    local -a idxs files
    reset_profile "$profile"
    while read -r set idxs_line; do
        if ((n++ % jobs != k)); then continue; fi
        read -r -a idxs <<<"$idxs_line"
        files=()
        for idx in "${idxs[@]}"; do files+=("$work/$set/in/$idx".*); done
        rc=0
        ok=$(run_soffice "$profile" $((timeout_s + 2 * ${#idxs[@]})) "$set" \
            "$work/$set/logs/batch-${idxs[0]}.log" "${files[@]}") || rc=$?
        if ((rc != 0)); then
            echo "[$set] batch from ${idxs[0]}: soffice status $rc; one by one" >&2
            reset_profile "$profile"
        fi
        for idx in "${idxs[@]}"; do
            if ((rc == 0)) && grep -qx "$idx" <<<"$ok"; then
                echo "opened" >"$work/$set/status/$idx"
            else
                run_alone "$profile" "$set" "$idx"
            fi
        done
    done <"$work/batches.txt"
}

echo "checking $total written workbooks from $written_dir and their originals" \
    "from $originals_dir ($(wc -l <"$work/batches.txt") batches, $jobs at once)" >&2
start=$SECONDS
pids=()
for ((k = 0; k < jobs; k++)); do
    worker "$k" &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
echo "soffice done in $((SECONDS - start)) s" >&2

fi # report_only

# Report. Sheets are read from WORK/<set>/out/<index>-<sheet>.csv.
status=0
python3 - "$work" "$written_dir" "$originals_dir" "$first" "$((64 << 20))" <<'PY' || status=$?
import collections, csv, itertools, os, re, sys, zipfile
import xml.parsers.expat

work, written_dir, originals_dir, first, max_csv = sys.argv[1:6]
max_csv = int(max_csv)
INSERTED = "sheetd-corpus-insert"
MARK = "sheetd-corpus-"

files = [line.rstrip("\n").split("\t", 1) for line in open(os.path.join(work, "files.tsv"), encoding="utf-8")]

def status(s, idx):
    try:
        with open(os.path.join(work, s, "status", idx), encoding="utf-8") as f:
            text = f.read().strip()
    except FileNotFoundError:
        return "not run", "not run"
    # "opened (soffice then exited 137)" still opened.
    return ("opened" if text.startswith("opened") else text), text

sheets_by = {}
for s in ("written", "original"):
    by = collections.defaultdict(dict)
    out = os.path.join(work, s, "out")
    for entry in os.listdir(out):
        # <index>-<sheet>.csv, or .csv.too-large for one cut down below.
        for suffix in (".csv", ".csv.too-large"):
            if entry.endswith(suffix) and entry[5:6] == "-":
                by[entry[:5]][entry[6:-len(suffix)]] = os.path.join(out, entry)
    sheets_by[s] = by

staged = {}
for s in ("written", "original"):
    d = os.path.join(work, s, "in")
    staged[s] = {entry.split(".", 1)[0]: os.path.join(d, entry) for entry in os.listdir(d)}

VOLATILE = re.compile(rb"<(?:\w+:)?f\b[^>]*>[^<]*\b(?:RAND|RANDBETWEEN|RANDARRAY|NOW|TODAY)\(", re.I)

RELATIONSHIP_NS = ("http://schemas.openxmlformats.org/officeDocument/2006/relationships",
                   "http://purl.oclc.org/ooxml/officeDocument/relationships")

def package_scan(path):
    """What a package's XML says on its own: the parts that are not
    well-formed (with namespaces: an unbound prefix counts), the references
    to relationships (r:id and the like) that the part's .rels does not
    define ("part#id"), and whether a worksheet has a volatile formula,
    whose value differs on every recalculation."""
    bad, volatile, refs, ids = {}, False, {}, {}
    if path is None:
        return bad, [], volatile
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        return {"(zip)": str(e)}, [], volatile
    with archive:
        for info in archive.infolist():
            name = info.filename
            if not name.lower().endswith((".xml", ".rels")):
                continue
            try:
                data = archive.read(info)
            except Exception as e:  # a broken entry: what zipfile says
                bad[name] = str(e)
                continue
            used, defined = set(), set()
            def start(tag, attrs, used=used, defined=defined):
                for key, value in attrs.items():
                    if key.rsplit(" ", 1)[0] in RELATIONSHIP_NS:
                        used.add(value)
                if tag.endswith(" Relationship") and "Id" in attrs:
                    defined.add(attrs["Id"])
            parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
            parser.StartElementHandler = start
            try:
                parser.Parse(data, True)
            except xml.parsers.expat.ExpatError as e:
                bad[name] = str(e)
            refs[name], ids[name.lower()] = used, defined
            if not volatile and "worksheets/" in name.lower() and VOLATILE.search(data):
                volatile = True
    dangling = []
    for name, used in refs.items():
        folder, _, file = name.rpartition("/")
        # Part names compare case-insensitively (OPC).
        rels = f"{folder}/_rels/{file}.rels" if folder else f"_rels/{file}.rels"
        defined = ids.get(rels.lower(), set())
        dangling += [f"{name}#{ref}" for ref in sorted(used - defined)]
    return bad, dangling, volatile

def cells(sheets):
    return itertools.chain.from_iterable(itertools.chain.from_iterable(sheets.values()))

def stripped(row):
    row = [cell.strip() for cell in row]
    while row and row[-1] == "":
        row.pop()
    return tuple(row)

too_large = collections.defaultdict(list)

def read_sheets(s, idx):
    """Sheet name -> rows, leaving out (and noting) CSVs over max_csv."""
    result = {}
    for name, path in sheets_by[s][idx].items():
        if path.endswith(".too-large") or os.path.getsize(path) > max_csv:
            too_large[idx].append(f"{s}:{name}")
        else:
            result[name] = rows(path)
    return result

def rows(path):
    """The sheet's non-empty rows, trailing empty fields dropped."""
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        result = []
        for row in csv.reader(f):
            while row and row[-1] == "":
                row.pop()
            if row:
                result.append(tuple(row))
        return result

report = []
counts = collections.Counter()
only_sheetd, both, only_original, no_insert, partial, malformed, dangling = [], [], [], [], [], [], []
for idx, name in files:
    (w, w_text), (o, o_text) = status("written", idx), status("original", idx)
    row = {"file": name, "index": idx, "written": w_text, "original": o_text,
           "inserted_row": "", "sheets_lost": "", "rows_lost": "", "rows_lost_spaces": "", "not_compared": "",
           "volatile": "", "xml_errors": "", "dangling_ids": ""}
    # Parts that are not well-formed XML after the write but were before:
    # LibreOffice may open such a workbook and silently drop the part.
    # And references to relationships that lead nowhere, when the original
    # had fewer (part names may differ: only the count is compared).
    w_bad, w_dangling, _ = package_scan(staged["written"].get(idx))
    o_bad, o_dangling, volatile = package_scan(staged["original"].get(idx))
    new_bad = {part: err for part, err in w_bad.items() if part not in o_bad}
    row["xml_errors"] = "; ".join(f"{part}: {err}" for part, err in sorted(new_bad.items()))
    row["volatile"] = "yes" if volatile else ""
    if new_bad:
        malformed.append((name, row["xml_errors"]))
    row["dangling_ids"] = " ".join(w_dangling)
    if len(w_dangling) > len(o_dangling):
        dangling.append((name, row["dangling_ids"]))
    if w == "opened":
        counts["opened"] += 1
        wsheets = read_sheets("written", idx)
        found = any(INSERTED in cell for cell in cells(wsheets))
        row["inserted_row"] = "yes" if found else "unknown" if too_large[idx] else "no"
        if row["inserted_row"] == "no":
            no_insert.append(name)
        if o == "opened":
            osheets = read_sheets("original", idx)
            skipped = {entry.split(":", 1)[1] for entry in too_large[idx]}
            lost_sheets = [n for n, r in osheets.items() if r and not wsheets.get(n) and n not in skipped]
            row["sheets_lost"] = "|".join(lost_sheets)
            if lost_sheets:
                partial.append((name, lost_sheets))
            lost = spaces = 0
            for n, orows in osheets.items():
                if n in skipped:
                    continue
                have = collections.Counter(wsheets.get(n, []))
                missing = collections.Counter(orows) - have
                lost += sum(missing.values())
                # Rows that come back once leading/trailing spaces are cut.
                extra = collections.Counter(stripped(r) for r in (have - collections.Counter(orows)).elements())
                for r in missing.elements():
                    if stripped(r) != r and extra[stripped(r)] > 0:
                        extra[stripped(r)] -= 1
                        spaces += 1
            # The updated row's old form is expected to be gone.
            updated = any(MARK + "update" in cell for cell in cells(wsheets))
            row["rows_lost"] = str(max(0, lost - (1 if updated else 0)))
            row["rows_lost_spaces"] = str(spaces)
        row["not_compared"] = " ".join(too_large[idx])
    elif o == "opened":
        only_sheetd.append((name, f"{w} (log: {work}/written/logs/{idx}.log)"))
    elif o == "missing":
        only_sheetd.append((name, f"{w}; no original (log: {work}/written/logs/{idx}.log)"))
    else:
        both.append((name, w))
    if w == "opened" and o not in ("opened", "missing"):
        only_original.append((name, o))
    report.append(row)

with open(os.path.join(work, "report.tsv"), "w", encoding="utf-8", newline="") as f:
    out = csv.DictWriter(f, fieldnames=list(report[0]), delimiter="\t", lineterminator="\n")
    out.writeheader()
    out.writerows(report)

total = len(files)
sample = f" (sample: the first {total} in name order)" if first != "0" else ""
print(f"LibreOffice check of {written_dir} against {originals_dir}{sample}; details in {work}/report.tsv")
for label, found in (
    ("fails on the original too", both),
    ("FAILS ONLY AFTER SHEETD'S WRITE", only_sheetd),
    ("opens after sheetd's write, not in its original form", only_original),
    ("NOT WELL-FORMED AFTER SHEETD'S WRITE", malformed),
    ("DANGLING RELATIONSHIP IDS AFTER SHEETD'S WRITE", dangling),
):
    for name, why in found:
        print(f"  {label}: {name}: {why}")
for name, lost in partial:
    print(f"  PARTIAL LOAD: {name}: sheet(s) with values in the original come out missing or empty: {', '.join(lost)}")
lost_rows = [r for r in report if r["rows_lost"] not in ("", "0")]
lost_spaces = [r for r in report if r["rows_lost_spaces"] not in ("", "0")]
lost_volatile = [r for r in lost_rows if r["volatile"]]
hung = [r["file"] for r in report if r["written"].startswith("opened (")]
if hung:
    print(f"opened, but the CSV export did not end in time or soffice crashed: {', '.join(hung)}")
not_compared = [r["file"] for r in report if r["not_compared"]]
if not_compared:
    print(f"sheets not compared (CSV over {max_csv >> 20} MiB): {', '.join(not_compared)}")
found = sum(r["inserted_row"] == "yes" for r in report)
unknown = sum(r["inserted_row"] == "unknown" for r in report)
print(f"inserted row found in {found} of {counts['opened']} opened written workbooks"
      + (f" ({unknown} not checked: sheet too large)" if unknown else "")
      + (f"; not found in: {', '.join(no_insert)}" if no_insert else ""))
print(f"parts not well-formed only after sheetd's write: {len(malformed)} workbooks; "
      f"more dangling relationship ids than the original: {len(dangling)}; "
      f"partial loads (a sheet with values lost): {len(partial)}")
print(f"written workbooks with rows of the original missing: {len(lost_rows)} (report.tsv rows_lost): "
      f"{len(lost_volatile)} have volatile formulas (RAND, NOW, ...), {len(lost_spaces)} have rows that "
      f"only lost leading/trailing spaces (rows_lost_spaces); the rest is often formulas that read the "
      f"updated or inserted cell")
print(f"opened {counts['opened']}/{total} written workbooks; {len(both)} fail on their originals too; "
      f"{len(only_sheetd)} fail only after sheetd's write: {', '.join(n for n, _ in only_sheetd) or 'none'}")
sys.exit(1 if only_sheetd or partial or malformed or dangling else 0)
PY
# Keep no multi-gigabyte CSVs around: an empty <name>.too-large stands in.
find "$work/written/out" "$work/original/out" -type f -name '*.csv' -size +$((64 << 10))k \
    -exec sh -c 'for f; do : >"$f.too-large" && rm -f -- "$f"; done' sh {} + 2>/dev/null || true
exit "$status"
