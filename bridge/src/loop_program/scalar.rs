//! The scalars a kernel computes ([`ScalarExpr`]): expression trees over the kernel's
//! loop variables, with the loads, gathers and reductions they read and the
//! operations of its body.

use super::fragment::{not_structured, Structuring};
use super::index::{Aff, Extents, Var};
use elevate_rise::prim::Prim;
use elevate_rise::term::Literal;
use elevate_rise::types::Scalar;
use std::collections::BTreeSet;
use std::convert::Infallible;

/// The most operations in one kernel's scalar expression: a kernel body is a few
/// operations; a longer expression (100,000 additions in a row, or a function applied
/// to itself until its expression tree is huge) is translated as loops, whose values
/// are SSA names rather than trees.
pub(crate) const MAX_EXPRESSION_SIZE: usize = 1000;

/// A scalar computed by the program, in terms of loop variables.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ScalarExpr {
    Lit(Literal),
    /// A scalar parameter of the function (its SSA name).
    Param(String, Scalar),
    /// An element of a buffer.
    Load(usize, Vec<Aff>, Scalar),
    /// An element of a reduction's accumulator, while its step is evaluated.
    Acc(u32, Vec<Aff>, Scalar),
    Bin(Prim, Box<ScalarExpr>, Box<ScalarExpr>),
    Un(Prim, Box<ScalarExpr>),
    /// `then` where every index `a` of `conds` is in `lo..hi`, `other` elsewhere
    /// (padding: the element of the array inside its bounds, the constant outside).
    Select {
        conds: Vec<(Aff, i64, i64)>,
        then: Box<ScalarExpr>,
        other: Box<ScalarExpr>,
    },
    /// `select(cond, then, other)` on values: `then` where `cond` holds, `other`
    /// elsewhere (`arith.select`).
    Pick(Box<ScalarExpr>, Box<ScalarExpr>, Box<ScalarExpr>),
    /// An integer division or remainder (`op`) whose divisor may be 0 (or -1, of the
    /// smallest dividend): checked in the kernel's body, where a trap is recorded for
    /// `span` and 1 divides instead.
    Checked {
        op: Prim,
        x: Box<ScalarExpr>,
        y: Box<ScalarExpr>,
        span: Option<elevate_rise::Span>,
    },
    /// An element of a buffer at an index computed from data ([`Gathered`]).
    Gather(Box<Gathered>),
    /// The value of an index of the kernel's loops, an `i64` (a fold's first step).
    Position(Aff),
    /// `init ⊕ Σ_{vars} body`
    Red {
        op: Prim,
        init: Box<ScalarExpr>,
        vars: Vec<Var>,
        body: Box<ScalarExpr>,
    },
    /// A reduction whose step is any function of its accumulators, which are one or
    /// more scalars (a pair: argmax's value and position, a softmax's running maximum
    /// and sum): accumulator `k` (`Acc(id + k, [])` in the steps) starts at `inits[k]`
    /// and becomes `steps[k]` at each position of `vars`, in order. Its value is
    /// accumulator `component`.
    Fold {
        id: u32,
        inits: Vec<ScalarExpr>,
        vars: Vec<Var>,
        steps: Vec<ScalarExpr>,
        component: usize,
    },
}

/// A read of buffer `buf` at `idx`, where some variables of the index are numbers
/// computed from data (`natAsIndex`): the kernel's body reads the buffer where it
/// lies (`memref.load`), its other variables being the kernel's loops.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Gathered {
    pub(crate) buf: usize,
    pub(crate) idx: Vec<Aff>,
    pub(crate) data: Vec<DataIndex>,
    pub(crate) scalar: Scalar,
}

/// Variable `var` of an index stands for `value` (an `i64` computed from data), which
/// must lie in `0..bound`: outside, the code records a trap for `span` and reads 0.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DataIndex {
    pub(crate) var: Var,
    pub(crate) value: ScalarExpr,
    pub(crate) bound: i64,
    pub(crate) span: Option<elevate_rise::Span>,
}

impl ScalarExpr {
    /// Whether a reduction, or an accumulator left over from one (other than a fold's
    /// own, where `fold`), is inside the expression.
    pub(crate) fn contains_reduction(&self, fold: bool) -> bool {
        match self {
            ScalarExpr::Acc(..) => !fold,
            ScalarExpr::Red { .. } | ScalarExpr::Fold { .. } => true,
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
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
    pub(crate) fn collect_loads(&self, out: &mut Vec<(usize, Vec<Aff>)>) {
        match self {
            ScalarExpr::Load(b, idx, _) if !out.iter().any(|(c, jdx)| c == b && jdx == idx) => {
                out.push((*b, idx.clone()));
            }
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
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
    pub(crate) fn number_loads(&self, loads: &[(usize, Vec<Aff>)]) -> ScalarExpr {
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
            | ScalarExpr::Pick(..)
            | ScalarExpr::Gather(..)
            | ScalarExpr::Checked { .. } => self.map_each(&mut |c| c.number_loads(loads)),
            other => other.clone(),
        }
    }

    /// `e`, if it has at most [`MAX_EXPRESSION_SIZE`] operations (counted without
    /// recursion, and no further than the limit).
    pub(crate) fn bounded(self) -> Structuring<ScalarExpr> {
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

    pub(crate) fn scalar(&self) -> Scalar {
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
            ScalarExpr::Red { init, .. } => init.scalar(),
            ScalarExpr::Fold {
                inits, component, ..
            } => inits[*component].scalar(),
            ScalarExpr::Select { then, .. } | ScalarExpr::Pick(_, then, _) => then.scalar(),
        }
    }

    pub(crate) fn map_indices(&self, f: &mut dyn FnMut(&Aff) -> Aff) -> ScalarExpr {
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

    pub(crate) fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> ScalarExpr {
        self.map_indices(&mut |a| a.subst(v, e, x))
    }

    /// The loops the reductions inside `self` (itself included) reduce over.
    pub(crate) fn reduction_vars(&self) -> BTreeSet<Var> {
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

    pub(crate) fn mentions_acc(&self, id: u32) -> bool {
        match self {
            ScalarExpr::Acc(a, _, _) => *a == id,
            e => e.children().into_iter().any(|c| c.mentions_acc(id)),
        }
    }

    /// The expressions directly inside `self`.
    pub(crate) fn children(&self) -> Vec<&ScalarExpr> {
        match self {
            ScalarExpr::Bin(_, a, b) | ScalarExpr::Checked { x: a, y: b, .. } => vec![a, b],
            ScalarExpr::Un(_, a) => vec![a],
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
    pub(crate) fn map_each(&self, f: &mut dyn FnMut(&ScalarExpr) -> ScalarExpr) -> ScalarExpr {
        self.map_children(&mut |c| Ok::<_, Infallible>(f(c)))
            .unwrap_or_else(|never| match never {})
    }

    /// `self` with each expression directly inside replaced by `f` of it.
    pub(crate) fn map_children<E>(
        &self,
        f: &mut dyn FnMut(&ScalarExpr) -> Result<ScalarExpr, E>,
    ) -> Result<ScalarExpr, E> {
        Ok(match self {
            ScalarExpr::Bin(p, a, b) => ScalarExpr::Bin(*p, Box::new(f(a)?), Box::new(f(b)?)),
            ScalarExpr::Un(p, a) => ScalarExpr::Un(*p, Box::new(f(a)?)),
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
