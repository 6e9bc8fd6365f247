//! Names of strategies, and the elaboration of parsed text into strategies.

use crate::basic::apply_n_times;
use crate::*;
use elevate_core::{Path, Strategy, Traversable};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// An argument value in strategy text.
pub enum Value<P> {
    /// An integer (or nat).
    Int(i64),
    /// A list of integers.
    List(Vec<i64>),
    /// A string.
    Str(String),
    /// A strategy.
    Strategy(Strategy<P>),
    /// A name that is not a strategy (a primitive's, say: `argumentOf(map, s)`).
    Name(String),
}

impl<P: 'static> Clone for Value<P> {
    fn clone(&self) -> Self {
        match self {
            Value::Int(n) => Value::Int(*n),
            Value::List(l) => Value::List(l.clone()),
            Value::Str(s) => Value::Str(s.clone()),
            Value::Strategy(s) => Value::Strategy(s.clone()),
            Value::Name(n) => Value::Name(n.clone()),
        }
    }
}

/// Written as strategy text: `3`, `[0, 1]`, `"text"`, a strategy, a name.
impl<P: 'static> fmt::Display for Value<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Str(text) => write!(f, "\"{text}\""),
            Value::Strategy(s) => write!(f, "{s}"),
            Value::Name(name) => f.write_str(name),
        }
    }
}

/// How a named strategy is made from its argument values.
type Make<P> = dyn Fn(&[Value<P>]) -> Result<Strategy<P>, ArgError> + Send + Sync;

/// A named strategy constructor.
pub struct Entry<P> {
    /// The name in strategy text.
    pub name: String,
    /// Its parameters as documentation, e.g. `(n, s)`; empty for none.
    pub params: String,
    /// One line of meaning.
    pub doc: String,
    make: Arc<Make<P>>,
}

/// The names that strategy text can use, and the parser that uses them.
pub struct Registry<P> {
    entries: BTreeMap<String, Entry<P>>,
}

/// What kind of value an argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A strategy.
    Strategy,
    /// A bare name (a primitive's, say).
    Name,
    /// A string literal.
    String,
    /// An integer.
    Number,
    /// A list of child positions, `[0, 1]`.
    Positions,
}

impl fmt::Display for ArgKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArgKind::Strategy => "a strategy",
            ArgKind::Name => "a name",
            ArgKind::String => "a string (\"...\")",
            ArgKind::Number => "a number",
            ArgKind::Positions => "a list of child positions",
        })
    }
}

/// Why the arguments of a named strategy do not make a strategy.
///
/// Arguments are numbered from 0 (`index`); messages count from 1, as text is read
/// (`argument 1 must be a number`). The text parser reports an error with an index at
/// that argument, and one without at the name of the strategy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// Fewer arguments than the constructor reads.
    #[error("missing argument {}", .index + 1)]
    Missing {
        /// The argument that is not there.
        index: usize,
    },
    /// Not as many arguments as the strategy takes.
    #[error("expects {expected} argument(s), found {found}")]
    Arity {
        /// How many it takes.
        expected: usize,
        /// How many were given.
        found: usize,
    },
    /// An argument of the wrong kind: a number where a strategy belongs, say.
    #[error("argument {} must be {expected}", .index + 1)]
    WrongKind {
        /// The argument.
        index: usize,
        /// What it must be.
        expected: ArgKind,
    },
    /// A bare name where a strategy belongs, that names none.
    #[error("unknown strategy `{name}`")]
    UnknownStrategy {
        /// The argument.
        index: usize,
        /// The name as written.
        name: String,
    },
    /// A name that is not one of those the argument takes (`expected` says which,
    /// e.g. "a primitive").
    #[error("`{name}` is not {expected}")]
    UnknownName {
        /// The argument.
        index: usize,
        /// The name as written.
        name: String,
        /// What it must name, with its article.
        expected: &'static str,
    },
    /// A negative count.
    #[error("argument {} must be non-negative, found {value}", .index + 1)]
    Negative {
        /// The argument.
        index: usize,
        /// The value given.
        value: i64,
    },
    /// A count beyond what the strategy takes.
    #[error("argument {} is too large: at most {max}, found {value}", .index + 1)]
    TooLarge {
        /// The argument.
        index: usize,
        /// The value given.
        value: i64,
        /// The largest value it takes.
        max: usize,
    },
    /// An argument of the right kind that the constructor refuses, with why:
    /// `argument 1 {reason}`.
    #[error("argument {} {reason}", .index + 1)]
    Rejected {
        /// The argument.
        index: usize,
        /// What is wrong with it, following `argument k`.
        reason: String,
    },
    /// The constructor's own check of its arguments, in its words (`the size n must be
    /// positive, found 0`): about one argument, or about them all.
    #[error("{message}")]
    Invalid {
        /// The argument it is about, if it is about one.
        index: Option<usize>,
        /// Why.
        message: String,
    },
}

