//! Element functions and layout functions for pipelines: the functions a `map`, a gather or `mapFst`
//! applies to each element (on scalars, arrays and pairs), and the small scalar
//! expressions they are made of.

use super::{
    array, array_parts, literal, neutral, prim, proper_divisors, scalar_of, scalars, Flow, Stage,
};
use crate::generate::{app, nat_app, Env, Generator};
use crate::prim::Prim;
use crate::term::{Ident, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};

/// The kinds of element function on scalars.
#[derive(Clone, Copy)]
enum OnScalars {
    /// `neg`, `abs`
    Unary,
    /// `fun(x => f1(f2(x)))`
    Chain,
    /// `fun(x => e)`, `e` any arithmetic
    Arithmetic,
    /// `fun(x => x)`
    Identity,
    /// `fun(x => map(fun(b => x * b))(v))`, a row of an outer product
    OuterRow,
    /// `fun(x => (x, f(x)))`
    Duplicate,
}

/// The kinds of element function on arrays.
#[derive(Clone, Copy)]
enum OnArrays {
    /// `map(g)`
    Map,
    /// `fun(r => map(g)(r))`
    EtaMap,
    /// `split(k)`, `join`, `transpose`, ...
    Layout,
    /// `fun(r => ...)`, a small pipeline on the row
    Pipeline,
    /// `fun(r => map(fun(b => ...))(v))`, a map over an array independent of `r`
    IndependentMap,
}

/// The kinds of element function on pairs.
#[derive(Clone, Copy)]
enum OnPairs {
    /// `fst`, `snd`
    Project,
    /// `fun(p => fst(p) * snd(p))`
    Combine,
    /// `fun(p => (f(fst(p)), g(snd(p))))`
    Both,
    /// `mapFst(f)`, `mapSnd(g)`
    MapSide,
    /// `fun(p => zip(f(fst(p)))(g(snd(p))))`
    ZipSides,
}

impl Generator {
    /// A layout function (`split(k)`, `join`, `slide(n, s)`, `transpose`, `take(k)`,
    /// `drop(k)`, a pad) for arrays of type `ty`, and its result type; `None` if the
    /// sizes do not allow it.
    pub(super) fn layout(&mut self, stage: Stage, ty: &Type, env: &Env) -> Option<(Term, Type)> {
        let (n, elem) = array_parts(ty)?;
        let row = || match elem.kind() {
            TypeKind::Array(m, u) => Some((m.as_const()? as usize, u.clone())),
            _ => None,
        };
        Some(match stage {
            Stage::Split => {
                let mut divisors = proper_divisors(n);
                if divisors.is_empty() || self.chance(5) {
                    divisors.push(n);
                }
                let k = self.pick(&divisors);
                let out = array(n / k, array(k, elem.clone()));
                (nat_app(Prim::Split, &[k as i64], vec![]), out)
            }
            Stage::Join => {
                let (m, u) = row()?;
                (prim(Prim::Join), array(n * m, u))
            }
            Stage::Transpose => {
                let (m, u) = row()?;
                (prim(Prim::Transpose), array(m, array(n, u)))
            }
            Stage::Slide => {
                let mut windows = Vec::new();
                for size in 1..=n.min(4) {
                    for step in 1..=3 {
                        if (size, step) != (1, 1) && (n - size) % step == 0 {
                            windows.push((size, step));
                            if step == 1 {
                                windows.push((size, step));
                            }
                        }
                    }
                }
                if windows.is_empty() {
                    return None;
                }
                let (size, step) = self.pick(&windows);
                let count = (n - size) / step + 1;
                let out = array(count, array(size, elem.clone()));
                let nats = [size as i64, step as i64];
                (nat_app(Prim::Slide, &nats, vec![]), out)
            }
            Stage::Take => {
                let k = if self.chance(15) || n == 1 {
                    n
                } else {
                    self.rng_range(1, n)
                };
                let out = array(k, elem.clone());
                (nat_app(Prim::Take, &[k as i64], vec![]), out)
            }
            Stage::Drop => {
                let k = if self.chance(15) || n == 1 {
                    0
                } else {
                    self.rng_range(1, n)
                };
                let out = array(n - k, elem.clone());
                (nat_app(Prim::Drop, &[k as i64], vec![]), out)
            }
            Stage::Pad => {
                let (left, right) = (self.rng_range(0, 3), self.rng_range(0, 3));
                let out = array(n + left + right, elem.clone());
                let nats = [left as i64, right as i64];
                if self.chance(50) {
                    let value = self.leaf(elem, env);
                    (nat_app(Prim::PadCst, &nats, vec![value]), out)
                } else {
                    (nat_app(Prim::PadClamp, &nats, vec![]), out)
                }
            }
            _ => return None,
        })
    }

