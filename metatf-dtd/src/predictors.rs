//! The predictors a `model` property may name, and the checks of its value that need no
//! record: names, operand counts and kinds, orders, the length of the list, the primary.
//! Which field an operand names is checked when the record is lowered (`lower/models.rs`).

use crate::ast::{Term, Token};
use crate::diagnostic::Problem;
use crate::model::{MODEL_MAX_LIST, MODEL_MAX_ORDER};
use crate::values::{number, suggest};

/// What follows a predictor's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// Nothing.
    None,
    /// An order, 1 to [`MODEL_MAX_ORDER`].
    Order,
    /// A field: `name` (same record) or `record.name`.
    Field,
    /// A field, or nothing for the field itself.
    OptionalField,
}

/// One predictor name.
#[derive(Debug, Clone, Copy)]
pub struct PredictorInfo {
    /// The name as written.
    pub name: &'static str,
    /// Its operand.
    pub operand: Operand,
    /// True for rank predictors (a list in which the value is looked up), which cannot be
    /// the primary.
    pub rank: bool,
    /// What the operand is, for messages.
    pub meaning: &'static str,
}

const fn info(
    name: &'static str,
    operand: Operand,
    rank: bool,
    meaning: &'static str,
) -> PredictorInfo {
    PredictorInfo {
        name,
        operand,
        rank,
        meaning,
    }
}

/// Every predictor, in the order of the model engine's codes (docs/FORMAT.md §7).
pub const PREDICTORS: [PredictorInfo; 17] = [
    info("none", Operand::None, false, ""),
    info(
        "last",
        Operand::OptionalField,
        false,
        "the field whose last value is the guess",
    ),
    info("stride", Operand::None, false, ""),
    info(
        "sum",
        Operand::Field,
        false,
        "the field whose last value is added",
    ),
    info("fcm", Operand::Order, false, "the number of past values"),
    info(
        "dfcm",
        Operand::Order,
        false,
        "the number of past differences",
    ),
    info(
        "key",
        Operand::Field,
        false,
        "the field whose value is the key",
    ),
    info(
        "keystride",
        Operand::Field,
        false,
        "the field whose value is the key",
    ),
    info(
        "keyshift",
        Operand::Field,
        false,
        "the field whose value is the key",
    ),
    info(
        "keydelta",
        Operand::Field,
        false,
        "the field whose value is the key",
    ),
    info(
        "live",
        Operand::Field,
        true,
        "the field that creates the objects",
    ),
    info("mtf", Operand::None, true, ""),
    info(
        "livenext",
        Operand::Field,
        true,
        "the field that creates the objects",
    ),
    info(
        "reuse",
        Operand::OptionalField,
        true,
        "the field whose value is the key",
    ),
    info(
        "top",
        Operand::Field,
        false,
        "the field whose value keys the step after the largest value",
    ),
    info(
        "recent",
        Operand::OptionalField,
        true,
        "the field whose value is the context of the rank",
    ),
    info("match", Operand::None, false, ""),
];

/// The value of `model` that leaves the choice to the model engine.
pub const AUTO: &str = "auto";

/// A predictor checked on its own: its index in [`PREDICTORS`], its order (`fcm`, `dfcm`) and
/// the field operand as written (resolved later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Index in [`PREDICTORS`].
    pub index: usize,
    /// The order of `fcm` and `dfcm`, else 0.
    pub order: u8,
    /// The field operand, when given.
    pub field: Option<Token>,
    /// The predictor's name as written (for spans).
    pub name: Token,
}

impl Checked {
    /// The predictor's table entry.
    pub fn info(&self) -> &'static PredictorInfo {
        &PREDICTORS[self.index]
    }
}

