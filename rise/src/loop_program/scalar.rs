//! The scalars a kernel computes ([`ScalarExpr`]): expressions over the kernel's loop
//! variables, with the loads, gathers and reductions they read and the operations of
//! its body.
//!
//! An expression is a DAG: its subexpressions are shared ([`ExprRef`]), so a value used
//! twice (`fun(x => x * x)` applied to itself 40 times) is one node, not a tree of 2^40.
//! Every walk visits each distinct node once ([`ScalarExpr::nodes`], [`Memo`],
//! [`ScalarExpr::rewrite`]), and the emitters give each one SSA value.

use super::deep_rc::DeepRc;
use super::index::{Aff, Extents, Var};
use crate::prim::Prim;
use crate::term::Literal;
use crate::types::Scalar;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::convert::Infallible;

/// A shared subexpression. Its last drop, however deep the expression, does not
/// recurse ([`DeepRc`]): a body of 100,000 additions in a row is normal input.
pub type ExprRef = DeepRc<ScalarExpr>;

/// Whether `p` on integers can trap: a division or remainder (by zero, or the
/// smallest integer by -1).
pub fn can_trap(p: Prim, s: Scalar) -> bool {
    matches!(p, Prim::Div | Prim::Mod) && matches!(s, Scalar::I32 | Scalar::I64)
}

/// Whether an integer divisor `d` is one that never traps (neither 0 nor -1).
pub fn safe_divisor(d: i64) -> bool {
    d != 0 && d != -1
}

/// A scalar computed by the program, in terms of loop variables.
#[derive(Clone, Debug, PartialEq)]
pub enum ScalarExpr {
    /// A constant.
    Lit(Literal),
    /// A scalar parameter of the function (its SSA name).
    Param(String, Scalar),
    /// An element of a buffer.
    Load(usize, Vec<Aff>, Scalar),
    /// An element of a reduction's accumulator, while its step is evaluated.
    Acc(u32, Vec<Aff>, Scalar),
    /// A binary primitive (`add`, `lt`, ...) of two scalars.
    Bin(Prim, ExprRef, ExprRef),
    /// A unary primitive (`neg`, `not`, `exp`, ...) of a scalar.
    Un(Prim, ExprRef),
    /// A scalar converted to another type, as the interpreter's `cast` converts.
    Cast(ExprRef, Scalar),
    /// `then` where every index `a` of `conds` is in `lo..hi`, `other` elsewhere
    /// (padding: the element of the array inside its bounds, the constant outside).
    Select {
        /// `(a, lo, hi)`: `lo <= a < hi`.
        conds: Vec<(Aff, i64, i64)>,
        /// Where every condition holds.
        then: ExprRef,
        /// Elsewhere.
        other: ExprRef,
    },
    /// `select(cond, then, other)` on values: `then` where `cond` holds, `other`
    /// elsewhere (`arith.select`).
    Pick(ExprRef, ExprRef, ExprRef),
    /// An integer division or remainder (`op`) whose divisor may be 0 (or -1, of the
    /// smallest dividend): checked in the kernel's body, where a trap is recorded for
    /// `span` and 1 divides instead.
    Checked {
        /// `div` or `mod`.
        op: Prim,
        /// The dividend.
        x: ExprRef,
        /// The divisor.
        y: ExprRef,
        /// Where the operation is in the RISE program.
        span: Option<crate::Span>,
    },
    /// An element of a buffer at an index computed from data ([`Gathered`]).
    Gather(Box<Gathered>),
    /// The value of an index of the kernel's loops, an `i64` (a fold's first step).
    Position(Aff),
    /// `init ⊕ Σ_{vars} body`
    Red {
        /// The associative operation `⊕`.
        op: Prim,
        /// The start.
        init: ExprRef,
        /// The variables reduced over, outermost first.
        vars: Vec<Var>,
        /// What is reduced.
        body: ExprRef,
    },
    /// A reduction whose step is any function of its accumulators, which are one or
    /// more scalars (a pair: argmax's value and position, a softmax's running maximum
    /// and sum): accumulator `k` (`Acc(id + k, [])` in the steps) starts at `inits[k]`
    /// and becomes `steps[k]` at each position of `vars`, in order. Its value is
    /// accumulator `component`.
    Fold {
        /// The first accumulator's number.
        id: u32,
        /// Each accumulator's start.
        inits: Vec<ExprRef>,
        /// The variables folded over, outermost first.
        vars: Vec<Var>,
        /// Each accumulator's next value.
        steps: Vec<ExprRef>,
        /// The accumulator that is the value.
        component: usize,
    },
}

