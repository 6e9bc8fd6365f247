//! The parser: RISE source text to terms (tokens from [`lexer`](crate::lexer)).
//!
//! Nesting is normal input (100,000 levels of brackets, lambdas or type dimensions),
//! so expressions and types are parsed with explicit work stacks, not recursion:
//! - [`defs`]: files and definitions;
//! - [`expr`]: expressions (operators by precedence, calls, lambdas, `let`);
//! - [`types`]: types and nats.

mod defs;
mod expr;
mod types;

pub use crate::definition::Definition;
use crate::error::{Error, ErrorKind, Span};
use crate::lexer::{tokenize, Tok, Token};
use crate::nat::{Nat, NatVar};
use crate::term::{Ident, Term};
use crate::types::Type;
use elevate_core::NameSupply;
use rustc_hash::{FxHashMap, FxHashSet};

/// Parses a RISE file: its definitions, in order (the last is the entry point).
pub fn parse_program(source: &str) -> Result<Vec<Definition>, Error> {
    let mut parser = Parser::new(source)?;
    parser.program(source)?;
    Ok(parser.defs)
}

/// Parses a pattern: an expression whose unknown names are free variables (untyped),
/// as strategies such as `isEqualTo("transpose(b)")` write them.
pub fn parse_pattern(source: &str) -> Result<Term, Error> {
    let mut parser = Parser::new(source)?;
    parser.free = Some(FxHashMap::default());
    let term = parser.expression()?.term;
    parser.expect_end()?;
    Ok(term)
}

/// Parses one expression (no definitions), e.g. `map(fun(x => x + 1))`.
pub fn parse_term(source: &str) -> Result<Term, Error> {
    let mut parser = Parser::new(source)?;
    let term = parser.expression()?.term;
    parser.expect_end()?;
    Ok(term)
}

/// Parses a type, e.g. `n.(f32, f32) -> f32`.
pub fn parse_type(source: &str) -> Result<Type, Error> {
    let mut parser = Parser::new(source)?;
    let ty = parser.annotation()?;
    parser.expect_end()?;
    Ok(ty)
}

/// Parses a nat, e.g. `2*n + 1`.
pub fn parse_nat(source: &str) -> Result<Nat, Error> {
    let mut parser = Parser::new(source)?;
    let n = parser.nat()?;
    parser.expect_end()?;
    Ok(n)
}

/// What a name in scope stands for.
#[derive(Clone)]
enum Binding {
    Var(Ident),
    Nat(NatVar),
}

/// A parsed expression and how many nat arguments it still takes first.
struct Parsed {
    term: Term,
    nat_arity: usize,
}

impl Parsed {
    fn value(term: Term) -> Parsed {
        Parsed { term, nat_arity: 0 }
    }
}

const KEYWORDS: &[&str] = &["def", "fun", "depFun", "let", "in", "true", "false", "nat"];

/// The names in scope: for each name, its bindings innermost last, and a trail of the
/// names bound, so that leaving a scope undoes exactly its bindings. Lookups cost the
/// same however many names are in scope (100,000 nested `let`s are normal).
#[derive(Default)]
struct Scope {
    names: FxHashMap<String, Vec<Binding>>,
    trail: Vec<String>,
}

impl Scope {
    fn push(&mut self, name: &str, binding: Binding) {
        self.names
            .entry(name.to_string())
            .or_default()
            .push(binding);
        self.trail.push(name.to_string());
    }

    /// A mark to [`truncate`](Scope::truncate) to when the scope opened now ends.
    fn mark(&self) -> usize {
        self.trail.len()
    }

