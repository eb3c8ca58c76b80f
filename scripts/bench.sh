#!/usr/bin/env bash
# Side-by-side benchmark of `hatf encode`/`hatf decode` against gzip -9, zstd -3,
# zstd -19 --long=27 and xz -9 on the corpus traces and on a freshly recorded mtrace log.
#
# For every input it measures output size, compression and decompression wall time (median of
# hyperfine runs) and peak RSS (/usr/bin/time -v), checks that every tool gives the input back
# byte for byte, and prints markdown tables with ratios, the date and the machine. The same text
# goes to target/bench/bench-<date>.md, target/bench/latest.md, and the README draft
# target/bench/README-table.md.
#
# Usage: scripts/bench.sh [--quick] [--runs N] [--keep] [EXTRA_TEXT_TRACE...]
#   --quick   small inputs only (sample.mtrace, systemui, malloc-bench grep, the two ET
#             traces, a small fresh recording) and one timed run each; takes a few minutes
#   --runs N  hyperfine runs per command (default 3); zstd -19 and xz -9 compression run once,
#             timed by GNU time
#   --keep    keep the work folder (decompressed inputs, outputs) and print where it is
# Environment: HATF_CORPUS (default: ../shared/corpus from the repository root),
#   CARGO_TARGET_DIR (where hatf is built), BENCH_TMP (parent of the work folder, default /tmp),
#   HATF_BIN (time this hatf binary instead of building the repository's).
# Tools that are missing (hyperfine, GNU time, zstd, xz, gzip, unzip, bzip2, gcc) are installed
# with apt-get. Run it under `nice -n 19` on a shared machine.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUICK=0
RUNS=3
KEEP=0
EXTRA=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) QUICK=1; RUNS=1 ;;
        --runs) RUNS="$2"; shift ;;
        --keep) KEEP=1 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        -*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
        *) EXTRA+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")") ;;
    esac
    shift
done
CORPUS=${HATF_CORPUS:-$ROOT/../shared/corpus}

log() { echo "bench: $*" >&2; }

# --- tools and hatf ----------------------------------------------------------------------
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
bench_install hyperfine time zstd xz gzip unzip bzip2 gcc
bench_hatf "$ROOT"
OUTDIR=$ROOT/target/bench
mkdir -p "$OUTDIR"

WORK=$(mktemp -d "${BENCH_TMP:-/tmp}/hatf-bench.XXXXXX")
if [[ $KEEP -eq 0 ]]; then trap 'rm -rf "$WORK"' EXIT; fi
mkdir -p "$WORK/in" "$WORK/out"
# A private copy, so a rebuild during the run cannot change the binary being measured.
cp "$HATF_BUILT" "$WORK/hatf"
HATF=$WORK/hatf

# --- inputs ------------------------------------------------------------------------------
# Each input: a label, a plain-text file in $WORK/in (compressed corpus files are unpacked
# first; the corpus itself is never written to) that the peers compress, and the file hatf
# encodes: the same one, except for a malloc-bench trace, which hatf takes as the corpus holds
# it (the .trace.gz, given back byte for byte) while the peers get the protobuf inside.
LABELS=()
FILES=()
HATF_FILES=()
add_input() { LABELS+=("$1"); FILES+=("$2"); HATF_FILES+=("${3:-$2}"); }

unpack() { # label, command writing the text to stdout, file name
    local label=$1 cmd=$2 name=$3
    bash -c "$cmd" >"$WORK/in/$name"
    add_input "$label" "$WORK/in/$name"
}

