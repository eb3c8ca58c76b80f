//! Declarations and everything checkable without expanding a record: sections, record names,
//! tags, reserved names, property values and duplicate properties.

use std::collections::{BTreeSet, HashMap};

use crate::ast::{Dtd, Field, Item, Origin, Property, Record, SectionDecl, Token, UnmatchedDecl};
use crate::builtins::BUILTIN_NAMES;
use crate::diagnostic::Problem;
use crate::values::{literal, number, prop_kind, Literal, PropKind, MAX_WIDTH};

/// Properties of one scope (global, a section, or a record body) by field name and kind.
#[derive(Debug, Default)]
pub struct PropTable<'a> {
    map: HashMap<(&'a str, PropKind), &'a Property>,
}

impl<'a> PropTable<'a> {
    /// Builds the table; a property set twice in one scope is an error (the first one is kept).
    pub fn new(props: impl IntoIterator<Item = &'a Property>, problems: &mut Vec<Problem>) -> Self {
        let mut map: HashMap<(&'a str, PropKind), &'a Property> = HashMap::new();
        for p in props {
            let Ok(kind) = prop_kind(&p.name) else {
                continue;
            };
            match map.get(&(p.field.text.as_str(), kind)) {
                Some(first) => {
                    let what = format!("{}.{}", p.field.text, kind.as_str());
                    let (message, hint) = if p.field.text == "tag" && kind == PropKind::Width {
                        (
                            "`tag.width` is set twice".to_string(),
                            "the tag width is set once, globally".to_string(),
                        )
                    } else {
                        (
                            format!("`{what}` is set twice in the same scope"),
                            "remove one of the settings".to_string(),
                        )
                    };
                    problems.push(
                        Problem::new(p.span, message)
                            .label("set again here")
                            .hint(hint)
                            .see(first.span),
                    );
                }
                None => {
                    map.insert((p.field.text.as_str(), kind), p);
                }
            }
        }
        PropTable { map }
    }

    /// The property setting `kind` of `field`, if this scope sets it.
    pub fn get(&self, field: &str, kind: PropKind) -> Option<&'a Property> {
        self.map.get(&(field, kind)).copied()
    }

    /// Every field name this scope sets a property on.
    pub fn field_names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.map.keys().map(|(f, _)| *f)
    }
}

/// Where a record is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// Outside any section (including the built-ins).
    Global,
    /// In the section with this index in [`Scopes::sections`].
    Section(usize),
}

/// A section after checking its header.
#[derive(Debug)]
pub struct SectionScope<'a> {
    /// The declaration.
    pub decl: &'a SectionDecl,
    /// Its number (0 when invalid; such a section is not lowered).
    pub number: u8,
    /// Section-level properties.
    pub props: PropTable<'a>,
    /// Records defined in the section.
    pub records: Vec<&'a Record>,
}

/// All declarations of a DTD plus the built-ins.
#[derive(Debug)]
pub struct Scopes<'a> {
    /// Global records: built-ins first, then the user's.
    pub global_records: Vec<&'a Record>,
    /// Global properties (the user's top-level ones).
    pub global_props: PropTable<'a>,
    /// Sections in declaration order.
    pub sections: Vec<SectionScope<'a>>,
    /// Numbers of the valid declared sections.
    pub declared: BTreeSet<u8>,
    /// `tag.width` (1 when not set).
    pub tag_width: u8,
    /// The `unmatched = ...;` declaration, if any (the first when repeated).
    pub unmatched: Option<&'a UnmatchedDecl>,
    /// Records by name: index 0 holds the global ones, index `i + 1` those of section `i`
    /// (first definition wins; duplicates are reported separately).
    by_name: Vec<HashMap<&'a str, &'a Record>>,
}

/// True when a record is a trace record (has a tag) rather than a group of fields.
pub fn is_tagged(r: &Record) -> bool {
    tag_value_property(r).is_some() || lists_tag(r)
}

/// True when the record's field list starts with `tag` (or is just `tag`).
pub fn lists_tag(r: &Record) -> bool {
    match &r.field {
        Field::Name(t) => t.text == "tag",
        Field::Composite { fields, .. } => {
            matches!(fields.first(), Some(Field::Name(t)) if t.text == "tag")
        }
        _ => false,
    }
}

/// The record's own `tag.value` property.
pub fn tag_value_property(r: &Record) -> Option<&Property> {
    r.body
        .as_ref()?
        .properties
        .iter()
        .find(|p| p.field.text == "tag" && p.name.text == "value")
}

