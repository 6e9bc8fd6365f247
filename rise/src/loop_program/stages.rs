//! A program as stages: each array it materializes at the top level (`toMem` outside
//! every function) is a stage of its own, written into a buffer that later stages
//! read, and the result is the last stage. Each stage is one kernel of the loop
//! program (or a few), built on its own: a program that is not one loop program as a
//! whole may be one stage by stage ([`super::plan`]), each stage keeping its
//! schedule.
//!
//! An array literal that depends on no loop (`zip(x, [1.0, 2.0])` inside a map) is a
//! stage too: it is written once, before the loops that read it, instead of being an
//! expression of every element that reads it.

use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::Type;
use elevate_core::stack::guard;
use elevate_core::NameSupply;
use std::collections::{HashMap, HashSet};

/// An array the program materializes at the top level: `var` stands for it in the
/// stages after it.
pub struct Stage {
    /// The variable that stands for it.
    pub var: Ident,
    /// What computes it.
    pub term: Term,
    /// Its type.
    pub ty: Type,
}

/// The program as stages, in an order where each reads only the stages before it.
pub struct Staged {
    /// The stages, in order.
    pub stages: Vec<Stage>,
    /// The result, reading the stages' variables.
    pub result: Term,
    /// Variables bound by a top-level `let` to a variable (a parameter or a stage):
    /// `(alias, variable)`; they stand for the same array.
    pub aliases: Vec<(u64, u64)>,
}

/// What a top-level `let` bound to a computed array becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lets {
    /// Computed where it is read, in its readers' kernels.
    Inlined,
    /// A stage of its own, as if it were stored with `toMem`: for a program whose
    /// layers are no loop program fused (a convolution reading, through its padding,
    /// an image that a reduction computes), but are one each.
    Stored,
}

/// `body` as stages: every top-level `toMem` whose array depends only on the
/// parameters, the stages before it and their aliases is hoisted into a stage, and
/// so, where `lets` is [`Lets::Stored`], is the array of every top-level `let` bound
/// to something computed (where it is [`Lets::Inlined`], such an array is computed
/// where it is read).
pub fn split(body: &Term, lets: Lets) -> Staged {
    let mut splitter = Splitter {
        lets,
        names: NameSupply::above(body.name_floor()),
        stages: Vec::new(),
        aliases: Vec::new(),
        opaque: HashSet::new(),
        inside: HashMap::new(),
    };
    let result = splitter.walk(body);
    Staged {
        stages: splitter.stages,
        result,
        aliases: splitter.aliases,
    }
}

struct Splitter {
    lets: Lets,
    names: NameSupply,
    stages: Vec<Stage>,
    aliases: Vec<(u64, u64)>,
    /// Variables bound at the top level to values that are not arrays in buffers.
    opaque: HashSet<u64>,
    /// The variables of the functions being walked (how many binders of each).
    inside: HashMap<u64, usize>,
}

impl Splitter {
    /// `t` with its top-level `toMem`s hoisted into stages: on a stack that grows, as
    /// deep as the program.
    fn walk(&mut self, t: &Term) -> Term {
        guard(|| self.node(t))
    }

    fn node(&mut self, t: &Term) -> Term {
        let rebuilt =
            |f: &Term, a: Term| Term::with(Expr::App(f.clone(), a), t.ty().cloned(), t.span());
        match t.expr() {
            // `toMem(array)`
            Expr::App(f, array) if matches!(f.expr(), Expr::Prim(p) if p.stores()) => {
                let array = self.walk(array);
                self.hoisted(array)
                    .unwrap_or_else(|array| rebuilt(f, array))
            }
            // `let(value)(fun(x => body))`
            Expr::App(g, f) => match (g.expr(), f.expr()) {
                (Expr::App(p, value), Expr::Lambda(x, _, body))
                    if matches!(p.expr(), Expr::Prim(Prim::Let)) =>
                {
                    let mut value = self.walk(value);
                    if self.lets == Lets::Stored && !matches!(value.expr(), Expr::Var(_)) {
                        value = self.hoisted(value).unwrap_or_else(|value| value);
                    }
                    if let Expr::Var(v) = value.expr() {
                        if !self.opaque.contains(&v.id) {
                            // The body, with `x` standing for the array `v` stands for.
                            self.aliases.push((x.id, v.id));
                            return self.walk(body);
                        }
                    }
                    self.opaque.insert(x.id);
                    let body = self.walk(body);
                    let g = Term::with(Expr::App(p.clone(), value), g.ty().cloned(), g.span());
                    let f = f.map_children(|_| body.clone());
                    Term::with(Expr::App(g, f), t.ty().cloned(), t.span())
                }
                _ => t.map_children(|c| self.walk(c)),
            },
            Expr::Array(_) => self
                .hoisted(t.clone())
                .unwrap_or_else(|_| t.map_children(|c| self.walk(c))),
            // Functions run where they are applied, inside loops: their `toMem`s are
            // not at the top level, only the array literals that depend on none of
            // their variables are.
            Expr::Lambda(..) => self.literals(t),
            Expr::NatLambda(..) => t.clone(),
            _ => t.map_children(|c| self.walk(c)),
        }
    }

    /// `t`, inside a function, with its array literals that read none of the
    /// functions' variables hoisted into stages.
    fn literals(&mut self, t: &Term) -> Term {
        guard(|| match t.expr() {
            Expr::Array(_) => self.hoisted(t.clone()).unwrap_or_else(|t| t),
            Expr::Lambda(x, _, _) => {
                *self.inside.entry(x.id).or_default() += 1;
                let t = t.map_children(|c| self.literals(c));
                if let Some(n) = self.inside.get_mut(&x.id) {
                    *n -= 1;
                    if *n == 0 {
                        self.inside.remove(&x.id);
                    }
                }
                t
            }
            Expr::NatLambda(..) => t.clone(),
            _ => t.map_children(|c| self.literals(c)),
        })
    }

    /// A variable standing for `array` as a new stage, or `array` where it cannot be
    /// one (it reads a variable bound to something computed or a function's variable,
    /// or is not data of known size).
    fn hoisted(&mut self, array: Term) -> Result<Term, Term> {
        let Some(ty) = array.ty().cloned() else {
            return Err(array);
        };
        let reads_local = || {
            array
                .free_vars()
                .iter()
                .any(|x| self.opaque.contains(x) || self.inside.contains_key(x))
        };
        let local = !(self.opaque.is_empty() && self.inside.is_empty()) && reads_local();
        if !super::is_array_data(&ty) || local {
            return Err(array);
        }
        let var = Ident::supplied(&mut self.names, "stage");
        let read = Term::var(&var).with_type(ty.clone());
        self.stages.push(Stage {
            var,
            term: array,
            ty,
        });
        Ok(read)
    }
}
