//! Expressions, parsed with an explicit work stack so that nesting depth costs heap,
//! not call stack: 100,000 nested brackets, calls, lambdas or `let`s are normal input.
//!
//! The grammar, loosest first (all binary operators left-associative):
//!
//! ```text
//! expr       := compose ('|>' compose)*
//! compose    := annotated ('>>' annotated)*
//! annotated  := comparison (':' type)?
//! comparison := sum (('<' | '>' | '==') sum)*
//! sum        := product (('+' | '-') product)*
//! product    := unary (('*' | '/' | '%') unary)*
//! unary      := '-' unary | primary ('(' args ')')*
//! primary    := number | true | false | name | '(' expr ')' | '(' expr ',' expr ')'
//!             | '[' exprs ']' | fun(x, ... => expr) | depFun(n, ... => expr)
//!             | let x = expr in expr
//! ```
//!
//! Operators are handled by precedence (a shunting-yard over one expression); every
//! construct that contains an expression (brackets, call arguments, lambda bodies,
//! `let`) is a [`Frame`] on the work stack, waiting for that expression.

use super::{check_repeated, Binding, Parsed, Parser};
use crate::error::{Error, ErrorKind, Span};
use crate::lexer::Tok;
use crate::nat::NatVar;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Term};
use crate::types::Type;

/// How tightly an operator binds, loosest first (the grammar's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Pipe,
    Compose,
    Comparison,
    Sum,
    Product,
}

/// A binary operator.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// `x |> f`
    Pipe,
    /// `f >> g`
    Compose,
    /// An arithmetic or comparison primitive.
    Prim(Prim),
}

/// One expression being read: its operands and the operators between them (by
/// precedence), and the prefix `-` signs of the operand being read.
#[derive(Default)]
struct Pending {
    operands: Vec<Parsed>,
    operators: Vec<(Op, Level)>,
    negations: Vec<Span>,
    /// Whether the operand of the current `|>`/`>>` stage already has its `: T` (the
    /// grammar allows one).
    annotated: bool,
}

/// A construct waiting for the expression being read.
enum Frame {
    /// `(` read: then `)`, or `,` and a second expression.
    Paren { start: Span },
    /// `(first,` read: then `)`.
    Pair { start: Span, first: Term },
    /// `[` and earlier items read: then `,` or `]`.
    Array { start: Span, items: Vec<Term> },
    /// `callee(` and earlier arguments read: then `,` or `)`.
    Argument { callee: Parsed },
    /// `fun(x, ... =>` read: then `)`.
    Lambda {
        start: Span,
        params: Vec<(Ident, Option<Type>)>,
        mark: usize,
    },
    /// `depFun(n, ... =>` read: then `)`.
    NatLambda {
        start: Span,
        params: Vec<NatVar>,
        mark: usize,
    },
    /// `let x =` read: then `in` and the body.
    LetValue { start: Span, name: String },
    /// `let x = value in` read.
    LetBody {
        start: Span,
        x: Ident,
        value: Term,
        mark: usize,
    },
}

/// The result of reading a construct: complete, or opened and waiting for an
/// expression.
enum Reading {
    Done(Parsed),
    Open(Frame),
}

/// What the parser reads next.
enum Next {
    /// An operand (at the start of an expression or after an operator).
    Operand,
    /// An operand's primary has been read: calls `(...)` may follow.
    Postfix(Parsed),
    /// An operand is complete: an operator, or the end of the expression.
    Operator,
}

