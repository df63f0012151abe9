#!/bin/sh
# Copies the seed workbooks for workbook_load from ../fixtures into
# corpus/workbook_load/ (the corpus itself is not committed). The hostile
# bombs (zip_bomb.xlsx, lying_bomb.xlsx) are left out: each run takes seconds.
set -eu
cd "$(dirname "$0")"
mkdir -p corpus/workbook_load corpus/filter_parse corpus/request_validation
for dir in openpyxl libreoffice; do
    for f in ../fixtures/$dir/*.xlsx; do
        cp "$f" "corpus/workbook_load/${dir}_$(basename "$f")"
    done
done
cp ../fixtures/hostile/truncated.xlsx ../fixtures/hostile/billion_laughs.xlsx corpus/workbook_load/

# A few hand-written seeds for the text targets (from docs/API.md's examples).
n=0
for s in 'num:eq:30' 'num:gte:29.5' 'text:like:B*n' 'text:ilike:*STÄ*' 'date:gt:2023/12/31 23:59' \
         'date:eq:2024-01-15T00:00:00' 'date:lt:2024-01-15' 'flag:is:true' 'blank:is:null' \
         'text:in:Berlin,Paris,' 'dup:eq:x' 'a:b:eq:1' 'städt:neq:' 'num:eq:12:30' 'flag:eq:FALSE'; do
    n=$((n + 1)); printf '%s' "$s" > "corpus/filter_parse/seed$n"
done
n=0
for s in '{"data": [{"name": "Alan", "age": 41, "joined": "2024/06/23"}, {"name": "Edsger"}]}' \
         '{"data": [{"b": 1}, {"a": 2, "b": 3}]}' \
         '{"type": "filter", "filter": "city:eq:London", "data": {"city": "Cambridge"}}' \
         '{"type": "filter", "filter": ["age:gte:26", "name:like:*o*"], "data": {"name": null}}' \
         '{"type": "row", "row": 3, "data": {"age": 29}}' \
         '{"type": "row", "row": 2}' \
         '{"type": "filter", "filter": "name:eq:Bob"}' \
         '{"filter": ["age:gte:30", "city:like:*on"], "limit": 50, "offset": 1}' \
         'filter=age:gte:30&filter=city:like:*on&limit=50&offset=0'; do
    n=$((n + 1)); printf '%s' "$s" > "corpus/request_validation/seed$n"
done

# package_xml: each fidelity fixture's first sheet and styles, NUL between.
mkdir -p corpus/package_xml
for f in ../fixtures/fidelity/openpyxl/*.xlsx ../fixtures/fidelity/libreoffice/*.xlsx; do
    out="corpus/package_xml/$(basename "$(dirname "$f")")_$(basename "$f" .xlsx)"
    { unzip -p "$f" xl/worksheets/sheet1.xml; printf '\000'; unzip -p "$f" xl/styles.xml; } > "$out"
done
