#!/usr/bin/env bash
# Runs every fuzz target at once for SECONDS (default 1800) under nice 19, each on its corpus
# in fuzz/corpus/<target>, writing crash reproducers to fuzz/artifacts/<target>/ and logs
# (with libFuzzer's final statistics) to LOGDIR (default fuzz/logs). Builds the targets first
# with debug assertions (`cargo +nightly fuzz build -a`).
#
# Usage: fuzz/run_all.sh [SECONDS] [LOGDIR]
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-1800}
logs=${2:-logs}
cargo +nightly fuzz build -a
bin=${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release
mkdir -p "$logs"
for t in $(cargo +nightly fuzz list | grep -v "^write_seeds$"); do
    mkdir -p "corpus/$t" "artifacts/$t"
    nice -n 19 "$bin/$t" "corpus/$t" -max_total_time="$secs" -rss_limit_mb=1536 -timeout=20 \
        -print_final_stats=1 -artifact_prefix="artifacts/$t/" > "$logs/$t.log" 2>&1 &
done
wait
grep -H "stat::number_of_executed_units\|ERROR" "$logs"/*.log