impl ArgError {
    /// The constructor's own check failed: `message`, about the argument `index` (a
    /// number) or about all of them (`None`).
    pub fn invalid(index: impl Into<Option<usize>>, message: impl Into<String>) -> ArgError {
        ArgError::Invalid {
            index: index.into(),
            message: message.into(),
        }
    }

    /// The argument the error is about (from 0), if it is about one.
    pub fn index(&self) -> Option<usize> {
        match self {
            ArgError::Missing { index }
            | ArgError::WrongKind { index, .. }
            | ArgError::UnknownStrategy { index, .. }
            | ArgError::UnknownName { index, .. }
            | ArgError::Negative { index, .. }
            | ArgError::TooLarge { index, .. }
            | ArgError::Rejected { index, .. } => Some(*index),
            ArgError::Invalid { index, .. } => *index,
            ArgError::Arity { .. } => None,
        }
    }
}

/// Argument `i` as a strategy.
pub fn strategy_arg<P: 'static>(args: &[Value<P>], i: usize) -> Result<Strategy<P>, ArgError> {
    match args.get(i) {
        Some(Value::Strategy(s)) => Ok(s.clone()),
        Some(Value::Name(n)) => Err(ArgError::UnknownStrategy {
            index: i,
            name: n.clone(),
        }),
        Some(_) => Err(wrong_kind(i, ArgKind::Strategy)),
        None => Err(ArgError::Missing { index: i }),
    }
}

/// Argument `i` as a bare name.
pub fn name_arg<P>(args: &[Value<P>], i: usize) -> Result<&str, ArgError> {
    match args.get(i) {
        Some(Value::Name(n)) => Ok(n),
        Some(_) => Err(wrong_kind(i, ArgKind::Name)),
        None => Err(ArgError::Missing { index: i }),
    }
}

/// Argument `i` as a string literal: `"text"` gives `text`.
pub fn str_arg<P>(args: &[Value<P>], i: usize) -> Result<&str, ArgError> {
    match args.get(i) {
        Some(Value::Str(s)) => Ok(s),
        Some(_) => Err(wrong_kind(i, ArgKind::String)),
        None => Err(ArgError::Missing { index: i }),
    }
}

/// Argument `i` as a non-negative integer.
pub fn int_arg<P>(args: &[Value<P>], i: usize) -> Result<usize, ArgError> {
    bounded_int_arg(args, i, usize::MAX)
}

/// Argument `i` as an integer from 0 to `max`.
pub fn bounded_int_arg<P>(args: &[Value<P>], i: usize, max: usize) -> Result<usize, ArgError> {
    let value = match args.get(i) {
        Some(Value::Int(n)) if *n >= 0 => *n,
        Some(Value::Int(n)) => {
            return Err(ArgError::Negative {
                index: i,
                value: *n,
            })
        }
        Some(_) => return Err(wrong_kind(i, ArgKind::Number)),
        None => return Err(ArgError::Missing { index: i }),
    };
    match usize::try_from(value) {
        Ok(n) if n <= max => Ok(n),
        _ => Err(ArgError::TooLarge {
            index: i,
            value,
            max,
        }),
    }
}

fn wrong_kind(index: usize, expected: ArgKind) -> ArgError {
    ArgError::WrongKind { index, expected }
}

/// Exactly `n` arguments.
pub fn arity<P>(args: &[Value<P>], n: usize) -> Result<(), ArgError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(ArgError::Arity {
            expected: n,
            found: args.len(),
        })
    }
}

impl<P: Traversable> Default for Registry<P> {
    fn default() -> Self {
        Registry {
            entries: BTreeMap::new(),
        }
    }
}

