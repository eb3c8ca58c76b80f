#!/usr/bin/env bash
# The speed targets, side by side in one run: `hatf encode` against `zstd -3 -T1` and
# `hatf decode` against `zstd -d`, on the full-size corpus traces (or the traces given).
#
# For every input it times both directions of both tools with hyperfine (mean of N runs after
# 2 warm-ups, `-N`: no shell in between), records peak RSS with GNU time, checks that both
# tools give the input back byte for byte, and prints one markdown table with the ratios, the
# date, the machine and the load average. With --base, an older hatf binary is timed in the
# same hyperfine runs, so a change can be judged against the noise of the same minute.
# (scripts/bench.sh compares sizes and times with every peer; this script is the quick check
# of the two speed targets on large inputs.)
#
# Usage: scripts/versus_zstd.sh [--runs N] [--base HATF_BINARY] [TRACE...]
#   --runs N   hyperfine runs per command (default 10)
#   --base B   also time binary B (its own encoding of each trace) in the same runs
#   TRACE      plain-text traces to use instead of the corpus ones
# Environment: HATF_CORPUS (default: ../shared/corpus from the repository root),
#   CARGO_TARGET_DIR (where hatf is built), BENCH_TMP (parent of the work folder; default
#   /dev/shm when it exists, so that file I/O is not what is measured, else /tmp), HATF_BIN
#   (time this hatf binary instead of building the repository's).
# Missing tools (hyperfine, GNU time, zstd, unzip) are installed with apt-get. Run it on a
# quiet machine: the two tools' times are compared, and other work moves both.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=10
BASE=
INPUTS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) RUNS="$2"; shift ;;
        --base) BASE=$(realpath "$2"); shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        -*) echo "versus_zstd.sh: unknown option $1" >&2; exit 2 ;;
        *) INPUTS+=("$(realpath "$1")") ;;
    esac
    shift
done
CORPUS=${HATF_CORPUS:-$ROOT/../shared/corpus}
log() { echo "versus_zstd: $*" >&2; }

# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
bench_install hyperfine time zstd unzip
bench_hatf "$ROOT"
TMP_PARENT=${BENCH_TMP:-$([[ -d /dev/shm ]] && echo /dev/shm || echo /tmp)}
WORK=$(mktemp -d "$TMP_PARENT/hatf-versus.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# A private copy, so a rebuild during the run cannot change the binary being measured.
cp "$HATF_BUILT" "$WORK/hatf"
HATF=$WORK/hatf

LABELS=()
FILES=()
unpack() { # label, command writing the text to stdout, file name
    bash -c "$2" >"$WORK/$3"
    LABELS+=("$1")
    FILES+=("$WORK/$3")
}
if [[ ${#INPUTS[@]} -eq 0 ]]; then
    M=$CORPUS/malloc
    E=$CORPUS/et
    if [[ -d $CORPUS ]]; then
        [[ -f $M/glibc-mtrace/perl-hash.mtrace.zst ]] &&
            unpack "mtrace perl-hash" "zstd -dcq '$M/glibc-mtrace/perl-hash.mtrace.zst'" perl-hash.mtrace
        [[ -f $M/glibc-mtrace/python-json.mtrace.zst ]] &&
            unpack "mtrace python-json" "zstd -dcq '$M/glibc-mtrace/python-json.mtrace.zst'" python-json.mtrace
        [[ -f $M/android/surfaceflinger.zip ]] &&
            unpack "memory_replay surfaceflinger" "unzip -p '$M/android/surfaceflinger.zip'" surfaceflinger.txt
        [[ -f $M/android/systemui.zip ]] &&
            unpack "memory_replay systemui" "unzip -p '$M/android/systemui.zip'" systemui.txt
        [[ -f $E/et3-large/javac-tests/trace.zst ]] &&
            unpack "ET3 javac-tests" "zstd -dcq '$E/et3-large/javac-tests/trace.zst'" javac-tests.trace
    else
        log "corpus not found at $CORPUS: only the repository's sample (set HATF_CORPUS)"
    fi
    LABELS+=("mtrace sample (repo)")
    FILES+=("$ROOT/samples/sample.mtrace")
else
    for f in "${INPUTS[@]}"; do LABELS+=("$(basename "$f")"); FILES+=("$f"); done
fi

# Mean of one hyperfine command, in milliseconds, from its CSV export (row k, 1-based).
mean_ms() { awk -F, -v k="$2" 'NR == k + 1 { printf "%.1f", $2 * 1000 }' "$1"; }
rss_mb() { # command...: peak RSS of one run, MB
    /usr/bin/time -f %M -o "$WORK/rss" "$@" >/dev/null 2>&1
    awk '{ printf "%.0f", $1 / 1024 }' "$WORK/rss"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

HEAD_ROW="| trace | text MB | hatf size | zstd -3 size | hatf encode ms | zstd -3 ms | ÷ |"
SEP_ROW="|---|---:|---:|---:|---:|---:|---:|"
HEAD_ROW+=" hatf decode ms | zstd -d ms | ÷ | hatf RSS MB (enc / dec) |"
SEP_ROW+="---:|---:|---:|---|"
if [[ -n $BASE ]]; then
    HEAD_ROW+=" base encode ms | base decode ms |"
    SEP_ROW+="---:|---:|"
fi
ROWS=()
for i in "${!FILES[@]}"; do
    in=${FILES[$i]}
    label=${LABELS[$i]}
    log "$label"
    out=$WORK/out
    "$HATF" encode -q -f "$in" -o "$out.hatf"
    zstd -3 -T1 -q -f "$in" -o "$out.zst"
    commands=("$HATF encode -q -f $in -o $out.x.hatf" "zstd -3 -T1 -q -f $in -o $out.x.zst"
        "$HATF decode -q -f $out.hatf -o $out.back" "zstd -d -q -f $out.zst -o $out.zback")
    if [[ -n $BASE ]]; then
        "$BASE" encode -q -f "$in" -o "$out.base"
        commands+=("$BASE encode -q -f $in -o $out.x.base" "$BASE decode -q -f $out.base -o $out.bback")
    fi
    hyperfine -N -w 2 -r "$RUNS" --export-csv "$WORK/times.csv" "${commands[@]}" >&2
    lossless=yes
    cmp -s "$out.back" "$in" || lossless="NO: hatf decode differs"
    cmp -s "$out.zback" "$in" || lossless="NO: zstd -d differs"
    if [[ $lossless != yes ]]; then
        log "$label: $lossless"
        exit 1
    fi
    enc=$(mean_ms "$WORK/times.csv" 1); zenc=$(mean_ms "$WORK/times.csv" 2)
    dec=$(mean_ms "$WORK/times.csv" 3); zdec=$(mean_ms "$WORK/times.csv" 4)
    rss_enc=$(rss_mb "$HATF" encode -q -f "$in" -o "$out.x.hatf")
    rss_dec=$(rss_mb "$HATF" decode -q -f "$out.hatf" -o "$out.back")
    row="| $label | $(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.1f", b / 1e6 }')"
    row+=" | $(stat -c %s "$out.hatf") | $(stat -c %s "$out.zst") | $enc | $zenc | **$(ratio "$enc" "$zenc")×**"
    row+=" | $dec | $zdec | **$(ratio "$dec" "$zdec")×** | $rss_enc / $rss_dec |"
    if [[ -n $BASE ]]; then
        row+=" $(mean_ms "$WORK/times.csv" 5) | $(mean_ms "$WORK/times.csv" 6) |"
    fi
    ROWS+=("$row")
    rm -f "$out".*
done

REV=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
CPU=$(lscpu 2>/dev/null | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2; exit }')
echo "Date $(date -u +%Y-%m-%dT%H:%MZ); machine: $(nproc) cores, ${CPU:-unknown CPU}; hatf $REV (release build,"
echo "default settings); zstd $(zstd -V | grep -o 'v[0-9.]*' | head -1) with one thread. Times: hyperfine mean of $RUNS runs after 2 warm-ups,"
echo "files in $TMP_PARENT.${BASE:+ Base: $BASE.} Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "$HEAD_ROW"
echo "$SEP_ROW"
printf '%s\n' "${ROWS[@]}"
