#!/usr/bin/env bash
# Sizes of every allocation trace of the corpus (and of any extra text traces given as
# arguments) against xz -9 and zstd -19 --long=27, with the round trip checked by cmp.
#
# hatf encodes each file exactly as the corpus holds it (a .zip or .trace.gz is encoded as the
# archive, and decoding must give the archive back byte for byte); the peers compress the text
# inside (the decompressed protobuf for malloc-bench). Prints a markdown
# table with the ratio to the better peer and whether it is at most one half (the target).
#
# Usage: scripts/alloc_sizes.sh [EXTRA_TEXT_TRACE...]
# Environment: HATF (the hatf binary; default: build it with cargo), HATF_CORPUS (default
#   ../shared/corpus from the repository root), BENCH_TMP (work folder parent, default /tmp).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CORPUS=${HATF_CORPUS:-$ROOT/../shared/corpus}
if [[ -z ${HATF:-} ]]; then
    cargo build --release --locked -q -p hatf-cli --manifest-path "$ROOT/Cargo.toml"
    HATF=${CARGO_TARGET_DIR:-$ROOT/target}/release/hatf
fi
WORK=$(mktemp -d "${BENCH_TMP:-/tmp}/hatf-alloc-sizes.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "| trace | text bytes | zstd -19 --long=27 | xz -9 | hatf | hatf ÷ best peer | ≤ 0.5 |"
echo "|---|---:|---:|---:|---:|---:|:-:|"

# row NAME FILE_AS_GIVEN TEXT_FOR_PEERS
row() {
    local name=$1 file=$2 text=$3
    "$HATF" encode -q -f "$file" -o "$WORK/out.hatf"
    "$HATF" decode -q "$WORK/out.hatf" -o "$WORK/back" -f
    if ! cmp -s "$WORK/back" "$file"; then
        echo "alloc_sizes: $name does not round-trip" >&2
        exit 1
    fi
    local t h x z best
    t=$(stat -c %s "$text")
    h=$(stat -c %s "$WORK/out.hatf")
    x=$(xz -9 -c "$text" | wc -c)
    z=$(zstd -19 --long=27 -q -c "$text" | wc -c)
    best=$((x < z ? x : z))
    awk -v n="$name" -v t="$t" -v z="$z" -v x="$x" -v h="$h" -v b="$best" 'BEGIN {
        r = h / b
        printf "| %s | %d | %d | %d | **%d** | %.3f | %s |\n", n, t, z, x, h, r, (r <= 0.5 ? "yes" : "no")
    }'
}

if [[ -d $CORPUS/malloc ]]; then
    for f in "$CORPUS"/malloc/glibc-mtrace/*.mtrace.zst; do
        [[ -e $f ]] || continue
        zstd -dc "$f" > "$WORK/in.mtrace"
        row "mtrace $(basename "$f" .mtrace.zst)" "$WORK/in.mtrace" "$WORK/in.mtrace"
    done
    for f in "$CORPUS"/malloc/android/*.zip; do
        [[ -e $f ]] || continue
        unzip -p "$f" > "$WORK/in.txt"
        row "memory_replay $(basename "$f") (zip)" "$f" "$WORK/in.txt"
    done
    for f in "$CORPUS"/malloc/malloc-bench/traces/*.trace.gz; do
        [[ -e $f ]] || continue
        gzip -dc "$f" > "$WORK/in.pb"
        row "malloc-bench $(basename "$f" .trace.gz) (gz)" "$f" "$WORK/in.pb"
    done
    for f in "$CORPUS"/malloc/wee_alloc/*.trace; do
        [[ -e $f ]] || continue
        row "wee_alloc $(basename "$f" .trace)" "$f" "$f"
    done
else
    echo "alloc_sizes: no corpus at $CORPUS; only the extra traces are measured" >&2
fi
for f in "$@"; do
    row "$(basename "$f")" "$f" "$f"
done
