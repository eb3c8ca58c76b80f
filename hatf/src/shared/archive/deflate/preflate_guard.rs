//! Calling preflate-rs on data read from a file: its reconstruction data is checked before a
//! rebuild starts, and a panic inside the library becomes an error whose message stays off
//! standard error.
//!
//! preflate-rs trusts the parameters at the start of a stream's reconstruction data: a window
//! of 2^31 bytes makes it allocate gigabytes, and a chain length of 2^32 makes every match
//! search walk without end. Every parameter an honest analysis writes lies in the ranges its
//! estimator can produce (zlib's window of 2^9–2^15 bytes, at most 4,096 chain steps, matches
//! of at most 258 bytes), so [`check_parameters`] refuses anything else before the library
//! sees it.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use preflate_rs::{HashAlgorithm, TokenPredictorParameters};

/// Largest chain length preflate-rs's estimator writes (it refuses streams needing more).
pub const MAX_CHAIN: u32 = 4096;
/// Largest window, in bits, of a deflate stream.
pub const MAX_WINDOW_BITS: u32 = 15;
/// Longest deflate match.
pub const MAX_MATCH: u32 = 258;

/// The layout of preflate-rs 0.7.6's reconstruction data of a stream's first piece (its
/// private `ReconstructionData`, bitcode-encoded field by field): the parameters, then the
/// arithmetic-coded corrections.
#[derive(bitcode::Encode, bitcode::Decode)]
struct Reconstruction {
    parameters: TokenPredictorParameters,
    corrections: Vec<u8>,
}

/// Checks the parameters at the start of a stream's reconstruction data (that of its first
/// piece): an error unless they decode and lie in the ranges preflate-rs's analysis writes.
pub fn check_parameters(first: &[u8]) -> Result<(), String> {
    let r: Reconstruction = bitcode::decode(first)
        .map_err(|e| format!("the deflate reconstruction data does not decode: {e}"))?;
    let p = r.parameters;
    let bad = |what: &str| Err(format!("the deflate reconstruction data claims {what}"));
    if p.window_bits != 0 && !(9..=MAX_WINDOW_BITS).contains(&p.window_bits) {
        return bad(&format!("a window of 2^{} bytes", p.window_bits));
    }
    if p.max_chain > MAX_CHAIN {
        return bad(&format!("hash chains of {} steps", p.max_chain));
    }
    if p.nice_length > MAX_MATCH || p.min_len > MAX_MATCH {
        return bad(&format!(
            "matches of {} or {} bytes",
            p.nice_length, p.min_len
        ));
    }
    if p.max_dist_3_matches > 1 << MAX_WINDOW_BITS {
        return bad(&format!("matches {} bytes back", p.max_dist_3_matches));
    }
    if let HashAlgorithm::Zlib { hash_shift, .. } = p.hash_algorithm {
        if hash_shift > MAX_WINDOW_BITS {
            return bad(&format!("a hash shift of {hash_shift}"));
        }
    }
    Ok(())
}

/// Installs, once, the panic hook that is silent on a thread inside a [`guarded`] call. A
/// process about to fork a child that calls [`guarded`] installs it first: the child must not
/// take the hook's lock, which another thread of the parent may hold at the fork.
pub fn install_quiet_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

thread_local! {
    /// True while this thread runs a guarded call: its panics print nothing.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, a call into preflate-rs, turning a panic inside it into an error that says
/// `what` failed. The panic's message is not printed: a hook installed once (around whatever
/// hook was there) stays silent for panics on a thread inside such a call.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    install_quiet_hook();
    let was = QUIET.with(|q| q.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    result.unwrap_or_else(|_| Err(format!("{what}: preflate panicked")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_becomes_an_error_and_the_hook_runs_again_after() {
        let r: Result<(), String> = guarded("testing", || panic!("inside"));
        assert_eq!(r.unwrap_err(), "testing: preflate panicked");
        assert_eq!(guarded("testing", || Ok(5)), Ok(5));
        assert!(!QUIET.with(Cell::get));
    }

    use crate::shared::archive::deflate::gzip_split::{join_pieces, whole_as_piece};
    use std::io::Write;

    /// Raw deflate of some text by zlib.
    fn deflate() -> (Vec<u8>, Vec<u8>) {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("{}: malloc 0x{:x} {}\n", i % 7, i * 16, i % 100).into_bytes())
            .collect();
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(&text).unwrap();
        (e.finish().unwrap(), text)
    }

    #[test]
    fn parameters_outside_what_preflate_writes_are_refused_before_rebuilding() {
        assert!(check_parameters(b"").is_err());
        assert!(check_parameters(&[0xff; 64]).is_err());
        let (z, text) = deflate();
        let (piece, got) = whole_as_piece(&z).unwrap();
        assert!(got == text);
        check_parameters(&piece.corrections).unwrap();
        let honest: Reconstruction = bitcode::decode(&piece.corrections).unwrap();
        // Each hostile parameter alone: refused with an error naming it, and the rebuild
        // stops there (a window of 2^31 bytes made preflate-rs allocate gigabytes).
        type Spoil = fn(&mut TokenPredictorParameters);
        let hostile: [(Spoil, &str); 5] = [
            (|p| p.window_bits = 31, "window"),
            (|p| p.max_chain = u32::MAX, "chains"),
            (|p| p.nice_length = 100_000, "matches"),
            (|p| p.max_dist_3_matches = u32::MAX, "back"),
            (
                |p| {
                    p.hash_algorithm = HashAlgorithm::Zlib {
                        hash_mask: 0xffff,
                        hash_shift: 40,
                    }
                },
                "hash shift",
            ),
        ];
        for (change, what) in hostile {
            let mut r = Reconstruction {
                parameters: honest.parameters,
                corrections: honest.corrections.clone(),
            };
            change(&mut r.parameters);
            let mut bad = piece.clone();
            bad.corrections = bitcode::encode(&r);
            let e = check_parameters(&bad.corrections).unwrap_err();
            assert!(e.contains(what), "{e}");
            let e = join_pieces(&text, &[bad], &mut |_| Ok(())).unwrap_err();
            assert!(e.contains(what), "{e}");
        }
        // The honest data still rebuilds the stream.
        let mut back = Vec::new();
        join_pieces(&text, &[piece], &mut |b| {
            back.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert!(back == z);
    }
}