/// A read of buffer `buf` at `idx`, where some variables of the index are numbers
/// computed from data (`natAsIndex`): the kernel's body reads the buffer where it
/// lies (`memref.load`), its other variables being the kernel's loops.
#[derive(Clone, Debug, PartialEq)]
pub struct Gathered {
    /// The buffer.
    pub buf: usize,
    /// The index, in the kernel's loop variables and those of `data`.
    pub idx: Vec<Aff>,
    /// The variables computed from data.
    pub data: Vec<DataIndex>,
    /// The element's type.
    pub scalar: Scalar,
}

/// Variable `var` of an index stands for `value` (an `i64` computed from data), which
/// must lie in `0..bound`: outside, the code records a trap for `span` and reads 0.
#[derive(Clone, Debug, PartialEq)]
pub struct DataIndex {
    pub var: Var,
    pub value: ExprRef,
    pub bound: i64,
    pub span: Option<crate::Span>,
}

/// What a walk made of each node it has met, so that a node shared by several parents
/// is walked once. It holds each node it has met, so that no node it remembers is
/// dropped and its address given to another while the walk goes on.
pub struct Memo<T> {
    made: HashMap<*const ScalarExpr, (ExprRef, T)>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo {
            made: HashMap::new(),
        }
    }
}

impl<T: Clone> Memo<T> {
    /// What `walk` makes of `e`, walked the first time `e` is met.
    pub fn get_or<E>(
        &mut self,
        e: &ExprRef,
        walk: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let key = DeepRc::as_ptr(e);
        if let Some((_, made)) = self.made.get(&key) {
            return Ok(made.clone());
        }
        let made = walk(self)?;
        self.made.insert(key, (e.clone(), made.clone()));
        Ok(made)
    }
}

impl Memo<ExprRef> {
    /// [`Memo::get_or`] for a walk that makes an expression: what it makes is shared,
    /// so that a node shared before the walk is shared after it.
    pub fn made<E>(
        &mut self,
        e: &ExprRef,
        walk: impl FnOnce(&mut Self) -> Result<ScalarExpr, E>,
    ) -> Result<ExprRef, E> {
        self.get_or(e, |memo| walk(memo).map(ScalarExpr::shared))
    }
}

impl ScalarExpr {
    /// It, shared.
    pub fn shared(self) -> ExprRef {
        self.into()
    }

    /// Each distinct node of the expression once, `self` first, parents before their
    /// children (without recursion).
    pub fn nodes(&self) -> Vec<&ScalarExpr> {
        self.nodes_where(|_| true)
    }