    fn truncate(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let name = self.trail.pop().expect("longer than the mark");
            if let Some(bindings) = self.names.get_mut(&name) {
                bindings.pop();
                if bindings.is_empty() {
                    self.names.remove(&name);
                }
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.names.get(name).and_then(|b| b.last())
    }
}

struct Parser {
    tokens: Vec<Token>,
    /// For each `(` token, the index of its matching `)` (or `usize::MAX`): a type
    /// `(N).T` is told from `(T)` by the token after the `)`, without backtracking.
    closing: Vec<usize>,
    pos: usize,
    scope: Scope,
    /// The definitions parsed so far, and their indices by name.
    defs: Vec<Definition>,
    def_index: FxHashMap<String, usize>,
    /// For patterns ([`parse_pattern`]): unknown names become free variables, kept
    /// here so that a name used twice is the same variable.
    free: Option<FxHashMap<String, Ident>>,
    /// The identities of the variables of this text: one supply per parse, so that
    /// parsing the same text always gives the same term, identities included.
    names: NameSupply,
}

impl Parser {
    fn new(source: &str) -> Result<Parser, Error> {
        let tokens = tokenize(source)?;
        let mut closing = vec![usize::MAX; tokens.len()];
        let mut open = Vec::new();
        for (i, token) in tokens.iter().enumerate() {
            match token.tok {
                Tok::Symbol("(") => open.push(i),
                Tok::Symbol(")") => {
                    if let Some(j) = open.pop() {
                        closing[j] = i;
                    }
                }
                _ => {}
            }
        }
        Ok(Parser {
            tokens,
            closing,
            pos: 0,
            scope: Scope::default(),
            defs: Vec::new(),
            def_index: FxHashMap::default(),
            free: None,
            // From 1: identity 0 is never a parsed variable's.
            names: NameSupply::above(1),
        })
    }

    /// A variable named `name` with a fresh identity.
    fn fresh_ident(&mut self, name: &str) -> Ident {
        Ident::supplied(&mut self.names, name)
    }

    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, offset: usize) -> &Tok {
        let i = (self.pos + offset).min(self.tokens.len() - 1);
        &self.tokens[i].tok
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn advance(&mut self) -> Span {
        let span = self.tokens[self.pos].span;
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        span
    }

    fn is(&self, symbol: &str) -> bool {
        matches!(self.peek(), Tok::Symbol(s) if *s == symbol)
    }

    fn is_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == word)
    }

    fn eat(&mut self, symbol: &str) -> bool {
        if self.is(symbol) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn error(&self, expected: &str) -> Error {
        Error::new(
            ErrorKind::Parse,
            self.span(),
            format!("expected {expected}, found {}", self.peek()),
        )
    }

    fn expect(&mut self, symbol: &str) -> Result<Span, Error> {
        if self.is(symbol) {
            Ok(self.advance())
        } else {
            Err(self.error(&format!("`{symbol}`")))
        }
    }

    fn expect_keyword(&mut self, word: &str) -> Result<Span, Error> {
        if self.is_keyword(word) {
            Ok(self.advance())
        } else {
            Err(self.error(&format!("`{word}`")))
        }
    }

    fn expect_end(&self) -> Result<(), Error> {
        if self.peek() == &Tok::End {
            Ok(())
        } else {
            Err(self.error("the end of the input"))
        }
    }

    fn name(&mut self, what: &str) -> Result<(String, Span), Error> {
        match self.peek() {
            Tok::Ident(name) if !KEYWORDS.contains(&name.as_str()) => {
                let name = name.clone();
                Ok((name, self.advance()))
            }
            _ => Err(self.error(what)),
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scope.lookup(name)
    }
}

/// Fails on a name bound twice in one list of parameters (`fun(y, y => y)`): the
/// second would silently hide the first.
fn check_repeated(names: &[(String, Span)]) -> Result<(), Error> {
    let mut seen = FxHashSet::default();
    for (name, span) in names {
        if !seen.insert(name.as_str()) {
            return Err(Error::new(
                ErrorKind::Parse,
                *span,
                format!("repeated parameter `{name}`: each parameter needs its own name"),
            ));
        }
    }
    Ok(())
}
