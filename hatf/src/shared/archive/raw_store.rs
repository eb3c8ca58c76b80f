//! Storing an already compressed trace byte for byte, for inputs whose compressor cannot be
//! reproduced (so re-compressing the decoded text would not give the file back).

use std::io::{Read, Write};

use metatf::container::{Codec, ContainerReader, ContainerWriter, SectionData};

use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError};
use crate::shared::container::blocks::{self, container_error, write_error};

/// Section holding a chunk of the original bytes.
pub const RAW: u8 = 32;
/// Original bytes per block (bounds memory).
const CHUNK: usize = 16 << 20;

/// Copies `input` into a container of `format`, in 16 MiB blocks stored without compression.
pub fn encode(
    format: &str,
    dtd: &str,
    reason: &str,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    // The sections hold the input file's bytes, not records: no universal reader may
    // interpret them.
    let more = [
        ("deflate".to_string(), "original-bytes".to_string()),
        ("deflate-reason".to_string(), reason.to_string()),
    ];
    let header = blocks::auto_header(dtd, format, "original-bytes", more);
    let mut w = ContainerWriter::new(output, &header).map_err(|e| container_error(file, e))?;
    let mut report = EncodeReport::default();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let mut n = 0;
        while n < CHUNK {
            let k = input.read(&mut buf[n..]).map_err(|e| FormatError {
                file: file.to_string(),
                position: format!("byte {}", report.input_bytes + n as u64),
                message: format!("cannot read the input: {e}"),
            })?;
            if k == 0 {
                break;
            }
            n += k;
        }
        if n == 0 {
            break;
        }
        let section = SectionData {
            number: RAW,
            element_width: 1,
            codec: Codec::None,
            level: 0,
            bytes: &buf[..n],
        };
        w.write_block(1, &[section])
            .map_err(|e| container_error(file, e))?;
        report.input_bytes += n as u64;
        report.records += 1;
    }
    w.finish().map_err(|e| container_error(file, e))?;
    Ok(report)
}

/// Writes the stored bytes back; returns the number of blocks.
pub fn decode(
    format: &str,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut r = blocks::open(input, format, file)?;
    write_blocks(&mut r, output, file)
}

/// Writes the stored bytes of every remaining block of `r` (a container whose header says its
/// sections hold the original bytes) to `output`; returns the number of blocks. The archive
/// formats call it when their header says the archive was stored as is.
pub fn write_blocks<R: Read>(
    r: &mut ContainerReader<R>,
    output: &mut dyn Write,
    file: &str,
) -> Result<u64, FormatError> {
    let mut n = 0;
    while let Some(b) = r.next_block().map_err(|e| container_error(file, e))? {
        output
            .write_all(blocks::section(&b, RAW))
            .map_err(|e| write_error(file, e))?;
        n += 1;
    }
    output.flush().map_err(|e| write_error(file, e))?;
    Ok(n)
}