impl Parser {
    /// One expression, as far as it goes.
    pub(super) fn expression(&mut self) -> Result<Parsed, Error> {
        let mut frames: Vec<(Frame, Pending)> = Vec::new();
        let mut current = Pending::default();
        let mut next = Next::Operand;
        loop {
            let step = match next {
                Next::Operand => {
                    while self.is("-") {
                        let minus = self.advance();
                        current.negations.push(minus);
                    }
                    self.primary()?
                }
                Next::Postfix(callee) => {
                    if self.eat("(") {
                        self.arguments(callee)?
                    } else {
                        let operand = negate(&mut current.negations, callee);
                        current.operands.push(operand);
                        next = Next::Operator;
                        continue;
                    }
                }
                Next::Operator => {
                    let annotated = current.annotated;
                    let operator = self
                        .operator()
                        .filter(|&(_, level)| !annotated || level <= Level::Compose);
                    if let Some((op, level)) = operator {
                        self.advance();
                        self.reduce(&mut current, level)?;
                        current.operators.push((op, level));
                        if level <= Level::Compose {
                            current.annotated = false;
                        }
                        next = Next::Operand;
                        continue;
                    }
                    if self.is(":") && !annotated {
                        self.advance();
                        self.reduce(&mut current, Level::Comparison)?;
                        let e = current.operands.pop().expect("an operand before `:`");
                        let ty = self.annotation()?;
                        let span = e.term.span().map(|s| s.to(self.prev_span()));
                        let annotation = Term::with(Expr::Annotation(e.term, ty), None, span);
                        current.operands.push(Parsed::value(annotation));
                        current.annotated = true;
                        continue;
                    }
                    // The expression ends here.
                    self.reduce(&mut current, Level::Pipe)?;
                    let value = current.operands.pop().expect("an expression");
                    let Some((frame, outer)) = frames.pop() else {
                        return Ok(value);
                    };
                    current = outer;
                    self.resume(frame, value)?
                }
            };
            next = match step {
                Reading::Done(parsed) => Next::Postfix(parsed),
                Reading::Open(frame) => {
                    frames.push((frame, std::mem::take(&mut current)));
                    Next::Operand
                }
            };
        }
    }

    fn operator(&self) -> Option<(Op, Level)> {
        let Tok::Symbol(s) = self.peek() else {
            return None;
        };
        Some(match *s {
            "|>" => (Op::Pipe, Level::Pipe),
            ">>" => (Op::Compose, Level::Compose),
            "<" => (Op::Prim(Prim::Lt), Level::Comparison),
            ">" => (Op::Prim(Prim::Gt), Level::Comparison),
            "==" => (Op::Prim(Prim::Equal), Level::Comparison),
            "+" => (Op::Prim(Prim::Add), Level::Sum),
            "-" => (Op::Prim(Prim::Sub), Level::Sum),
            "*" => (Op::Prim(Prim::Mul), Level::Product),
            "/" => (Op::Prim(Prim::Div), Level::Product),
            "%" => (Op::Prim(Prim::Mod), Level::Product),
            _ => return None,
        })
    }

    /// Applies the pending operators that bind at least as tightly as `level`.
    fn reduce(&mut self, pending: &mut Pending, level: Level) -> Result<(), Error> {
        while let Some(&(op, l)) = pending.operators.last() {
            if l < level {
                break;
            }
            pending.operators.pop();
            let right = pending.operands.pop().expect("a right operand");
            let left = pending.operands.pop().expect("a left operand");
            pending.operands.push(self.combine(op, left, right)?);
        }
        Ok(())
    }

    fn combine(&mut self, op: Op, left: Parsed, right: Parsed) -> Result<Parsed, Error> {
        let span = left
            .term
            .span()
            .zip(right.term.span())
            .map(|(a, b)| a.to(b));
        Ok(Parsed::value(match op {
            Op::Pipe => apply_value(right, left.term, span)?,
            Op::Compose => {
                let x = self.fresh_ident("x");
                let inner = apply_value(left, Term::with(Expr::Var(x.clone()), None, span), span)?;
                let outer = apply_value(right, inner, span)?;
                Term::with(Expr::Lambda(x, None, outer), None, span)
            }
            Op::Prim(prim) => binary(prim, left.term, right.term),
        }))
    }

