//! The parser: RISE source text to terms (tokens from [`lexer`](crate::lexer)).

use crate::error::{Error, ErrorKind};
use crate::lexer::{tokenize, Tok, Token};
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Span, Term};
use crate::types::{Scalar, Type};
use elevate_core::stack::guard;

/// A definition of a RISE file.
#[derive(Debug, Clone)]
pub struct Definition {
    /// Its name.
    pub name: String,
    /// Its nat parameters: explicit (`def f<n, m>`) or the free nat variables of its
    /// parameter and result types, in order of appearance. The term binds them with
    /// leading `depFun`s.
    pub nat_params: Vec<NatVar>,
    /// Whether the nat parameters were written explicitly (then callers may pass them).
    pub explicit_nats: bool,
    /// The definition as a closed term: earlier definitions it uses are inlined.
    pub term: Term,
    /// Where the name is.
    pub span: Span,
}

/// Parses a RISE file: its definitions, in order (the last is the entry point).
pub fn parse_program(source: &str) -> Result<Vec<Definition>, Error> {
    let mut parser = Parser::new(source)?;
    let mut defs: Vec<Definition> = Vec::new();
    while parser.peek() != &Tok::End {
        let def = parser.definition(&defs)?;
        if defs.iter().any(|d| d.name == def.name) {
            return Err(Error::new(
                ErrorKind::Parse,
                def.span,
                format!("`{}` is defined twice", def.name),
            ));
        }
        defs.push(def);
    }
    if defs.is_empty() {
        return Err(Error::new(
            ErrorKind::Parse,
            Span::new(0, 0),
            "expected a definition (`def NAME(...) = ...`), found an empty file",
        ));
    }
    Ok(defs)
}

/// Parses a pattern: an expression whose unknown names are free variables (untyped),
/// as strategies such as `isEqualTo("transpose(b)")` write them.
pub fn parse_pattern(source: &str) -> Result<Term, Error> {
    let mut parser = Parser::new(source)?;
    parser.free = Some(Vec::new());
    let term = parser.expression(&[])?.term;
    parser.expect_end()?;
    Ok(term)
}

/// Parses one expression (no definitions), e.g. `map(fun(x => x + 1.0))`.
pub fn parse_term(source: &str) -> Result<Term, Error> {
    let mut parser = Parser::new(source)?;
    let term = parser.expression(&[])?.term;
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

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    scope: Vec<(String, Binding)>,
    /// Counts inlined definitions, to give their nat parameters fresh names.
    inlined: usize,
    /// For patterns ([`parse_pattern`]): unknown names become free variables, kept
    /// here so that a name used twice is the same variable.
    free: Option<Vec<(String, Ident)>>,
}

fn at(span: Span) -> Option<Span> {
    Some(span)
}

impl Parser {
    fn new(source: &str) -> Result<Parser, Error> {
        Ok(Parser {
            tokens: tokenize(source)?,
            pos: 0,
            scope: Vec::new(),
            inlined: 0,
            free: None,
        })
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

    fn advance(&mut self) -> Token {
        let token = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        token
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
            Ok(self.advance().span)
        } else {
            Err(self.error(&format!("`{symbol}`")))
        }
    }

