#!/usr/bin/env bash
# Builds every fuzz target with the stable toolchain and runs each, one after another, for
# SECONDS (default 25) on its corpus in fuzz/corpus/<target>, without writing new inputs there
# (a scratch copy takes them), and fails if any target crashes, times out or runs out of its
# memory limit. Crash reproducers go to LOGDIR/<target>/ (default fuzz/logs). FUZZ_SEED, when
# set, fixes libFuzzer's random seed, so a run repeats the mutations of an earlier one with the
# same seed (as far as its time allows); unset, every run explores anew.
#
# Stable rustc has no -Zsanitizer, but its LLVM instruments for libFuzzer with the same
# SanitizerCoverage pass cargo-fuzz asks for (`-C passes=sancov-module`): inline 8-bit counters
# and a PC table for coverage, and traced comparisons so libFuzzer can solve magic bytes.
# Overflow checks and debug assertions are on, as with `cargo fuzz -a`. Building for an explicit
# --target keeps the instrumentation out of build scripts and proc-macros.
#
# Usage: fuzz/run_stable.sh [SECONDS] [LOGDIR] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-25}
logs=$(mkdir -p "${2:-logs}" && cd "${2:-logs}" && pwd)
shift $(( $# < 2 ? $# : 2 ))
triple=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
export RUSTFLAGS="-C passes=sancov-module \
 -C llvm-args=-sanitizer-coverage-level=4 \
 -C llvm-args=-sanitizer-coverage-inline-8bit-counters \
 -C llvm-args=-sanitizer-coverage-pc-table \
 -C llvm-args=-sanitizer-coverage-trace-compares \
 --cfg fuzzing -C debug-assertions -C overflow-checks"
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(sed -n 's/^path = "fuzz_targets\/\(.*\)\.rs"$/\1/p' Cargo.toml)
fi
# Only the targets: other binaries (write_seeds) do not link libFuzzer's coverage callbacks.
cargo build --release --locked --target "$triple" $(printf -- '--bin %s ' "${targets[@]}")
bin=$CARGO_TARGET_DIR/$triple/release
failed=0
for t in "${targets[@]}"; do
  scratch=$(mktemp -d)
  mkdir -p "$logs/$t"
  echo "== fuzz $t for ${secs}s"
  # The scratch directory comes first so new inputs land there; the tracked corpus is read only.
  if nice -n 19 "$bin/$t" "$scratch" "corpus/$t" -max_total_time="$secs" -rss_limit_mb=1536 \
      ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
      -timeout=20 -print_final_stats=1 -print_pcs=0 -artifact_prefix="$logs/$t/" \
      > "$logs/$t.log" 2>&1; then
    grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)" "$logs/$t.log" || true
    grep -E "stat::(number_of_executed_units|peak_rss_mb|new_units_added)" "$logs/$t.log" || true
  else
    failed=1
    echo "fuzz target $t failed:"
    tail -n 40 "$logs/$t.log"
  fi
  rm -rf "$scratch"
done
exit $failed
