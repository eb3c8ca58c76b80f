//! Text trace → container, through the DTD's line patterns and the model engine.

use std::io::{BufRead, Write};

use metatf_dtd::lines::{LineSpec, Unmatched};

use super::matcher::Matcher;
use super::printer::print;
use super::split::Splitter;
use super::{LineEnd, LINES_FORMAT, MAX_LINE, PROPERTY_LINE_END};
use crate::container::{Codec, ContainerHeader};
use crate::error::Error;
use crate::model::{ENGINE_MODEL, PROPERTY_ENGINE, PROPERTY_STAGE, STAGE_BYTES, STAGE_RANGE};
use crate::universal::{DynRecord, UniversalWriter, Value};

/// How [`encode_lines`] treats lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineOptions {
    /// Refuse the first line that is not exactly some record's pattern (instead of keeping it
    /// as the DTD's `unmatched` says); line endings are still kept as they are.
    pub strict: bool,
    /// Lay out the records with the model engine (else the paper's fixed-width stream
    /// compressed with `codec`).
    pub model: bool,
    /// How the model engine stores its symbols, when `model` is true.
    pub stage: crate::model::Stage,
    /// Section codec when `model` is false.
    pub codec: Codec,
    /// Codec level when `model` is false.
    pub level: i32,
}

impl Default for LineOptions {
    fn default() -> Self {
        LineOptions {
            strict: false,
            model: true,
            stage: crate::model::Stage::Smallest,
            codec: Codec::Zstd,
            level: 3,
        }
    }
}

/// What [`encode_lines`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineReport {
    /// Lines read (a last line without a line ending counts).
    pub lines: u64,
    /// Lines stored as records.
    pub records: u64,
    /// Lines (or pieces of over-long lines) kept verbatim.
    pub verbatim: u64,
    /// Bytes of text read.
    pub bytes: u64,
}

/// Encodes a line-based text trace with the line patterns of the DTD `dtd` (named `dtd_name`
/// in errors) into a container that carries the DTD; [`super::decode_lines`] gives back the
/// same bytes. Lines no pattern spells exactly are kept verbatim (as `comment` records) unless
/// `options.strict`.
pub fn encode_lines(
    dtd: &str,
    dtd_name: &str,
    text: impl BufRead,
    out: impl Write,
    options: LineOptions,
) -> Result<LineReport, Error> {
    let (schema, spec) =
        metatf_dtd::parse_schema_with_lines(dtd, dtd_name).map_err(|d| Error::Schema {
            message: d.to_string(),
        })?;
    if spec.is_empty() {
        return Err(Error::Schema {
            message: format!("{dtd_name}: no record has a line pattern (`line = ...;`), so no line of the text can become a record"),
        });
    }
    let mut lines = Splitter::new(text, MAX_LINE);
    let mut buf = Vec::new();
    // The first line decides the usual line ending (stored in the header).
    let first = lines.next(&mut buf).map_err(|e| read_error(e, 0))?;
    let end = if buf.ends_with(b"\r\n") {
        LineEnd::CrLf
    } else {
        LineEnd::Lf
    };
    let mut properties = vec![(PROPERTY_LINE_END.to_string(), end.name().to_string())];
    if options.model {
        properties.push((PROPERTY_ENGINE.to_string(), ENGINE_MODEL.to_string()));
        let stage = match options.stage {
            crate::model::Stage::Smallest => None,
            crate::model::Stage::Range => Some(STAGE_RANGE),
            crate::model::Stage::Bytes => Some(STAGE_BYTES),
        };
        if let Some(stage) = stage {
            properties.push((PROPERTY_STAGE.to_string(), stage.to_string()));
        }
    }
    let header = ContainerHeader {
        dtd: dtd.to_string(),
        format: LINES_FORMAT.to_string(),
        properties,
    };
    let mut w = UniversalWriter::new(out, schema, &header, options.codec, options.level)?;
    if options.model {
        // A short trace's one modelled block (stored, the engine being its own entropy stage)
        // then drops about 40 bytes of framing: block header and section checksums, index and
        // trailer.
        w.prefer_compact();
    }
    let mut enc = Encoder::new(&spec, end, options.strict);
    let mut piece = first;
    while let Some(p) = piece {
        enc.piece(&buf, p, &mut w)?;
        piece = lines
            .next(&mut buf)
            .map_err(|e| read_error(e, enc.report.bytes))?;
    }
    let mut o = w.finish()?;
    o.flush().map_err(|e| Error::Output { source: e })?;
    Ok(enc.report)
}

fn read_error(e: std::io::Error, offset: u64) -> Error {
    Error::Io { offset, source: e }
}