if [[ -d $CORPUS ]]; then
    M=$CORPUS/malloc
    E=$CORPUS/et
    if [[ $QUICK -eq 0 ]]; then
        [[ -f $M/glibc-mtrace/perl-hash.mtrace.zst ]] &&
            unpack "mtrace perl-hash" "zstd -dcq '$M/glibc-mtrace/perl-hash.mtrace.zst'" perl-hash.mtrace
        [[ -f $M/glibc-mtrace/python-json.mtrace.zst ]] &&
            unpack "mtrace python-json" "zstd -dcq '$M/glibc-mtrace/python-json.mtrace.zst'" python-json.mtrace
        [[ -f $M/android/surfaceflinger.zip ]] &&
            unpack "memory_replay surfaceflinger" "unzip -p '$M/android/surfaceflinger.zip'" surfaceflinger.txt
    fi
    [[ -f $M/android/systemui.zip ]] &&
        unpack "memory_replay systemui" "unzip -p '$M/android/systemui.zip'" systemui.txt
    if [[ $QUICK -eq 0 && -f $M/wee_alloc/dogfood.trace ]]; then
        cp "$M/wee_alloc/dogfood.trace" "$WORK/in/dogfood.trace"
        add_input "wee_alloc dogfood" "$WORK/in/dogfood.trace"
    fi
    if [[ -f $M/malloc-bench/traces/grep.trace.gz ]]; then
        cp "$M/malloc-bench/traces/grep.trace.gz" "$WORK/in/grep.trace.gz"
        gzip -dc "$WORK/in/grep.trace.gz" >"$WORK/in/grep.pb"
        add_input "malloc-bench grep (hatf: .trace.gz; peers: its protobuf)" "$WORK/in/grep.pb" "$WORK/in/grep.trace.gz"
    fi
    [[ -f $E/et2-java/data/lots_of_allocs/trace.bz2 ]] &&
        unpack "ET2 lots_of_allocs" "bzip2 -dc '$E/et2-java/data/lots_of_allocs/trace.bz2'" et2-lots_of_allocs.trace
    if [[ -f $E/et3-merlin/pipeline_results/LotsOfAllocs/trace_with_deaths ]]; then
        cp "$E/et3-merlin/pipeline_results/LotsOfAllocs/trace_with_deaths" "$WORK/in/et3-lotsofallocs.trace"
        add_input "ET3 LotsOfAllocs deaths" "$WORK/in/et3-lotsofallocs.trace"
    fi
else
    log "corpus not found at $CORPUS: skipping corpus traces (set HATF_CORPUS to use one elsewhere)"
fi
add_input "mtrace sample (repo)" "$ROOT/samples/sample.mtrace"

# A fresh, larger mtrace log of perl, recorded the way samples/README.md describes.
record_fresh() {
    local keys=$1 lib=$WORK/libmt.so out=$WORK/in/fresh-perl.mtrace
    local libdebug
    libdebug=$(ldconfig -p 2>/dev/null | awk '/libc_malloc_debug.so.0 /{print $NF; exit}')
    [[ -z $libdebug ]] && libdebug=/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
    if [[ ! -e $libdebug ]] || ! command -v perl >/dev/null; then
        log "no libc_malloc_debug.so.0 or perl: skipping the fresh recording"
        return
    fi
    gcc -shared -fPIC -o "$lib" "$ROOT/samples/mtrace_on_load.c"
    MALLOC_TRACE=$out LD_PRELOAD="$libdebug $lib" perl -e '
        my $n = shift; my %h;
        for my $i (1..$n) { $h{"k$i"} = [$i, "v" x ($i % 50)]; }
        delete $h{"k$_"} for 1..$n/2;
        my $s = join(",", sort keys %h); print STDERR length($s), "\n"' "$keys" 2>/dev/null
    if [[ -s $out ]]; then
        add_input "mtrace fresh perl ($keys keys)" "$out"
    else
        log "the fresh recording came out empty: skipping it"
    fi
}
if [[ $QUICK -eq 1 ]]; then record_fresh 20000; else record_fresh 200000; fi

for f in "${EXTRA[@]}"; do add_input "$(basename "$f")" "$f"; done

# --- measuring ---------------------------------------------------------------------------
# median_of CSV: the median wall time (seconds) hyperfine wrote.
median_of() { awk -F, 'NR==2 {printf "%.3f", $4}' "$1"; }