    /// `x` transformed by one to three unary steps (`neg`, `abs`, `c + _`, `c * _`)
    /// whose constants come from `env`: `f1(f2(x))`, a chain the fission rules split.
    pub(super) fn chain(&mut self, s: Scalar, x: &Term, env: &Env) -> Term {
        let steps = self.rng_range(1, 4);
        (0..steps).fold(x.clone(), |inner, _| match self.rng_below(4) {
            0 => app(Prim::Neg, vec![inner]),
            1 => app(Prim::Abs, vec![inner]),
            2 => app(Prim::Add, vec![self.scalar_leaf(s, env), inner]),
            _ => app(Prim::Mul, vec![self.small_constant(s), inner]),
        })
    }

    /// A small literal, so that products of many of them stay well within `f32`.
    pub(super) fn small_constant(&mut self, s: Scalar) -> Term {
        match s {
            Scalar::I32 => literal(s, self.pick(&[-2, 2, 3])),
            _ => Term::literal(Literal::F32(self.pick(&[0.5, 2.0, -1.5]))),
        }
    }

    /// A scalar of type `s`: a variable of `env` or a literal.
    pub(super) fn scalar_leaf(&mut self, s: Scalar, env: &Env) -> Term {
        self.leaf(&Type::scalar(s), env)
    }

    /// A value of type `ty` made independently of the pipeline: mostly a variable of
    /// that type, else a small expression.
    pub(super) fn partner(&mut self, ty: &Type, env: &Env) -> Term {
        let vars: Vec<&Ident> = env
            .iter()
            .filter(|(_, t)| t == ty)
            .map(|(x, _)| x)
            .collect();
        if !vars.is_empty() && self.chance(80) {
            return Term::var(self.pick(&vars));
        }
        self.expr(ty, env, 3)
    }

    /// A value of the type of `flow`, made by replaying the last stages of `flow` on
    /// another input (the earlier ones on a [`Generator::partner`]).
    pub(super) fn mirror(&mut self, flow: &Flow, env: &Env) -> Term {
        match &flow.last {
            Some(step) if self.chance(75) => {
                let input = self.mirror(&step.input, env);
                Term::app(step.function.clone(), input)
            }
            _ => self.partner(&flow.ty, env),
        }
    }

    /// A function from `input` (for a map, a gather, `mapFst`) and its result type,
    /// whose results hold at most `room` scalars.
    pub(super) fn function(
        &mut self,
        input: &Type,
        env: &Env,
        depth: usize,
        room: usize,
    ) -> (Term, Type) {
        match input.kind() {
            TypeKind::Array(..) => self.array_function(input, env, depth, room),
            TypeKind::Pair(a, b) => self.pair_function(a, b, env, depth, room),
            TypeKind::Scalar(s) => self.scalar_function(*s, env, depth, room),
            _ => unreachable!("pipelines carry data"),
        }
    }