    /// The arguments of a call, from after `(` or `,`: nats read here, values opened
    /// as expressions.
    fn arguments(&mut self, mut callee: Parsed) -> Result<Reading, Error> {
        loop {
            if callee.nat_arity == 0 {
                return Ok(Reading::Open(Frame::Argument { callee }));
            }
            let start = self.span();
            let n = self.nat()?;
            n.check_defined().map_err(|e| {
                Error::new(ErrorKind::Type, start.to(self.prev_span()), e.to_string())
            })?;
            // In an expression, a nat may only use nat variables in scope (in a
            // pattern, unknown ones are nat pattern variables).
            if self.free.is_none() {
                for v in n.vars() {
                    if let NatVar::Named(name) = &v {
                        if !matches!(self.lookup(name), Some(Binding::Nat(_))) {
                            return Err(Error::new(
                                ErrorKind::UnknownName,
                                start.to(self.prev_span()),
                                format!("expected a nat, found unknown nat variable `{name}`"),
                            ));
                        }
                    }
                }
            }
            let span = callee.term.span().map(|s| s.to(self.prev_span()));
            callee = Parsed {
                term: Term::with(Expr::NatApp(callee.term, n), None, span),
                nat_arity: callee.nat_arity - 1,
            };
            if !self.eat(",") {
                self.expect(")")?;
                return Ok(Reading::Done(callee));
            }
        }
    }

    /// Continues the construct `frame` with the expression `value` it waited for.
    fn resume(&mut self, frame: Frame, value: Parsed) -> Result<Reading, Error> {
        Ok(match frame {
            Frame::Paren { start } => {
                if self.eat(",") {
                    Reading::Open(Frame::Pair {
                        start,
                        first: value.term,
                    })
                } else {
                    self.expect(")")?;
                    Reading::Done(value)
                }
            }
            Frame::Pair { start, first } => {
                let end = self.expect(")")?;
                let pair = binary(Prim::MakePair, first, value.term);
                let pair = Term::with(pair.expr().clone(), None, Some(start.to(end)));
                Reading::Done(Parsed::value(pair))
            }
            Frame::Array { start, mut items } => {
                items.push(value.term);
                if self.eat(",") {
                    Reading::Open(Frame::Array { start, items })
                } else {
                    let end = self.expect("]")?;
                    let array = Term::with(Expr::Array(items), None, Some(start.to(end)));
                    Reading::Done(Parsed::value(array))
                }
            }
            Frame::Argument { callee } => {
                let span = callee.term.span().map(|s| s.to(self.prev_span()));
                let app = Term::with(Expr::App(callee.term, value.term), None, span);
                if self.eat(",") {
                    self.arguments(Parsed::value(app))?
                } else {
                    self.expect(")")?;
                    Reading::Done(Parsed::value(app))
                }
            }
            Frame::Lambda {
                start,
                params,
                mark,
            } => {
                self.scope.truncate(mark);
                let end = self.expect(")")?;
                let span = Some(start.to(end));
                let term = params.into_iter().rev().fold(value.term, |body, (p, ty)| {
                    Term::with(Expr::Lambda(p, ty, body), None, span)
                });
                Reading::Done(Parsed::value(term))
            }
            Frame::NatLambda {
                start,
                params,
                mark,
            } => {
                self.scope.truncate(mark);
                let end = self.expect(")")?;
                let span = Some(start.to(end));
                let nat_arity = params.len();
                let term = params.into_iter().rev().fold(value.term, |body, v| {
                    Term::with(Expr::NatLambda(v, body), None, span)
                });
                Reading::Done(Parsed { term, nat_arity })
            }
            Frame::LetValue { start, name } => {
                self.expect_keyword("in")?;
                let x = self.fresh_ident(&name);
                let mark = self.scope.mark();
                self.scope.push(&name, Binding::Var(x.clone()));
                Reading::Open(Frame::LetBody {
                    start,
                    x,
                    value: value.term,
                    mark,
                })
            }
            Frame::LetBody {
                start,
                x,
                value: bound,
                mark,
            } => {
                self.scope.truncate(mark);
                let body = value.term;
                let span = body.span().map(|s| start.to(s));
                let lambda = Term::with(Expr::Lambda(x, None, body), None, span);
                let let_prim = Term::with(Expr::Prim(Prim::Let), None, Some(start));
                let app = Term::with(Expr::App(let_prim, bound), None, span);
                Reading::Done(Parsed::value(Term::with(
                    Expr::App(app, lambda),
                    None,
                    span,
                )))
            }
        })
    }

