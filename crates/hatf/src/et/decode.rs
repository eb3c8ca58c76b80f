//! Container → text trace: replays each block's model over its streams and prints the lines.

use std::io::{Read, Write};

use metatf::container::ContainerReader;

use super::encode::STREAMS_SECTION;
use super::line::render;
use super::model::{code, Model, UOrder};
use super::names;
use super::streams::{id, StreamReader};
use crate::format::{DecodeOptions, FormatError};

/// Format ids this decoder accepts.
pub const FORMATS: [&str; 2] = ["et2", "et3"];

/// Decodes a container written by [`super::encode::encode`]; returns the number of lines.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.clone();
    let fail = |position: String, message: String| FormatError {
        file: file.clone(),
        position,
        message,
    };
    let mut reader = ContainerReader::new(input).map_err(|e| fail(String::new(), e.to_string()))?;
    let format = reader.header().format.clone();
    if !FORMATS.contains(&format.as_str()) {
        return Err(fail(
            String::new(),
            format!("this file holds format `{format}`, not an Elephant Tracks trace"),
        ));
    }
    let mut lines = 0u64;
    let mut out = Vec::new();
    loop {
        let at = reader.position();
        let block = match reader.next_block() {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => return Err(fail(String::new(), e.to_string())),
        };
        let bfail = |msg: String| {
            fail(
                format!("byte {at}"),
                format!("block {}: {msg}", block.index),
            )
        };
        if block.index == 0 {
            write_names(&block, options).map_err(&bfail)?;
        }
        let section = block
            .section(STREAMS_SECTION)
            .ok_or_else(|| bfail("has no stream section".to_string()))?;
        let (&order, packed) = section
            .bytes
            .split_first()
            .ok_or_else(|| bfail("stream section is empty".to_string()))?;
        let order = UOrder::from_code(order)
            .ok_or_else(|| bfail(format!("unknown U field order {order}")))?;
        let mut streams = StreamReader::unpack(packed).map_err(|e| bfail(e.0))?;
        let mut model = Model::new(order);
        out.clear();
        for k in 0..block.record_count {
            let rfail = |msg: String| {
                bfail(format!(
                    "line {} (record {k} of the block): {msg}",
                    block.first_record.saturating_add(k).saturating_add(1)
                ))
            };
            let c = streams.byte(id::KIND).map_err(|e| rfail(e.0))?;
            match c {
                code::BLANK => out.push(b'\n'),
                code::COMMENT | code::SPELLED | code::BAD => {
                    out.extend(streams.text(id::TEXT).map_err(|e| rfail(e.0))?);
                    out.push(b'\n');
                }
                code::UNTERMINATED => out.extend(streams.text(id::TEXT).map_err(|e| rfail(e.0))?),
                c => {
                    let r = model.decode(c, &mut streams).map_err(|e| rfail(e.0))?;
                    render(&r, &mut out);
                    out.push(b'\n');
                }
            }
        }
        let left = streams.leftovers();
        if !left.is_empty() {
            return Err(bfail(format!(
                "bytes left over in streams {}",
                left.join(", ")
            )));
        }
        output
            .write_all(&out)
            .map_err(|e| fail(String::new(), format!("cannot write the text trace: {e}")))?;
        lines += block.record_count;
    }
    output
        .flush()
        .map_err(|e| fail(String::new(), format!("cannot write the text trace: {e}")))?;
    Ok(lines)
}

fn write_names(block: &metatf::container::Block, options: &DecodeOptions) -> Result<(), String> {
    let Some(index) = block.section(names::INDEX_SECTION) else {
        return Ok(());
    };
    let list = names::parse_index(&index.bytes)?;
    let Some(dir) = &options.names_dir else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (k, name) in list.iter().enumerate() {
        let number = u8::try_from(k + 1 + names::INDEX_SECTION as usize)
            .map_err(|_| "too many name files".to_string())?;
        let s = block
            .section(number)
            .ok_or_else(|| format!("name file `{name}` (section {number}) is missing"))?;
        let path = dir.join(name);
        std::fs::write(&path, &s.bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