    pub(super) fn scalar_function(
        &mut self,
        s: Scalar,
        env: &Env,
        depth: usize,
        room: usize,
    ) -> (Term, Type) {
        use Prim as P;
        let ty = Type::scalar(s);
        let x = self.fresh_ident("x");
        let options: &[(OnScalars, u32, &[Prim])] = &[
            (OnScalars::Unary, 2, &[P::Neg, P::Abs]),
            (OnScalars::Chain, 5, &[P::Add, P::Mul]),
            (OnScalars::Arithmetic, 2, &[P::Sub]),
            (OnScalars::Identity, 1, &[P::Id]),
            (OnScalars::OuterRow, 1, &[P::Map]),
            (OnScalars::Duplicate, 1, &[P::MakePair]),
        ];
        match self.weighted(options) {
            OnScalars::Chain => {
                let body = self.chain(s, &Term::var(&x), env);
                (Term::lambda(x, body), ty)
            }
            OnScalars::Arithmetic => {
                let mut inner = env.clone();
                inner.push((x.clone(), ty.clone()));
                let body = self.expr(&ty, &inner, 5);
                (Term::lambda(x, body), ty)
            }
            OnScalars::Identity => (Term::lambda(x.clone(), Term::var(&x)), ty),
            OnScalars::OuterRow if depth <= 2 && room >= 2 => {
                // An outer product row: `fun(a => map(fun(b => a * b))(v))`.
                let k = self.pick(&[2, 3, 4]).min(room);
                let v = self.partner(&array(k, ty.clone()), env);
                let b = self.fresh_ident("b");
                let op = self.pick(&[P::Mul, P::Mul, P::Add]);
                let product = app(op, vec![Term::var(&x), Term::var(&b)]);
                let row = app(P::Map, vec![Term::lambda(b, product), v]);
                (Term::lambda(x, row), array(k, ty))
            }
            OnScalars::Duplicate if room >= 2 => {
                let other = self.chain(s, &Term::var(&x), env);
                let pair = app(P::MakePair, vec![Term::var(&x), other]);
                (Term::lambda(x, pair), Type::pair(ty.clone(), ty))
            }
            _ => (prim(self.pick(&[P::Neg, P::Abs])), ty),
        }
    }

    pub(super) fn array_function(
        &mut self,
        input: &Type,
        env: &Env,
        depth: usize,
        room: usize,
    ) -> (Term, Type) {
        use Prim as P;
        let Some((m, elem)) = array_parts(input) else {
            unreachable!("an array type")
        };
        let r = self.fresh_ident("r");
        let layout = &[P::Split, P::Join, P::Slide, P::Transpose, P::Take, P::Drop];
        let options: &[(OnArrays, u32, &[Prim])] = &[
            (OnArrays::Map, 5, &[P::Map]),
            (OnArrays::EtaMap, 2, &[P::Map]),
            (OnArrays::Layout, 8, layout),
            (OnArrays::Pipeline, 4, &[P::Reduce, P::ReduceSeq]),
            (OnArrays::IndependentMap, 1, &[P::Map]),
        ];
        // Deep down, only maps: nesting stops.
        let kind = if depth >= 3 {
            OnArrays::Map
        } else {
            self.weighted(options)
        };
        match kind {
            OnArrays::EtaMap => {
                let (g, out) = self.function(elem, env, depth + 1, room / m.max(1));
                let body = app(self.map_prim(), vec![g, Term::var(&r)]);
                (Term::lambda(r, body), array(m, out))
            }
            OnArrays::Layout => {
                let stages: Vec<(Stage, u32, &[Prim])> = [
                    Stage::Split,
                    Stage::Join,
                    Stage::Slide,
                    Stage::Transpose,
                    Stage::Take,
                    Stage::Drop,
                    Stage::Pad,
                ]
                .into_iter()
                .filter(|s| s.fits(input, depth))
                .map(|s| (s, s.weight(), s.prims()))
                .collect();
                let stage = self.weighted(&stages);
                match self.layout(stage, input, env) {
                    Some((f, out)) if scalars(&out) <= room => (f, out),
                    _ => self.array_function(input, env, 3, room),
                }
            }
            OnArrays::Pipeline => {
                // A small pipeline on the row: `fun(r => reduce(add)(0)(map(f)(r)))`, ...
                let mut inner = env.clone();
                inner.push((r.clone(), input.clone()));
                let stages = self.rng_range(1, 4);
                let flow = self.pipeline(Flow::var(&r, input.clone()), stages, &inner, depth, room);
                (Term::lambda(r, flow.term), flow.ty)
            }
            OnArrays::IndependentMap if scalar_of(elem).is_some() && room >= 4 => {
                // An inner map over an array that does not depend on the row:
                // `fun(r => map(fun(b => reduce(add)(0)(r) * b))(v))`.
                let s = scalar_of(elem).expect("a scalar element");
                let k = self.pick(&[2, 3, 4]);
                let v = self.partner(&array(k, elem.clone()), env);
                let b = self.fresh_ident("b");
                let sum = app(
                    P::Reduce,
                    vec![prim(P::Add), neutral(P::Add, s), Term::var(&r)],
                );
                let each = app(P::Mul, vec![sum, Term::var(&b)]);
                let body = app(P::Map, vec![Term::lambda(b, each), v]);
                (Term::lambda(r, body), array(k, elem.clone()))
            }
            _ => {
                let (g, out) = self.function(elem, env, depth + 1, room / m.max(1));
                (app(self.map_prim(), vec![g]), array(m, out))
            }
        }
    }

