//! Records for the differential tests between the typed (generated) and universal codecs:
//! random records of any format, built from its DTD, as the universal writer takes them.

use metatf::dtd::{FieldDef, FieldKind, RecordDef};
use metatf::typed::{Format, TypedEvent, TypedReader, TypedWriter};
use metatf::{Codec, ContainerHeader, DynRecord, UniversalWriter, Value};

/// A hand-written format using every interpretation, value sections included, alone
/// ([`every::Every`], global records) and spanning two sections ([`every::Lives`]).
#[allow(missing_docs)]
pub mod every {
    use metatf::MetaTf;

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 4)]
    pub struct Sample {
        #[metatf(delta = 100, width = 1)]
        pub time: u64,
        #[metatf(base_offset = 4096, width = 2)]
        pub address: u64,
        #[metatf(stride(0, 16))]
        pub serial: u64,
        #[metatf(default = 7)]
        pub heap: u64,
        #[metatf(section_offset = 3, width = 1)]
        pub site: u64,
        #[metatf(section_stride(4, 1))]
        pub thread: u64,
        pub note: Vec<u8>,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 5, name = "mark")]
    pub struct Mark {
        #[metatf(interpretation = "delta 0", width = 2)]
        pub time: i64,
        pub level: u64,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(format = "every")]
    pub enum Every {
        Sample(Sample),
        Mark(Mark),
    }

    /// Tag 4 again, in another section: which record a tag names depends on the section.
    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 4)]
    pub struct Gone {
        #[metatf(delta = 0, width = 2)]
        pub address: u64,
        #[metatf(default = 1)]
        pub count: u64,
        #[metatf(section_offset = 3, width = 1)]
        pub site: u64,
        pub why: Vec<u8>,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(section = 1, name = "events")]
    pub enum Events {
        Sample(Sample),
        Mark(Mark),
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(section = 2, name = "dead")]
    pub enum Dead {
        Gone(Gone),
    }

    /// A format spanning two sections: one writer and one reader for traces that switch.
    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(sections, format = "lives")]
    pub enum Lives {
        Events(Events),
        Dead(Dead),
    }
}

/// Record types of format `T` as the schema describes them, group by group: (section, record
/// definitions). A format of one section has one group; the whole-DTD format has one per
/// section with records.
pub fn records_of<T: Format>() -> Vec<(Option<u8>, Vec<RecordDef>)> {
    let plan = T::plan().expect("plan");
    T::spec()
        .groups
        .iter()
        .map(|g| {
            let section = g.section.map(|s| s.1);
            let defs = g
                .records
                .iter()
                .map(|r| {
                    plan.schema()
                        .record_by_tag(section, r.tag)
                        .expect("the format's record is in its DTD")
                        .clone()
                })
                .collect();
            (section, defs)
        })
        .collect()
}

/// Picks a value: mostly small (fits the declared width), sometimes anything (forces metadata).
pub fn pick(seed: u64) -> u64 {
    match seed % 4 {
        0 => seed % 3,
        1 => seed % 300,
        2 => seed >> 20,
        _ => seed.rotate_left(17),
    }
}

/// Values for `fields`, drawn from `seeds`: integers by [`pick`], byte strings of up to 300
/// bytes with their lengths.
pub fn values(fields: &[FieldDef], seeds: &mut impl Iterator<Item = u64>, out: &mut Vec<Value>) {
    for f in fields {
        match &f.kind {
            FieldKind::Scalar { .. } => out.push(Value::Uint(pick(seeds.next().unwrap_or(7)))),
            FieldKind::Composite(parts) => {
                if let [_, FieldDef {
                    kind: FieldKind::Bytes { .. },
                    ..
                }] = parts.as_slice()
                {
                    let n = (seeds.next().unwrap_or(0) % 300) as usize;
                    let data: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
                    out.push(Value::Uint(n as u64));
                    out.push(Value::Bytes(data));
                } else {
                    values(parts, seeds, out);
                }
            }
            other => panic!("generated DTDs hold no {other:?}"),
        }
    }
}

