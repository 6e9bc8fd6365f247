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

type Make<P> = dyn Fn(&[Value<P>]) -> Result<Strategy<P>, String> + Send + Sync;

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

/// Argument `i` as a strategy.
pub fn strategy_arg<P: 'static>(args: &[Value<P>], i: usize) -> Result<Strategy<P>, String> {
    match args.get(i) {
        Some(Value::Strategy(s)) => Ok(s.clone()),
        Some(Value::Name(n)) => Err(format!("unknown strategy `{n}`")),
        Some(_) => Err(format!("argument {} must be a strategy", i + 1)),
        None => Err(format!("missing argument {}", i + 1)),
    }
}

/// Argument `i` as a bare name.
pub fn name_arg<P>(args: &[Value<P>], i: usize) -> Result<&str, String> {
    match args.get(i) {
        Some(Value::Name(n)) => Ok(n),
        Some(_) => Err(format!("argument {} must be a name", i + 1)),
        None => Err(format!("missing argument {}", i + 1)),
    }
}

/// Argument `i` as a string literal: `"text"` gives `text`.
pub fn str_arg<P>(args: &[Value<P>], i: usize) -> Result<&str, String> {
    match args.get(i) {
        Some(Value::Str(s)) => Ok(s),
        Some(_) => Err(format!("argument {} must be a string (\"...\")", i + 1)),
        None => Err(format!("missing argument {}", i + 1)),
    }
}

/// Argument `i` as a non-negative integer.
///
/// Messages about argument `i` start with `argument i+1`, which is how the parser
/// knows to point at that argument.
pub fn int_arg<P>(args: &[Value<P>], i: usize) -> Result<usize, String> {
    match args.get(i) {
        Some(Value::Int(n)) if *n >= 0 => {
            usize::try_from(*n).map_err(|_| format!("argument {} is too large, found {n}", i + 1))
        }
        Some(Value::Int(n)) => Err(format!(
            "argument {} must be non-negative, found {n}",
            i + 1
        )),
        Some(_) => Err(format!("argument {} must be a number", i + 1)),
        None => Err(format!("missing argument {}", i + 1)),
    }
}

/// Argument `i` as an integer from 0 to `max`.
pub fn bounded_int_arg<P>(args: &[Value<P>], i: usize, max: usize) -> Result<usize, String> {
    let n = int_arg(args, i)?;
    if n > max {
        return Err(format!(
            "argument {} is too large: at most {max}, found {n}",
            i + 1
        ));
    }
    Ok(n)
}

fn arity<P>(args: &[Value<P>], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("expects {n} argument(s), found {}", args.len()))
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
                    return Err("argument 1 must be a list of child positions".into());
                };
                let steps = positions
                    .iter()
                    .map(|&i| match u32::try_from(i) {
                        Ok(step) => Ok(step),
                        Err(_) if i < 0 => Err(format!(
                            "argument 1 must hold non-negative child positions, found {i}"
                        )),
                        Err(_) => Err(format!(
                            "argument 1 holds a child position that is too large: {i}"
                        )),
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
        make: impl Fn(&[Value<P>]) -> Result<Strategy<P>, String> + Send + Sync + 'static,
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
    pub(super) fn make(&self, args: &[Value<P>]) -> Result<Strategy<P>, String> {
        (self.make)(args)
    }
}
