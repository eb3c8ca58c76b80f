//! Expanding a record's field list: nested records, composites and repetitions become a tree of
//! [`Node`]s whose leaves are numbered by position.

use std::collections::HashSet;

use super::{clamp_position, Leaf, Lowerer, Node, RecordState, MAX_GROUP_DEPTH};
use crate::ast::{Body, Field, Record, Span, Token};
use crate::diagnostic::Problem;
use crate::validate::is_tagged;
use crate::values::suggest;

impl<'a> Lowerer<'a, '_> {
    pub(super) fn expand(
        &mut self,
        f: &'a Field,
        chain: &[&'a Body],
        rep: &[u32],
        stack: &mut Vec<Span>,
        st: &mut RecordState<'a>,
    ) -> Vec<Node> {
        // Once a record is too big, expanding the rest (possibly exponentially many) is pointless.
        if st.overflow {
            return Vec::new();
        }
        match f {
            Field::Repeated { count, element, .. } => {
                self.repeated(count, element, chain, rep, stack, st)
            }
            other => self
                .expand_one(other, chain, rep, stack, st)
                .into_iter()
                .collect(),
        }
    }

    /// Expands a field other than a repetition.
    pub(super) fn expand_one(
        &mut self,
        f: &'a Field,
        chain: &[&'a Body],
        rep: &[u32],
        stack: &mut Vec<Span>,
        st: &mut RecordState<'a>,
    ) -> Option<Node> {
        match f {
            Field::Name(t) => {
                if t.text == "tag" {
                    self.problems.push(
                        Problem::new(t.span, "`tag` must be the first field")
                            .label("not first")
                            .hint("only a record's own field list can start with `tag`; move it to the front"),
                    );
                    return None;
                }
                match self.scopes.find_record(st.home, &t.text) {
                    Some(g) if is_tagged(g) => {
                        self.problems.push(
                            Problem::new(
                                t.span,
                                format!(
                                    "record `{}` has a tag and cannot be used as a field",
                                    t.text
                                ),
                            )
                            .label("a trace record")
                            .hint(
                                "only records without a tag (like `vfield`) can be used as fields",
                            ),
                        );
                        None
                    }
                    Some(g) => self.group(g, t.span, chain, rep, stack, st),
                    None => self.leaf(t, chain, rep, st),
                }
            }
            Field::Composite { fields, .. } => {
                let position = clamp_position(st.next_position);
                let children = fields
                    .iter()
                    .flat_map(|x| self.expand(x, chain, rep, stack, st))
                    .collect();
                Some(Node::Composite {
                    name: String::new(),
                    position,
                    children,
                })
            }
            // Handled by `expand`, because it yields two nodes.
            Field::Repeated { .. } => None,
            Field::Record(inline) => self.group(inline, inline.name.span, chain, rep, stack, st),
        }
    }

    /// `count * element`: the count field, then the repetition.
    pub(super) fn repeated(
        &mut self,
        count: &'a Token,
        element: &'a Field,
        chain: &[&'a Body],
        rep: &[u32],
        stack: &mut Vec<Span>,
        st: &mut RecordState<'a>,
    ) -> Vec<Node> {
        if count.text == "tag" || self.scopes.find_record(st.home, &count.text).is_some() {
            self.problems.push(
                Problem::new(
                    count.span,
                    format!("`{}` cannot count a repetition", count.text),
                )
                .label("not a plain field")
                .hint("the count before `*` must be a plain integer field, e.g. `n * item`"),
            );
            return Vec::new();
        }
        let Some(count_node) = self.leaf(count, chain, rep, st) else {
            return Vec::new();
        };
        let Node::Leaf(count_leaf) = count_node else {
            return Vec::new();
        };
        let mut inner = rep.to_vec();
        inner.push(st.next_rep);
        st.next_rep += 1;
        let position = clamp_position(st.next_position);
        let (name, element) = match element {
            Field::Composite { fields, .. } => (
                String::new(),
                fields
                    .iter()
                    .flat_map(|x| self.expand(x, chain, &inner, stack, st))
                    .collect(),
            ),
            other => {
                let name = match other {
                    Field::Name(t) => t.text.clone(),
                    _ => String::new(),
                };
                (name, self.expand(other, chain, &inner, stack, st))
            }
        };
        vec![
            Node::Leaf(count_leaf),
            Node::Repeated {
                name,
                position,
                count: count_leaf,
                element,
            },
        ]
    }

    /// Expands a record used as a field (a group such as `vfield`, or a record defined in place).
    pub(super) fn group(
        &mut self,
        g: &'a Record,
        used_at: Span,
        chain: &[&'a Body],
        rep: &[u32],
        stack: &mut Vec<Span>,
        st: &mut RecordState<'a>,
    ) -> Option<Node> {
        if stack.contains(&g.header) {
            self.problems.push(
                Problem::new(used_at, format!("record `{}` contains itself", g.name.text))
                    .label("circular definition")
                    .hint(
                        "a record cannot be a field of itself, directly or through other records",
                    ),
            );
            return None;
        }
        if stack.len() > MAX_GROUP_DEPTH {
            self.problems.push(
                Problem::new(
                    used_at,
                    format!("records nested more than {MAX_GROUP_DEPTH} deep"),
                )
                .label("too deep")
                .hint("flatten the definitions"),
            );
            return None;
        }
        self.used_groups.insert(g.header);
        stack.push(g.header);
        let mut inner_chain = chain.to_vec();
        inner_chain.extend(g.body.iter());
        let first_leaf = st.leaves.len();
        let position = clamp_position(st.next_position);
        let children = match &g.field {
            Field::Composite { fields, .. } => fields
                .iter()
                .flat_map(|x| self.expand(x, &inner_chain, rep, stack, st))
                .collect(),
            other => self.expand(other, &inner_chain, rep, stack, st),
        };
        stack.pop();
        self.check_targets(g, first_leaf, st);
        Some(Node::Composite {
            name: g.name.text.clone(),
            position,
            children,
        })
    }

    pub(super) fn leaf(
        &mut self,
        t: &'a Token,
        chain: &[&'a Body],
        rep: &[u32],
        st: &mut RecordState<'a>,
    ) -> Option<Node> {
        if st.next_position > u32::from(u16::MAX) || self.budget == 0 {
            if !st.overflow {
                self.problems.push(
                    Problem::new(
                        st.record.name.span,
                        format!("record `{}` has too many fields", st.record.name.text),
                    )
                    .label("too many fields")
                    .hint("a record has at most 65535 fields, and a DTD at most 1048576 in all"),
                );
            }
            st.overflow = true;
            return None;
        }
        self.budget -= 1;
        st.leaves.push(Leaf {
            token: t,
            position: st.next_position as u16,
            chain: chain.to_vec(),
            rep: rep.to_vec(),
        });
        st.next_position += 1;
        st.by_name
            .entry(t.text.as_str())
            .or_default()
            .push(st.leaves.len() - 1);
        Some(Node::Leaf(st.leaves.len() - 1))
    }

    /// Properties in `r`'s body must name one of its fields (those expanded since `first_leaf`).
    pub(super) fn check_targets(&mut self, r: &'a Record, first_leaf: usize, st: &RecordState<'a>) {
        let Some(body) = &r.body else { return };
        let mut names: Vec<&str> = Vec::new();
        let mut known: HashSet<&str> = HashSet::new();
        for l in &st.leaves[first_leaf..] {
            if known.insert(l.token.text.as_str()) {
                names.push(l.token.text.as_str());
            }
        }
        for p in &body.properties {
            let f = p.field.text.as_str();
            if f == "tag" || known.contains(f) {
                continue;
            }
            let mut problem = Problem::new(
                p.field.span,
                format!("record `{}` has no field `{f}`", r.name.text),
            )
            .label(format!("not a field of `{}`", r.name.text));
            problem = match suggest(f, names.iter().copied()) {
                Some(s) => problem.hint(format!("did you mean `{s}`?")),
                None if names.is_empty() => problem.hint("the record has no fields besides `tag`"),
                None => problem.hint(format!(
                    "its fields are: {}",
                    names
                        .iter()
                        .take(20)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            self.problems.push(problem);
        }
    }
}
