//! Records of a DTD with deeply nested repetition (`n0 * (n1 * (... x))`), read from a stream
//! whose every count is 1: the reader must answer (records or an error) without overflowing
//! the stack, on a thread with a small stack.

use metatf::container::{Codec, ContainerHeader, ContainerWriter, SectionData};
use metatf::UniversalReader;

fn nested_repetition(depth: usize) -> String {
    let mut fields = String::from("x");
    let mut props = String::from("x.width = 1; x.interpretation = none;");
    for i in 0..depth {
        fields = format!("n{i} * ({fields})");
        props.push_str(&format!(" n{i}.width = 1; n{i}.interpretation = none;"));
    }
    format!("{props}\nsection s 1 {{ r : (tag, {fields}) {{ tag.value = 4; }} }}\n")
}

/// Reads records of `depth` nested groups on a 1 MiB stack; `Some(records)` when the DTD is
/// accepted (None when the container refuses it).
fn read_nested(depth: usize) -> Option<usize> {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let dtd = nested_repetition(depth);
            let header = ContainerHeader {
                dtd,
                format: "deep".into(),
                properties: vec![],
            };
            let mut w = ContainerWriter::new(Vec::new(), &header).ok()?;
            // section 1, then one record: tag 4, every count 1, then x.
            let mut stream = vec![2, 1, 4];
            stream.extend(std::iter::repeat_n(1u8, depth));
            stream.push(7);
            let sections = [SectionData {
                number: 0,
                element_width: 0,
                codec: Codec::None,
                level: 0,
                bytes: &stream,
            }];
            w.write_block(2, &sections).ok()?;
            let bytes = w.finish().ok()?;
            let mut r = UniversalReader::new(&bytes[..]).ok()?;
            let mut n = 0;
            while let Ok(Some(_)) = r.next_record() {
                n += 1;
            }
            Some(n)
        })
        .expect("thread starts")
        .join()
        .expect("no panic")
}

#[test]
fn shallow_nesting_reads_both_records() {
    assert_eq!(read_nested(3), Some(2));
}

#[test]
fn deep_nesting_is_answered_without_stack_overflow() {
    for depth in [100, 1_000, 5_000] {
        let _ = read_nested(depth);
    }
}
