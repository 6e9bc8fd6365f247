//! Sketches: program shapes that guide equality saturation (Koehler et al.,
//! "Sketch-Guided Equality Saturation").
//!
//! A sketch says what a program should look like and leaves the rest open. It is
//! used three ways:
//!
//! - [`extract`]: the cheapest program of an e-class that satisfies a sketch (not the
//!   cheapest program overall);
//! - [`satisfied`]: whether any program of an e-class does, cheap enough to stop a
//!   saturation as soon as the sketch is reachable ([`Saturation::with_goal`]);
//! - [`guided`] (and the [`sketch_guided`] strategy): a search in steps, each
//!   saturating from the previous step's program until its sketch is reachable and
//!   restarting from the program it extracts.
//!
//! # Syntax
//!
//! | sketch | a program that is |
//! |---|---|
//! | `?` | anything |
//! | `contains(S)` | a program with a subterm (itself included) satisfying `S` |
//! | `or(S1, S2)` | satisfying `S1` or `S2`; `or(S1, S2, S3)` is `or(S1, or(S2, S3))` |
//! | `fun(S)` | a lambda whose body satisfies `S` |
//! | `app(S1, S2)` | an application of `S1` to `S2`; `app(F, A, B)` is `app(app(F, A), B)` |
//! | `map` | the primitive `map` (any type) |
//! | `map(S1, S2)`, `map(S1)(S2)` | `map` applied to `S1`, then `S2` (curried, as in RISE) |
//! | `split(32)`, `split(?)`, `split` | `split` with the nat argument `32`, with any |
//! | `map[n]` | a loop primitive that iterates over `n` elements (see below) |
//! | `S \|> F` | `app(F, S)`, the RISE pipe: `? \|> map(?)` is `map(?, ?)` |
//! | `(S)` | `S` |
//!
//! Nat arguments come first, as in RISE: the first arguments of `slide` are its two
//! nats (`slide(3, 1, ?)`), each a RISE nat (`32`, `n/4`, `2*n+1`) or `?`; omitted
//! ones are any (`slide(3)` is `slide(3, ?)`).
//!
//! `NAME[n]` is for the loop primitives (`map`, `mapSeq`, `mapSeqUnroll`, `mapPar`,
//! `mapGlobal`, `mapWorkGroup`, `mapLocal`, `reduce`, `reduceSeq`,
//! `reduceSeqUnroll`, `scanSeq`, `generate`): the length of the array the instance
//! loops over, read from its type (its first array parameter, or for `generate` its
//! result), must equal `n` as a nat (`map[1024/32]` is `map[32]`). `map[?]` is `map`.
//!
//! [`Sketch`]'s [`Display`](std::fmt::Display) prints applications of primitives with
//! all their arguments in one list (`map(?, map(?, ?))`) and parses back to an equal
//! sketch.
//!
//! ```
//! use elevate_rise::egraph::sketch::Sketch;
//! let s: Sketch = "? |> map(?) |> map[8](fun(contains(abs)))".parse().unwrap();
//! assert_eq!(s.to_string(), "map[8](fun(contains(abs)), map(?, ?))");
//! let e = "map(?".parse::<Sketch>().unwrap_err();
//! assert_eq!(e.span.unwrap().start, 5);
//! ```
//!
//! [`Saturation::with_goal`]: super::Saturation::with_goal

mod extract;
mod guided;
mod parse;

pub use extract::{extract, extract_within, satisfied};
pub use guided::{
    guided, sketch_guided, GuideStep, GuidedOutcome, SketchGuidedStrategy, StepReport,
};

use crate::nat::Nat;
use crate::prim::Prim;
use std::fmt;

/// A sketch: the shape of the programs wanted (see the [module](self) for the text).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Sketch {
    /// `?`: any program.
    Any,
    /// `contains(S)`: a program with a subterm, itself included, that satisfies `S`.
    Contains(Box<Sketch>),
    /// `or(S1, S2)`: a program that satisfies either.
    Or(Box<Sketch>, Box<Sketch>),
    /// A primitive with its nat arguments (`None`: any), and for loops, optionally,
    /// the length of the array it iterates over.
    Prim {
        /// The primitive.
        prim: Prim,
        /// Its nat arguments, one per [`Prim::nat_params`].
        nats: Vec<Option<Nat>>,
        /// The loop's length (`map[n]`).
        size: Option<Nat>,
        /// The lengths of the iterated elements' own dimensions, outermost first
        /// (`map[32, 32, 1024]` iterates over 32 elements of type `32.1024.t`): where
        /// sizes alone cannot tell loops apart (a block loop from a row loop).
        elems: Vec<Option<Nat>>,
    },
    /// `fun(S)`: a lambda whose body satisfies `S`.
    Fun(Box<Sketch>),
    /// `app(F, A)`: an application of a function satisfying `F` to an argument
    /// satisfying `A`.
    App(Box<Sketch>, Box<Sketch>),
}

