# What the benchmark scripts (bench.sh, versus_zstd.sh) share: sourced, it only defines
# functions. Each expects the sourcing script to define `log` (a message to stderr).

# bench_install PROGRAM...: installs with apt-get the Debian packages of the programs that are
# missing. `time` stands for GNU time (/usr/bin/time; the shell has a `time` of its own), `xz`
# comes in the package xz-utils.
bench_install() {
    local pkgs=() p sudo=
    for p in "$@"; do
        case "$p" in
            time) [[ -x /usr/bin/time ]] || pkgs+=(time) ;;
            xz) command -v xz >/dev/null || pkgs+=(xz-utils) ;;
            *) command -v "$p" >/dev/null || pkgs+=("$p") ;;
        esac
    done
    [[ ${#pkgs[@]} -eq 0 ]] && return 0
    log "installing ${pkgs[*]}"
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    # A fresh machine's package lists may be missing or stale: update only if needed.
    $sudo apt-get install -y "${pkgs[@]}" >/dev/null ||
        { $sudo apt-get update >/dev/null && $sudo apt-get install -y "${pkgs[@]}" >/dev/null; }
}

# bench_hatf ROOT: sets HATF_BUILT to the hatf binary to time: $HATF_BIN when it is set (it
# must be executable), else the release build of the repository at ROOT, built now.
bench_hatf() {
    local root=$1
    if [[ -n ${HATF_BIN:-} ]]; then
        [[ -x $HATF_BIN ]] || { log "HATF_BIN=$HATF_BIN is not an executable file"; exit 2; }
        log "timing $HATF_BIN (HATF_BIN), not the repository's build"
        HATF_BUILT=$HATF_BIN
    else
        log "building hatf (release)"
        (cd "$root" && cargo build --release --locked -p hatf-cli >&2)
        HATF_BUILT=${CARGO_TARGET_DIR:-$root/target}/release/hatf
    fi
}
