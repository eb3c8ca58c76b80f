//! Measurement helper (ignored by default): per-stream sizes of the traces named in `ET_FILES`.
//! Run: `ET_FILES=/tmp/a,/tmp/b cargo test -p hatf --release --test et_measure -- --ignored --nocapture`

mod et_support;

#[test]
#[ignore = "prints measurements; needs ET_FILES"]
fn print_stream_sizes() {
    let Ok(files) = std::env::var("ET_FILES") else {
        eprintln!("SKIP: set ET_FILES");
        return;
    };
    for f in files.split(',') {
        let t = et_support::read_trace(std::path::Path::new(f));
        let fl = hatf::internal::formats::et::encode::Flavour {
            format: "et3",
            dtd: "",
            default_order: hatf::internal::formats::et::model::UOrder::HolderValueField,
        };
        let sizes =
            hatf::internal::formats::et::encode::stream_sizes(&fl, &t.text, 19).expect("sizes");
        let total: usize = sizes.iter().map(|s| s.2).sum();
        eprintln!("== {f}: {} bytes text, streams {total}", t.text.len());
        for (name, raw, z) in sizes {
            if raw > 0 {
                eprintln!("  {name:<14} {raw:>10} {z:>8}");
            }
        }
    }
}

#[test]
#[ignore = "prints measurements over the corpus"]
fn print_corpus_sizes() {
    let mut paths = et_support::trace_paths("et2-java");
    paths.extend(et_support::trace_paths("et3-merlin"));
    if std::env::var("ET_LARGE").is_ok() {
        paths.extend(et_support::trace_paths("et3-large"));
    }
    for p in paths {
        let t = et_support::read_trace(&p);
        let format: &dyn hatf::format::TraceFormat = if p.to_string_lossy().contains("et2-java") {
            &hatf::internal::formats::et::ET2
        } else {
            &hatf::internal::formats::et::ET3
        };
        let (bin, _) = et_support::encode(format, &t.text, "t", true, None).expect("encodes");
        let mut r = metatf::ContainerReader::new(&bin[..]).expect("container");
        let mut payload = 0usize;
        while let Some(b) = r.next_block().expect("block") {
            payload += b.sections.iter().map(|s| s.bytes.len()).sum::<usize>();
        }
        eprintln!(
            "SIZE {} {} {} {}",
            p.display(),
            t.text.len(),
            bin.len(),
            payload
        );
    }
}