impl Sketch {
    /// Parses sketch text; the error's span says where the text goes wrong.
    pub fn parse(text: &str) -> Result<Sketch, crate::Error> {
        parse::parse(text)
    }

    /// The primitive `prim` with any nat arguments, of any size.
    pub fn prim(prim: Prim) -> Sketch {
        Sketch::Prim {
            prim,
            nats: vec![None; prim.nat_params()],
            size: None,
            elems: Vec::new(),
        }
    }

    /// `contains(inner)`.
    pub fn contains(inner: Sketch) -> Sketch {
        Sketch::Contains(Box::new(inner))
    }

    /// `or(a, b)`.
    pub fn or(a: Sketch, b: Sketch) -> Sketch {
        Sketch::Or(Box::new(a), Box::new(b))
    }

    /// `fun(body)`.
    pub fn fun(body: Sketch) -> Sketch {
        Sketch::Fun(Box::new(body))
    }

    /// `self` applied to `args`, one after the other (`map(f, xs)` is
    /// `Sketch::prim(Prim::Map).apply([f, xs])`).
    pub fn apply(self, args: impl IntoIterator<Item = Sketch>) -> Sketch {
        args.into_iter()
            .fold(self, |f, a| Sketch::App(Box::new(f), Box::new(a)))
    }

    /// The head of a chain of applications and its arguments, first first.
    fn spine(&self) -> (&Sketch, Vec<&Sketch>) {
        let mut args = Vec::new();
        let mut head = self;
        while let Sketch::App(f, a) = head {
            args.push(&**a);
            head = f;
        }
        args.reverse();
        (head, args)
    }
}

impl std::str::FromStr for Sketch {
    type Err = crate::Error;

    fn from_str(text: &str) -> Result<Sketch, crate::Error> {
        Sketch::parse(text)
    }
}

/// Whether `[n]` may annotate `prim`: it loops over an array.
pub(crate) fn is_loop(prim: Prim) -> bool {
    use Prim::*;
    matches!(
        prim,
        Map | MapSeq
            | MapSeqUnroll
            | MapPar
            | MapGlobal
            | MapWorkGroup
            | MapLocal
            | Reduce
            | ReduceSeq
            | ReduceSeqUnroll
            | ScanSeq
            | Generate
    )
}

/// `prim[size](nats..., args...)`, or the bare name when there is nothing to add.
fn write_prim(
    f: &mut fmt::Formatter<'_>,
    prim: Prim,
    nats: &[Option<Nat>],
    size: Option<&Nat>,
    elems: &[Option<Nat>],
    args: &[&Sketch],
) -> fmt::Result {
    f.write_str(prim.name())?;
    let dim = |n: Option<&Nat>| n.map_or("?".to_string(), Nat::to_string);
    if size.is_some() || !elems.is_empty() {
        let dims: Vec<String> = std::iter::once(dim(size))
            .chain(elems.iter().map(|e| dim(e.as_ref())))
            .collect();
        write!(f, "[{}]", dims.join(", "))?;
    }
    if args.is_empty() && nats.iter().all(Option::is_none) {
        return Ok(());
    }
    let nats = nats.iter().map(|n| match n {
        Some(n) => n.to_string(),
        None => "?".to_string(),
    });
    let args = args.iter().map(|a| a.to_string());
    write!(f, "({})", nats.chain(args).collect::<Vec<_>>().join(", "))
}

impl fmt::Display for Sketch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sketch::Any => f.write_str("?"),
            Sketch::Contains(s) => write!(f, "contains({s})"),
            Sketch::Or(a, b) => write!(f, "or({a}, {b})"),
            Sketch::Fun(body) => write!(f, "fun({body})"),
            Sketch::Prim {
                prim,
                nats,
                size,
                elems,
            } => write_prim(f, *prim, nats, size.as_ref(), elems, &[]),
            Sketch::App(g, a) => match self.spine() {
                (
                    Sketch::Prim {
                        prim,
                        nats,
                        size,
                        elems,
                    },
                    args,
                ) => write_prim(f, *prim, nats, size.as_ref(), elems, &args),
                _ => write!(f, "app({g}, {a})"),
            },
        }
    }
}
