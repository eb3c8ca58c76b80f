//! A trace written with a DTD of its own — two sections of records, the format's records named
//! differently — read with code derived for one of its sections. The typed reader accepts it
//! because the records it reads are coded alike; it follows the trace into the other section
//! and back, and a DTD that codes a field differently is refused with the field named.
//! Field metadata is written by name.
//!
//! `cargo run -p metatf --example larger_dtd`

use metatf::dtd::Interpretation;
use metatf::field::Change;
use metatf::typed::{TypedEvent, TypedReader, TypedWriter};
use metatf::{Codec, DynRecord, MetaTf, UniversalWriter, Value};

/// An allocation: its size.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(tag = 4)]
struct Alloc {
    size: u32,
}

/// The records of section 1.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(section = 1, name = "heap")]
enum Heap {
    Alloc(Alloc),
}

/// The user's DTD: `malloc` is `Alloc` under another name, and section 2 holds records the
/// derived code does not know.
const DTD: &str = "tag.width = 1;
amount.width = 4;
amount.interpretation = none;
section heap 1 {
    malloc : (tag, amount) { tag.value = 4; }
}
section dead 2 {
    gone : (tag, amount) { tag.value = 4; }
}
";

fn record(name: &str, tag: u64, fields: Vec<Value>) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    }
}

fn main() -> Result<(), metatf::Error> {
    // One source for the DTD: the writer parses the text it embeds.
    let mut w = UniversalWriter::from_dtd(Vec::new(), DTD, "heap", vec![], Codec::None, 0)?;
    for r in [
        record("section", 2, vec![Value::Uint(1)]),
        record("malloc", 4, vec![Value::Uint(16)]),
        record("section", 2, vec![Value::Uint(2)]),
        record(
            "comment",
            1,
            vec![Value::Uint(3), Value::Bytes(b"gc!".to_vec())],
        ),
        record("section", 2, vec![Value::Uint(1)]),
        record("malloc", 4, vec![Value::Uint(32)]),
    ] {
        w.write(&r)?;
    }
    let bytes = w.finish()?;

    let mut reader = TypedReader::<Heap, _>::new(&bytes[..])?;
    while let Some(event) = reader.next_event()? {
        match event {
            TypedEvent::Record(Heap::Alloc(a)) => println!("alloc of {} bytes", a.size),
            TypedEvent::Section(n) => println!("now in section {n}"),
            TypedEvent::Comment(c) => println!("comment {:?}", String::from_utf8_lossy(&c)),
            TypedEvent::Metadata { .. } => {}
        }
    }

    // A DTD that stores `amount` in 2 bytes codes `Alloc` differently: refused, field named.
    let narrow = DTD.replace("amount.width = 4;", "amount.width = 2;");
    let w = UniversalWriter::from_dtd(Vec::new(), &narrow, "heap", vec![], Codec::None, 0)?;
    let other = w.finish()?;
    match TypedReader::<Heap, _>::new(&other[..]) {
        Ok(_) => unreachable!("the layouts differ"),
        Err(e) => println!("refused: {e}"),
    }

    // Metadata by field name: `size` of `alloc` becomes a delta from the previous size.
    let mut t = TypedWriter::<Heap, _>::new(Vec::new(), Codec::None, 0)?;
    t.write_section(1)?;
    t.write_field_metadata(
        "alloc",
        "size",
        Change::Interpretation(Interpretation::Delta(0)),
    )?;
    t.write(&Heap::Alloc(Alloc { size: 100 }))?;
    t.write(&Heap::Alloc(Alloc { size: 104 }))?;
    let trace = t.finish()?;
    let sizes: Vec<Heap> = TypedReader::<Heap, _>::new(&trace[..])?.collect::<Result<_, _>>()?;
    println!("read back {sizes:?}");
    Ok(())
}
