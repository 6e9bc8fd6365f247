//! A tiny arithmetic IR: the engine's examples, tests and benchmarks use it, and it
//! shows in a few lines how to bring your own program type.
//!
//! Its variables are plain strings, not identities from a
//! [`NameSupply`](crate::NameSupply), so it keeps the default
//! [`name_floor`](crate::Traversable::name_floor) of 0; an IR with binders caches the
//! floor of its identities in each node and returns it there.
//!
//! ```
//! use elevate_core::{arith::{self, Term}, Traversable};
//! let t: Term = "-(-x) * (y + 0)".parse().unwrap();
//! assert_eq!(t.arity(), 2);
//! assert_eq!(t.child(1).to_string(), "y + 0");
//! assert_eq!(t.size(), 7);
//! ```

use crate::stack::guard;
use crate::strategy::{rule, Strategy};
use crate::traversable::{NodeId, Traversable};
use crate::Node;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// One node of an arithmetic term.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// An integer literal.
    Num(i64),
    /// A variable.
    Var(Arc<str>),
    /// `a + b`
    Add(Term, Term),
    /// `a * b`
    Mul(Term, Term),
    /// `-a`
    Neg(Term),
}

/// An immutable, shared arithmetic term.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Term(Node<Expr>);

impl Term {
    /// Builds a term from its top node.
    pub fn new(expr: Expr) -> Self {
        Term(Node::new(expr))
    }

    /// An integer literal.
    pub fn num(value: i64) -> Self {
        Term::new(Expr::Num(value))
    }

    /// A variable.
    pub fn var(name: &str) -> Self {
        Term::new(Expr::Var(name.into()))
    }

    /// `a + b`
    pub fn sum(a: Term, b: Term) -> Self {
        Term::new(Expr::Add(a, b))
    }

    /// `a * b`
    pub fn product(a: Term, b: Term) -> Self {
        Term::new(Expr::Mul(a, b))
    }

    /// `-a`
    pub fn negate(a: Term) -> Self {
        Term::new(Expr::Neg(a))
    }

    /// The top node.
    pub fn expr(&self) -> &Expr {
        &self.0
    }

    /// The value, if this is a literal.
    pub fn as_num(&self) -> Option<i64> {
        match self.expr() {
            Expr::Num(n) => Some(*n),
            _ => None,
        }
    }

    /// The underlying shared node.
    pub fn node(&self) -> &Node<Expr> {
        &self.0
    }

    /// The value under wrapping 64-bit arithmetic, variables looked up in `env`.
    pub fn eval(&self, env: &dyn Fn(&str) -> i64) -> i64 {
        guard(|| match self.expr() {
            Expr::Num(n) => *n,
            Expr::Var(x) => env(x),
            Expr::Add(a, b) => a.eval(env).wrapping_add(b.eval(env)),
            Expr::Mul(a, b) => a.eval(env).wrapping_mul(b.eval(env)),
            Expr::Neg(a) => a.eval(env).wrapping_neg(),
        })
    }

    fn precedence(&self) -> u8 {
        match self.expr() {
            Expr::Add(..) => 1,
            Expr::Mul(..) => 2,
            Expr::Neg(..) => 3,
            Expr::Num(n) if *n < 0 => 3,
            Expr::Num(_) | Expr::Var(_) => 4,
        }
    }

    fn write_operand(&self, f: &mut fmt::Formatter<'_>, at_least: u8) -> fmt::Result {
        if self.precedence() < at_least {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }
}

impl std::ops::Add for Term {
    type Output = Term;
    fn add(self, other: Term) -> Term {
        Term::sum(self, other)
    }
}

impl std::ops::Mul for Term {
    type Output = Term;
    fn mul(self, other: Term) -> Term {
        Term::product(self, other)
    }
}

impl std::ops::Neg for Term {
    type Output = Term;
    fn neg(self) -> Term {
        Term::negate(self)
    }
}

impl Traversable for Term {
    #[inline]
    fn arity(&self) -> usize {
        match self.expr() {
            Expr::Num(_) | Expr::Var(_) => 0,
            Expr::Neg(_) => 1,
            Expr::Add(..) | Expr::Mul(..) => 2,
        }
    }

    #[inline]
    fn child(&self, index: usize) -> &Self {
        match (self.expr(), index) {
            (Expr::Neg(a), 0) | (Expr::Add(a, _), 0) | (Expr::Mul(a, _), 0) => a,
            (Expr::Add(_, b), 1) | (Expr::Mul(_, b), 1) => b,
            _ => panic!("{} has no child {index}", self),
        }
    }

    fn with_child(&self, index: usize, child: Self) -> Self {
        match (self.expr(), index) {
            (Expr::Neg(_), 0) => Term::negate(child),
            (Expr::Add(_, b), 0) => Term::sum(child, b.clone()),
            (Expr::Add(a, _), 1) => Term::sum(a.clone(), child),
            (Expr::Mul(_, b), 0) => Term::product(child, b.clone()),
            (Expr::Mul(a, _), 1) => Term::product(a.clone(), child),
            _ => panic!("{} has no child {index}", self),
        }
    }

    fn with_children(&self, children: Vec<Self>) -> Self {
        let mut children = children.into_iter();
        let mut next = || children.next().expect("one child per position");
        match self.expr() {
            Expr::Num(_) | Expr::Var(_) => self.clone(),
            Expr::Neg(_) => Term::negate(next()),
            Expr::Add(..) => Term::sum(next(), next()),
            Expr::Mul(..) => Term::product(next(), next()),
        }
    }

    #[inline]
    fn prefetch(&self) {
        self.0.prefetch()
    }