impl<P: Traversable + fmt::Display> Registry<P> {
    /// A registry with Elevate's combinators and traversals.
    pub fn with_combinators() -> Self {
        let mut r = Registry::new();
        r.add("id", "", "succeeds with the program unchanged", |a| {
            arity(a, 0)?;
            Ok(id())
        });
        r.add("fail", "", "always fails", |a| {
            arity(a, 0)?;
            Ok(fail())
        });
        type Unary<P> = fn(Strategy<P>) -> Strategy<P>;
        let unary: [(&str, &str, Unary<P>); 16] = [
            ("try", "s, or the program unchanged where s fails", try_),
            ("repeat", "applies s until it fails", repeat),
            (
                "normalize",
                "repeat(topDown(s)): rewrites with s until it applies nowhere",
                normalize,
            ),
            (
                "not",
                "succeeds (unchanged) where s fails, fails where it succeeds",
                not,
            ),
            ("all", "s on every child; fails if it fails on one", all),
            ("one", "s on the first child where it succeeds", one),
            (
                "some",
                "s on every child where it succeeds; fails if none",
                some,
            ),
            (
                "topDown",
                "s at the first location in pre-order where it succeeds",
                top_down,
            ),
            (
                "bottomUp",
                "s at the first location in post-order where it succeeds",
                bottom_up,
            ),
            (
                "allTopDown",
                "s ; all(allTopDown(s)): s everywhere, parents first",
                all_top_down,
            ),
            (
                "allBottomUp",
                "all(allBottomUp(s)) ; s: s everywhere, children first",
                all_bottom_up,
            ),
            (
                "tryAll",
                "all(tryAll(try(s))) ; try(s): s wherever it applies, children first",
                try_all,
            ),
            ("downup", "s ; all(downup(s)) ; s", downup),
            (
                "alltd",
                "s <+ all(alltd(s)): s at the outermost locations where it applies",
                alltd,
            ),
            (
                "sometd",
                "s <+ some(sometd(s)); fails if s applies nowhere",
                sometd,
            ),
            (
                "somebu",
                "some(somebu(s)) <+ s; fails if s applies nowhere",
                somebu,
            ),
        ];
        for (name, doc, f) in unary {
            r.unary(name, doc, f);
        }
        r.add(
            "repeatN",
            "(n, s)",
            "s ; s ; ... ; s (n times); fails if any fails",
            |a| {
                arity(a, 2)?;
                Ok(repeat_n(int_arg(a, 0)?, strategy_arg(a, 1)?))
            },
        );
        r.add(
            "applyN",
            "(n, s)",
            "s ; s ; ... ; s (n times), like repeatN; applyN(n, T)(s) = T(T(...T(s))) \
             (n times) for a traversal T without its last argument, e.g. \
             `s @ applyN(2, one)`",
            |a| {
                arity(a, 2)?;
                Ok(apply_n_times(int_arg(a, 0)?, strategy_arg(a, 1)?))
            },
        );
        r.add("peek", "", "prints the program and succeeds", |a| {
            arity(a, 0)?;
            Ok(peek())
        });
        r.add(
            "position",
            "(n)(s)",
            "s at the n-th location in pre-order (root = 0)",
            |a| {
                arity(a, 2)?;
                Ok(position(int_arg(a, 0)?, strategy_arg(a, 1)?))
            },
        );
        r.add(
            "skip",
            "(n)(s)",
            "s at the first location after skipping n matches",
            |a| {
                arity(a, 2)?;
                Ok(skip(int_arg(a, 0)?, strategy_arg(a, 1)?))
            },
        );
        r.add(
            "atPath",
            "([i, ...], s)",
            "s at the location given by child positions",
            |a| {
                arity(a, 2)?;
                let Value::List(positions) = &a[0] else {
                    return Err(wrong_kind(0, ArgKind::Positions));
                };
                let steps = positions
                    .iter()
                    .map(|&i| {
                        u32::try_from(i).map_err(|_| ArgError::Rejected {
                            index: 0,
                            reason: if i < 0 {
                                format!("must hold non-negative child positions, found {i}")
                            } else {
                                format!("holds a child position that is too large: {i}")
                            },
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(at_path(Path::from(steps), strategy_arg(a, 1)?))
            },
        );
        r.add(
            "ifThenElse",
            "(p, t, e)",
            "t where the predicate p succeeds, else e",
            |a| {
                arity(a, 3)?;
                Ok(if_then_else(
                    strategy_arg(a, 0)?,
                    strategy_arg(a, 1)?,
                    strategy_arg(a, 2)?,
                ))
            },
        );
        r.add(
            "debug",
            "(\"message\")",
            "prints the message and succeeds",
            |a| {
                arity(a, 1)?;
                Ok(debug(str_arg(a, 0)?))
            },
        );
        r
    }
}

impl<P: Traversable> Registry<P> {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds (or replaces) a named strategy. `params` documents its arguments, e.g.
    /// `(n, s)`; `make` builds it from argument values.
    pub fn add(
        &mut self,
        name: &str,
        params: &str,
        doc: &str,
        make: impl Fn(&[Value<P>]) -> Result<Strategy<P>, ArgError> + Send + Sync + 'static,
    ) {
        self.entries.insert(
            name.to_string(),
            Entry {
                name: name.to_string(),
                params: params.to_string(),
                doc: doc.to_string(),
                make: Arc::new(make),
            },
        );
    }

    /// Adds a strategy of one strategy argument, `name(s)`: a traversal or location.
    pub fn unary(&mut self, name: &str, doc: &str, make: fn(Strategy<P>) -> Strategy<P>) {
        self.add(name, "(s)", doc, move |a| {
            arity(a, 1)?;
            Ok(make(strategy_arg(a, 0)?))
        });
    }

    /// Adds a strategy of a predicate and a strategy, `name(p)(s)`.
    pub fn guided(
        &mut self,
        name: &str,
        doc: &str,
        make: fn(Strategy<P>, Strategy<P>) -> Strategy<P>,
    ) {
        self.add(name, "(p)(s)", doc, move |a| {
            arity(a, 2)?;
            Ok(make(strategy_arg(a, 0)?, strategy_arg(a, 1)?))
        });
    }

    /// Adds a rule (or strategy) without arguments.
    pub fn rule(&mut self, name: &str, doc: &str, make: fn() -> Strategy<P>) {
        self.add(name, "", doc, move |a| {
            arity(a, 0)?;
            Ok(make())
        });
    }

    /// Every entry, by name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry<P>> {
        self.entries.values()
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The constructor registered under `name`.
    pub(super) fn entry(&self, name: &str) -> Option<&Entry<P>> {
        self.entries.get(name)
    }
}

impl<P> Entry<P> {
    /// Builds the strategy from its argument values.
    pub(super) fn make(&self, args: &[Value<P>]) -> Result<Strategy<P>, ArgError> {
        (self.make)(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elevate_core::arith::Term;

    fn int(n: i64) -> Value<Term> {
        Value::Int(n)
    }

    #[test]
    fn argument_errors_carry_the_index_and_count_from_one_in_words() {
        let args = [
            int(-2),
            Value::Name("nope".into()),
            int(7),
            Value::Str("s".into()),
        ];
        let cases: [(Result<(), ArgError>, Option<usize>, &str); 9] = [
            (
                int_arg(&args, 0).map(drop),
                Some(0),
                "argument 1 must be non-negative, found -2",
            ),
            (
                strategy_arg(&args, 1).map(drop),
                Some(1),
                "unknown strategy `nope`",
            ),
            (
                bounded_int_arg(&args, 2, 5).map(drop),
                Some(2),
                "argument 3 is too large: at most 5, found 7",
            ),
            (
                name_arg(&args, 3).map(drop),
                Some(3),
                "argument 4 must be a name",
            ),
            (
                str_arg(&args, 2).map(drop),
                Some(2),
                "argument 3 must be a string (\"...\")",
            ),
            (
                int_arg(&args, 3).map(drop),
                Some(3),
                "argument 4 must be a number",
            ),
            (
                strategy_arg(&args, 4).map(drop),
                Some(4),
                "missing argument 5",
            ),
            (arity(&args, 2), None, "expects 2 argument(s), found 4"),
            (
                Err(ArgError::invalid(1, "the size n must be positive, found 0")),
                Some(1),
                "the size n must be positive, found 0",
            ),
        ];
        for (result, index, message) in cases {
            let e = result.unwrap_err();
            assert_eq!(e.index(), index, "{e}");
            assert_eq!(e.to_string(), message);
        }
        assert_eq!(bounded_int_arg(&args, 2, 7), Ok(7));
        assert_eq!(ArgError::invalid(None, "whole").index(), None);
    }

    #[test]
    fn at_path_refuses_bad_positions_as_its_first_argument() {
        let registry = Registry::<Term>::with_combinators();
        let entry = registry.entry("atPath").unwrap();
        let id = Value::Strategy(id());
        for (positions, message) in [
            (
                vec![0, -1],
                "argument 1 must hold non-negative child positions, found -1",
            ),
            (
                vec![1 << 32],
                "argument 1 holds a child position that is too large: 4294967296",
            ),
        ] {
            let e = entry
                .make(&[Value::List(positions), id.clone()])
                .map(drop)
                .unwrap_err();
            assert_eq!(e.index(), Some(0));
            assert_eq!(e.to_string(), message);
        }
        let e = entry.make(&[int(0), id]).map(drop).unwrap_err();
        assert_eq!(
            e,
            ArgError::WrongKind {
                index: 0,
                expected: ArgKind::Positions
            }
        );
        assert_eq!(
            e.to_string(),
            "argument 1 must be a list of child positions"
        );
    }
}
