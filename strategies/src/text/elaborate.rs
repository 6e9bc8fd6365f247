//! From a parsed file to a strategy: names looked up in the registry, `def`s
//! instantiated once per distinct list of arguments and shared, `@` and `applyN`.
//!
//! Everything here works on shapes as deep and as long as the parser accepts: the one
//! recursive point ([`Scope::value`]) runs under [`guard`], and the checks of the
//! definitions use work lists.

use super::parser::{parse_file, Arg, ArgAst, Ast, Def, File, TextError};
use super::registry::{bounded_int_arg, ArgError, ArgKind, Registry, Value};
use crate::basic::MAX_APPLY_N;
use elevate_core::stack::guard;
use elevate_core::{
    choice, sequence, Context, Name, RewriteResult, Strategy, StrategyImpl, Traversable,
};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;

/// How many strategies elaboration may build beyond one per byte of text: only
/// definitions instantiated with ever new arguments can get there.
const EXPANSION_LIMIT: usize = 1_000_000;

/// Parameters bound to argument values, inside a definition's body.
type Env<P> = HashMap<String, Value<P>>;

impl<P: Traversable> Registry<P> {
    /// Parses strategy text (with `def`s) into a strategy.
    ///
    /// A reference to a `def` is one node that prints as the reference (`rows(4)`)
    /// and applies the definition's body; each definition is built once per distinct
    /// list of arguments and shared, so definitions in terms of each other never
    /// multiply. Applying a reference counts as one strategy application.
    ///
    /// The strategy of a text with `def`s prints with them in front (as written), so
    /// that its text parses back to an equal strategy on its own.
    pub fn parse(&self, text: &str) -> Result<Strategy<P>, TextError> {
        let file = parse_file(text)?;
        let main = elaborate(self, &file, text.len())?;
        if file.defs.is_empty() {
            return Ok(main);
        }
        let definitions = text[..main_start(text, file.main.offset())].trim_end();
        Ok(Strategy::new(WithDefinitions {
            definitions: definitions.into(),
            main,
        }))
    }
}

/// Where the main strategy's text starts, given where its first name is: before any
/// `(` that opens it (a definition's body cannot end with one).
fn main_start(text: &str, first_name: usize) -> usize {
    let before = &text[..first_name];
    let kept = before.trim_end_matches(|c: char| c == '(' || c.is_whitespace());
    kept.len()
}

/// The main strategy of a text with `def`s: applies as the main strategy, prints with
/// the definitions in front.
struct WithDefinitions<P> {
    definitions: std::sync::Arc<str>,
    main: Strategy<P>,
}

impl<P: Send + Sync + 'static> StrategyImpl<P> for WithDefinitions<P> {
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        self.main.apply(program, cx)
    }

    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, elevate_core::Failure> {
        self.main.attempt(program, cx)
    }

    fn name(&self) -> Name {
        self.main.name()
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{}", self.definitions, self.main)
    }
}

/// A parsed file to a strategy.
pub(super) fn elaborate<P: Traversable>(
    registry: &Registry<P>,
    file: &File,
    text_len: usize,
) -> Result<Strategy<P>, TextError> {
    let mut defs: HashMap<&str, &Def> = HashMap::new();
    for def in &file.defs {
        if defs.insert(def.name.as_str(), def).is_some() {
            return Err(TextError {
                offset: def.offset,
                message: format!("`{}` is defined twice", def.name),
            });
        }
    }
    check_cycles(&file.defs)?;
    let scope = Scope {
        registry,
        defs,
        names: RefCell::default(),
        instances: RefCell::default(),
        built: Cell::new(0),
        limit: EXPANSION_LIMIT.saturating_add(text_len),
    };
    scope.strategy(&file.main, &Env::new())
}

