//! The syntax tree of a DTD, exactly as written, with the byte span of every node.
//!
//! Nothing here is checked beyond the grammar: names may be unknown, numbers may not be numbers.
//! Validation and lowering give it meaning.

/// Which text a span points into: the user's DTD or the built-in definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// The DTD passed to [`crate::parse_schema`].
    User,
    /// The built-in records (`vfield`, `comment`, `section`, `metadata`).
    Builtin,
}

/// A byte range in one source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Which text the offsets refer to.
    pub origin: Origin,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A name or a loosely lexed word, with its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The text as written.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

/// A whole DTD file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dtd {
    /// Top-level items in source order.
    pub items: Vec<Item>,
    /// Byte length of the source (where end-of-file comments attach).
    pub end: usize,
}

/// A top-level or section-level item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// `field.property = value;`
    Property(Property),
    /// `name : field { ... }`
    Record(Record),
    /// `section name number { ... }` (only at top level).
    Section(SectionDecl),
    /// `unmatched = verbatim | error | RECORD;` (only at top level).
    Unmatched(UnmatchedDecl),
}

/// `unmatched = TARGET;`: what a text line that no line pattern spells becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedDecl {
    /// `verbatim`, `error` or a record's name, as written.
    pub target: Token,
    /// The whole statement.
    pub span: Span,
}

/// `section NAME NUMBER { ... }`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionDecl {
    /// The section's name.
    pub name: Token,
    /// The section's number as written (validated later).
    pub number: Token,
    /// From the `section` keyword to the opening brace, inclusive.
    pub header: Span,
    /// The closing brace.
    pub close: Span,
    /// Records and properties inside the section.
    pub items: Vec<Item>,
}

/// `name : field [ { properties } ]`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The record's name.
    pub name: Token,
    /// The record's type: one field, usually a composite.
    pub field: Field,
    /// The `{ ... }` part, when written.
    pub body: Option<Body>,
    /// From the name to the end of the field (the opening brace excluded).
    pub header: Span,
}

/// The `{ ... }` of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// The opening brace.
    pub open: Span,
    /// Properties in source order.
    pub properties: Vec<Property>,
    /// `line = ...;` statements in source order (a valid record has at most one).
    pub lines: Vec<LinePattern>,
    /// The closing brace.
    pub close: Span,
}

/// A field in a record's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// A field type or a record used as a field.
    Name(Token),
    /// `(a, b, ...)`
    Composite {
        /// The members.
        fields: Vec<Field>,
        /// From `(` to `)`.
        span: Span,
    },
    /// `count * element`
    Repeated {
        /// The field holding the number of repetitions.
        count: Token,
        /// What is repeated: a name or a composite.
        element: Box<Field>,
        /// The whole construct.
        span: Span,
    },
    /// A record defined in place (`extra : (a, b) { ... }`).
    Record(Box<Record>),
}

impl Field {
    /// The span of the whole field.
    pub fn span(&self) -> Span {
        match self {
            Field::Name(t) => t.span,
            Field::Composite { span, .. } | Field::Repeated { span, .. } => *span,
            Field::Record(r) => match &r.body {
                Some(b) => Span {
                    end: b.close.end,
                    ..r.header
                },
                None => r.header,
            },
        }
    }
}

/// `field.property = value;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// The field the property is set on.
    pub field: Token,
    /// `width`, `interpretation`, `value` or `model` (checked later).
    pub name: Token,
    /// The right-hand side.
    pub value: Value,
    /// The whole statement including `;`.
    pub span: Span,
}

/// The right-hand side of a property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `other.property`: the property of another field of the record.
    Reference {
        /// The other field.
        field: Token,
        /// Its property.
        property: Token,
    },
    /// A number, or an interpretation name followed by its arguments.
    Words {
        /// The first word.
        head: Token,
        /// Numeric arguments.
        args: Vec<Token>,
    },
    /// The value of a `model` property: predictors separated by `,`.
    Predictors(Vec<Term>),
}

/// One predictor of a `model` property, as written: `sum size`, `live alloc.ptr`, `fcm 2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The predictor's name.
    pub name: Token,
    /// Its operands: field names, `record.field` paths or numbers.
    pub operands: Vec<Token>,
}

impl Term {
    /// The span from the name to the last operand.
    pub fn span(&self) -> Span {
        Span {
            end: self
                .operands
                .last()
                .map_or(self.name.span.end, |a| a.span.end),
            ..self.name.span
        }
    }
}

impl Value {
    /// The span of the whole value.
    pub fn span(&self) -> Span {
        match self {
            Value::Reference { field, property } => Span {
                end: property.span.end,
                ..field.span
            },
            Value::Words { head, args } => Span {
                end: args.last().map_or(head.span.end, |a| a.span.end),
                ..head.span
            },
            Value::Predictors(terms) => match (terms.first(), terms.last()) {
                (Some(first), Some(last)) => Span {
                    end: last.span().end,
                    ..first.span()
                },
                _ => Span {
                    origin: Origin::User,
                    start: 0,
                    end: 0,
                },
            },
        }
    }
}

/// `line = "text" field field:spec ...;`: how a record is spelled as one line of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinePattern {
    /// The parts in order.
    pub parts: Vec<LinePart>,
    /// The whole statement including `;`.
    pub span: Span,
}

/// One part of a line pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinePart {
    /// A quoted literal, as written (quotes and escapes included).
    Literal(Token),
    /// A field, with its spelling (`x`, `08x`, `#X`, `=4d`, `i`, `s`, ...) when written.
    Field {
        /// The field's name.
        name: Token,
        /// The text after `:`.
        spec: Option<Token>,
    },
}