/// Checks a `model` value: `Ok(vec![])` for `auto`, else the predictors, the primary first.
pub fn check(terms: &[Term]) -> Result<Vec<Checked>, Vec<Problem>> {
    let mut problems = Vec::new();
    if let [only] = terms {
        if only.name.text == AUTO {
            if let Some(extra) = only.operands.first() {
                problems.push(
                    Problem::new(
                        extra.span,
                        format!("`auto` takes no operand, found `{}`", extra.text),
                    )
                    .label("extra operand")
                    .hint("write `auto` alone: the model engine chooses the predictors"),
                );
                return Err(problems);
            }
            return Ok(Vec::new());
        }
    }
    let mut out = Vec::new();
    for (i, t) in terms.iter().enumerate() {
        if let Some(c) = term(t, terms.len(), &mut problems) {
            if i == 0 && c.info().rank {
                let name = c.info().name;
                problems.push(
                    Problem::new(t.span(), format!("`{name}` is a rank predictor and cannot be the primary"))
                        .label("first predictor")
                        .hint(format!(
                            "the first predictor is the one a value no listed predictor hits is coded against, so it must guess a value; write e.g. `none, {}`",
                            display(t)
                        )),
                );
            }
            out.push(c);
        }
    }
    if let Some(extra) = terms.get(1 + MODEL_MAX_LIST) {
        problems.push(
            Problem::new(
                extra.span(),
                format!(
                    "a model lists at most {} predictors, found {}",
                    1 + MODEL_MAX_LIST,
                    terms.len()
                ),
            )
            .label("one too many")
            .hint(format!(
                "a primary predictor and at most {MODEL_MAX_LIST} more: drop the ones that hit least"
            )),
        );
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

fn display(t: &Term) -> String {
    std::iter::once(t.name.text.as_str())
        .chain(t.operands.iter().map(|o| o.text.as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn term(t: &Term, count: usize, problems: &mut Vec<Problem>) -> Option<Checked> {
    let name = t.name.text.as_str();
    let Some(index) = PREDICTORS.iter().position(|p| p.name == name) else {
        let mut p = Problem::new(t.name.span, format!("unknown predictor `{name}`"))
            .label("not a predictor");
        let names = PREDICTORS.iter().map(|p| p.name).chain([AUTO]);
        p = if name == AUTO && count > 1 {
            p.message = "`auto` cannot be listed with other predictors".to_string();
            p.label("with other predictors")
                .hint("write `auto` alone, or list the predictors without it")
        } else if name == "delta" {
            p.hint("the model engine's delta is `last` (the field's own last value)")
        } else if let Some(s) = suggest(name, names) {
            p.hint(format!("did you mean `{s}`?"))
        } else {
            p.hint("the predictors are none, last, stride, sum, fcm, dfcm, key, keystride, keyshift, keydelta, live, mtf, livenext, reuse, top and recent, or `auto` alone")
        };
        problems.push(p);
        return None;
    };
    let info = &PREDICTORS[index];
    let most = match info.operand {
        Operand::None => 0,
        _ => 1,
    };
    let least = match info.operand {
        Operand::Order | Operand::Field => 1,
        _ => 0,
    };
    let n = t.operands.len();
    if n < least || n > most {
        let takes = match info.operand {
            Operand::None => "takes no operand".to_string(),
            Operand::Order => format!("takes one order ({}, 1 to {MODEL_MAX_ORDER})", info.meaning),
            Operand::Field => format!("takes one field ({})", info.meaning),
            Operand::OptionalField => format!("takes at most one field ({})", info.meaning),
        };
        let at = t.operands.get(most).map_or(t.name.span, |o| o.span);
        let example = match info.operand {
            Operand::None => name.to_string(),
            Operand::Order => format!("{name} 2"),
            _ => format!("{name} size` or `{name} alloc.ptr"),
        };
        problems.push(
            Problem::new(at, format!("`{name}` {takes}, found {n}"))
                .label(if n > most {
                    "extra operand"
                } else {
                    "operand missing"
                })
                .hint(format!("write `{example}`; separate predictors with `,`")),
        );
        return None;
    }
    let operand = t.operands.first();
    let mut order = 0;
    let mut field = None;
    match (info.operand, operand) {
        (Operand::Order, Some(o)) => match number(o, "an order") {
            Ok(k) if (1..=u64::from(MODEL_MAX_ORDER)).contains(&k) => order = k as u8,
            Ok(k) => {
                problems.push(
                    Problem::new(
                        o.span,
                        format!("`{name}` of order {k}: the order is 1 to {MODEL_MAX_ORDER}"),
                    )
                    .label("out of range")
                    .hint(format!(
                        "the context is the last 1 to {MODEL_MAX_ORDER} values"
                    )),
                );
                return None;
            }
            Err(e) => {
                problems.push(e.hint(format!(
                    "`{name}` takes the number of past values, e.g. `{name} 2`"
                )));
                return None;
            }
        },
        (Operand::Field | Operand::OptionalField, Some(o)) => {
            if !o
                .text
                .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            {
                problems.push(
                    Problem::new(
                        o.span,
                        format!("`{name}` takes a field, found `{}`", o.text),
                    )
                    .label("not a field")
                    .hint(format!(
                        "name a field of the record, or another record's as `record.field` ({})",
                        info.meaning
                    )),
                );
                return None;
            }
            field = Some(o.clone());
        }
        _ => {}
    }
    Some(Checked {
        index,
        order,
        field,
        name: t.name.clone(),
    })
}
