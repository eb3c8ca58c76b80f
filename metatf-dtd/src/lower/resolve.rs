//! Resolving each field's width and interpretation through the scopes, following references
//! (with cycle detection) and reporting what is missing.

use super::{dedup, interp_name, Lowerer, RecordState, Target, Width, MAX_REFERENCE_DEPTH};
use crate::ast::{Body, Property, Token};
use crate::diagnostic::Problem;
use crate::model::Interpretation;
use crate::validate::{Home, PropTable};
use crate::values::{literal, suggest, Literal, PropKind};

impl<'a> Lowerer<'a, '_> {
    pub(super) fn table(&mut self, body: &'a Body) -> &PropTable<'a> {
        self.tables
            .entry(body.open)
            .or_insert_with(|| PropTable::new(&body.properties, &mut Vec::new()))
    }

    /// The property of kind `kind` governing leaf `i`, with its scope level (0 = outermost record).
    pub(super) fn lookup(
        &mut self,
        st: &RecordState<'a>,
        i: usize,
        kind: PropKind,
    ) -> Option<(usize, &'a Property)> {
        let leaf = &st.leaves[i];
        let name = leaf.token.text.as_str();
        for (level, body) in leaf.chain.iter().enumerate() {
            if let Some(p) = self.table(body).get(name, kind) {
                return Some((level, p));
            }
        }
        let level = leaf.chain.len();
        if let Home::Section(s) = st.home {
            if let Some(p) = self.scopes.sections[s].props.get(name, kind) {
                return Some((level, p));
            }
        }
        self.scopes
            .global_props
            .get(name, kind)
            .map(|p| (level + 1, p))
    }

    pub(super) fn interp(&mut self, st: &mut RecordState<'a>, i: usize) -> Option<Interpretation> {
        if let Some(done) = st.interps.get(&i) {
            return *done;
        }
        if st.visiting.contains(&(i, PropKind::Interpretation)) {
            return None;
        }
        if st.visiting.len() > MAX_REFERENCE_DEPTH {
            self.too_deep(st, i);
            return None;
        }
        st.visiting.push((i, PropKind::Interpretation));
        let result = match self.lookup(st, i, PropKind::Interpretation) {
            None => {
                self.missing(st, i, PropKind::Interpretation);
                None
            }
            Some((_, p)) => match literal(p, &self.scopes.declared) {
                Ok(Literal::Interpretation(x)) => Some(x),
                Ok(Literal::Reference { field, .. }) => {
                    match self.follow(st, i, p, &field, PropKind::Interpretation) {
                        Some(Target::Tag) => Some(Interpretation::None),
                        Some(Target::Leaf(j)) => self.interp(st, j),
                        None => None,
                    }
                }
                _ => None,
            },
        };
        st.visiting.pop();
        st.interps.insert(i, result);
        result
    }

    pub(super) fn width(&mut self, st: &mut RecordState<'a>, i: usize) -> Option<Width> {
        if let Some(done) = st.widths.get(&i) {
            return *done;
        }
        if st.visiting.contains(&(i, PropKind::Width)) {
            return None;
        }
        if st.visiting.len() > MAX_REFERENCE_DEPTH {
            self.too_deep(st, i);
            return None;
        }
        let interp_found = self.lookup(st, i, PropKind::Interpretation);
        let interp = self.interp(st, i);
        st.visiting.push((i, PropKind::Width));
        let found = self.lookup(st, i, PropKind::Width);
        let result = match interp {
            Some(it) if it.is_zero_width() => {
                let interp_level = interp_found.map_or(usize::MAX, |x| x.0);
                if let Some((level, p)) = found {
                    if level <= interp_level {
                        match self.width_value(st, i, p, interp) {
                            Some(Width::Fixed(0)) | None => {}
                            Some(w) => {
                                let shown = match w {
                                    Width::Fixed(n) => n.to_string(),
                                    Width::Bytes(_) => "a length".to_string(),
                                };
                                let name = interp_name(it);
                                self.problems.push(
                                    Problem::new(p.value.span(), format!("`{}` has interpretation `{name}`, which stores nothing, but width {shown}", p.field.text))
                                        .label("should be 0")
                                        .hint(format!("`{name}` implies width 0: remove this width or set it to 0")),
                                );
                            }
                        }
                    }
                }
                Some(Width::Fixed(0))
            }
            _ => match found {
                None => {
                    // Without a valid interpretation the field was already reported.
                    if interp.is_some() {
                        self.missing(st, i, PropKind::Width);
                    }
                    None
                }
                Some((_, p)) => self.width_value(st, i, p, interp),
            },
        };
        st.visiting.pop();
        st.widths.insert(i, result);
        result
    }

    pub(super) fn width_value(
        &mut self,
        st: &mut RecordState<'a>,
        i: usize,
        p: &'a Property,
        interp: Option<Interpretation>,
    ) -> Option<Width> {
        match literal(p, &self.scopes.declared) {
            Ok(Literal::Width(n)) => Some(Width::Fixed(n)),
            Ok(Literal::Reference {
                field,
                property: PropKind::Width,
            }) => match self.follow(st, i, p, &field, PropKind::Width)? {
                Target::Tag => Some(Width::Fixed(self.scopes.tag_width)),
                Target::Leaf(j) => match self.width(st, j)? {
                    Width::Fixed(n) => Some(Width::Fixed(n)),
                    Width::Bytes(_) => {
                        self.problems.push(
                            Problem::new(
                                p.value.span(),
                                format!("`{}` is a byte string and has no fixed width", field.text),
                            )
                            .label("variable width")
                            .hint("refer to the width of a fixed-width field"),
                        );
                        None
                    }
                },
            },
            Ok(Literal::Reference { field, .. }) => {
                let j = self.earlier(st, i, p, &field)?;
                if let Some(Width::Bytes(_)) = self.width(st, j) {
                    self.problems.push(
                        Problem::new(
                            field.span,
                            format!("`{}` is a byte string and cannot give a length", field.text),
                        )
                        .label("not an integer field")
                        .hint("a length must be an integer field such as `length`"),
                    );
                    return None;
                }
                if let Some(x) = interp {
                    if x != Interpretation::None {
                        self.problems.push(
                            Problem::new(
                                p.span,
                                format!(
                                    "`{}` is a byte string, so its interpretation must be `none`",
                                    p.field.text
                                ),
                            )
                            .label("byte string")
                            .hint(format!("set `{}.interpretation = none;`", p.field.text)),
                        );
                    }
                }
                Some(Width::Bytes(j))
            }
            _ => None,
        }
    }

    /// The field a same-record reference `field.width`/`field.interpretation` names: the nearest
    /// earlier field of that name, else the first later one.
    pub(super) fn follow(
        &mut self,
        st: &RecordState<'a>,
        i: usize,
        p: &'a Property,
        field: &Token,
        kind: PropKind,
    ) -> Option<Target> {
        if field.text == "tag" {
            return Some(Target::Tag);
        }
        let name = field.text.as_str();
        let same: &[usize] = st.by_name.get(name).map_or(&[], |v| v.as_slice());
        // Indices in `same` are increasing: find the nearest one before `i`, else after.
        let split = same.partition_point(|&j| j < i);
        let before = split.checked_sub(1).map(|k| same[k]);
        let after = same[split..].iter().copied().find(|&j| j != i);
        let itself = (st.leaves[i].token.text == name).then_some(i);
        let Some(j) = before.or(after).or(itself) else {
            self.absent(st, field);
            return None;
        };
        if st.visiting.len() > MAX_REFERENCE_DEPTH {
            self.problems.push(
                Problem::new(p.value.span(), "chain of references is too long")
                    .label("too deep")
                    .hint(format!("at most {MAX_REFERENCE_DEPTH} properties may refer to each other in a chain")),
            );
            return None;
        }
        if let Some(from) = st.visiting.iter().position(|v| *v == (j, kind)) {
            let mut path: Vec<String> = st.visiting[from..]
                .iter()
                .filter(|v| v.1 == kind)
                .map(|(k, _)| format!("{}.{}", st.leaves[*k].token.text, kind.as_str()))
                .collect();
            path.push(format!("{}.{}", name, kind.as_str()));
            self.problems.push(
                Problem::new(
                    p.value.span(),
                    format!(
                        "circular reference: `{}.{}` depends on itself",
                        p.field.text, p.name.text
                    ),
                )
                .label("part of a cycle")
                .hint(format!(
                    "{} — set one of them to a number",
                    path.join(" → ")
                )),
            );
            return None;
        }
        Some(Target::Leaf(j))
    }

    /// The field a length reference `field.value` names: the nearest earlier field of that name
    /// outside any repetition the referring field is not also in.
    pub(super) fn earlier(
        &mut self,
        st: &RecordState<'a>,
        i: usize,
        p: &'a Property,
        field: &Token,
    ) -> Option<usize> {
        let name = field.text.as_str();
        if name == "tag" {
            self.problems.push(
                Problem::new(field.span, "a length cannot come from the tag")
                    .label("the tag")
                    .hint("add a length field before this one, as `vfield` does"),
            );
            return None;
        }
        let rep = &st.leaves[i].rep;
        let same: &[usize] = st.by_name.get(name).map_or(&[], |v| v.as_slice());
        let split = same.partition_point(|&j| j < i);
        let found = same[..split]
            .iter()
            .rev()
            .copied()
            .find(|&j| rep.starts_with(&st.leaves[j].rep));
        if found.is_some() {
            return found;
        }
        if same.is_empty() {
            self.absent(st, field);
        } else {
            let inside = split > 0;
            let (msg, hint) = if inside {
                (
                    format!(
                        "`{}` is inside a repetition that `{}` is not part of",
                        name, p.field.text
                    ),
                    "a length must be outside any repetition, or in the same repeated element",
                )
            } else {
                (
                    format!(
                        "`{}.{}` uses the value of `{name}`, which comes after it",
                        p.field.text, p.name.text
                    ),
                    "the field holding a length must come before the field it measures",
                )
            };
            self.problems.push(
                Problem::new(field.span, msg)
                    .label("later field")
                    .hint(hint),
            );
        }
        None
    }

    pub(super) fn too_deep(&mut self, st: &RecordState<'a>, i: usize) {
        self.problems.push(
            Problem::new(st.leaves[i].token.span, "chain of references is too long")
                .label("too deep")
                .hint(format!(
                    "at most {MAX_REFERENCE_DEPTH} properties may refer to each other in a chain"
                )),
        );
    }

    pub(super) fn absent(&mut self, st: &RecordState<'a>, field: &Token) {
        // In order of first appearance, at most a screenful.
        let mut firsts: Vec<(usize, &str)> = st.by_name.iter().map(|(n, v)| (v[0], *n)).collect();
        firsts.sort_unstable();
        let names: Vec<&str> = firsts.into_iter().take(20).map(|(_, n)| n).collect();
        let mut problem = Problem::new(
            field.span,
            format!(
                "record `{}` has no field `{}`",
                st.record.name.text, field.text
            ),
        )
        .label("referenced here");
        problem = match suggest(&field.text, names.iter().copied()) {
            Some(s) => problem.hint(format!("did you mean `{s}`?")),
            None => problem.hint(format!(
                "a property can only refer to fields of the same record; `{}` has: tag{}{}",
                st.record.name.text,
                if names.is_empty() { "" } else { ", " },
                dedup(&names).join(", ")
            )),
        };
        self.problems.push(problem);
    }

    /// Reports a field without width or interpretation (or without both: an unknown name).
    pub(super) fn missing(&mut self, st: &mut RecordState<'a>, i: usize, kind: PropKind) {
        let token = st.leaves[i].token;
        let record = st.record.name.text.as_str();
        let name = token.text.as_str();
        let other = match kind {
            PropKind::Width => PropKind::Interpretation,
            _ => PropKind::Width,
        };
        if self.lookup(st, i, other).is_none() {
            let mut known: Vec<&str> = self
                .scopes
                .visible(st.home)
                .map(|r| r.name.text.as_str())
                .collect();
            known.extend(self.scopes.global_props.field_names());
            if let Home::Section(s) = st.home {
                known.extend(self.scopes.sections[s].props.field_names());
            }
            let problem = Problem::new(token.span, format!("unknown field or record `{name}`"))
                .label("not a record, and no width or interpretation is set for it");
            let problem = match suggest(name, known.iter().copied()) {
                Some(s) => problem.hint(format!("did you mean `{s}`?")),
                None => problem.hint(format!(
                    "define it with `{name}.width = N; {name}.interpretation = none;` globally or in `{record}`"
                )),
            };
            self.problems.push(problem);
            return;
        }
        let (what, example) = match kind {
            PropKind::Width => ("width", format!("{name}.width = 4;")),
            _ => ("interpretation", format!("{name}.interpretation = none;")),
        };
        self.problems.push(
            Problem::new(
                token.span,
                format!("field `{name}` of record `{record}` has no {what}"),
            )
            .label(format!("no {what}"))
            .hint(format!(
                "add `{example}` globally, in the section, or in `{record}`"
            )),
        );
    }
}
