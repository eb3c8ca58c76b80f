//! The canonical formatter.
//!
//! Works on the syntax tree plus the comments found by [`crate::source::scan`]. Statements
//! ("anchors": properties, record and section headers, closing braces) are printed one per line;
//! each comment is printed either at the end of the line of the anchor it followed on the same
//! line, or on its own line before the next anchor. Blank lines of the source are kept (at most
//! one in a row) and one is always put between records and sections. Because every decision
//! depends only on what the output itself contains, formatting twice gives the same text.

use crate::ast::{
    Body, Dtd, Field, Item, LinePart, LinePattern, Property, Record, SectionDecl, UnmatchedDecl,
    Value,
};
use crate::source::{scan, Comment};

const INDENT: &str = "    ";

/// Formats a parsed DTD; `text` is the source it was parsed from.
pub fn format(dtd: &Dtd, text: &str) -> String {
    let mut f = Formatter {
        text,
        comments: scan(text).comments,
        next: 0,
        out: String::new(),
        prev_end: None,
        want_blank: false,
    };
    f.items(&dtd.items, 0);
    f.leading(dtd.end, 0);
    while f.out.ends_with("\n\n") {
        f.out.pop();
    }
    f.out
}

struct Formatter<'t> {
    text: &'t str,
    comments: Vec<Comment>,
    /// First comment not yet printed.
    next: usize,
    out: String,
    /// Source offset where the last printed thing ended; `None` at the start of a block.
    prev_end: Option<usize>,
    /// Force a blank line before the next printed line (between records and sections).
    want_blank: bool,
}

impl Formatter<'_> {
    fn items(&mut self, items: &[Item], depth: usize) {
        let mut previous_was_block = false;
        for (i, item) in items.iter().enumerate() {
            let is_block = !matches!(item, Item::Property(_) | Item::Unmatched(_));
            // One blank line around every record and section.
            self.want_blank = i > 0 && (is_block || previous_was_block);
            match item {
                Item::Property(p) => self.property(p, depth),
                Item::Record(r) => self.record(r, depth),
                Item::Section(s) => self.section(s, depth),
                Item::Unmatched(u) => self.unmatched(u, depth),
            }
            previous_was_block = is_block;
        }
    }

    /// Starts a new output line at `start` (a source offset), with a blank line first when
    /// wanted or when the source has one.
    fn line(&mut self, start: usize, depth: usize) {
        let blank_in_source = self
            .prev_end
            .is_some_and(|prev| prev < start && self.text[prev..start].matches('\n').count() >= 2);
        if self.prev_end.is_some() && (self.want_blank || blank_in_source) && !self.out.is_empty() {
            self.out.push('\n');
        }
        self.want_blank = false;
        for _ in 0..depth {
            self.out.push_str(INDENT);
        }
    }

    /// Prints every pending comment that starts before `pos`, each on its own line(s).
    fn leading(&mut self, pos: usize, depth: usize) {
        while let Some(c) = self.comments.get(self.next) {
            if c.start >= pos {
                break;
            }
            let (start, end) = (c.start, c.end);
            self.line(start, depth);
            self.out.push_str(self.text[start..end].trim_end());
            self.out.push('\n');
            self.prev_end = Some(end);
            self.next += 1;
        }
    }

    /// Appends comments that directly follow `end` on the same source line (nothing but spaces
    /// between), then ends the line.
    fn trailing(&mut self, end: usize) {
        let mut last = end;
        while let Some(c) = self.comments.get(self.next) {
            let between = self.text.get(last..c.start).unwrap_or("\n");
            if c.start < last || !between.trim().is_empty() || between.contains('\n') {
                break;
            }
            let (start, cend) = (c.start, c.end);
            self.out.push(' ');
            self.out.push_str(self.text[start..cend].trim_end());
            self.next += 1;
            last = cend;
        }
        self.out.push('\n');
        self.prev_end = Some(last);
    }

    fn property(&mut self, p: &Property, depth: usize) {
        self.leading(p.span.start, depth);
        self.line(p.span.start, depth);
        self.out.push_str(&property_text(p));
        self.trailing(p.span.end);
    }

    fn unmatched(&mut self, u: &UnmatchedDecl, depth: usize) {
        self.leading(u.span.start, depth);
        self.line(u.span.start, depth);
        self.out.push_str("unmatched = ");
        self.out.push_str(&u.target.text);
        self.out.push(';');
        self.trailing(u.span.end);
    }

    fn record(&mut self, r: &Record, depth: usize) {
        self.leading(r.header.start, depth);
        self.line(r.header.start, depth);
        self.out.push_str(&r.name.text);
        self.out.push_str(" : ");
        self.out.push_str(&field_text(&r.field));
        let Some(body) = &r.body else {
            self.trailing(r.header.end);
            return;
        };
        if body.properties.is_empty()
            && body.lines.is_empty()
            && !self.comment_before(body.close.start)
        {
            self.out.push_str(" {}");
            self.trailing(body.close.end);
            return;
        }
        self.out.push_str(" {");
        self.trailing(body.open.end);
        self.body(body, depth + 1);
        self.close(body.close.start, body.close.end, depth);
    }

    fn body(&mut self, body: &Body, depth: usize) {
        self.prev_end = None;
        // Properties and line patterns keep their source order.
        let mut lines = body.lines.iter().peekable();
        for p in &body.properties {
            while let Some(l) = lines.next_if(|l| l.span.start < p.span.start) {
                self.line_pattern(l, depth);
            }
            self.property(p, depth);
        }
        for l in lines {
            self.line_pattern(l, depth);
        }
    }

    fn line_pattern(&mut self, l: &LinePattern, depth: usize) {
        self.leading(l.span.start, depth);
        self.line(l.span.start, depth);
        self.out.push_str(&line_pattern_text(l));
        self.trailing(l.span.end);
    }

    fn close(&mut self, start: usize, end: usize, depth: usize) {
        self.leading(start, depth + 1);
        self.want_blank = false;
        self.prev_end = None; // no blank line before a closing brace
        self.line(start, depth);
        self.out.push('}');
        self.trailing(end);
    }

    fn section(&mut self, s: &SectionDecl, depth: usize) {
        self.leading(s.header.start, depth);
        self.line(s.header.start, depth);
        self.out
            .push_str(&format!("section {} {} {{", s.name.text, s.number.text));
        self.trailing(s.header.end);
        self.prev_end = None;
        self.items(&s.items, depth + 1);
        self.close(s.close.start, s.close.end, depth);
    }

    fn comment_before(&self, pos: usize) -> bool {
        self.comments.get(self.next).is_some_and(|c| c.start < pos)
    }
}