    /// A primary: read whole, or opened (a bracket, lambda or `let`).
    fn primary(&mut self) -> Result<Reading, Error> {
        let start = self.span();
        let word = match self.peek() {
            Tok::Number { digits, suffix } => {
                let (digits, suffix) = (digits.clone(), suffix.clone());
                return Ok(Reading::Done(self.number(&digits, suffix.as_deref())?));
            }
            Tok::Symbol("(") => {
                self.advance();
                return Ok(Reading::Open(Frame::Paren { start }));
            }
            Tok::Symbol("[") => {
                self.advance();
                if self.is("]") {
                    let end = self.advance();
                    let empty = Term::with(Expr::Array(Vec::new()), None, Some(start.to(end)));
                    return Ok(Reading::Done(Parsed::value(empty)));
                }
                return Ok(Reading::Open(Frame::Array {
                    start,
                    items: Vec::new(),
                }));
            }
            Tok::Ident(word) => word.clone(),
            _ => return Err(self.error("an expression")),
        };
        match word.as_str() {
            "true" | "false" => {
                self.advance();
                let literal = Expr::Literal(Literal::Bool(word == "true"));
                Ok(Reading::Done(Parsed::value(Term::with(
                    literal,
                    None,
                    Some(start),
                ))))
            }
            "fun" => self.lambda(),
            "depFun" => self.nat_lambda(),
            "let" => {
                self.advance();
                let (name, _) = self.name("a variable name")?;
                self.expect("=")?;
                Ok(Reading::Open(Frame::LetValue { start, name }))
            }
            _ => Ok(Reading::Done(self.identifier()?)),
        }
    }

    /// `fun(x: T, y => ` up to the body.
    fn lambda(&mut self) -> Result<Reading, Error> {
        let start = self.advance();
        self.expect("(")?;
        let mut params = Vec::new();
        let mut names = Vec::new();
        loop {
            let (p, at) = self.name("a parameter name")?;
            let ty = if self.eat(":") {
                Some(self.annotation()?)
            } else {
                None
            };
            params.push((self.fresh_ident(&p), ty));
            names.push((p, at));
            if !self.eat(",") {
                break;
            }
        }
        check_repeated(&names)?;
        self.expect("=>")?;
        let mark = self.scope.mark();
        for (p, _) in &params {
            self.scope.push(&p.name, Binding::Var(p.clone()));
        }
        Ok(Reading::Open(Frame::Lambda {
            start,
            params,
            mark,
        }))
    }

    /// `depFun(n, (m: nat) => ` up to the body.
    fn nat_lambda(&mut self) -> Result<Reading, Error> {
        let start = self.advance();
        self.expect("(")?;
        let mut params = Vec::new();
        let mut names = Vec::new();
        loop {
            let parenthesized = self.eat("(");
            let (n, at) = self.name("a nat parameter name")?;
            if parenthesized {
                self.expect(":")?;
                self.expect_keyword("nat")?;
                self.expect(")")?;
            }
            params.push(NatVar::Named(n.as_str().into()));
            names.push((n, at));
            if !self.eat(",") {
                break;
            }
        }
        check_repeated(&names)?;
        self.expect("=>")?;
        let mark = self.scope.mark();
        for (v, (n, _)) in params.iter().zip(&names) {
            self.scope.push(n, Binding::Nat(v.clone()));
        }
        Ok(Reading::Open(Frame::NatLambda {
            start,
            params,
            mark,
        }))
    }