    pub(super) fn pair_function(
        &mut self,
        a: &Type,
        b: &Type,
        env: &Env,
        depth: usize,
        room: usize,
    ) -> (Term, Type) {
        use Prim as P;
        let p = self.fresh_ident("p");
        let fst = || app(P::Fst, vec![Term::var(&p)]);
        let snd = || app(P::Snd, vec![Term::var(&p)]);
        let same_scalar = scalar_of(a).is_some() && a == b;
        let same_length = match (array_parts(a), array_parts(b)) {
            (Some((n, _)), Some((m, _))) => n == m,
            _ => false,
        };
        let options: &[(OnPairs, u32, &[Prim])] = &[
            (OnPairs::Project, 2, &[P::Fst, P::Snd]),
            (OnPairs::Combine, 5, &[P::Mul, P::Add]),
            (OnPairs::Both, 2, &[P::MakePair]),
            (OnPairs::MapSide, 1, &[P::MapFst, P::MapSnd]),
            (OnPairs::ZipSides, 4, &[P::Zip]),
        ];
        let kind = if depth >= 3 {
            OnPairs::Project
        } else {
            self.weighted(options)
        };
        match kind {
            OnPairs::Combine if same_scalar => {
                // `fun(p => fst(p) * snd(p))`, as in a dot product.
                let op = self.pick(&[P::Mul, P::Mul, P::Add, P::Sub]);
                (
                    Term::lambda(p.clone(), app(op, vec![fst(), snd()])),
                    a.clone(),
                )
            }
            OnPairs::Both => {
                let (f, fa) = self.function(a, env, depth + 1, room / 2);
                let (g, gb) = self.function(b, env, depth + 1, room / 2);
                let body = app(P::MakePair, vec![Term::app(f, fst()), Term::app(g, snd())]);
                (Term::lambda(p.clone(), body), Type::pair(fa, gb))
            }
            OnPairs::MapSide => {
                if self.chance(50) {
                    let (f, fa) = self.function(a, env, depth + 1, room / 2);
                    (app(P::MapFst, vec![f]), Type::pair(fa, b.clone()))
                } else {
                    let (g, gb) = self.function(b, env, depth + 1, room / 2);
                    (app(P::MapSnd, vec![g]), Type::pair(a.clone(), gb))
                }
            }
            OnPairs::ZipSides if same_length => {
                // `fun(p => zip(f(fst(p)))(g(snd(p))))`, with a map on one side or both.
                let (n, s) = array_parts(a).expect("an array");
                let (_, t) = array_parts(b).expect("an array");
                let side = |this: &mut Generator, elem: &Type, proj: Term, mapped: bool| {
                    if mapped {
                        let (f, out) = this.function(elem, env, 3, room / (2 * n.max(1)));
                        (app(P::Map, vec![f, proj]), out)
                    } else {
                        (proj, elem.clone())
                    }
                };
                let left = self.chance(70);
                let right = !left || self.chance(50);
                let (x, s2) = side(self, s, fst(), left);
                let (y, t2) = side(self, t, snd(), right);
                let body = app(P::Zip, vec![x, y]);
                (Term::lambda(p.clone(), body), array(n, Type::pair(s2, t2)))
            }
            _ => {
                if self.chance(50) {
                    (prim(P::Fst), a.clone())
                } else {
                    (prim(P::Snd), b.clone())
                }
            }
        }
    }
}