fn property_text(p: &Property) -> String {
    format!(
        "{}.{} = {};",
        p.field.text,
        p.name.text,
        value_text(&p.value)
    )
}

fn line_pattern_text(l: &LinePattern) -> String {
    let mut s = String::from("line =");
    for part in &l.parts {
        s.push(' ');
        match part {
            LinePart::Literal(t) => s.push_str(&t.text),
            LinePart::Field { name, spec } => {
                s.push_str(&name.text);
                if let Some(spec) = spec {
                    s.push(':');
                    s.push_str(&spec.text);
                }
            }
        }
    }
    s.push(';');
    s
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Reference { field, property } => format!("{}.{}", field.text, property.text),
        Value::Words { head, args } => {
            let mut s = head.text.clone();
            for a in args {
                s.push(' ');
                s.push_str(&a.text);
            }
            s
        }
        Value::Predictors(terms) => terms
            .iter()
            .map(|t| {
                std::iter::once(t.name.text.as_str())
                    .chain(t.operands.iter().map(|o| o.text.as_str()))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn field_text(f: &Field) -> String {
    match f {
        Field::Name(t) => t.text.clone(),
        Field::Composite { fields, .. } => {
            let inner: Vec<String> = fields.iter().map(field_text).collect();
            format!("({})", inner.join(", "))
        }
        Field::Repeated { count, element, .. } => {
            format!("{} * {}", count.text, field_text(element))
        }
        Field::Record(r) => {
            let mut s = format!("{} : {}", r.name.text, field_text(&r.field));
            if let Some(body) = &r.body {
                if body.properties.is_empty() && body.lines.is_empty() {
                    s.push_str(" {}");
                } else {
                    s.push_str(" {");
                    for p in &body.properties {
                        s.push(' ');
                        s.push_str(&property_text(p));
                    }
                    for l in &body.lines {
                        s.push(' ');
                        s.push_str(&line_pattern_text(l));
                    }
                    s.push_str(" }");
                }
            }
            s
        }
    }
}