impl<'a> Scopes<'a> {
    /// Collects declarations from the built-ins and the user's DTD, reporting what is wrong with
    /// them on their own.
    pub fn new(builtin: &'a Dtd, user: &'a Dtd, problems: &mut Vec<Problem>) -> Self {
        let mut global_records = Vec::new();
        let mut global_props = Vec::new();
        let mut section_decls = Vec::new();
        let mut unmatched: Vec<&'a UnmatchedDecl> = Vec::new();
        for item in builtin.items.iter().chain(&user.items) {
            match item {
                Item::Record(r) => global_records.push(r),
                Item::Property(p) => global_props.push(p),
                Item::Section(s) => section_decls.push(s),
                Item::Unmatched(u) => unmatched.push(u),
            }
        }
        let sections = check_sections(&section_decls, problems);
        let declared: BTreeSet<u8> = sections
            .iter()
            .filter(|s| s.number != 0)
            .map(|s| s.number)
            .collect();
        let global_props = PropTable::new(global_props, problems);
        let tag_width = match global_props.get("tag", PropKind::Width) {
            Some(p) => match literal(p, &declared) {
                Ok(Literal::Width(w)) if w >= 1 => w,
                _ => 1,
            },
            None => 1,
        };
        for again in unmatched.iter().skip(1) {
            problems.push(
                Problem::new(again.span, "`unmatched` is declared twice")
                    .label("second declaration")
                    .hint("unmatched lines go one way: keep one `unmatched = ...;`")
                    .see(unmatched[0].span),
            );
        }
        let mut scopes = Scopes {
            unmatched: unmatched.first().copied(),
            global_records,
            global_props,
            sections,
            declared,
            tag_width,
            by_name: Vec::new(),
        };
        scopes.by_name = std::iter::once(&scopes.global_records)
            .chain(scopes.sections.iter().map(|s| &s.records))
            .map(|records| {
                let mut map = HashMap::new();
                for r in records {
                    map.entry(r.name.text.as_str()).or_insert(*r);
                }
                map
            })
            .collect();
        scopes.check_properties(user, problems);
        scopes.check_records(problems);
        scopes
    }

    /// Records visible from `home`: the section's own first, then the global ones.
    pub fn visible(&self, home: Home) -> impl Iterator<Item = &'a Record> + '_ {
        let local: &[&'a Record] = match home {
            Home::Global => &[],
            Home::Section(i) => &self.sections[i].records,
        };
        local.iter().chain(&self.global_records).copied()
    }

