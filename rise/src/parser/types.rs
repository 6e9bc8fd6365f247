//! Types and nats.
//!
//! ```text
//! type := '(' n ':' 'nat' ')' '->' type  |  data ('->' type)?
//! data := nat '.' data  |  '(' type ')'  |  '(' type ',' type ')'  |  scalar
//!       | 'vec' '[' data ',' nat ']'  |  'idx' '[' nat ']'
//! nat  := nat_term (('+' | '-') nat_term)*
//! nat_term := nat_power (('*' | '/' | '%') nat_power)*
//! nat_power := nat_atom ('^' nat_power)?
//! nat_atom := number | name | '(' nat ')'
//! ```
//!
//! Types are read with an explicit work stack (100,000 dimensions or parentheses are
//! normal input). A `(` opens an array size `(N).T` exactly when the token after its
//! matching `)` is `.`, so no alternative is tried and abandoned: reading is linear.

use super::{Binding, Parser, KEYWORDS};
use crate::error::{Error, ErrorKind};
use crate::lexer::Tok;
use crate::nat::{Nat, NatVar};
use crate::types::{Scalar, Type};
use elevate_core::stack::guard;

/// A type construct waiting for the type inside it.
enum Frame {
    /// `N.` read: waits for the element (data).
    Array(Nat),
    /// `vec[` read: waits for the element (data), then `, N]`.
    Vector,
    /// `T ->` read: waits for the result (a type).
    Fun(Type),
    /// `(n: nat) ->` read: waits for the body (a type).
    DepFun(NatVar),
    /// `(` read: waits for a type, then `)` or `, T)`.
    Paren,
    /// `(T,` read: waits for the second type, then `)`.
    Pair(Type),
}

/// A finished piece: data (which `N.` and `vec[` take), or any type.
enum Done {
    Data(Type),
    Type(Type),
}

impl Parser {
    /// A type as written by the user, whose sizes must be well formed (no `n/0`,
    /// no `(1-2).f32`, no `vec[f32, 0]`).
    pub(super) fn annotation(&mut self) -> Result<Type, Error> {
        let start = self.span();
        let ty = self.ty()?;
        ty.check_well_formed()
            .map_err(|e| Error::new(ErrorKind::Type, start.to(self.prev_span()), e.to_string()))?;
        Ok(ty)
    }

    /// A type.
    pub(super) fn ty(&mut self) -> Result<Type, Error> {
        let mut frames: Vec<Frame> = Vec::new();
        loop {
            // Read the start of a type, or of data when an array or vector waits.
            let wants_data = matches!(frames.last(), Some(Frame::Array(_) | Frame::Vector));
            if !wants_data && self.is_dep_fun_head() {
                self.advance();
                let (n, _) = self.name("a nat variable")?;
                self.expect(":")?;
                self.expect_keyword("nat")?;
                self.expect(")")?;
                self.expect("->")?;
                frames.push(Frame::DepFun(NatVar::Named(n.as_str().into())));
                continue;
            }
            let mut done = match self.data_start()? {
                Some(frame) => {
                    frames.push(frame);
                    continue;
                }
                None => Done::Data(self.data_leaf()?),
            };
            // Close the constructs that the finished piece completes.
            loop {
                done = match done {
                    Done::Data(t) => match frames.last() {
                        Some(Frame::Array(_)) => {
                            let Some(Frame::Array(n)) = frames.pop() else {
                                unreachable!("matched above")
                            };
                            Done::Data(Type::array(n, t))
                        }
                        Some(Frame::Vector) => {
                            frames.pop();
                            self.expect(",")?;
                            let n = self.nat()?;
                            self.expect("]")?;
                            Done::Data(Type::vector(t, n))
                        }
                        _ => {
                            if self.eat("->") {
                                frames.push(Frame::Fun(t));
                                break;
                            }
                            Done::Type(t)
                        }
                    },
                    Done::Type(t) => match frames.pop() {
                        None => return Ok(t),
                        Some(Frame::Fun(a)) => Done::Type(Type::fun(a, t)),
                        Some(Frame::DepFun(v)) => Done::Type(Type::dep_fun(v, t)),
                        Some(Frame::Paren) => {
                            if self.eat(",") {
                                frames.push(Frame::Pair(t));
                                break;
                            }
                            self.expect(")")?;
                            Done::Data(t)
                        }
                        Some(Frame::Pair(a)) => {
                            self.expect(")")?;
                            Done::Data(Type::pair(a, t))
                        }
                        Some(Frame::Array(_) | Frame::Vector) => {
                            unreachable!("arrays and vectors take data")
                        }
                    },
                };
            }
        }
    }

    /// `(n: nat) ->` ahead.
    fn is_dep_fun_head(&self) -> bool {
        self.is("(")
            && matches!(self.peek_at(1), Tok::Ident(_))
            && self.peek_at(2) == &Tok::Symbol(":")
            && self.peek_at(3) == &Tok::Ident("nat".into())
    }

    /// Opens the construct that starts here (`N.`, `(`, `vec[`), if one does.
    fn data_start(&mut self) -> Result<Option<Frame>, Error> {
        match self.peek() {
            Tok::Symbol("(") => {
                let close = self.closing[self.pos];
                let size = close != usize::MAX
                    && matches!(self.tokens.get(close + 1), Some(t) if t.tok == Tok::Symbol("."));
                if size {
                    let n = self.nat_atom()?;
                    self.expect(".")?;
                    return Ok(Some(Frame::Array(n)));
                }
                self.advance();
                Ok(Some(Frame::Paren))
            }
            Tok::Number { .. } => {
                let n = self.nat_atom()?;
                self.expect(".")?;
                Ok(Some(Frame::Array(n)))
            }
            Tok::Ident(name) if name == "vec" && self.peek_at(1) == &Tok::Symbol("[") => {
                self.advance();
                self.advance();
                Ok(Some(Frame::Vector))
            }
            Tok::Ident(name)
                if Scalar::from_name(name).is_none() && self.peek_at(1) == &Tok::Symbol(".") =>
            {
                let n = self.nat_atom()?;
                self.advance();
                Ok(Some(Frame::Array(n)))
            }
            _ => Ok(None),
        }
    }

    /// Data with nothing inside to wait for: a scalar or `idx[N]`.
    fn data_leaf(&mut self) -> Result<Type, Error> {
        match self.peek() {
            Tok::Ident(name) => {
                if let Some(s) = Scalar::from_name(name) {
                    self.advance();
                    return Ok(Type::scalar(s));
                }
                if name == "idx" && self.peek_at(1) == &Tok::Symbol("[") {
                    self.advance();
                    self.advance();
                    let n = self.nat()?;
                    self.expect("]")?;
                    return Ok(Type::index(n));
                }
                Err(self.error("a type (a scalar, `N.T`, `(T, T)`, `vec[T, N]`, `idx[N]`)"))
            }
            _ => Err(self.error("a type")),
        }
    }

    // Nats are small (a size expression), so their grammar recurses, guarded.

    /// A nat.
    pub(super) fn nat(&mut self) -> Result<Nat, Error> {
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
        match self.peek() {
            Tok::Number {
                digits,
                suffix: None,
            } => {
                let parsed = digits.parse::<i64>();
                let span = self.advance();
                parsed
                    .map(Nat::cst)
                    .map_err(|_| Error::new(ErrorKind::Parse, span, "nat literal out of range"))
            }
            Tok::Ident(name) if !KEYWORDS.contains(&name.as_str()) => {
                let name = name.clone();
                let span = self.advance();
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
