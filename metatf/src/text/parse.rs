//! Parsing the text form back into header lines, block marks and records.

use super::quote::unquote;
use crate::error::Error;
use crate::field::property_code;
use crate::universal::plan::{Builtin, Catalog, Leaf};
use crate::universal::{DynRecord, Value};

/// One line of the text form.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Blank,
    Format(String),
    Property(String, String),
    Block(u64),
    Record(DynRecord),
}

struct Cursor<'a> {
    s: &'a str,
    i: usize,
    line: u64,
}

/// A field as written, before it is matched with the schema.
enum Raw {
    Uint(u64),
    Bytes(Vec<u8>),
    List(Vec<Vec<(String, Raw, usize)>>),
}

impl<'a> Cursor<'a> {
    fn err(&self, at: usize, message: impl Into<String>) -> Error {
        Error::Text {
            line: self.line,
            column: self.s[..at.min(self.s.len())].chars().count() as u64 + 1,
            message: message.into(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }

    fn spaces(&mut self) {
        while self.rest().starts_with(' ') {
            self.i += 1;
        }
    }

    fn at_end(&mut self) -> bool {
        self.spaces();
        self.i >= self.s.len()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.rest().starts_with(c) {
            self.i += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// A run of characters other than space, `=`, brackets and braces.
    fn word(&mut self, what: &str) -> Result<&'a str, Error> {
        self.spaces();
        let start = self.i;
        let len = self
            .rest()
            .find([' ', '=', '[', ']', '{', '}', '"'])
            .unwrap_or(self.rest().len());
        if len == 0 {
            return Err(self.err(start, format!("expected {what}")));
        }
        self.i += len;
        Ok(&self.s[start..self.i])
    }

    fn number(&mut self, what: &str) -> Result<u64, Error> {
        let start = self.i;
        let w = self.word(what)?;
        let parsed = match w.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => w.parse::<u64>(),
        };
        parsed.map_err(|_| {
            self.err(
                start,
                format!("`{w}` is not {what} (an unsigned 64-bit integer)"),
            )
        })
    }

    fn string(&mut self) -> Result<Vec<u8>, Error> {
        self.spaces();
        match unquote(self.rest()) {
            Ok((bytes, used)) => {
                self.i += used;
                Ok(bytes)
            }
            Err((message, at)) => Err(self.err(self.i + at, message)),
        }
    }

    fn utf8_string(&mut self) -> Result<String, Error> {
        let at = self.i;
        String::from_utf8(self.string()?).map_err(|_| self.err(at, "the string is not UTF-8"))
    }

    fn value(&mut self) -> Result<Raw, Error> {
        self.spaces();
        if self.rest().starts_with('"') {
            return Ok(Raw::Bytes(self.string()?));
        }
        if self.eat('[') {
            let mut items = Vec::new();
            loop {
                self.spaces();
                if self.eat(']') {
                    return Ok(Raw::List(items));
                }
                if !self.eat('{') {
                    return Err(self.err(self.i, "expected `{` starting a repetition or `]`"));
                }
                items.push(self.fields(Some('}'))?);
            }
        }
        if self.rest().starts_with('-') {
            // A negative number is its 64-bit two's complement, as a line pattern's `i` stores it.
            let start = self.i;
            let w = self.word("a number")?;
            return match w.parse::<i64>() {
                Ok(v) => Ok(Raw::Uint(v as u64)),
                Err(_) => Err(self.err(start, format!("`{w}` is not a number (a 64-bit integer)"))),
            };
        }
        Ok(Raw::Uint(self.number("a number")?))
    }

    /// `name=value` pairs up to `close` (or the end of the line).
    fn fields(&mut self, close: Option<char>) -> Result<Vec<(String, Raw, usize)>, Error> {
        let mut out = Vec::new();
        loop {
            self.spaces();
            match close {
                Some(c) if self.eat(c) => return Ok(out),
                None if self.at_end() => return Ok(out),
                _ => {}
            }
            if self.i >= self.s.len() {
                return Err(self.err(self.i, "unterminated repetition: expected `}`"));
            }
            let at = self.i;
            let name = self.word("a field name")?.to_string();
            if !self.eat('=') {
                return Err(self.err(self.i, format!("expected `=` after field name `{name}`")));
            }
            let v = self.value()?;
            out.push((name, v, at));
        }
    }
}

/// Parses one line (without its newline) in `section`, resolving names through `catalog`.
pub(crate) fn parse_line(
    text: &str,
    line: u64,
    catalog: &Catalog,
    section: Option<u8>,
) -> Result<Line, Error> {
    let mut c = Cursor {
        s: text,
        i: 0,
        line,
    };
    if c.at_end() {
        return Ok(Line::Blank);
    }
    if c.eat('#') {
        let kw = c.word("a directive")?;
        let l = match kw {
            "format" => Line::Format(c.utf8_string()?),
            "property" => {
                let k = c.utf8_string()?;
                Line::Property(k, c.utf8_string()?)
            }
            "block" => Line::Block(c.number("a block number")?),
            other => {
                return Err(c.err(
                    1,
                    format!("unknown directive `#{other}` (format, property, block)"),
                ))
            }
        };
        if !c.at_end() {
            return Err(c.err(c.i, "unexpected text after the directive"));
        }
        return Ok(l);
    }
    let name = c.word("a record name")?;
    let plan = catalog
        .by_name(section, name)
        .ok_or_else(|| c.err(0, format!("no record `{name}` in {}", where_(section))))?;
    let fields = if plan.builtin == Builtin::Metadata {
        metadata(&mut c, catalog, section)?
    } else {
        let raw = c.fields(None)?;
        let mut out = Vec::with_capacity(raw.len());
        let at = c.i;
        bind(&c, &plan.leaves, raw, &mut out, at)?;
        out
    };
    Ok(Line::Record(DynRecord {
        section,
        name: plan.name.clone(),
        tag: plan.tag,
        fields,
    }))
}

fn where_(section: Option<u8>) -> String {
    match section {
        None => "the global section".into(),
        Some(n) => format!("section {n}"),
    }
}

/// Matches written fields with the schema's leaves, in order and by name.
fn bind(
    c: &Cursor<'_>,
    leaves: &[Leaf],
    raw: Vec<(String, Raw, usize)>,
    out: &mut Vec<Value>,
    end: usize,
) -> Result<(), Error> {
    let mut raw = raw.into_iter().peekable();
    for (k, leaf) in leaves.iter().enumerate() {
        if let Some(len) = implied_length(leaves, k, raw.peek()) {
            out.push(Value::Uint(len));
            continue;
        }
        let Some((name, value, at)) = raw.next() else {
            return Err(c.err(end, format!("missing field `{}`", leaf.name())));
        };
        if name != leaf.name() {
            return Err(c.err(
                at,
                format!("expected field `{}`, found `{name}`", leaf.name()),
            ));
        }
        out.push(match (leaf, value) {
            (Leaf::Scalar { .. }, Raw::Uint(v)) => Value::Uint(v),
            (Leaf::Bytes { .. }, Raw::Bytes(b)) => Value::Bytes(b),
            (Leaf::Repeated { element, .. }, Raw::List(items)) => {
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    let mut v = Vec::with_capacity(element.len());
                    bind(c, element, item, &mut v, at)?;
                    list.push(v);
                }
                Value::List(list)
            }
            (Leaf::Scalar { .. }, _) => {
                return Err(c.err(at, format!("field `{name}` takes a number")))
            }
            (Leaf::Bytes { .. }, _) => {
                return Err(c.err(at, format!("field `{name}` takes a quoted string")))
            }
            (Leaf::Repeated { .. }, _) => {
                return Err(c.err(at, format!("field `{name}` takes a list `[{{...}} ...]`")))
            }
        });
    }
    if let Some((name, _, at)) = raw.next() {
        return Err(c.err(at, format!("unexpected field `{name}`")));
    }
    Ok(())
}

/// The length of the byte string after leaf `k` when leaf `k` is that string's length field
/// and the text leaves it out (`site="abc"` for `siteLength=3 site="abc"`): the string says it.
fn implied_length(leaves: &[Leaf], k: usize, next: Option<&(String, Raw, usize)>) -> Option<u64> {
    let Leaf::Scalar { position, name, .. } = &leaves[k] else {
        return None;
    };
    let Some(Leaf::Bytes {
        name: bytes,
        length_position,
    }) = leaves.get(k + 1)
    else {
        return None;
    };
    match next {
        Some((given, Raw::Bytes(b), _))
            if length_position == position && given == bytes && given != name =>
        {
            u64::try_from(b.len()).ok()
        }
        _ => None,
    }
}

/// `metadata RECORD FIELD@POSITION PROPERTY VALUE...`
fn metadata(
    c: &mut Cursor<'_>,
    catalog: &Catalog,
    section: Option<u8>,
) -> Result<Vec<Value>, Error> {
    c.spaces();
    let at = c.i;
    let record = c.word("the record to change")?;
    let target = catalog
        .by_name(section, record)
        .ok_or_else(|| c.err(at, format!("no record `{record}` in {}", where_(section))))?;
    c.spaces();
    let at = c.i;
    let field = c.word("FIELD@POSITION")?;
    let (name, pos) = field
        .split_once('@')
        .ok_or_else(|| c.err(at, "expected FIELD@POSITION, e.g. size@1"))?;
    let position: u16 = pos
        .parse()
        .map_err(|_| c.err(at, format!("`{pos}` is not a field position")))?;
    match target.scalar(position) {
        Some(l) if l.name() == name => {}
        Some(l) => {
            return Err(c.err(
                at,
                format!(
                    "field {position} of {record} is `{}`, not `{name}`",
                    l.name()
                ),
            ))
        }
        None => {
            return Err(c.err(
                at,
                format!("{record} has no scalar field at position {position}"),
            ))
        }
    }
    c.spaces();
    let at = c.i;
    let prop = c.word("a property")?;
    let code = property_code(prop).ok_or_else(|| {
        c.err(at, format!("unknown property `{prop}` (width, none, baseOffset, delta, default, sectionOffset, stride, sectionStride)"))
    })?;
    let mut fields = vec![
        Value::Uint(target.tag),
        Value::Uint(u64::from(position)),
        Value::Uint(u64::from(code)),
    ];
    while !c.at_end() {
        fields.push(Value::Uint(c.number("a property value")?));
    }
    Ok(fields)
}
