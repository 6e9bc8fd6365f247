//! The scalars a kernel computes ([`ScalarExpr`]): expression trees over the kernel's
//! loop variables, with the loads, gathers and reductions they read and the
//! operations of its body.

use super::fragment::{not_structured, Structuring};
use super::index::{Aff, Extents, Var};
use crate::prim::Prim;
use crate::term::Literal;
use crate::types::Scalar;
use std::collections::BTreeSet;
use std::convert::Infallible;

/// The most operations in one kernel's scalar expression: a kernel body is a few
/// operations; a longer expression (100,000 additions in a row, or a function applied
/// to itself until its expression tree is huge) is translated as loops, whose values
/// are SSA names rather than trees.
pub const MAX_EXPRESSION_SIZE: usize = 1000;

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
    Bin(Prim, Box<ScalarExpr>, Box<ScalarExpr>),
    /// A unary primitive (`neg`, `not`, `exp`, ...) of a scalar.
    Un(Prim, Box<ScalarExpr>),
    /// A scalar converted to another type, as the interpreter's `cast` converts.
    Cast(Box<ScalarExpr>, Scalar),
    /// `then` where every index `a` of `conds` is in `lo..hi`, `other` elsewhere
    /// (padding: the element of the array inside its bounds, the constant outside).
    Select {
        /// `(a, lo, hi)`: `lo <= a < hi`.
        conds: Vec<(Aff, i64, i64)>,
        /// Where every condition holds.
        then: Box<ScalarExpr>,
        /// Elsewhere.
        other: Box<ScalarExpr>,
    },
    /// `select(cond, then, other)` on values: `then` where `cond` holds, `other`
    /// elsewhere (`arith.select`).
    Pick(Box<ScalarExpr>, Box<ScalarExpr>, Box<ScalarExpr>),
    /// An integer division or remainder (`op`) whose divisor may be 0 (or -1, of the
    /// smallest dividend): checked in the kernel's body, where a trap is recorded for
    /// `span` and 1 divides instead.
    Checked {
        /// `div` or `mod`.
        op: Prim,
        /// The dividend.
        x: Box<ScalarExpr>,
        /// The divisor.
        y: Box<ScalarExpr>,
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
        init: Box<ScalarExpr>,
        /// The variables reduced over, outermost first.
        vars: Vec<Var>,
        /// What is reduced.
        body: Box<ScalarExpr>,
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
        inits: Vec<ScalarExpr>,
        /// The variables folded over, outermost first.
        vars: Vec<Var>,
        /// Each accumulator's next value.
        steps: Vec<ScalarExpr>,
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
    pub value: ScalarExpr,
    pub bound: i64,
    pub span: Option<crate::Span>,
}

impl ScalarExpr {
    /// Whether a reduction, or an accumulator left over from one (other than a fold's
    /// own, where `fold`), is inside the expression.
    pub fn contains_reduction(&self, fold: bool) -> bool {
        match self {
            ScalarExpr::Acc(..) => !fold,
            ScalarExpr::Red { .. } | ScalarExpr::Fold { .. } => true,
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
            | ScalarExpr::Cast(..)
            | ScalarExpr::Pick(..)
            | ScalarExpr::Gather(..)
            | ScalarExpr::Checked { .. } => self
                .children()
                .into_iter()
                .any(|c| c.contains_reduction(fold)),
            _ => false,
        }
    }

    /// The distinct loads of the expression, added to `out` in the order they first
    /// occur: each is a kernel operand, however often the body reads it (argmax reads
    /// its element three times).
    pub fn collect_loads(&self, out: &mut Vec<(usize, Vec<Aff>)>) {
        match self {
            ScalarExpr::Load(b, idx, _) if !out.iter().any(|(c, jdx)| c == b && jdx == idx) => {
                out.push((*b, idx.clone()));
            }
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
            | ScalarExpr::Cast(..)
            | ScalarExpr::Pick(..)
            | ScalarExpr::Gather(..)
            | ScalarExpr::Checked { .. } => {
                for c in self.children() {
                    c.collect_loads(out);
                }
            }
            _ => {}
        }
    }

    /// The expression with each load replaced by its operand: its place in `loads`
    /// ([`ScalarExpr::collect_loads`]).
    pub fn number_loads(&self, loads: &[(usize, Vec<Aff>)]) -> ScalarExpr {
        match self {
            ScalarExpr::Load(b, idx, s) => {
                let k = loads
                    .iter()
                    .position(|(c, jdx)| c == b && jdx == idx)
                    .unwrap_or_default();
                ScalarExpr::Load(k, Vec::new(), *s)
            }
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
            | ScalarExpr::Cast(..)
            | ScalarExpr::Pick(..)
            | ScalarExpr::Gather(..)
            | ScalarExpr::Checked { .. } => self.map_each(&mut |c| c.number_loads(loads)),
            other => other.clone(),
        }
    }

    /// `e`, if it has at most `MAX_EXPRESSION_SIZE` operations (counted without
    /// recursion, and no further than the limit).
    pub fn bounded(self) -> Structuring<ScalarExpr> {
        let mut pending = vec![&self];
        let mut count = 0;
        while let Some(e) = pending.pop() {
            count += 1;
            if count > MAX_EXPRESSION_SIZE {
                return not_structured(format!(
                    "a scalar expression of more than {MAX_EXPRESSION_SIZE} operations"
                ));
            }
            pending.extend(e.children());
        }
        Ok(self)
    }