/// The per-line work of [`encode_lines`], with its reused buffers.
struct Encoder {
    matcher: Matcher,
    end: LineEnd,
    /// One reusable record per pattern (name and tag fixed, values refilled).
    records: Vec<DynRecord>,
    /// The record a line no pattern spells is kept in (the built-in `comment` by default).
    kept: DynRecord,
    /// Why a line no pattern spells is refused, when it is.
    refuse: Option<&'static str>,
    values: Vec<Value>,
    printed: Vec<u8>,
    section: Option<u8>,
    line: u64,
    report: LineReport,
}

impl Encoder {
    fn new(spec: &LineSpec, end: LineEnd, strict: bool) -> Self {
        let matcher = Matcher::new(spec);
        let kept = match &spec.unmatched {
            Unmatched::Record { name, section, tag } => DynRecord {
                section: *section,
                name: name.clone(),
                tag: *tag,
                fields: Vec::new(),
            },
            Unmatched::Verbatim | Unmatched::Error => DynRecord {
                section: None,
                name: "comment".into(),
                tag: COMMENT_TAG,
                fields: Vec::new(),
            },
        };
        let refuse = if strict {
            Some("--strict")
        } else if spec.unmatched == Unmatched::Error {
            Some("the DTD's `unmatched = error;`")
        } else {
            None
        };
        let records = matcher
            .records()
            .iter()
            .map(|r| DynRecord {
                section: r.section,
                name: r.name.clone(),
                tag: r.tag,
                fields: Vec::new(),
            })
            .collect();
        Encoder {
            matcher,
            end,
            kept,
            refuse,
            records,
            values: Vec::new(),
            printed: Vec::new(),
            section: None,
            line: 0,
            report: LineReport::default(),
        }
    }

    fn piece<W: Write>(
        &mut self,
        raw: &[u8],
        p: super::split::Piece,
        w: &mut UniversalWriter<W>,
    ) -> Result<(), Error> {
        self.report.bytes += raw.len() as u64;
        if !p.continues {
            self.line += 1;
            self.report.lines += 1;
        }
        let whole = !p.continues && p.ends_line;
        let content = raw.strip_suffix(self.end.bytes()).filter(|_| whole);
        if let Some(content) = content {
            // The first record whose pattern matches and whose printing gives the line back:
            // a pattern may match a line it spells differently (a right-aligned number with
            // other spaces, leading zeros) that a later pattern spells exactly.
            let mut respelled = None;
            let mut next = 0;
            while let Some(i) = self.matcher.find_from(content, &mut self.values, next) {
                self.printed.clear();
                let rec = &self.matcher.records()[i];
                let same =
                    print(rec, &self.values, &mut self.printed).is_ok() && self.printed == content;
                if same {
                    self.enter(rec.section, w)?;
                    let r = &mut self.records[i];
                    std::mem::swap(&mut r.fields, &mut self.values);
                    let written = w.write(r);
                    std::mem::swap(&mut r.fields, &mut self.values);
                    written?;
                    self.report.records += 1;
                    return Ok(());
                }
                respelled.get_or_insert(i);
                next = i + 1;
            }
            if let Some(why) = self.refuse {
                if let Some(i) = respelled {
                    return Err(Error::Text {
                        line: self.line,
                        column: 1,
                        message: format!(
                            "the line matches record `{}` but is spelled differently from its pattern (leading zeros, letter case or sign); refused because of {why}",
                            self.matcher.records()[i].name
                        ),
                    });
                }
                let miss = self.matcher.explain(content);
                return Err(Error::Text {
                    line: self.line,
                    column: miss.at as u64 + 1,
                    message: format!(
                        "no line pattern matches; expected {} at byte {} (refused because of {why})",
                        miss.expected,
                        miss.at + 1
                    ),
                });
            }
        }
        self.report.verbatim += 1;
        self.enter(self.kept.section, w)?;
        // The kept record's buffers are reused from line to line.
        let mut bytes = match self.kept.fields.pop() {
            Some(Value::Bytes(b)) => b,
            _ => Vec::new(),
        };
        bytes.clear();
        bytes.extend_from_slice(raw);
        self.kept.fields.clear();
        self.kept.fields.push(Value::Uint(raw.len() as u64));
        self.kept.fields.push(Value::Bytes(bytes));
        w.write(&self.kept)
    }

    /// Writes a `section` record when a record of another section than the current one follows.
    fn enter<W: Write>(
        &mut self,
        section: Option<u8>,
        w: &mut UniversalWriter<W>,
    ) -> Result<(), Error> {
        if section.is_some() && section != self.section {
            self.section = section;
            w.write(&DynRecord {
                section: None,
                name: "section".into(),
                tag: SECTION_TAG,
                fields: vec![Value::Uint(u64::from(section.unwrap_or(0)))],
            })?;
        }
        Ok(())
    }
}

/// Tags of the built-in records (fixed by the language).
const COMMENT_TAG: u64 = 1;
const SECTION_TAG: u64 = 2;