    /// [`ScalarExpr::nodes`], entering a node's children only where `enter` says so.
    pub fn nodes_where(&self, mut enter: impl FnMut(&ScalarExpr) -> bool) -> Vec<&ScalarExpr> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut pending = vec![self];
        while let Some(e) = pending.pop() {
            if !seen.insert(e as *const ScalarExpr) {
                continue;
            }
            out.push(e);
            if enter(e) {
                // Reversed, so that the first child is met first.
                pending.extend(e.children().into_iter().rev().map(|c| &**c));
            }
        }
        out
    }

    /// Whether it is an operation of the kernel's body on values (`add`, `neg`, a
    /// cast, `select`), as opposed to a leaf, a read, a guard or a reduction.
    pub fn is_arithmetic(&self) -> bool {
        matches!(
            self,
            ScalarExpr::Bin(..) | ScalarExpr::Un(..) | ScalarExpr::Cast(..) | ScalarExpr::Pick(..)
        )
    }

    /// How many distinct operations it has.
    pub fn size(&self) -> usize {
        self.nodes().len()
    }

    /// Whether a reduction, or an accumulator left over from one (other than a fold's
    /// own, where `fold`), is inside the expression.
    pub fn contains_reduction(&self, fold: bool) -> bool {
        let mut found = false;
        self.nodes_where(|e| {
            found |= match e {
                ScalarExpr::Acc(..) => !fold,
                ScalarExpr::Red { .. } | ScalarExpr::Fold { .. } => true,
                _ => false,
            };
            !found && !matches!(e, ScalarExpr::Select { .. })
        });
        found
    }

    /// The distinct loads of the expression, added to `out` in the order they first
    /// occur: each is a kernel operand, however often the body reads it (argmax reads
    /// its element three times).
    pub fn collect_loads(&self, out: &mut Vec<(usize, Vec<Aff>)>) {
        let inside = |e: &ScalarExpr| {
            e.is_arithmetic() || matches!(e, ScalarExpr::Gather(..) | ScalarExpr::Checked { .. })
        };
        for e in self.nodes_where(inside) {
            if let ScalarExpr::Load(b, idx, _) = e {
                if !out.iter().any(|(c, jdx)| c == b && jdx == idx) {
                    out.push((*b, idx.clone()));
                }
            }
        }
    }

    /// The expression with each load replaced by its operand: its place in `loads`
    /// ([`ScalarExpr::collect_loads`]).
    pub fn number_loads(&self, loads: &[(usize, Vec<Aff>)]) -> ScalarExpr {
        self.rewrite(&mut |e| match e {
            ScalarExpr::Load(b, idx, s) => {
                let k = loads
                    .iter()
                    .position(|(c, jdx)| *c == b && *jdx == idx)
                    .unwrap_or_default();
                ScalarExpr::Load(k, Vec::new(), s)
            }
            e => e,
        })
    }

    /// Its type.
    pub fn scalar(&self) -> Scalar {
        let mut e = self;
        loop {
            if let Some(s) = e.own_scalar() {
                return s;
            }
            // Its operands have its type: one that says its own, where there is
            // one (so that a chain of 100,000 additions, each of the chain so far and
            // a leaf, is typed at once), else the first, in a loop.
            let (first, second) = match e {
                ScalarExpr::Fold {
                    inits, component, ..
                } => (&inits[*component], None),
                ScalarExpr::Bin(_, a, b)
                | ScalarExpr::Checked { x: a, y: b, .. }
                | ScalarExpr::Red {
                    init: a, body: b, ..
                }
                | ScalarExpr::Select {
                    then: a, other: b, ..
                }
                | ScalarExpr::Pick(_, a, b) => (a, Some(b)),
                ScalarExpr::Un(_, a) => (a, None),
                _ => unreachable!("a leaf says its type"),
            };
            let own = first.own_scalar();
            match own.or_else(|| second.and_then(|b| b.own_scalar())) {
                Some(s) => return s,
                None => e = first,
            }
        }
    }

    /// Its type, where the node itself says it (a leaf, a cast, a comparison).
    fn own_scalar(&self) -> Option<Scalar> {
        Some(match self {
            ScalarExpr::Lit(l) => match l {
                Literal::Bool(_) => Scalar::Bool,
                Literal::I32(_) => Scalar::I32,
                Literal::I64(_) => Scalar::I64,
                Literal::F32(_) => Scalar::F32,
                Literal::F64(_) => Scalar::F64,
            },
            ScalarExpr::Position(_) => Scalar::I64,
            ScalarExpr::Param(_, s)
            | ScalarExpr::Load(_, _, s)
            | ScalarExpr::Acc(_, _, s)
            | ScalarExpr::Cast(_, s) => *s,
            ScalarExpr::Gather(g) => g.scalar,
            ScalarExpr::Bin(Prim::Lt | Prim::Gt | Prim::Equal, _, _) => Scalar::Bool,
            _ => return None,
        })
    }

    /// It with every index `a` replaced by `f(a)`.
    pub fn map_indices(&self, f: &mut dyn FnMut(&Aff) -> Aff) -> ScalarExpr {
        self.rewrite(&mut |e| match e {
            ScalarExpr::Load(b, idx, s) => {
                ScalarExpr::Load(b, idx.iter().map(&mut *f).collect(), s)
            }
            ScalarExpr::Acc(a, idx, s) => ScalarExpr::Acc(a, idx.iter().map(&mut *f).collect(), s),
            ScalarExpr::Gather(mut g) => {
                g.idx = g.idx.iter().map(&mut *f).collect();
                ScalarExpr::Gather(g)
            }
            ScalarExpr::Position(a) => ScalarExpr::Position(f(&a)),
            ScalarExpr::Select { conds, then, other } => ScalarExpr::Select {
                conds: conds.iter().map(|(a, lo, hi)| (f(a), *lo, *hi)).collect(),
                then,
                other,
            },
            e => e,
        })
    }

    /// It with `v` replaced by `e` in every index.
    pub fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> ScalarExpr {
        self.map_indices(&mut |a| a.subst(v, e, x))
    }

    /// The loops the reductions inside `self` (itself included) reduce over.
    pub fn reduction_vars(&self) -> BTreeSet<Var> {
        let mut vars = BTreeSet::new();
        for e in self.nodes() {
            if let ScalarExpr::Red { vars: vs, .. } | ScalarExpr::Fold { vars: vs, .. } = e {
                vars.extend(vs.iter().copied());
            }
        }
        vars
    }

    /// Whether it reads accumulator `id`.
    pub fn mentions_acc(&self, id: u32) -> bool {
        self.nodes()
            .into_iter()
            .any(|e| matches!(e, ScalarExpr::Acc(a, _, _) if *a == id))
    }

    /// The expressions directly inside `self`.
    pub fn children(&self) -> Vec<&ExprRef> {
        match self {
            ScalarExpr::Bin(_, a, b) | ScalarExpr::Checked { x: a, y: b, .. } => vec![a, b],
            ScalarExpr::Un(_, a) | ScalarExpr::Cast(a, _) => vec![a],
            ScalarExpr::Red { init, body, .. } => vec![init, body],
            ScalarExpr::Fold { inits, steps, .. } => inits.iter().chain(steps).collect(),
            ScalarExpr::Select { then, other, .. } => vec![then, other],
            ScalarExpr::Pick(c, a, b) => vec![c, a, b],
            ScalarExpr::Gather(g) => g.data.iter().map(|d| &d.value).collect(),
            ScalarExpr::Lit(_)
            | ScalarExpr::Param(..)
            | ScalarExpr::Load(..)
            | ScalarExpr::Acc(..)
            | ScalarExpr::Position(_) => Vec::new(),
        }
    }

    /// It rebuilt from the leaves up: each distinct node once, its children rebuilt
    /// first, then `f` of it with those children (a node shared by several parents
    /// stays one node).
    pub fn rewrite(&self, f: &mut dyn FnMut(ScalarExpr) -> ScalarExpr) -> ScalarExpr {
        fn up(
            e: &ScalarExpr,
            f: &mut dyn FnMut(ScalarExpr) -> ScalarExpr,
            memo: &mut Memo<ExprRef>,
        ) -> ScalarExpr {
            let rebuilt = e.map_each(&mut |c| {
                memo.get_or(c, |memo| Ok::<_, Infallible>(up(c, f, memo).shared()))
                    .unwrap_or_else(|never| match never {})
            });
            f(rebuilt)
        }
        up(self, f, &mut Memo::default())
    }

    /// [`ScalarExpr::map_children`] for an `f` that cannot fail.
    pub fn map_each(&self, f: &mut dyn FnMut(&ExprRef) -> ExprRef) -> ScalarExpr {
        self.map_children(&mut |c| Ok::<_, Infallible>(f(c)))
            .unwrap_or_else(|never| match never {})
    }

    /// `self` with each expression directly inside replaced by `f` of it (the node
    /// itself where it has none).
    pub fn map_children<E>(
        &self,
        f: &mut dyn FnMut(&ExprRef) -> Result<ExprRef, E>,
    ) -> Result<ScalarExpr, E> {
        // Walks recurse through here, as deep as an expression nests.
        let f = &mut |c: &ExprRef| elevate_core::stack::guard(|| f(c));
        Ok(match self {
            ScalarExpr::Bin(p, a, b) => ScalarExpr::Bin(*p, f(a)?, f(b)?),
            ScalarExpr::Un(p, a) => ScalarExpr::Un(*p, f(a)?),
            ScalarExpr::Cast(a, s) => ScalarExpr::Cast(f(a)?, *s),
            ScalarExpr::Checked { op, x, y, span } => ScalarExpr::Checked {
                op: *op,
                x: f(x)?,
                y: f(y)?,
                span: *span,
            },
            ScalarExpr::Red {
                op,
                init,
                vars,
                body,
            } => ScalarExpr::Red {
                op: *op,
                init: f(init)?,
                vars: vars.clone(),
                body: f(body)?,
            },
            ScalarExpr::Fold {
                id,
                inits,
                vars,
                steps,
                component,
            } => ScalarExpr::Fold {
                id: *id,
                inits: inits.iter().map(&mut *f).collect::<Result<_, E>>()?,
                vars: vars.clone(),
                steps: steps.iter().map(&mut *f).collect::<Result<_, E>>()?,
                component: *component,
            },
            ScalarExpr::Select { conds, then, other } => ScalarExpr::Select {
                conds: conds.clone(),
                then: f(then)?,
                other: f(other)?,
            },
            ScalarExpr::Pick(c, a, b) => ScalarExpr::Pick(f(c)?, f(a)?, f(b)?),
            ScalarExpr::Gather(g) => {
                let mut g = (**g).clone();
                for d in &mut g.data {
                    d.value = f(&d.value)?;
                }
                ScalarExpr::Gather(Box::new(g))
            }
            ScalarExpr::Lit(_)
            | ScalarExpr::Param(..)
            | ScalarExpr::Load(..)
            | ScalarExpr::Acc(..)
            | ScalarExpr::Position(_) => self.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x * x`, then that times itself, `n` times: 2^n leaves as a tree.
    fn squared(n: u32) -> ScalarExpr {
        let mut e = ScalarExpr::Param("%x".into(), Scalar::F32);
        for _ in 0..n {
            let x = e.shared();
            e = ScalarExpr::Bin(Prim::Mul, x.clone(), x);
        }
        e
    }

    #[test]
    fn a_value_used_twice_is_one_node_for_every_walk() {
        let e = squared(60);
        assert_eq!(e.size(), 61);
        // Rebuilt, it stays a DAG of as many nodes.
        let renumbered = e.map_indices(&mut |a| a.clone());
        assert_eq!(renumbered.size(), 61);
        assert!(!e.contains_reduction(false));
        assert!(!e.mentions_acc(0));
        assert_eq!(e.scalar(), Scalar::F32);
    }

    #[test]
    fn a_chain_of_100000_operations_is_walked_and_dropped_without_recursion() {
        let mut e = ScalarExpr::Param("%x".into(), Scalar::I32);
        for _ in 0..100_000 {
            e = ScalarExpr::Bin(
                Prim::Add,
                e.shared(),
                ScalarExpr::Lit(Literal::I32(1)).shared(),
            );
        }
        assert_eq!(e.scalar(), Scalar::I32);
        let plus_one = e.map_indices(&mut |a| a.clone());
        assert_eq!(plus_one.size(), e.size());
        drop(plus_one);
        drop(e);
    }
}
