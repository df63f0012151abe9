#!/bin/bash
# Synthetic benchmark, release build, one process per (engine, size); peak
# RSS from /usr/bin/time -v. Run from this directory; output in out/.
set -u
cd "$(dirname "$0")"
mkdir -p out
(cd harness && cargo build --release -q) || exit 1
for n in 10000 100000; do for e in fz ic; do
  /usr/bin/time -v "harness/target/release/$e-bench" "$n" 2> "out/time-$e-$n.txt"
  echo "$e $n maxrss_kb=$(grep 'Maximum resident' "out/time-$e-$n.txt" | awk '{print $NF}')"
done; done