    fn number(&mut self, digits: &str, suffix: Option<&str>) -> Result<Parsed, Error> {
        let start = self.advance();
        // `1.5`, `1.5f64`: the lexer sees `1`, `.`, `5` with no space between.
        let fraction = match (self.peek(), self.peek_at(1)) {
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
                let fraction = (frac.clone(), fsuffix.clone());
                self.advance();
                self.advance();
                Some(fraction)
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
            Some(span),
        )))
    }

    /// A name: a variable in scope, an earlier definition, a primitive or (in a
    /// pattern) a free variable.
    fn identifier(&mut self) -> Result<Parsed, Error> {
        let (name, span) = self.name("an expression")?;
        match self.lookup(&name) {
            Some(Binding::Var(x)) => {
                let var = Term::with(Expr::Var(x.clone()), None, Some(span));
                return Ok(Parsed::value(var));
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
        if let Some(&index) = self.def_index.get(&name) {
            // The definition's expression with this use's location: its children are
            // the definition's own nodes, shared, which inference recognizes and types
            // once however often the definition is used. Definitions are closed, so
            // their nat parameters need no renaming here.
            let def = &self.defs[index];
            let term = Term::with(def.term.expr().clone(), None, Some(span));
            let nat_arity = if def.explicit_nats {
                def.nat_params.len()
            } else {
                0
            };
            return Ok(Parsed { term, nat_arity });
        }
        if let Some(prim) = Prim::from_name(&name) {
            return Ok(Parsed {
                term: Term::with(Expr::Prim(prim), None, Some(span)),
                nat_arity: prim.nat_params(),
            });
        }
        if let Some(free) = &mut self.free {
            let names = &mut self.names;
            let x = free
                .entry(name.clone())
                .or_insert_with(|| Ident::supplied(names, &name))
                .clone();
            return Ok(Parsed::value(Term::with(Expr::Var(x), None, Some(span))));
        }
        Err(Error::new(
            ErrorKind::UnknownName,
            span,
            format!("expected a variable, definition or primitive, found unknown name `{name}`"),
        ))
    }
}

/// `f(x)` for a value argument `x`, checking that `f` does not expect a nat first.
fn apply_value(f: Parsed, x: Term, span: Option<Span>) -> Result<Term, Error> {
    if f.nat_arity > 0 {
        return Err(Error::new(
            ErrorKind::Parse,
            f.term.span().unwrap_or_default(),
            "this function expects a nat argument first, e.g. `split(32)`",
        ));
    }
    Ok(Term::with(Expr::App(f.term, x), None, span))
}

/// `prim(a)(b)`, spanning both operands.
fn binary(prim: Prim, a: Term, b: Term) -> Term {
    let span = a.span().zip(b.span()).map(|(x, y)| x.to(y));
    let f = Term::with(Expr::Prim(prim), None, span);
    Term::with(
        Expr::App(Term::with(Expr::App(f, a), None, span), b),
        None,
        span,
    )
}

/// Applies the prefix `-` signs read before `operand`, innermost first: `-3` and
/// `-1.5` are literals, anything else is `neg`.
fn negate(negations: &mut Vec<Span>, mut operand: Parsed) -> Parsed {
    while let Some(minus) = negations.pop() {
        let span = operand.term.span().map(|s| minus.to(s));
        let literal = match operand.term.expr() {
            Expr::Literal(l) => match *l {
                Literal::I32(v) => Some(Literal::I32(v.wrapping_neg())),
                Literal::I64(v) => Some(Literal::I64(v.wrapping_neg())),
                Literal::F32(v) => Some(Literal::F32(-v)),
                Literal::F64(v) => Some(Literal::F64(-v)),
                Literal::Bool(_) => None,
            },
            _ => None,
        };
        let term = match literal {
            Some(l) => Term::with(Expr::Literal(l), None, span),
            None => {
                let neg = Term::with(Expr::Prim(Prim::Neg), None, Some(minus));
                Term::with(Expr::App(neg, operand.term), None, span)
            }
        };
        operand = Parsed::value(term);
    }
    operand
}