/// The definitions that `def`'s body refers to, with where: a work list over the
/// body, which may be nested arbitrarily deep.
fn references(def: &Def, index: &HashMap<&str, usize>) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut pending = vec![&def.body];
    while let Some(ast) = pending.pop() {
        match ast {
            Ast::Call { name, args, offset } => {
                if !def.params.contains(name) {
                    if let Some(&target) = index.get(name.as_str()) {
                        found.push((target, *offset));
                    }
                }
                for arg in args.iter().flatten() {
                    if let ArgAst::Strategy(inner) = &arg.value {
                        pending.push(inner);
                    }
                }
            }
            Ast::Seq(parts) | Ast::Choice(parts) => pending.extend(parts.iter().rev()),
            Ast::At(s, t, _) => {
                pending.push(t);
                pending.push(s);
            }
        }
    }
    found
}

/// Fails on a definition that refers to itself, directly or through others, naming
/// the cycle, at the reference that closes it. A depth-first search with an explicit
/// stack: a chain of 100,000 definitions is fine.
fn check_cycles(defs: &[Def]) -> Result<(), TextError> {
    let index: HashMap<&str, usize> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.name.as_str(), i))
        .collect();
    let edges: Vec<Vec<(usize, usize)>> = defs.iter().map(|d| references(d, &index)).collect();
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Done,
    }
    let mut state = vec![State::New; defs.len()];
    for root in 0..defs.len() {
        if state[root] != State::New {
            continue;
        }
        // (definition, next edge to follow)
        let mut stack = vec![(root, 0)];
        state[root] = State::Open;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let Some(&(target, offset)) = edges[node].get(*next) else {
                state[node] = State::Done;
                stack.pop();
                continue;
            };
            *next += 1;
            match state[target] {
                State::Done => {}
                State::New => {
                    state[target] = State::Open;
                    stack.push((target, 0));
                }
                State::Open => {
                    let from = stack.iter().position(|&(d, _)| d == target).unwrap_or(0);
                    let mut cycle: Vec<&str> = stack[from..]
                        .iter()
                        .map(|&(d, _)| defs[d].name.as_str())
                        .collect();
                    let name = &defs[target].name;
                    let message = if cycle.len() == 1 {
                        format!("`{name}` is defined in terms of itself")
                    } else {
                        cycle.push(name);
                        format!(
                            "`{name}` is defined in terms of itself: {}",
                            cycle.join(" -> ")
                        )
                    };
                    return Err(TextError { offset, message });
                }
            }
        }
    }
    Ok(())
}

/// An argument value as a key: strategies by identity (the table keeps them alive).
#[derive(PartialEq, Eq, Hash)]
enum Key {
    Int(i64),
    List(Vec<i64>),
    Str(String),
    Strategy(usize),
    Name(String),
}

impl<P: 'static> From<&Value<P>> for Key {
    fn from(value: &Value<P>) -> Self {
        match value {
            Value::Int(n) => Key::Int(*n),
            Value::List(l) => Key::List(l.clone()),
            Value::Str(s) => Key::Str(s.clone()),
            Value::Strategy(s) => Key::Strategy(s.key()),
            Value::Name(n) => Key::Name(n.clone()),
        }
    }
}

/// A reference to a definition: prints as written (`simplify`, `rows(4)`), applies
/// the definition's body, which all references with the same arguments share.
struct Defined<P> {
    name: Name,
    args: Vec<Value<P>>,
    body: Strategy<P>,
}

