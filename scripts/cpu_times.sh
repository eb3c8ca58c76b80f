#!/usr/bin/env bash
# Processor time of `hatf encode` and `hatf decode` on one input, and with --peer of
# `zstd -3 -T1` and `zstd -d` on the same input, the commands taking turns in each round so that
# a change in the machine's load falls on all of them alike.
#
# CPU time (user + system, summed over the threads), not wall-clock time: on a machine shared
# with other work the wall-clock time mostly says how long a process waited for a core. Each
# decode is compared with the input by `cmp`.
#
# Usage: scripts/cpu_times.sh [--peer] [--runs N] NAME INPUT [ENCODE-OPTION...]
#   --peer    also time zstd -3 -T1 and zstd -d on INPUT (for a text input)
#   --runs N  rounds (default 3); the figures are the medians, the peak RSS the largest
#   ENCODE-OPTION...  passed to `hatf encode` (e.g. --from et3)
# Environment: HATF_BIN (default: target/release/hatf of this repository), BENCH_TMP (where
#   the outputs go, default /tmp).
# Prints one line: NAME, hatf size, encode and decode CPU seconds (and wall seconds) and peak
# RSS in MB, and with --peer zstd's size, times and the ratios hatf ÷ zstd.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PEER=0
RUNS=3
while [[ $# -gt 0 ]]; do
    case "$1" in
        --peer) PEER=1 ;;
        --runs) RUNS="$2"; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) break ;;
    esac
    shift
done
[[ $# -ge 2 ]] || { sed -n '2,17p' "$0" >&2; exit 2; }
NAME=$1 INPUT=$2
shift 2
HATF=${HATF_BIN:-$ROOT/target/release/hatf}
WORK=$(mktemp -d "${BENCH_TMP:-/tmp}/cpu_times.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Runs a command under GNU time; prints "user+system peak-KB wall".
timed() {
    /usr/bin/time -f "%U %S %M %e" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/err" || {
        echo "cpu_times.sh: failed: $* ($(head -c 300 "$WORK/err"))" >&2
        exit 1
    }
    awk '{ printf "%.2f %d %.2f\n", $1 + $2, $3, $4 }' "$WORK/time"
}

for ((r = 0; r < RUNS; r++)); do
    timed "$HATF" encode -q -f "$@" "$INPUT" -o "$WORK/out.hatf" >>"$WORK/hatf-encode"
    timed "$HATF" decode -q -f "$WORK/out.hatf" -o "$WORK/back" >>"$WORK/hatf-decode"
    cmp -s "$INPUT" "$WORK/back" || { echo "cpu_times.sh: $NAME does not decode to its input" >&2; exit 1; }
    if [[ $PEER == 1 ]]; then
        timed zstd -q -f -3 -T1 "$INPUT" -o "$WORK/out.zst" >>"$WORK/zstd-encode"
        timed zstd -q -f -d "$WORK/out.zst" -o "$WORK/back" >>"$WORK/zstd-decode"
    fi
    rm -f "$WORK/back"
done

# Median of column $2 of file $1.
median() {
    sort -n -k "$2,$2" "$1" | awk -v c="$2" '{ s[NR] = $c }
        END { printf "%.2f", (NR % 2 ? s[(NR + 1) / 2] : (s[NR / 2] + s[NR / 2 + 1]) / 2) }'
}
# Median CPU seconds, largest peak RSS (MB) and median wall seconds of "seconds KB wall" lines.
summary() {
    echo "$(median "$1" 1) $(sort -n -k 2,2 "$1" | tail -1 | awk '{ printf "%d", $2 / 1024 }') $(median "$1" 3)"
}
read -r he hem hew < <(summary "$WORK/hatf-encode")
read -r hd hdm hdw < <(summary "$WORK/hatf-decode")
line="$NAME hatf $(stat -c %s "$WORK/out.hatf") bytes; encode $he s, decode $hd s CPU ($hew s, $hdw s wall); peak RSS $hem / $hdm MB"
if [[ $PEER == 1 ]]; then
    read -r ze _ < <(summary "$WORK/zstd-encode")
    read -r zd _ < <(summary "$WORK/zstd-decode")
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
    line="$line; zstd -3 $(stat -c %s "$WORK/out.zst") bytes, $ze s, zstd -d $zd s; encode ÷ $(ratio "$he" "$ze"), decode ÷ $(ratio "$hd" "$zd")"
fi
echo "$line"
