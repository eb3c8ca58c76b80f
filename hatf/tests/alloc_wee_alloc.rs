//! wee_alloc traces: corpus and odd-input round trips, events, errors.

use hatf::internal::formats::wee_alloc::{read_events, WeeAlloc};
use hatf::{DecodeOptions, EncodeOptions, TraceFormat};

mod format_support;
use format_support::peers;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

fn enc(input: &[u8], keep: bool) -> Result<Vec<u8>, hatf::FormatError> {
    let mut out = Vec::new();
    let o = EncodeOptions {
        input_name: "t.trace".into(),
        keep_bad_lines: keep,
        ..EncodeOptions::default()
    };
    WeeAlloc.encode(&mut &input[..], &mut out, &o)?;
    Ok(out)
}

fn dec(bin: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    WeeAlloc
        .decode(&mut &bin[..], &mut out, &DecodeOptions::default())
        .expect("decode");
    out
}

#[test]
fn corpus_traces_round_trip_byte_for_byte() {
    let dir = std::path::Path::new(CORPUS).join("malloc/wee_alloc");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    };
    let mut seen = 0;
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "trace") {
            let text = std::fs::read(&p).unwrap();
            assert!(WeeAlloc.detect(&text));
            let bin = enc(&text, false).unwrap();
            eprintln!("{}: {} → {} bytes", p.display(), text.len(), bin.len());
            assert!(dec(&bin) == text, "{} differs", p.display());
            seen += 1;
        }
    }
    assert_eq!(seen, 9);
}

#[test]
fn odd_inputs_round_trip_and_bad_lines_are_located() {
    for c in [
        &b""[..],
        b"Alloc(5),",
        b"Alloc(5),\r\nFree(0),\r\n",
        b"Alloc(05),\nFree(7),\nFree(0),\nFree(0),\n",
    ] {
        assert_eq!(dec(&enc(c, false).unwrap()), c);
    }
    let e = enc(b"Alloc(5),\nFree(x),\n", false).unwrap_err();
    assert_eq!(e.position, "2:6");
    let text = b"Alloc(5),\nMalloc(3)\n";
    assert_eq!(dec(&enc(text, true).unwrap()), text);
}

#[test]
fn frees_name_the_allocation_they_release() {
    let ev = read_events(&mut &b"Alloc(5),\nAlloc(7),\nFree(0),\n"[..], "t").unwrap();
    assert_eq!(ev[2].address, ev[0].address);
    assert_ne!(ev[1].address, ev[0].address);
}

/// Every corpus trace, down to the 875-byte `ls.trace`, is at most half the better peer
/// (docs/FORMAT.md §6.1, `wee-alloc`: short traces are compact containers of the structured
/// bit coding). Prints each size, and the fixed bytes of an empty trace.
#[test]
fn corpus_sizes_against_peers() {
    let dir = std::path::Path::new(CORPUS).join("malloc/wee_alloc");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    };
    let fixed = enc(b"", false).unwrap().len();
    eprintln!("SIZE empty trace: {fixed} bytes");
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    let mut checked = 0;
    for p in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
    {
        let text = std::fs::read(p).unwrap();
        let bin = enc(&text, false).unwrap();
        let (xz, zstd) = peers(&text);
        let best = xz.min(zstd);
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        eprintln!(
            "SIZE {name} text={} xz9={xz} zstd19long={zstd} hatf={} ratio={:.3}",
            text.len(),
            bin.len(),
            bin.len() as f64 / best as f64,
        );
        assert!(
            bin.len() * 2 <= best,
            "{name}: {} > half of {best}",
            bin.len()
        );
        checked += 1;
    }
    assert_eq!(checked, 9);
}

/// A file of a layout this hatf does not write is refused with the layout named as it is
/// written in the file. The compact form's header code 1 stands for `wee-alloc-cm-3`
/// (docs/FORMAT.md §5), so turning a fresh file's code 2 into 1, with its CRC made good again,
/// gives such a file.
#[test]
fn an_older_layout_is_refused_by_its_plain_name() {
    let mut bin = enc(b"Alloc(5),\nFree(0),\n", false).unwrap();
    assert_eq!(&bin[..5], b"\x7fMTF\x03", "a one-block file is compact");
    assert_eq!(bin[5] & 0x3f, 2, "header code of wee-alloc-cm-4");
    bin[5] = (bin[5] & !0x3f) | 1;
    let end = bin.len() - 4;
    let crc = crc32fast::hash(&bin[..end]);
    bin[end..].copy_from_slice(&crc.to_le_bytes());
    let mut out = Vec::new();
    let e = WeeAlloc
        .decode(&mut &bin[..], &mut out, &DecodeOptions::default())
        .unwrap_err();
    assert_eq!(
        e.message,
        "the file's layout is `wee-alloc-cm-3`, but this hatf decodes layout `wee-alloc-cm-4`"
    );
}
