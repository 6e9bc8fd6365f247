//! Names of strategies, and the elaboration of parsed text into strategies.

use super::parser::{parse_file, ArgAst, Ast, Def, TextError};
use crate::*;
use elevate_core::{Path, Program, Strategy};
use std::collections::{BTreeMap, HashMap};
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
pub fn int_arg<P>(args: &[Value<P>], i: usize) -> Result<usize, String> {
    match args.get(i) {
        Some(Value::Int(n)) if *n >= 0 => Ok(*n as usize),
        Some(Value::Int(n)) => Err(format!(
            "argument {} must not be negative, found {n}",
            i + 1
        )),
        Some(_) => Err(format!("argument {} must be a number", i + 1)),
        None => Err(format!("missing argument {}", i + 1)),
    }
}

fn arity<P>(args: &[Value<P>], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("expects {n} argument(s), found {}", args.len()))
    }
}

impl<P: Program> Default for Registry<P> {
    fn default() -> Self {
        Registry {
            entries: BTreeMap::new(),
        }
    }
}

impl<P: Program> Registry<P> {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

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
                let steps = match &a[0] {
                    Value::List(l) if l.iter().all(|i| *i >= 0) => {
                        l.iter().map(|i| *i as u32).collect::<Vec<_>>()
                    }
                    _ => return Err("argument 1 must be a list of child positions".into()),
                };
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

    /// Parses strategy text (with `def`s) into a strategy.
    pub fn parse(&self, text: &str) -> Result<Strategy<P>, TextError> {
        let file = parse_file(text)?;
        let mut defs: HashMap<&str, &Def> = HashMap::new();
        for def in &file.defs {
            defs.insert(def.name.as_str(), def);
        }
        let scope = Scope {
            registry: self,
            defs,
            names: Default::default(),
        };
        scope.strategy(&file.main, &HashMap::new(), 0)
    }
}

struct Scope<'r, P> {
    registry: &'r Registry<P>,
    defs: HashMap<&'r str, &'r Def>,
    /// Where each bare name that is not a strategy was written, to point at it when
    /// a strategy was needed there.
    names: std::cell::RefCell<HashMap<String, usize>>,
}

fn offset_of(ast: &Ast) -> usize {
    match ast {
        Ast::Call { offset, .. } | Ast::SeqDfnf(_, _, offset) | Ast::At(_, _, offset) => *offset,
        Ast::Seq(a, _) | Ast::Choice(a, _) => offset_of(a),
    }
}

impl<P: Program> Scope<'_, P> {
    fn strategy(
        &self,
        ast: &Ast,
        env: &HashMap<String, Value<P>>,
        depth: usize,
    ) -> Result<Strategy<P>, TextError> {
        match self.value(ast, env, depth)? {
            Value::Strategy(s) => Ok(s),
            Value::Name(name) => Err(TextError {
                offset: offset_of(ast),
                message: format!("unknown strategy `{name}` (`elevate strategies` lists them)"),
            }),
            _ => Err(TextError {
                offset: offset_of(ast),
                message: "expected a strategy here, found a number, list or string".into(),
            }),
        }
    }

    fn value(
        &self,
        ast: &Ast,
        env: &HashMap<String, Value<P>>,
        depth: usize,
    ) -> Result<Value<P>, TextError> {
        match ast {
            Ast::Seq(a, b) => Ok(Value::Strategy(seq(
                self.strategy(a, env, depth)?,
                self.strategy(b, env, depth)?,
            ))),
            Ast::Choice(a, b) => Ok(Value::Strategy(left_choice(
                self.strategy(a, env, depth)?,
                self.strategy(b, env, depth)?,
            ))),
            Ast::SeqDfnf(a, b, offset) => {
                let dfnf = self.call("DFNF", &[], *offset, depth)?;
                Ok(Value::Strategy(seq(
                    seq(self.strategy(a, env, depth)?, dfnf),
                    self.strategy(b, env, depth)?,
                )))
            }
            Ast::At(s, t, offset) => {
                let s = self.strategy(s, env, depth)?;
                let Ast::Call { name, args, .. } = &**t else {
                    return Err(TextError {
                        offset: *offset,
                        message: "expected a traversal after `@`, e.g. `topDown` or `outermost(mapNest(2))`".into(),
                    });
                };
                let mut values = self.args(args, env, depth)?;
                values.push(Value::Strategy(s));
                Ok(Value::Strategy(self.call(
                    name,
                    &values,
                    offset_of(t),
                    depth,
                )?))
            }
            Ast::Call { name, args, offset } => {
                if args.is_empty() {
                    if let Some(bound) = env.get(name) {
                        return Ok(bound.clone());
                    }
                    if !self.defs.contains_key(name.as_str()) && !self.registry.contains(name) {
                        // Not a strategy: a name argument, or an error where a
                        // strategy is needed.
                        self.names
                            .borrow_mut()
                            .entry(name.clone())
                            .or_insert(*offset);
                        return Ok(Value::Name(name.clone()));
                    }
                }
                let values = self.args(args, env, depth)?;
                Ok(Value::Strategy(self.call(name, &values, *offset, depth)?))
            }
        }
    }

    fn args(
        &self,
        groups: &[Vec<ArgAst>],
        env: &HashMap<String, Value<P>>,
        depth: usize,
    ) -> Result<Vec<Value<P>>, TextError> {
        let mut values = Vec::new();
        for arg in groups.iter().flatten() {
            values.push(match arg {
                ArgAst::Int(n) => Value::Int(*n),
                ArgAst::List(l) => Value::List(l.clone()),
                ArgAst::Str(s) => Value::Str(s.clone()),
                ArgAst::Strategy(ast) => self.value(ast, env, depth)?,
            });
        }
        Ok(values)
    }

    fn call(
        &self,
        name: &str,
        values: &[Value<P>],
        offset: usize,
        depth: usize,
    ) -> Result<Strategy<P>, TextError> {
        let error = |message: String| TextError { offset, message };
        if let Some(def) = self.defs.get(name) {
            if depth > 64 {
                return Err(error(format!("`{name}` is defined in terms of itself")));
            }
            if values.len() != def.params.len() {
                return Err(error(format!(
                    "`{name}` expects {} argument(s), found {}",
                    def.params.len(),
                    values.len()
                )));
            }
            let env: HashMap<String, Value<P>> = def
                .params
                .iter()
                .cloned()
                .zip(values.iter().cloned())
                .collect();
            return self.strategy(&def.body, &env, depth + 1);
        }
        let entry = self.registry.entries.get(name).ok_or_else(|| {
            error(format!(
                "unknown strategy `{name}` (`elevate strategies` lists them)"
            ))
        })?;
        (entry.make)(values).map_err(|e| {
            // An unknown name given where a strategy was needed: point at the name.
            for value in values {
                if let Value::Name(unknown) = value {
                    if e.contains(&format!("`{unknown}`")) {
                        if let Some(at) = self.names.borrow().get(unknown) {
                            return TextError {
                                offset: *at,
                                message: format!(
                                    "unknown strategy `{unknown}` (`elevate strategies` lists them)"
                                ),
                            };
                        }
                    }
                }
            }
            error(format!("`{name}{}`: {e}", entry.params))
        })
    }
}
