#!/bin/sh
# Runs every fuzz target for a bounded time (seconds, default 300 each) from
# the seed corpus, and prints libFuzzer's closing statistics for each.
# Needs cargo-fuzz (`cargo install cargo-fuzz`); RUSTC_BOOTSTRAP lets the
# stable toolchain build with the sanitizer flags cargo-fuzz passes.
#   sh fuzz/run.sh [seconds]
set -eu
cd "$(dirname "$0")"
seconds=${1:-300}
sh seed_corpus.sh
export RUSTC_BOOTSTRAP=1
for target in filter_parse request_validation workbook_load package_xml; do
    echo "== $target, ${seconds}s"
    cargo fuzz run -O "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 2>&1 |
        grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+== ERROR|SUMMARY|Done )' || true
done