    #[inline]
    fn node_id(&self) -> Option<NodeId> {
        Some(self.0.id())
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        guard(|| match self.expr() {
            Expr::Num(n) => write!(f, "{n}"),
            Expr::Var(x) => f.write_str(x),
            Expr::Add(a, b) => {
                a.write_operand(f, 1)?;
                f.write_str(" + ")?;
                b.write_operand(f, 2)
            }
            Expr::Mul(a, b) => {
                a.write_operand(f, 2)?;
                f.write_str(" * ")?;
                b.write_operand(f, 3)
            }
            Expr::Neg(a) => {
                f.write_str("-")?;
                // `-(3)` and `-(-x)`: a bare `-3` is a literal, `--x` reads badly.
                match a.expr() {
                    Expr::Num(_) => write!(f, "({a})"),
                    _ => a.write_operand(f, 4),
                }
            }
        })
    }
}

impl fmt::Debug for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Term({self})")
    }
}

/// The text is not an arithmetic term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was expected there.
    pub expected: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "expected {} at column {}",
            self.expected,
            self.offset + 1
        )
    }
}

impl std::error::Error for ParseError {}

/// `a + b * -c`, integers (a `-` right before digits makes a negative literal),
/// identifiers, parentheses.
impl FromStr for Term {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let mut parser = Parser { text, pos: 0 };
        let term = parser.sum()?;
        parser.skip_space();
        if parser.pos != text.len() {
            return Err(parser.error("an operator or the end"));
        }
        Ok(term)
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.as_bytes().get(self.pos).copied()
    }

    fn error(&self, expected: &'static str) -> ParseError {
        ParseError {
            offset: self.pos,
            expected,
        }
    }

    fn sum(&mut self) -> Result<Term, ParseError> {
        let mut left = self.product()?;
        while self.peek() == Some(b'+') {
            self.pos += 1;
            left = Term::sum(left, self.product()?);
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Term, ParseError> {
        let mut left = self.unary()?;
        while self.peek() == Some(b'*') {
            self.pos += 1;
            left = Term::product(left, self.unary()?);
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Term, ParseError> {
        guard(|| {
            if self.peek() != Some(b'-') {
                return self.atom();
            }
            self.pos += 1;
            if self
                .text
                .as_bytes()
                .get(self.pos)
                .is_some_and(u8::is_ascii_digit)
            {
                let start = self.pos - 1;
                let digits = self.digits();
                return self.text[start..start + 1 + digits]
                    .parse()
                    .map(Term::num)
                    .map_err(|_| ParseError {
                        offset: start,
                        expected: "a 64-bit integer",
                    });
            }
            Ok(Term::negate(self.unary()?))
        })
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn atom(&mut self) -> Result<Term, ParseError> {
        let start = self.pos;
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let inner = guard(|| self.sum())?;
                if self.peek() != Some(b')') {
                    return Err(self.error("`)`"));
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                let len = self.digits();
                self.text[start..start + len]
                    .parse()
                    .map(Term::num)
                    .map_err(|_| ParseError {
                        offset: start,
                        expected: "a 64-bit integer",
                    })
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let begin = self.pos;
                let bytes = self.text.as_bytes();
                while self.pos < bytes.len()
                    && (bytes[self.pos].is_ascii_alphanumeric() || bytes[self.pos] == b'_')
                {
                    self.pos += 1;
                }
                Ok(Term::var(&self.text[begin..self.pos]))
            }
            _ => Err(ParseError {
                offset: start.max(self.pos),
                expected: "a number, a variable, `-` or `(`",
            }),
        }
    }
}

/// `x + 0 -> x`
pub fn add_zero() -> Strategy<Term> {
    rule("addZero", |t: &Term| match t.expr() {
        Expr::Add(x, z) if z.as_num() == Some(0) => Some(x.clone()),
        _ => None,
    })
}

/// `x * 1 -> x`
pub fn mul_one() -> Strategy<Term> {
    rule("mulOne", |t: &Term| match t.expr() {
        Expr::Mul(x, one) if one.as_num() == Some(1) => Some(x.clone()),
        _ => None,
    })
}

/// `-(-x) -> x`
pub fn neg_neg() -> Strategy<Term> {
    rule("negNeg", |t: &Term| match t.expr() {
        Expr::Neg(inner) => match inner.expr() {
            Expr::Neg(x) => Some(x.clone()),
            _ => None,
        },
        _ => None,
    })
}

/// `a + b -> b + a` (always applies to a sum: never normalize with it)
pub fn add_comm() -> Strategy<Term> {
    rule("addComm", |t: &Term| match t.expr() {
        Expr::Add(a, b) => Some(Term::sum(b.clone(), a.clone())),
        _ => None,
    })
}

/// `a * (b + c) -> a * b + a * c`
pub fn distribute() -> Strategy<Term> {
    rule("distribute", |t: &Term| match t.expr() {
        Expr::Mul(a, sum) => match sum.expr() {
            Expr::Add(b, c) => Some(Term::sum(
                Term::product(a.clone(), b.clone()),
                Term::product(a.clone(), c.clone()),
            )),
            _ => None,
        },
        _ => None,
    })
}

/// `n op m -> value` for literals `n`, `m` (and `-n`), wrapping on overflow.
pub fn fold_constants() -> Strategy<Term> {
    rule("foldConstants", |t: &Term| match t.expr() {
        Expr::Add(a, b) => Some(Term::num(a.as_num()?.wrapping_add(b.as_num()?))),
        Expr::Mul(a, b) => Some(Term::num(a.as_num()?.wrapping_mul(b.as_num()?))),
        Expr::Neg(a) => Some(Term::num(a.as_num()?.wrapping_neg())),
        _ => None,
    })
}