/// Builds dynamic records of format `T` from (record choice, seed) pairs; some become comments.
/// Records of a section other than the current one follow a `section` record; each record's
/// `section` is the current one, as the universal reader reports it.
pub fn dyn_records<T: Format>(choices: &[(usize, u64)]) -> Vec<DynRecord> {
    let groups = records_of::<T>();
    let mut out = Vec::new();
    let mut current = None;
    for &(choice, seed) in choices {
        if choice % 11 == 10 {
            let text = format!("comment {seed}").into_bytes();
            out.push(DynRecord {
                section: current,
                name: "comment".into(),
                tag: 1,
                fields: vec![Value::Uint(text.len() as u64), Value::Bytes(text)],
            });
            continue;
        }
        let (section, defs) = &groups[(seed % groups.len() as u64) as usize];
        if section.is_some() && *section != current {
            out.push(DynRecord {
                section: None,
                name: "section".into(),
                tag: 2,
                fields: vec![Value::Uint(u64::from(section.unwrap_or(0)))],
            });
            current = *section;
        }
        let def = &defs[choice % defs.len()];
        let mut seeds = (0..).map(|i: u64| {
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(i as u32 * 7)
                ^ i
        });
        let mut fields = Vec::new();
        values(&def.fields, &mut seeds, &mut fields);
        out.push(DynRecord {
            section: current,
            name: def.name.clone(),
            tag: def.tag,
            fields,
        });
    }
    out
}

/// The container header the typed writer of `T` writes (the record layout, big-endian).
pub fn header<T: Format>() -> ContainerHeader {
    let plan = T::plan().expect("plan");
    ContainerHeader {
        dtd: plan.dtd().to_string(),
        format: plan.format().to_string(),
        properties: vec![],
    }
}

/// `records` with a metadata record after every `every`-th record of the format (not after
/// a built-in), changing the width of the first scalar field of that record's type to 1-8
/// bytes: metadata changing mid-stream, as a writer or a user may write it.
pub fn with_metadata<T: Format>(records: Vec<DynRecord>, every: usize) -> Vec<DynRecord> {
    let groups = records_of::<T>();
    let mut out = Vec::with_capacity(records.len() * 2);
    let mut seen = 0;
    for r in records {
        let def = groups
            .iter()
            .filter(|(section, _)| *section == r.section)
            .flat_map(|(_, defs)| defs)
            .find(|d| d.tag == r.tag && d.name == r.name)
            .cloned();
        let section = r.section;
        out.push(r);
        let Some(def) = def else { continue };
        seen += 1;
        let first_scalar = def.fields.iter().find_map(|f| match f.kind {
            FieldKind::Scalar { .. } => Some(f.position),
            _ => None,
        });
        if let (0, Some(position)) = (seen % every.max(1), first_scalar) {
            out.push(DynRecord {
                section,
                name: "metadata".into(),
                tag: 3,
                fields: vec![
                    Value::Uint(def.tag),
                    Value::Uint(u64::from(position)),
                    Value::Uint(0),
                    Value::Uint(1 + (seen as u64 % 8)),
                ],
            });
        }
    }
    out
}

/// Writes `records` with the universal writer under `header`, `block` records to a block.
pub fn universal_write<T: Format>(
    records: &[DynRecord],
    block: u64,
    header: &ContainerHeader,
    codec: Codec,
    level: i32,
) -> Vec<u8> {
    let schema = T::plan().expect("plan").schema().clone();
    let mut w = UniversalWriter::new(Vec::new(), schema, header, codec, level).expect("writer");
    w.set_block_records(block);
    for r in records {
        w.write(r).expect("universal write");
    }
    w.finish().expect("finish")
}

/// Every event of `bytes`, read by the typed reader of `T`.
pub fn typed_events<T: Format>(bytes: &[u8]) -> Vec<TypedEvent<T>> {
    let mut r = TypedReader::<T, _>::new(bytes).expect("typed reader");
    std::iter::from_fn(|| r.next_event().expect("typed read")).collect()
}

/// Writes `records` with `w`, `block` records to a block, reads the file back with the typed
/// reader and checks it gives `records`; returns the file.
pub fn typed_round_trip<T>(mut w: TypedWriter<T, Vec<u8>>, block: u64, records: &[T]) -> Vec<u8>
where
    T: Format + PartialEq + std::fmt::Debug,
{
    w.set_block_records(block);
    for r in records {
        w.write(r).expect("write");
    }
    let bytes = w.finish().expect("finish");
    let back: Vec<T> = TypedReader::new(&bytes[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("read");
    assert_eq!(back, records);
    bytes
}