    /// Its type.
    pub fn scalar(&self) -> Scalar {
        match self {
            ScalarExpr::Lit(l) => match l {
                Literal::Bool(_) => Scalar::Bool,
                Literal::I32(_) => Scalar::I32,
                Literal::I64(_) => Scalar::I64,
                Literal::F32(_) => Scalar::F32,
                Literal::F64(_) => Scalar::F64,
            },
            ScalarExpr::Position(_) => Scalar::I64,
            ScalarExpr::Param(_, s) | ScalarExpr::Load(_, _, s) | ScalarExpr::Acc(_, _, s) => *s,
            ScalarExpr::Gather(g) => g.scalar,
            ScalarExpr::Bin(p, a, _) => match p {
                Prim::Lt | Prim::Gt | Prim::Equal => Scalar::Bool,
                _ => a.scalar(),
            },
            ScalarExpr::Un(_, a) | ScalarExpr::Checked { x: a, .. } => a.scalar(),
            ScalarExpr::Cast(_, s) => *s,
            ScalarExpr::Red { init, .. } => init.scalar(),
            ScalarExpr::Fold {
                inits, component, ..
            } => inits[*component].scalar(),
            ScalarExpr::Select { then, .. } | ScalarExpr::Pick(_, then, _) => then.scalar(),
        }
    }

    /// It with every index `a` replaced by `f(a)`.
    pub fn map_indices(&self, f: &mut dyn FnMut(&Aff) -> Aff) -> ScalarExpr {
        let mapped = match self {
            ScalarExpr::Load(b, idx, s) => {
                ScalarExpr::Load(*b, idx.iter().map(&mut *f).collect(), *s)
            }
            ScalarExpr::Acc(a, idx, s) => {
                ScalarExpr::Acc(*a, idx.iter().map(&mut *f).collect(), *s)
            }
            ScalarExpr::Gather(g) => {
                let mut g = (**g).clone();
                g.idx = g.idx.iter().map(&mut *f).collect();
                for d in &mut g.data {
                    d.value = d.value.map_indices(f);
                }
                ScalarExpr::Gather(Box::new(g))
            }
            ScalarExpr::Position(a) => ScalarExpr::Position(f(a)),
            _ => self.map_each(&mut |c| c.map_indices(f)),
        };
        match mapped {
            ScalarExpr::Select { conds, then, other } => ScalarExpr::Select {
                conds: conds.iter().map(|(a, lo, hi)| (f(a), *lo, *hi)).collect(),
                then,
                other,
            },
            e => e,
        }
    }

    /// It with `v` replaced by `e` in every index.
    pub fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> ScalarExpr {
        self.map_indices(&mut |a| a.subst(v, e, x))
    }

    /// The loops the reductions inside `self` (itself included) reduce over.
    pub fn reduction_vars(&self) -> BTreeSet<Var> {
        let mut vars = BTreeSet::new();
        let mut pending = vec![self];
        while let Some(e) = pending.pop() {
            if let ScalarExpr::Red { vars: vs, .. } | ScalarExpr::Fold { vars: vs, .. } = e {
                vars.extend(vs.iter().copied());
            }
            pending.extend(e.children());
        }
        vars
    }

    /// Whether it reads accumulator `id`.
    pub fn mentions_acc(&self, id: u32) -> bool {
        match self {
            ScalarExpr::Acc(a, _, _) => *a == id,
            e => e.children().into_iter().any(|c| c.mentions_acc(id)),
        }
    }

    /// The expressions directly inside `self`.
    pub fn children(&self) -> Vec<&ScalarExpr> {
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

    /// [`ScalarExpr::map_children`] for an `f` that cannot fail.
    pub fn map_each(&self, f: &mut dyn FnMut(&ScalarExpr) -> ScalarExpr) -> ScalarExpr {
        self.map_children(&mut |c| Ok::<_, Infallible>(f(c)))
            .unwrap_or_else(|never| match never {})
    }

    /// `self` with each expression directly inside replaced by `f` of it.
    pub fn map_children<E>(
        &self,
        f: &mut dyn FnMut(&ScalarExpr) -> Result<ScalarExpr, E>,
    ) -> Result<ScalarExpr, E> {
        // Walks recurse through here, as deep as an expression nests.
        let f = &mut |c: &ScalarExpr| elevate_core::stack::guard(|| f(c));
        Ok(match self {
            ScalarExpr::Bin(p, a, b) => ScalarExpr::Bin(*p, Box::new(f(a)?), Box::new(f(b)?)),
            ScalarExpr::Un(p, a) => ScalarExpr::Un(*p, Box::new(f(a)?)),
            ScalarExpr::Cast(a, s) => ScalarExpr::Cast(Box::new(f(a)?), *s),
            ScalarExpr::Checked { op, x, y, span } => ScalarExpr::Checked {
                op: *op,
                x: Box::new(f(x)?),
                y: Box::new(f(y)?),
                span: *span,
            },
            ScalarExpr::Red {
                op,
                init,
                vars,
                body,
            } => ScalarExpr::Red {
                op: *op,
                init: Box::new(f(init)?),
                vars: vars.clone(),
                body: Box::new(f(body)?),
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
                then: Box::new(f(then)?),
                other: Box::new(f(other)?),
            },
            ScalarExpr::Pick(c, a, b) => {
                ScalarExpr::Pick(Box::new(f(c)?), Box::new(f(a)?), Box::new(f(b)?))
            }
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