# measure NAME RUNS CMD: times CMD with hyperfine (RUNS runs) and, in a separate run, takes its
# peak RSS with GNU time. Sets T (seconds) and RSS (MB).
# RUNS = 0 (the slow compressors): one run, timed by GNU time itself (10 ms resolution)
# instead of running for minutes twice.
measure() {
    local name=$1 runs=$2 cmd=$3
    if [[ $runs -gt 0 ]]; then
        hyperfine --style none --runs "$runs" --export-csv "$WORK/t.csv" "$cmd" >/dev/null 2>&1 ||
            { log "failed: $cmd"; T=NA; RSS=NA; return 1; }
        T=$(median_of "$WORK/t.csv")
    fi
    /usr/bin/time -v -o "$WORK/rss.txt" bash -c "$cmd" >/dev/null 2>&1 ||
        { log "failed: $cmd"; T=NA; RSS=NA; return 1; }
    RSS=$(awk -F: '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$WORK/rss.txt")
    if [[ $runs -eq 0 ]]; then
        # "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.34"
        T=$(awk '/Elapsed \(wall clock\)/ {n=split($NF, p, ":"); s=0; for (i=1; i<=n; i++) s=s*60+p[i]; printf "%.3f", s}' "$WORK/rss.txt")
    fi
    : "$name"
}

# The encodings a format offers, from the refusal of an unknown one (hatf exits 2 there).
encodings_of() {
    { "$HATF" encode --encoding '?' "$1" -o "$WORK/probe" -f 2>&1 || true; } |
        sed -n 's/.*it offers: //p' | tr -d ','
}

ROWS=$WORK/rows.tsv
: >"$ROWS"
# Tools: label, compress command, decompress command, file suffix, compress runs.
for i in "${!FILES[@]}"; do
    label=${LABELS[$i]}
    in=${FILES[$i]}
    hin=${HATF_FILES[$i]}
    base=$WORK/out/$i
    bytes=$(stat -c %s "$in")
    lines=$(wc -l <"$in")
    # A protobuf has no lines: its row says so ("—") instead of counting newline bytes.
    [[ $hin != "$in" ]] && lines=0
    log "$label: $bytes bytes, $lines lines"
    tools=()
    # hatf picks its format; each --encoding the format offers is measured.
    fmt_encodings=$(encodings_of "$hin")
    # Damaged traces (e.g. ET2's glued records) need --keep-bad-lines; say so in the row.
    keep=""
    if ! "$HATF" encode -f "$hin" -o "$WORK/probe" 2>"$WORK/probe.err" &&
        grep -q -- --keep-bad-lines "$WORK/probe.err"; then
        keep=" --keep-bad-lines"
    fi
    for enc in ${fmt_encodings:-auto}; do
        name="hatf$keep"
        [[ $enc != auto ]] && name="hatf --encoding $enc$keep"
        tools+=("$name|$HATF encode --encoding $enc$keep -f '$hin' -o '$base.hatf-$enc'|$HATF decode -f '$base.hatf-$enc' -o '$base.back'|$base.hatf-$enc|$RUNS|$hin")
    done
    tools+=("gzip -9|gzip -9 -c '$in' >'$base.gz'|gzip -dc '$base.gz' >'$base.back'|$base.gz|$RUNS")
    tools+=("zstd -3|zstd -3 -T1 -q -f '$in' -o '$base.zst3'|zstd -d -q -f '$base.zst3' -o '$base.back'|$base.zst3|$RUNS")
    tools+=("zstd -19 --long=27|zstd -19 --long=27 -T1 -q -f '$in' -o '$base.zst19'|zstd -d --long=27 -q -f '$base.zst19' -o '$base.back'|$base.zst19|0")
    tools+=("xz -9|xz -9 -T1 -c '$in' >'$base.xz'|xz -dc '$base.xz' >'$base.back'|$base.xz|0")
    for t in "${tools[@]}"; do
        IFS='|' read -r name ccmd dcmd packed cruns source <<<"$t"
        log "  $name"
        if ! measure "$name" "$cruns" "$ccmd"; then continue; fi
        ct=$T; crss=$RSS
        size=$(stat -c %s "$packed")
        measure "$name" "$RUNS" "$dcmd" || continue
        dt=$T; drss=$RSS
        ok=yes
        cmp -s "${source:-$in}" "$base.back" || ok=NO
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$bytes" "$lines" "$name" \
            "$size" "$ct" "$dt" "$crss" "$drss" "$ok" >>"$ROWS"
    done
    rm -f "$base".*
done

# --- report ------------------------------------------------------------------------------
CPU=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
COMMIT=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(cd "$ROOT" && git status --porcelain 2>/dev/null | grep -q . && echo "+changes" || true)
STAMP=$(date -u +%Y-%m-%dT%H:%MZ)
REPORT=$WORK/report.md
{
    echo "### Benchmark: hatf vs general-purpose compressors"
    echo
    echo "Date $STAMP; machine: $(nproc) cores, $CPU, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM;" \
        "hatf $COMMIT$DIRTY (release build, default settings: all cores, one thread for small inputs); compressors with one thread."
    echo "Times are medians of $RUNS hyperfine run(s) (a single run is timed by GNU time; zstd -19 and xz -9 compression always run once), wall clock, files on $(df -h --output=fstype "$WORK" | tail -1 | tr -d ' ')."
    echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Mode: $([[ $QUICK -eq 1 ]] && echo quick || echo full)."
    echo
    echo "| trace | lines | text bytes | tool | size | B/line | text/size | size/best(xz-9, zstd-19) | compress s | ÷ zstd -3 | decompress s | ÷ zstd -d | peak RSS MB (c/d) | lossless |"
    echo "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    awk -F'\t' '
        { key=$1; n[key]++; row[key, n[key]]=$0; if (!(key in seen)) { seen[key]=1; order[++k]=key } }
        $4=="zstd -3" { z3c[$1]=$6; z3d[$1]=$7 }
        $4=="zstd -19 --long=27" || $4=="xz -9" { if (!($1 in best) || $5 < best[$1]) best[$1]=$5 }
        function ratio(a, b) { return (a=="NA" || b=="" || b==0) ? "—" : sprintf("%.2f", a/b) }
        END {
            for (j=1; j<=k; j++) { key=order[j]
                for (m=1; m<=n[key]; m++) { split(row[key, m], f, "\t")
                    printf "| %s | %s | %d | %s | %d | %s | %.1f | %s | %s | %s | %s | %s | %s / %s | %s |\n",
                        (m==1 ? f[1] : ""), (f[3] ? f[3] : "—"), f[2], f[4], f[5],
                        (f[3] ? sprintf("%.3f", f[5]/f[3]) : "—"), f[2]/f[5],
                        ratio(f[5], best[key]), f[6], ratio(f[6], z3c[key]), f[7], ratio(f[7], z3d[key]),
                        f[8], f[9], f[10]
                }
            }
        }' "$ROWS"
    echo
    echo "Targets (docs: ../shared/brief/targets.md): size ≤ 0.5 × best of xz -9 / zstd -19 --long=27 for allocation traces," \
        "< 1 × for Elephant Tracks; hatf encode ≤ zstd -3 time; hatf decode ≤ zstd -d time."
    echo
    echo "| trace | hatf size ÷ best | size target | encode ÷ zstd -3 | decode ÷ zstd -d |"
    echo "|---|---:|---|---:|---:|"
    awk -F'\t' '
        $4=="zstd -3" { z3c[$1]=$6; z3d[$1]=$7 }
        $4=="zstd -19 --long=27" || $4=="xz -9" { if (!($1 in best) || $5 < best[$1]) best[$1]=$5 }
        $4 ~ /^hatf/ && !($1 in h) { h[$1]=$0; order[++k]=$1 }
        function ratio(a, b) { return (a=="NA" || b=="" || b==0) ? "—" : sprintf("%.1f", a/b) }
        END {
            for (j=1; j<=k; j++) { key=order[j]; split(h[key], f, "\t")
                r=f[5]/best[key]; et=(key ~ /^ET/)
                limit=(et ? 1 : 0.5)
                printf "| %s | %.3f | %s %s | %s× | %s× |\n", key, r, (et ? "< 1" : "≤ 0.5"),
                    (r <= limit ? "met" : "missed"), ratio(f[6], z3c[key]), ratio(f[7], z3d[key])
            }
        }' "$ROWS"
} >"$REPORT"

cat "$REPORT"
cp "$REPORT" "$OUTDIR/bench-$STAMP.md"
cp "$REPORT" "$OUTDIR/latest.md"
cp "$REPORT" "$OUTDIR/README-table.md"
cp "$ROWS" "$OUTDIR/latest.tsv"
log "written to $OUTDIR/bench-$STAMP.md, latest.md and README-table.md"
[[ $KEEP -eq 1 ]] && log "work folder kept: $WORK"
exit 0
