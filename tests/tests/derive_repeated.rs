//! Repeated fields (`count = "n"` on a `Vec` of integers, the DTD's `n * element`) against the
//! universal codec: same DTD, same bytes, read back by both readers.

use metatf::typed::{Format, TypedReader, TypedWriter};
use metatf::{Codec, ContainerHeader, DynRecord, MetaTf, UniversalReader, UniversalWriter, Value};

#[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
#[metatf(tag = 4)]
struct Stack {
    #[metatf(width = 1)]
    depth: u8,
    #[metatf(count = "depth", name = "frame", delta = 0, width = 2)]
    frames: Vec<u64>,
    #[metatf(width = 2)]
    thread: u16,
}

#[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
#[metatf(section = 1, name = "samples")]
enum Samples {
    Stack(Stack),
    #[metatf(tag = 5)]
    Marks {
        n: u32,
        // A field may not share the record's name in the DTD.
        #[metatf(count = "n", name = "mark")]
        marks: Vec<u8>,
    },
}

fn samples() -> Vec<Samples> {
    let mut out = Vec::new();
    for i in 0..500u64 {
        let depth = (i % 7) as u8;
        // Frames close to each other (2-byte deltas), now and then one far away (widening).
        let frames: Vec<u64> = (0..u64::from(depth))
            .map(|k| 0x40_0000 + i * 64 + k * 8 + if i % 50 == 3 { 1 << 40 } else { 0 })
            .collect();
        out.push(Samples::Stack(Stack {
            depth,
            frames,
            thread: (i % 3) as u16,
        }));
        if i % 5 == 0 {
            let marks: Vec<u8> = (0..(i % 4) as u8).collect();
            out.push(Samples::Marks {
                n: marks.len() as u32,
                marks,
            });
        }
    }
    out
}

fn to_dyn(r: &Samples) -> DynRecord {
    let u = Value::Uint;
    let (name, tag, fields) = match r {
        Samples::Stack(s) => (
            "stack",
            4,
            vec![
                u(u64::from(s.depth)),
                Value::List(s.frames.iter().map(|&f| vec![u(f)]).collect()),
                u(u64::from(s.thread)),
            ],
        ),
        Samples::Marks { n, marks } => (
            "marks",
            5,
            vec![
                u(u64::from(*n)),
                Value::List(marks.iter().map(|&m| vec![u(u64::from(m))]).collect()),
            ],
        ),
    };
    DynRecord {
        section: Some(1),
        name: name.into(),
        tag,
        fields,
    }
}

#[test]
fn the_dtd_says_n_times_element() {
    let dtd = Samples::dtd().expect("dtd");
    assert!(
        dtd.contains("stack : (tag, depth * frame, thread)"),
        "{dtd}"
    );
    assert!(dtd.contains("marks : (tag, n * mark)"), "{dtd}");
}

#[test]
fn repeated_fields_agree_with_the_universal_codec_byte_for_byte() {
    let records = samples();
    let mut w = TypedWriter::<Samples, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    w.set_block_records(64);
    for r in &records {
        w.write(r).expect("typed write");
    }
    let typed = w.finish().expect("finish");

    let plan = Samples::plan().expect("plan");
    let header = ContainerHeader {
        dtd: plan.dtd().to_string(),
        format: plan.format().to_string(),
        properties: vec![],
    };
    let mut u = UniversalWriter::new(Vec::new(), plan.schema().clone(), &header, Codec::None, 0)
        .expect("writer");
    u.set_block_records(64);
    u.write(&DynRecord {
        section: None,
        name: "section".into(),
        tag: 2,
        fields: vec![Value::Uint(1)],
    })
    .expect("section");
    let dyns: Vec<DynRecord> = records.iter().map(to_dyn).collect();
    for r in &dyns {
        u.write(r).expect("universal write");
    }
    let universal = u.finish().expect("finish");
    assert!(typed == universal, "typed and universal bytes differ");

    let back: Vec<Samples> = TypedReader::<Samples, _>::new(&typed[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("records");
    assert_eq!(back, records);
    let mut r = UniversalReader::new(&typed[..]).expect("universal reader");
    let mut read = Vec::new();
    let mut metadata = 0;
    while let Some(rec) = r.next_record().expect("record") {
        match rec.name.as_str() {
            "metadata" => metadata += 1,
            "section" => {}
            _ => read.push(rec),
        }
    }
    assert_eq!(read, dyns);
    assert!(metadata > 0, "the far frames widened `frame`");
}

#[test]
fn a_count_that_disagrees_with_the_elements_is_an_error() {
    let mut w = TypedWriter::<Samples, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    let err = w
        .write(&Samples::Stack(Stack {
            depth: 3,
            frames: vec![1, 2],
            thread: 0,
        }))
        .expect_err("count 3, two frames");
    assert!(err.to_string().contains("2 repetitions"), "{err}");
}

/// Regression: a repeated `delta` field whose third element does not fit after two that did.
/// The retry must start from the state before the record (the first two elements had moved
/// the field's previous value, inline; the misfit saved the whole state through the general
/// path); restoring the two journals in the wrong order decoded -16, 0, ... instead.
#[test]
fn a_misfit_late_in_a_repetition_restores_the_state_before_the_record() {
    let stack = Samples::Stack(Stack {
        depth: 3,
        frames: vec![0x4000, 0x4010, 0x1_0000_0000],
        thread: 7,
    });
    let mut w = TypedWriter::<Samples, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    w.write(&stack).expect("write");
    w.write(&stack).expect("write again");
    let bytes = w.finish().expect("finish");
    let back: Vec<Samples> = TypedReader::<Samples, _>::new(&bytes[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("records");
    assert_eq!(back, [stack.clone(), stack]);
}