    fn expect_keyword(&mut self, word: &str) -> Result<Span, Error> {
        if self.is_keyword(word) {
            Ok(self.advance().span)
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
        match self.peek().clone() {
            Tok::Ident(name) if !KEYWORDS.contains(&name.as_str()) => {
                let span = self.advance().span;
                Ok((name, span))
            }
            _ => Err(self.error(what)),
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
    }

    // ---- definitions -------------------------------------------------------------

    fn definition(&mut self, defs: &[Definition]) -> Result<Definition, Error> {
        self.expect_keyword("def")?;
        let (name, span) = self.name("a definition name")?;
        self.scope.clear();
        let mut nat_params = Vec::new();
        let explicit_nats = self.eat("<");
        if explicit_nats {
            loop {
                let (n, _) = self.name("a nat parameter")?;
                nat_params.push(NatVar::Named(n.as_str().into()));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(">")?;
        }
        let mut params: Vec<(Ident, Type)> = Vec::new();
        if self.eat("(") {
            loop {
                let (p, _) = self.name("a parameter name")?;
                self.expect(":")?;
                let ty = self.annotation()?;
                params.push((Ident::fresh(&p), ty));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")")?;
        }
        let result = if self.eat(":") {
            Some(self.annotation()?)
        } else {
            None
        };
        if !explicit_nats {
            for ty in params.iter().map(|(_, t)| t).chain(result.iter()) {
                for v in ty.nat_vars() {
                    if !nat_params.contains(&v) {
                        nat_params.push(v);
                    }
                }
            }
        }
        self.expect("=")?;
        for v in &nat_params {
            if let NatVar::Named(n) = v {
                self.scope.push((n.to_string(), Binding::Nat(v.clone())));
            }
        }
        for (p, _) in &params {
            self.scope
                .push((p.name.to_string(), Binding::Var(p.clone())));
        }
        let body = self.expression(defs)?.term;
        let body = match result {
            Some(ty) => Term::with(Expr::Annotation(body.clone(), ty), None, body.span()),
            None => body,
        };
        let lambdas = params.into_iter().rev().fold(body, |body, (p, ty)| {
            let span = body.span();
            Term::with(Expr::Lambda(p, Some(ty), body), None, span)
        });
        let term = nat_params.iter().rev().fold(lambdas, |body, v| {
            let span = body.span();
            Term::with(Expr::NatLambda(v.clone(), body), None, span)
        });
        self.scope.clear();
        Ok(Definition {
            name,
            nat_params,
            explicit_nats,
            term,
            span,
        })
    }

    // ---- expressions -------------------------------------------------------------

    fn expression(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        // Every nesting of the grammar passes through here.
        guard(|| self.pipe(defs))
    }

    fn pipe(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        // `|>`: loosest, left-associative. A loop, so 50,000 stages need no recursion.
        let mut left = self.compose(defs)?;
        while self.is("|>") {
            self.advance();
            let f = self.compose(defs)?;
            let span = left.term.span().zip(f.term.span()).map(|(a, b)| a.to(b));
            left = Parsed::value(self.apply_value(f, left.term, span)?);
        }
        Ok(left)
    }

    fn compose(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let mut left = self.annotated(defs)?;
        while self.is(">>") {
            self.advance();
            let g = self.annotated(defs)?;
            let span = left.term.span().zip(g.term.span()).map(|(a, b)| a.to(b));
            let x = Ident::fresh("x");
            let inner =
                self.apply_value(left, Term::with(Expr::Var(x.clone()), None, span), span)?;
            let outer = self.apply_value(g, inner, span)?;
            left = Parsed::value(Term::with(Expr::Lambda(x, None, outer), None, span));
        }
        Ok(left)
    }

    /// `f(x)` for a value argument `x`, checking that `f` does not expect a nat first.
    fn apply_value(&self, f: Parsed, x: Term, span: Option<Span>) -> Result<Term, Error> {
        if f.nat_arity > 0 {
            return Err(Error::new(
                ErrorKind::Parse,
                f.term.span().unwrap_or_default(),
                "this function expects a nat argument first, e.g. `split(32)`",
            ));
        }
        Ok(Term::with(Expr::App(f.term, x), None, span))
    }

    fn annotated(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let e = self.comparison(defs)?;
        if self.is(":") {
            self.advance();
            let ty = self.annotation()?;
            let span = e.term.span().map(|s| s.to(self.prev_span()));
            return Ok(Parsed::value(Term::with(
                Expr::Annotation(e.term, ty),
                None,
                span,
            )));
        }
        Ok(e)
    }

    fn binary(&self, prim: Prim, a: Term, b: Term) -> Term {
        let span = a.span().zip(b.span()).map(|(x, y)| x.to(y));
        let f = Term::with(Expr::Prim(prim), None, span);
        Term::with(
            Expr::App(Term::with(Expr::App(f, a), None, span), b),
            None,
            span,
        )
    }

    fn comparison(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let mut left = self.sum(defs)?;
        loop {
            let prim = match self.peek() {
                Tok::Symbol("<") => Prim::Lt,
                Tok::Symbol(">") => Prim::Gt,
                Tok::Symbol("==") => Prim::Equal,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.sum(defs)?;
            left = Parsed::value(self.binary(prim, left.term, right.term));
        }
    }

    fn sum(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let mut left = self.product(defs)?;
        loop {
            let prim = match self.peek() {
                Tok::Symbol("+") => Prim::Add,
                Tok::Symbol("-") => Prim::Sub,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.product(defs)?;
            left = Parsed::value(self.binary(prim, left.term, right.term));
        }
    }

    fn product(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let mut left = self.unary(defs)?;
        loop {
            let prim = match self.peek() {
                Tok::Symbol("*") => Prim::Mul,
                Tok::Symbol("/") => Prim::Div,
                Tok::Symbol("%") => Prim::Mod,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.unary(defs)?;
            left = Parsed::value(self.binary(prim, left.term, right.term));
        }
    }

    fn unary(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        if !self.is("-") {
            return self.postfix(defs);
        }
        let minus = self.advance().span;
        guard(|| {
            let operand = self.unary(defs)?;
            let span = operand.term.span().map(|s| minus.to(s));
            // `-3` and `-1.5` are literals; anything else is `neg`.
            if let Expr::Literal(l) = operand.term.expr() {
                let negated = match *l {
                    Literal::I32(v) => Some(Literal::I32(v.wrapping_neg())),
                    Literal::I64(v) => Some(Literal::I64(v.wrapping_neg())),
                    Literal::F32(v) => Some(Literal::F32(-v)),
                    Literal::F64(v) => Some(Literal::F64(-v)),
                    Literal::Bool(_) => None,
                };
                if let Some(l) = negated {
                    return Ok(Parsed::value(Term::with(Expr::Literal(l), None, span)));
                }
            }
            let neg = Term::with(Expr::Prim(Prim::Neg), None, Some(minus));
            Ok(Parsed::value(Term::with(
                Expr::App(neg, operand.term),
                None,
                span,
            )))
        })
    }

    fn postfix(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let mut callee = self.primary(defs)?;
        while self.is("(") {
            self.advance();
            loop {
                if callee.nat_arity > 0 {
                    let start = self.span();
                    let n = self.nat()?;
                    n.check_defined().map_err(|e| {
                        Error::new(ErrorKind::Type, start.to(self.prev_span()), e.to_string())
                    })?;
                    // In an expression, a nat may only use nat variables in scope (in
                    // a pattern, unknown ones are nat pattern variables).
                    for v in n.vars() {
                        if let NatVar::Named(name) = &v {
                            if self.free.is_none()
                                && !matches!(self.lookup(name), Some(Binding::Nat(_)))
                            {
                                return Err(Error::new(
                                    ErrorKind::UnknownName,
                                    start.to(self.prev_span()),
                                    format!("expected a nat, found unknown nat variable `{name}`"),
                                ));
                            }
                        }
                    }
                    let span = callee.term.span().map(|s| s.to(self.prev_span()));
                    callee = Parsed {
                        term: Term::with(Expr::NatApp(callee.term, n), None, span),
                        nat_arity: callee.nat_arity - 1,
                    };
                } else {
                    let arg = self.expression(defs)?;
                    let span = callee.term.span().map(|s| s.to(self.prev_span()));
                    callee =
                        Parsed::value(Term::with(Expr::App(callee.term, arg.term), None, span));
                }
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")")?;
        }
        Ok(callee)
    }

    fn primary(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        guard(|| self.primary_inner(defs))
    }

    fn primary_inner(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Number { digits, suffix } => self.number(&digits, suffix.as_deref()),
            Tok::Symbol("(") => {
                self.advance();
                let first = self.expression(defs)?;
                if self.eat(",") {
                    let second = self.expression(defs)?;
                    let end = self.expect(")")?;
                    let pair = self.binary(Prim::MakePair, first.term, second.term);
                    return Ok(Parsed::value(Term::with(
                        pair.expr().clone(),
                        None,
                        Some(start.to(end)),
                    )));
                }
                self.expect(")")?;
                Ok(first)
            }
            Tok::Symbol("[") => {
                self.advance();
                let mut items = Vec::new();
                if !self.is("]") {
                    loop {
                        items.push(self.expression(defs)?.term);
                        if !self.eat(",") {
                            break;
                        }
                    }
                }
                let end = self.expect("]")?;
                Ok(Parsed::value(Term::with(
                    Expr::Array(items),
                    None,
                    Some(start.to(end)),
                )))
            }
            Tok::Ident(word) => match word.as_str() {
                "true" | "false" => {
                    self.advance();
                    Ok(Parsed::value(Term::with(
                        Expr::Literal(Literal::Bool(word == "true")),
                        None,
                        at(start),
                    )))
                }
                "fun" => self.lambda(defs),
                "depFun" => self.nat_lambda(defs),
                "let" => self.let_in(defs),
                _ => self.identifier(defs),
            },
            _ => Err(self.error("an expression")),
        }
    }

    fn number(&mut self, digits: &str, suffix: Option<&str>) -> Result<Parsed, Error> {
        let start = self.advance().span;
        // `1.5`, `1.5f64`: the lexer sees `1`, `.`, `5` with no space between.
        let fraction = match (self.peek().clone(), self.peek_at(1).clone()) {
            (
                Tok::Symbol("."),
                Tok::Number {
                    digits: frac,
                    suffix: fsuffix,
                },
            ) if suffix.is_none()
                && self.span().start == start.end
                && self.tokens[self.pos + 1].span.start == self.span().end =>
            {
                self.advance();
                self.advance();
                Some((frac, fsuffix))
            }
            _ => None,
        };
        let span = start.to(self.prev_span());
        let bad = |what: &str| Error::new(ErrorKind::Parse, span, format!("{what} out of range"));
        let literal = match fraction {
            Some((frac, fsuffix)) => {
                let text = format!("{digits}.{frac}");
                match fsuffix.as_deref() {
                    None | Some("f32") => {
                        Literal::F32(text.parse().map_err(|_| bad("f32 literal"))?)
                    }
                    Some("f64") => Literal::F64(text.parse().map_err(|_| bad("f64 literal"))?),
                    Some(other) => {
                        return Err(Error::new(
                            ErrorKind::Parse,
                            span,
                            format!("expected a float suffix (f32 or f64), found `{other}`"),
                        ))
                    }
                }
            }
            None => match suffix {
                None | Some("i32") => Literal::I32(digits.parse().map_err(|_| bad("i32 literal"))?),
                Some("i64") => Literal::I64(digits.parse().map_err(|_| bad("i64 literal"))?),
                Some("f32") => Literal::F32(digits.parse().map_err(|_| bad("f32 literal"))?),
                Some(_) => Literal::F64(digits.parse().map_err(|_| bad("f64 literal"))?),
            },
        };
        Ok(Parsed::value(Term::with(
            Expr::Literal(literal),
            None,
            at(span),
        )))
    }

    fn identifier(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let (name, span) = self.name("an expression")?;
        match self.lookup(&name) {
            Some(Binding::Var(x)) => {
                return Ok(Parsed::value(Term::with(
                    Expr::Var(x.clone()),
                    None,
                    at(span),
                )))
            }
            Some(Binding::Nat(_)) => {
                return Err(Error::new(
                    ErrorKind::Parse,
                    span,
                    format!("`{name}` is a nat, expected a value here"),
                ))
            }
            None => {}
        }
        if let Some(def) = defs.iter().rev().find(|d| d.name == name) {
            let term = self.inline(def);
            let term = Term::with(term.expr().clone(), None, at(span));
            let nat_arity = if def.explicit_nats {
                def.nat_params.len()
            } else {
                0
            };
            return Ok(Parsed { term, nat_arity });
        }
        if let Some(prim) = Prim::from_name(&name) {
            return Ok(Parsed {
                term: Term::with(Expr::Prim(prim), None, at(span)),
                nat_arity: prim.nat_params(),
            });
        }
        if let Some(free) = &mut self.free {
            let x = match free.iter().find(|(n, _)| *n == name) {
                Some((_, x)) => x.clone(),
                None => {
                    let x = Ident::fresh(&name);
                    free.push((name.clone(), x.clone()));
                    x
                }
            };
            return Ok(Parsed {
                term: Term::with(Expr::Var(x), None, at(span)),
                nat_arity: 0,
            });
        }
        Err(Error::new(
            ErrorKind::UnknownName,
            span,
            format!("expected a variable, definition or primitive, found unknown name `{name}`"),
        ))
    }

    /// A copy of `def` to inline here, its nat parameters renamed apart: the whole
    /// program is typed at once, and the definition's `n` is not the caller's `n`.
    fn inline(&mut self, def: &Definition) -> Term {
        self.inlined += 1;
        let mut binders = Vec::new();
        let mut body = def.term.clone();
        while let Expr::NatLambda(v, b) = body.expr() {
            binders.push(v.clone());
            body = b.clone();
        }
        let mut renamed = Vec::new();
        for v in binders {
            let NatVar::Named(name) = &v else {
                renamed.push(v);
                continue;
            };
            let mut k = self.inlined;
            let fresh = loop {
                let candidate = format!("{name}{k}");
                if self.lookup(&candidate).is_none() {
                    break NatVar::Named(candidate.as_str().into());
                }
                k += 1;
            };
            body = body.substitute_nat(&v, &Nat::var(fresh.clone()));
            renamed.push(fresh);
        }
        renamed.into_iter().rev().fold(body, |b, v| {
            Term::with(Expr::NatLambda(v, b), None, def.term.span())
        })
    }

    fn lambda(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let start = self.advance().span;
        self.expect("(")?;
        let mut params = Vec::new();
        loop {
            let (p, _) = self.name("a parameter name")?;
            let ty = if self.eat(":") {
                Some(self.annotation()?)
            } else {
                None
            };
            params.push((Ident::fresh(&p), ty));
            if !self.eat(",") {
                break;
            }
        }
        self.expect("=>")?;
        let depth = self.scope.len();
        for (p, _) in &params {
            self.scope
                .push((p.name.to_string(), Binding::Var(p.clone())));
        }
        let body = self.expression(defs);
        self.scope.truncate(depth);
        let body = body?.term;
        let end = self.expect(")")?;
        let span = Some(start.to(end));
        let term = params.into_iter().rev().fold(body, |body, (p, ty)| {
            Term::with(Expr::Lambda(p, ty, body), None, span)
        });
        Ok(Parsed::value(term))
    }

    fn nat_lambda(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let start = self.advance().span;
        self.expect("(")?;
        let mut params = Vec::new();
        loop {
            let parenthesized = self.eat("(");
            let (n, _) = self.name("a nat parameter name")?;
            if parenthesized {
                self.expect(":")?;
                self.expect_keyword("nat")?;
                self.expect(")")?;
            }
            params.push(NatVar::Named(n.as_str().into()));
            if !self.eat(",") {
                break;
            }
        }
        self.expect("=>")?;
        let depth = self.scope.len();
        for v in &params {
            if let NatVar::Named(n) = v {
                self.scope.push((n.to_string(), Binding::Nat(v.clone())));
            }
        }
        let body = self.expression(defs);
        self.scope.truncate(depth);
        let body = body?.term;
        let end = self.expect(")")?;
        let span = Some(start.to(end));
        let count = params.len();
        let term = params.into_iter().rev().fold(body, |body, v| {
            Term::with(Expr::NatLambda(v, body), None, span)
        });
        Ok(Parsed {
            term,
            nat_arity: count,
        })
    }

    fn let_in(&mut self, defs: &[Definition]) -> Result<Parsed, Error> {
        let start = self.advance().span;
        let (x, _) = self.name("a variable name")?;
        self.expect("=")?;
        let value = self.expression(defs)?.term;
        self.expect_keyword("in")?;
        let x = Ident::fresh(&x);
        self.scope
            .push((x.name.to_string(), Binding::Var(x.clone())));
        let body = self.expression(defs);
        self.scope.pop();
        let body = body?.term;
        let span = body.span().map(|s| start.to(s));
        let lambda = Term::with(Expr::Lambda(x, None, body), None, span);
        let let_prim = Term::with(Expr::Prim(Prim::Let), None, at(start));
        Ok(Parsed::value(Term::with(
            Expr::App(Term::with(Expr::App(let_prim, value), None, span), lambda),
            None,
            span,
        )))
    }

    // ---- types -------------------------------------------------------------------

    /// A type as written by the user, whose sizes must be well formed (no `n/0`,
    /// no `(1-2).f32`, no `vec[f32, 0]`).
    fn annotation(&mut self) -> Result<Type, Error> {
        let start = self.span();
        let ty = self.ty()?;
        ty.check_well_formed()
            .map_err(|e| Error::new(ErrorKind::Type, start.to(self.prev_span()), e.to_string()))?;
        Ok(ty)
    }

    fn ty(&mut self) -> Result<Type, Error> {
        guard(|| {
            // `(n: nat) -> T`
            if self.is("(")
                && matches!(self.peek_at(1), Tok::Ident(_))
                && self.peek_at(2) == &Tok::Symbol(":")
                && self.peek_at(3) == &Tok::Ident("nat".into())
            {
                self.advance();
                let (n, _) = self.name("a nat variable")?;
                self.expect(":")?;
                self.expect_keyword("nat")?;
                self.expect(")")?;
                self.expect("->")?;
                let body = self.ty()?;
                return Ok(Type::dep_fun(NatVar::Named(n.as_str().into()), body));
            }
            let left = self.data_type()?;
            if self.eat("->") {
                Ok(Type::fun(left, self.ty()?))
            } else {
                Ok(left)
            }
        })
    }

    fn data_type(&mut self) -> Result<Type, Error> {
        guard(|| match self.peek().clone() {
            Tok::Symbol("(") => {
                // `(N).T`, `(T, T)` or `(T)`.
                let saved = self.pos;
                if let Ok(n) = self.nat_atom() {
                    if self.eat(".") {
                        return Ok(Type::array(n, self.data_type()?));
                    }
                }
                self.pos = saved;
                self.advance();
                let first = self.ty()?;
                if self.eat(",") {
                    let second = self.ty()?;
                    self.expect(")")?;
                    Ok(Type::pair(first, second))
                } else {
                    self.expect(")")?;
                    Ok(first)
                }
            }
            Tok::Number { .. } => {
                let n = self.nat_atom()?;
                self.expect(".")?;
                Ok(Type::array(n, self.data_type()?))
            }
            Tok::Ident(name) => {
                if let Some(s) = Scalar::from_name(&name) {
                    self.advance();
                    return Ok(Type::scalar(s));
                }
                if self.peek_at(1) == &Tok::Symbol("[") && (name == "vec" || name == "idx") {
                    self.advance();
                    self.advance();
                    if name == "idx" {
                        let n = self.nat()?;
                        self.expect("]")?;
                        return Ok(Type::index(n));
                    }
                    let elem = self.data_type()?;
                    self.expect(",")?;
                    let n = self.nat()?;
                    self.expect("]")?;
                    return Ok(Type::vector(elem, n));
                }
                if self.peek_at(1) == &Tok::Symbol(".") {
                    let n = self.nat_atom()?;
                    self.advance();
                    return Ok(Type::array(n, self.data_type()?));
                }
                Err(self.error("a type (a scalar, `N.T`, `(T, T)`, `vec[T, N]`, `idx[N]`)"))
            }
            _ => Err(self.error("a type")),
        })
    }

    // ---- nats --------------------------------------------------------------------

    fn nat(&mut self) -> Result<Nat, Error> {
        let mut left = self.nat_term()?;
        loop {
            if self.eat("+") {
                left = left.add(&self.nat_term()?);
            } else if self.eat("-") {
                left = left.sub(&self.nat_term()?);
            } else {
                return Ok(left);
            }
        }
    }

    fn nat_term(&mut self) -> Result<Nat, Error> {
        let mut left = self.nat_power()?;
        loop {
            if self.eat("*") {
                left = left.mul(&self.nat_power()?);
            } else if self.eat("/") {
                left = left.div(&self.nat_power()?);
            } else if self.eat("%") {
                left = left.rem(&self.nat_power()?);
            } else {
                return Ok(left);
            }
        }
    }

    fn nat_power(&mut self) -> Result<Nat, Error> {
        let base = self.nat_atom()?;
        if self.eat("^") {
            Ok(base.pow(&guard(|| self.nat_power())?))
        } else {
            Ok(base)
        }
    }

    fn nat_atom(&mut self) -> Result<Nat, Error> {
        match self.peek().clone() {
            Tok::Number {
                digits,
                suffix: None,
            } => {
                let span = self.advance().span;
                digits
                    .parse::<i64>()
                    .map(Nat::cst)
                    .map_err(|_| Error::new(ErrorKind::Parse, span, "nat literal out of range"))
            }
            Tok::Ident(name) if !KEYWORDS.contains(&name.as_str()) => {
                let span = self.advance().span;
                match self.lookup(&name) {
                    Some(Binding::Var(_)) => Err(Error::new(
                        ErrorKind::Parse,
                        span,
                        format!("expected a nat, found the value `{name}`"),
                    )),
                    Some(Binding::Nat(v)) => Ok(Nat::var(v.clone())),
                    None => Ok(Nat::named(&name)),
                }
            }
            Tok::Symbol("(") => {
                self.advance();
                let n = guard(|| self.nat())?;
                self.expect(")")?;
                Ok(n)
            }
            _ => Err(self.error("a nat")),
        }
    }
}