    /// Finds a record by name as seen from `home`.
    pub fn find_record(&self, home: Home, name: &str) -> Option<&'a Record> {
        let local = match home {
            Home::Global => None,
            Home::Section(i) => self.by_name.get(i + 1).and_then(|m| m.get(name)),
        };
        local
            .or_else(|| self.by_name.first().and_then(|m| m.get(name)))
            .copied()
    }

    /// Checks every property of the user's DTD on its own: value syntax, and the rules that
    /// depend only on where the property is written.
    fn check_properties(&self, user: &'a Dtd, problems: &mut Vec<Problem>) {
        for item in &user.items {
            match item {
                Item::Property(p) => self.check_property(p, Place::Global, Home::Global, problems),
                Item::Record(r) => self.check_record_props(r, false, Home::Global, problems),
                Item::Unmatched(_) => {}
                Item::Section(s) => {
                    let home = self
                        .sections
                        .iter()
                        .position(|sc| std::ptr::eq(sc.decl, s))
                        .map_or(Home::Global, Home::Section);
                    for item in &s.items {
                        match item {
                            Item::Property(p) => {
                                self.check_property(p, Place::Section, home, problems)
                            }
                            Item::Record(r) => self.check_record_props(r, false, home, problems),
                            Item::Section(_) | Item::Unmatched(_) => {}
                        }
                    }
                }
            }
        }
    }

    fn check_record_props(
        &self,
        r: &'a Record,
        inline: bool,
        home: Home,
        problems: &mut Vec<Problem>,
    ) {
        let place = if inline { Place::Inline } else { Place::Record };
        if let Some(body) = &r.body {
            for p in &body.properties {
                self.check_property(p, place, home, problems);
            }
            PropTable::new(&body.properties, problems);
        }
        visit_inline(&r.field, &mut |inner| {
            self.check_record_props(inner, true, home, problems)
        });
    }

    fn check_property(
        &self,
        p: &'a Property,
        place: Place,
        home: Home,
        problems: &mut Vec<Problem>,
    ) {
        let lit = match literal(p, &self.declared) {
            Ok(l) => l,
            Err(mut e) => {
                problems.append(&mut e);
                return;
            }
        };
        let Ok(kind) = prop_kind(&p.name) else {
            return;
        };
        let field = p.field.text.as_str();
        if matches!(place, Place::Global | Place::Section) {
            if let Some(r) = self.find_record(home, field) {
                problems.push(
                    Problem::new(p.field.span, format!("`{field}` is a record, not a field"))
                        .label("a record")
                        .hint(format!(
                            "set the properties of `{}`'s fields by name, globally or in the `{{ }}` of a record using it",
                            r.name.text
                        )),
                );
                return;
            }
        }
        if field == "tag" {
            match kind {
                PropKind::Width => {
                    if place != Place::Global {
                        problems.push(
                            Problem::new(p.span, "`tag.width` can only be set globally")
                                .label("inside a section or record")
                                .hint("move it to the top of the file: every record's tag has the same width"),
                        );
                    } else if matches!(lit, Literal::Reference { .. }) {
                        problems.push(
                            Problem::new(p.value.span(), "`tag.width` must be a number")
                                .label("a reference")
                                .hint("write `tag.width = 1;`"),
                        );
                    } else if lit == Literal::Width(0) {
                        problems.push(
                            Problem::new(p.value.span(), "`tag.width` cannot be 0")
                                .label("zero")
                                .hint(format!("tags are 1 to {MAX_WIDTH} bytes wide")),
                        );
                    }
                }
                PropKind::Interpretation => {
                    if lit != Literal::Interpretation(crate::model::Interpretation::None) {
                        problems.push(
                            Problem::new(
                                p.value.span(),
                                "the tag's interpretation is always `none`",
                            )
                            .label("not `none`")
                            .hint("remove this line"),
                        );
                    }
                }
                PropKind::Model => {
                    problems.push(
                        Problem::new(p.field.span, "the tag has no model interpretation")
                            .label("the tag")
                            .hint("the model engine codes tags by their own context model; set `model` on the record's other fields"),
                    );
                }
                PropKind::Value => {
                    if place != Place::Record {
                        let hint = if place == Place::Inline {
                            "a record nested in another cannot have a tag; define it at top level"
                        } else {
                            "`tag.value` goes inside a record's `{ }`"
                        };
                        problems.push(
                            Problem::new(p.span, "`tag.value` outside a record definition")
                                .label("not in a record")
                                .hint(hint),
                        );
                    }
                }
            }
        } else if kind == PropKind::Value {
            problems.push(
                Problem::new(p.name.span, format!("only `tag` can have a value, not `{field}`"))
                    .label("value of a non-tag field")
                    .hint("other fields take their values from the trace; to fix a value use `interpretation = default N`"),
            );
        }
    }

    /// Record names, reserved names, tag values.
    fn check_records(&self, problems: &mut Vec<Problem>) {
        check_record_list(&self.global_records, &[], self.tag_width, problems);
        for s in &self.sections {
            check_record_list(&s.records, &self.global_records, self.tag_width, problems);
        }
    }
}

/// Where a property is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Global,
    Section,
    Record,
    Inline,
}

/// Calls `f` for every record defined inside a field (one level; `f` recurses itself).
pub fn visit_inline<'a>(field: &'a Field, f: &mut dyn FnMut(&'a Record)) {
    match field {
        Field::Record(r) => f(r),
        Field::Composite { fields, .. } => {
            for x in fields {
                visit_inline(x, f);
            }
        }
        Field::Repeated { element, .. } => visit_inline(element, f),
        Field::Name(_) => {}
    }
}