impl<P: Send + Sync + 'static> StrategyImpl<P> for Defined<P> {
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        self.body.apply(program, cx)
    }

    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, elevate_core::Failure> {
        self.body.attempt(program, cx)
    }

    fn name(&self) -> Name {
        self.name.clone()
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.args.is_empty() {
            f.write_str("(")?;
            for (i, arg) in self.args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{arg}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A definition's name and the keys of its arguments.
type InstanceKey = (String, Vec<Key>);

/// A definition's reference for some arguments; the arguments are kept so that no
/// strategy key is reused while the entry exists.
struct Instance<P> {
    _args: Vec<Value<P>>,
    reference: Strategy<P>,
}

struct Scope<'r, P> {
    registry: &'r Registry<P>,
    defs: HashMap<&'r str, &'r Def>,
    /// Where each bare name that is not a strategy was written, to point at it when
    /// a strategy was needed there.
    names: RefCell<HashMap<String, usize>>,
    /// Each definition instantiated so far, by name and arguments.
    instances: RefCell<HashMap<InstanceKey, Instance<P>>>,
    /// Strategies built so far, against `limit`.
    built: Cell<usize>,
    limit: usize,
}

/// Argument `args[i]` of a call, or the strategy an `@` passes last.
enum ArgSource<'a, P> {
    Text(&'a Arg),
    Given(Value<P>, usize),
}

impl<P: Traversable> Scope<'_, P> {
    fn strategy(&self, ast: &Ast, env: &Env<P>) -> Result<Strategy<P>, TextError> {
        match self.value(ast, env)? {
            Value::Strategy(s) => Ok(s),
            Value::Name(name) => Err(TextError {
                offset: ast.offset(),
                message: format!("unknown strategy `{name}` (`elevate strategies` lists them)"),
            }),
            _ => Err(TextError {
                offset: ast.offset(),
                message: "expected a strategy here, found a number, list or string".into(),
            }),
        }
    }

    /// Counts one strategy built, failing past the limit.
    fn count(&self, offset: usize) -> Result<(), TextError> {
        let built = self.built.get() + 1;
        self.built.set(built);
        if built > self.limit {
            return Err(TextError {
                offset,
                message: format!(
                    "the strategy expands to more than {} strategies: its definitions are \
                     instantiated with too many different arguments",
                    self.limit
                ),
            });
        }
        Ok(())
    }

    fn value(&self, ast: &Ast, env: &Env<P>) -> Result<Value<P>, TextError> {
        // Strategies nest in arguments: the one recursive point of elaboration.
        guard(|| {
            self.count(ast.offset())?;
            match ast {
                Ast::Seq(parts) => {
                    let parts = parts
                        .iter()
                        .map(|part| self.strategy(part, env))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(Value::Strategy(sequence(parts)))
                }
                Ast::Choice(parts) => {
                    let parts = parts
                        .iter()
                        .map(|part| self.strategy(part, env))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(Value::Strategy(choice(parts)))
                }
                Ast::At(s, t, at) => {
                    let given = Value::Strategy(self.strategy(s, env)?);
                    let Ast::Call { name, args, offset } = &**t else {
                        return Err(TextError {
                            offset: *at,
                            message: "expected a traversal after `@`, e.g. `topDown` or \
                                      `outermost(mapNest(2))`"
                                .into(),
                        });
                    };
                    let mut sources: Vec<ArgSource<P>> =
                        args.iter().flatten().map(ArgSource::Text).collect();
                    sources.push(ArgSource::Given(given, s.offset()));
                    self.call(name, *offset, sources, env).map(Value::Strategy)
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
                    let sources = args.iter().flatten().map(ArgSource::Text).collect();
                    self.call(name, *offset, sources, env).map(Value::Strategy)
                }
            }
        })
    }

    fn arg(&self, source: ArgSource<P>, env: &Env<P>) -> Result<(Value<P>, usize), TextError> {
        match source {
            ArgSource::Given(value, offset) => Ok((value, offset)),
            ArgSource::Text(arg) => {
                let value = match &arg.value {
                    ArgAst::Int(n) => Value::Int(*n),
                    ArgAst::List(l) => Value::List(l.clone()),
                    ArgAst::Str(s) => Value::Str(s.clone()),
                    ArgAst::Strategy(ast) => self.value(ast, env)?,
                };
                Ok((value, arg.offset))
            }
        }
    }

    /// `name(args)`: a definition, `applyN`, or a registered strategy.
    fn call(
        &self,
        name: &str,
        offset: usize,
        sources: Vec<ArgSource<P>>,
        env: &Env<P>,
    ) -> Result<Strategy<P>, TextError> {
        if name == "applyN"
            && sources.len() == 3
            && !self.defs.contains_key(name)
            && self.registry.contains(name)
        {
            return self.apply_n(offset, sources, env);
        }
        let mut values = Vec::with_capacity(sources.len());
        let mut offsets = Vec::with_capacity(sources.len());
        for source in sources {
            let (value, at) = self.arg(source, env)?;
            values.push(value);
            offsets.push(at);
        }
        self.make(name, offset, values, &offsets)
    }

    /// Builds `name(values)`; errors point at the argument they are about.
    fn make(
        &self,
        name: &str,
        offset: usize,
        values: Vec<Value<P>>,
        offsets: &[usize],
    ) -> Result<Strategy<P>, TextError> {
        let error = |message: String| TextError { offset, message };
        if let Some(def) = self.defs.get(name) {
            return self.instantiate(def, values, offset);
        }
        let entry = self.registry.entry(name).ok_or_else(|| {
            error(format!(
                "unknown strategy `{name}` (`elevate strategies` lists them)"
            ))
        })?;
        entry.make(&values).map_err(|e| {
            let argument = e
                .index()
                .and_then(|i| Some((values.get(i)?, *offsets.get(i)?)));
            // A bare name that names nothing the argument takes: point at the name
            // where it was written (in a definition's call, for a parameter).
            if let (
                ArgError::UnknownStrategy { .. } | ArgError::UnknownName { .. },
                Some((Value::Name(unknown), _)),
            ) = (&e, argument)
            {
                if let Some(at) = self.names.borrow().get(unknown) {
                    return TextError {
                        offset: *at,
                        message: format!(
                            "unknown strategy `{unknown}` (`elevate strategies` lists them)"
                        ),
                    };
                }
            }
            TextError {
                offset: argument.map_or(offset, |(_, at)| at),
                message: format!("`{name}{}`: {e}", entry.params),
            }
        })
    }

    /// A reference to `def` with `values`: built once per distinct arguments.
    fn instantiate(
        &self,
        def: &Def,
        values: Vec<Value<P>>,
        offset: usize,
    ) -> Result<Strategy<P>, TextError> {
        if values.len() != def.params.len() {
            return Err(TextError {
                offset,
                message: format!(
                    "`{}` expects {} argument(s), found {}",
                    def.name,
                    def.params.len(),
                    values.len()
                ),
            });
        }
        let key = (def.name.clone(), values.iter().map(Key::from).collect());
        if let Some(instance) = self.instances.borrow().get(&key) {
            return Ok(instance.reference.clone());
        }
        let env: Env<P> = def.params.iter().cloned().zip(values.clone()).collect();
        let body = self.strategy(&def.body, &env)?;
        let reference = Strategy::new(Defined {
            name: Name::from(def.name.clone()),
            args: values.clone(),
            body,
        });
        let instance = Instance {
            _args: values,
            reference: reference.clone(),
        };
        self.instances.borrow_mut().insert(key, instance);
        Ok(reference)
    }

    /// `applyN(n, T)(s)`: `T(T(...T(s)))`, `n` times, where `T` is written without
    /// its last argument (`one`, `outermost(isMap)`, a definition's name).
    fn apply_n(
        &self,
        offset: usize,
        mut sources: Vec<ArgSource<P>>,
        env: &Env<P>,
    ) -> Result<Strategy<P>, TextError> {
        let s_source = sources.pop().expect("three arguments");
        let t_source = sources.pop().expect("three arguments");
        let n_source = sources.pop().expect("three arguments");
        let (n, n_at) = self.arg(n_source, env)?;
        let times = bounded_int_arg(&[n], 0, MAX_APPLY_N).map_err(|e| TextError {
            offset: n_at,
            message: format!("`applyN(n, T)(s)`: {e}"),
        })?;
        let (s, s_at) = self.arg(s_source, env)?;
        let Value::Strategy(mut current) = s else {
            return Err(TextError {
                offset: s_at,
                message: format!(
                    "`applyN(n, T)(s)`: {}",
                    ArgError::WrongKind {
                        index: 2,
                        expected: ArgKind::Strategy
                    }
                ),
            });
        };
        let traversal = match t_source {
            ArgSource::Text(Arg {
                value: ArgAst::Strategy(Ast::Call { name, args, offset }),
                ..
            }) if !(args.is_empty() && env.contains_key(name)) => Some((name, args, *offset)),
            _ => None,
        };
        let Some((t_name, t_args, t_at)) = traversal else {
            return Err(TextError {
                offset,
                message: "`applyN(n, T)(s)`: argument 2 must be a traversal written without \
                          its last argument, e.g. `one` or `outermost(isMap)`"
                    .into(),
            });
        };
        let mut values = Vec::new();
        let mut offsets = Vec::new();
        for arg in t_args.iter().flatten() {
            let (value, at) = self.arg(ArgSource::Text(arg), env)?;
            values.push(value);
            offsets.push(at);
        }
        offsets.push(s_at);
        // Built once even for n = 0, so that a wrong `T` is an error whatever `n` is.
        for level in 0..times.max(1) {
            self.count(t_at)?;
            let mut args = values.clone();
            args.push(Value::Strategy(current.clone()));
            let wrapped = self.make(t_name, t_at, args, &offsets)?;
            if level < times {
                current = wrapped;
            }
        }
        Ok(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id;
    use crate::text::{arity, int_arg};
    use elevate_core::arith::Term;

    /// The combinators, and `pair(a, b)`, which refuses equal numbers (at `b`) and
    /// two zeros (about both).
    fn registry() -> Registry<Term> {
        let mut r = Registry::with_combinators();
        r.add("pair", "(a, b)", "a test constructor", |a| {
            arity(a, 2)?;
            let (x, y) = (int_arg(a, 0)?, int_arg(a, 1)?);
            match (x, y) {
                (0, 0) => Err(ArgError::invalid(None, "not both zero")),
                (x, y) if x == y => Err(ArgError::invalid(1, format!("{y} repeats a"))),
                _ => Ok(id()),
            }
        });
        r
    }

    /// Where the error of `text` is, as the text from there on, and its message.
    fn error_at(text: &str) -> (&str, String) {
        let e = registry().parse(text).map(drop).unwrap_err();
        (&text[e.offset..], e.message)
    }

    #[test]
    fn an_error_about_an_argument_points_at_that_argument() {
        assert_eq!(
            error_at("id ; try(pair(3,  3)) <+ id"),
            ("3)) <+ id", "`pair(a, b)`: 3 repeats a".to_string())
        );
        assert_eq!(
            error_at("id ; repeatN(-1, id) ; id"),
            (
                "-1, id) ; id",
                "`repeatN(n, s)`: argument 1 must be non-negative, found -1".to_string()
            )
        );
        // Through `@`, the strategy passed last is the argument.
        assert_eq!(
            error_at("id @ pair(1)"),
            (
                "id @ pair(1)",
                "`pair(a, b)`: argument 2 must be a number".to_string()
            )
        );
        // Inside a definition, where the argument is written in its body.
        assert_eq!(
            error_at("def twice(n) = pair(n, n)\nid ; twice(4)"),
            ("n)\nid ; twice(4)", "`pair(a, b)`: 4 repeats a".to_string())
        );
    }

    #[test]
    fn an_error_about_all_arguments_points_at_the_name() {
        assert_eq!(
            error_at("id ; pair(0, 0)"),
            ("pair(0, 0)", "`pair(a, b)`: not both zero".to_string())
        );
        assert_eq!(
            error_at("id ; pair(1)"),
            (
                "pair(1)",
                "`pair(a, b)`: expects 2 argument(s), found 1".to_string()
            )
        );
    }

    #[test]
    fn an_unknown_name_where_a_strategy_belongs_is_reported_where_it_is_written() {
        assert_eq!(
            error_at("def t(s) = topDown(s)\nid ; t(nope)"),
            (
                "nope)",
                "unknown strategy `nope` (`elevate strategies` lists them)".to_string()
            )
        );
        assert_eq!(
            error_at("ifThenElse(id, id, 3)"),
            (
                "3)",
                "`ifThenElse(p, t, e)`: argument 3 must be a strategy".to_string()
            )
        );
    }
}
