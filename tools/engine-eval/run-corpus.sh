#!/bin/bash
# One process per (engine, workbook), 120 s timeout each, so a panic, abort or
# hang costs only that workbook. Reads out/sample.txt (select_corpus.py);
# writes out/corpus-<engine>.jsonl.
set -u
cd "$(dirname "$0")"
(cd harness && cargo build --release -q) || exit 1
for e in fz ic; do
  : > "out/corpus-$e.jsonl"
  while read -r f; do
    timeout 120 "harness/target/release/$e-corpus" "$f" >> "out/corpus-$e.jsonl" 2>> "out/corpus-$e.stderr"
    rc=$?
    [ $rc -ne 0 ] && echo "{\"file\": \"$f\", \"phase\": \"exit\", \"rc\": $rc}" >> "out/corpus-$e.jsonl"
  done < out/sample.txt
done