fn check_sections<'a>(
    decls: &[&'a SectionDecl],
    problems: &mut Vec<Problem>,
) -> Vec<SectionScope<'a>> {
    let mut seen_numbers: HashMap<u8, &Token> = HashMap::new();
    let mut seen_names: HashMap<&str, &Token> = HashMap::new();
    let mut out = Vec::new();
    for d in decls {
        let mut number = 0;
        match number_of(&d.number) {
            Ok(n) if (1..=255).contains(&n) => {
                number = n as u8;
                if let Some(first) = seen_numbers.get(&number) {
                    problems.push(
                        Problem::new(d.number.span, format!("section number {n} is used twice"))
                            .label("already used")
                            .hint(format!(
                                "section `{}` already has number {n}; numbers must be unique",
                                first_name(decls, first)
                            ))
                            .see(first.span),
                    );
                    number = 0;
                } else {
                    seen_numbers.insert(number, &d.number);
                }
            }
            Ok(n) => problems.push(
                Problem::new(d.number.span, format!("section number {n} is out of range"))
                    .label("not 1-255")
                    .hint("sections are numbered 1 to 255"),
            ),
            Err(p) => problems.push(p),
        }
        if d.name.text == "section" {
            problems.push(
                Problem::new(d.name.span, "`section` is a reserved name")
                    .label("reserved")
                    .hint("choose another section name"),
            );
        } else if seen_names.contains_key(d.name.text.as_str()) {
            problems.push(
                Problem::new(
                    d.name.span,
                    format!("section name `{}` is used twice", d.name.text),
                )
                .label("already used")
                .hint("section names must be unique"),
            );
        } else {
            seen_names.insert(&d.name.text, &d.name);
        }
        let mut props = Vec::new();
        let mut records = Vec::new();
        for item in &d.items {
            match item {
                Item::Property(p) => props.push(p),
                Item::Record(r) => records.push(r),
                Item::Section(_) | Item::Unmatched(_) => {}
            }
        }
        out.push(SectionScope {
            decl: d,
            number,
            props: PropTable::new(props, problems),
            records,
        });
    }
    out
}

fn first_name<'a>(decls: &[&'a SectionDecl], number: &Token) -> &'a str {
    decls
        .iter()
        .find(|d| std::ptr::eq(&d.number, number))
        .map_or("?", |d| d.name.text.as_str())
}

fn number_of(t: &Token) -> Result<u64, Problem> {
    number(t, "a section number")
}

/// Checks names and tags of the records of one scope, against those of `outer` (the global
/// records, which are visible in every section).
fn check_record_list(
    records: &[&Record],
    outer: &[&Record],
    tag_width: u8,
    problems: &mut Vec<Problem>,
) {
    let mut names: HashMap<&str, &Record> =
        outer.iter().map(|r| (r.name.text.as_str(), *r)).collect();
    let mut tags: HashMap<u64, &Record> = HashMap::new();
    for r in outer {
        if let Some(t) = tag_value(r) {
            tags.insert(t, r);
        }
    }
    for r in records {
        let name = r.name.text.as_str();
        let user = r.name.span.origin == Origin::User;
        if user && (BUILTIN_NAMES.contains(&name) || name == "tag") {
            problems.push(
                Problem::new(r.name.span, format!("`{name}` is a reserved name"))
                    .label("reserved")
                    .hint(if name == "tag" {
                        "`tag` is the field every record starts with".to_string()
                    } else {
                        format!("`{name}` is a built-in record and is always defined; choose another name")
                    }),
            );
        } else if let Some(first) = names.get(name) {
            let hint = if first.name.span.origin == Origin::Builtin {
                format!("`{name}` is a built-in record")
            } else {
                "record names must be unique in a section; global records count in every section"
                    .to_string()
            };
            problems.push(
                Problem::new(r.name.span, format!("record `{name}` is defined twice"))
                    .label("defined again here")
                    .hint(hint)
                    .see(first.name.span),
            );
        } else {
            names.insert(name, r);
        }
        match tag_value_property(r) {
            None if lists_tag(r) => problems.push(
                Problem::new(r.name.span, format!("record `{name}` has no tag value"))
                    .label("no `tag.value`")
                    .hint("add `tag.value = N;` to its `{ }`; the value must be unique in the section"),
            ),
            None => {}
            Some(p) => {
                let Ok(Literal::Number(v)) = literal(p, &BTreeSet::new()) else {
                    continue;
                };
                if tag_width < 8 && v >> (8 * u32::from(tag_width)) != 0 {
                    problems.push(
                        Problem::new(p.value.span(), format!("tag value {v} does not fit in {tag_width} byte(s)"))
                            .label("too large for tag.width")
                            .hint("raise `tag.width` or choose a smaller tag"),
                    );
                }
                if let Some(first) = tags.get(&v) {
                    problems.push(
                        Problem::new(p.value.span(), format!("tag {v} is already used by record `{}`", first.name.text))
                            .label("duplicate tag")
                            .hint(if first.name.span.origin == Origin::Builtin {
                                "tags 1, 2 and 3 belong to the built-in records comment, section and metadata".to_string()
                            } else {
                                "tags must be unique in a section; global records count in every section".to_string()
                            })
                            .see(first.name.span),
                    );
                } else {
                    tags.insert(v, r);
                }
            }
        }
    }
}

/// The record's tag value when it is a valid number.
pub fn tag_value(r: &Record) -> Option<u64> {
    match literal(tag_value_property(r)?, &BTreeSet::new()) {
        Ok(Literal::Number(v)) => Some(v),
        _ => None,
    }
}
