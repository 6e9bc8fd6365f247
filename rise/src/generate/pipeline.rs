//! Pipelines: programs that push arrays through a chain of stages, the shape of real
//! RISE programs and of the left-hand sides of most rewrite rules.
//!
//! Where [`Generator::expr`] works backwards from a type, a pipeline works forwards:
//! it starts from a program parameter and applies 2 to 5 stages, each chosen among
//! those that fit the type reached so far: `map` (with element functions that are
//! themselves maps, layout primitives or small pipelines on the rows), reductions,
//! `split`/`join`, `slide`, `transpose`, `take`/`drop`, pads, `zip`/`unzip`,
//! `mapFst`/`mapSnd`, gathers with `generate`/`idx`, `let`, `id`, `select`,
//! `concat`, and scalar stages after a reduction. Every size is a small constant, so
//! programs can be checked, evaluated and compiled; with
//! [`Generator::symbolic_sizes`], a map may also be written as a function generic in
//! the length, `depFun(n => fun(x: n.t => map(f)(x)))(len)`.
//!
//! Favourite primitives ([`Generator::favourite`], [`Generator::favourites`]) make
//! the stages and element functions that contain them several times as likely, and
//! the input shapes they work on; a stage is not favoured twice in a row, so that
//! favourites meet in neighbouring stages, as in left-hand sides.
//!
//! Stages that combine two arrays (`zip`, `select`) take a *mirror* of the current
//! value: the same stages replayed on another input of the same type, so that
//! `zip(map(f)(a))(map(f)(b))` or `zip(split(2)(a))(split(2)(b))` arise as often as
//! rules about them need.

use super::{app, nat_app, Env, Generator};
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};
use std::rc::Rc;

mod functions;

/// Lengths of the arrays a program takes: small, mostly highly divisible.
const LENGTHS: [usize; 10] = [2, 3, 4, 4, 6, 6, 8, 8, 12, 12];

/// The most scalars a value made by a top-level stage may hold.
const ROOM: usize = 96;

/// How much more often a stage or function with a favourite primitive is chosen.
const BIAS: u32 = 8;

/// A value flowing through a pipeline.
#[derive(Clone)]
struct Flow {
    term: Term,
    ty: Type,
    /// How the value was made, if it is a function applied to an earlier value.
    last: Option<Rc<Replay>>,
}

/// A stage of the form `function(input)`, which can be replayed on another value of
/// the input's type.
struct Replay {
    input: Flow,
    function: Term,
}

impl Flow {
    fn var(x: &Ident, ty: Type) -> Flow {
        Flow {
            term: Term::var(x),
            ty,
            last: None,
        }
    }

    /// `function(self)`, of type `ty`, remembered for mirrors.
    fn then(&self, function: Term, ty: Type) -> Flow {
        Flow {
            term: Term::app(function.clone(), self.term.clone()),
            ty,
            last: Some(Rc::new(Replay {
                input: self.clone(),
                function,
            })),
        }
    }

    /// `term`, of type `ty`, that cannot be replayed.
    fn made(term: Term, ty: Type) -> Flow {
        Flow {
            term,
            ty,
            last: None,
        }
    }
}

/// What a pipeline under construction knows besides its current value.
struct Pipe {
    /// The variables in scope: the program's, the enclosing functions', and those
    /// bound by earlier stages.
    env: Env,
    /// Values bound by earlier stages, outermost first, to be wrapped around the
    /// result.
    bound: Vec<Binding>,
    /// The operator of the last reduction, which a later `Combine` likes to reuse.
    op: Option<Prim>,
    /// How deep in element functions the pipeline is (0 for a program's body).
    depth: usize,
    /// The most scalars a value of this pipeline may hold.
    room: usize,
    /// The kind of the last stage: it is not favoured again right away, so that
    /// favourite stages alternate (`transpose` then `map(join)`, ...).
    previous: Option<Stage>,
}

/// `let(value)(fun(var => ...))`, or `fun(var => ...)(value)` without `with_let`.
struct Binding {
    var: Ident,
    value: Term,
    with_let: bool,
}

/// The kinds of stage.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    Map,
    Reduce,
    Split,
    Join,
    Slide,
    Transpose,
    Take,
    Drop,
    Pad,
    Zip,
    Unzip,
    Gather,
    Pick,
    Bind,
    Id,
    Select,
    Concat,
    Generic,
    MapFst,
    MapSnd,
    Project,
    ZipPair,
    Combine,
    Unary,
    Broadcast,
    PairUp,
}

impl Stage {
    const ALL: [Stage; 26] = [
        Stage::Map,
        Stage::Reduce,
        Stage::Split,
        Stage::Join,
        Stage::Slide,
        Stage::Transpose,
        Stage::Take,
        Stage::Drop,
        Stage::Pad,
        Stage::Zip,
        Stage::Unzip,
        Stage::Gather,
        Stage::Pick,
        Stage::Bind,
        Stage::Id,
        Stage::Select,
        Stage::Concat,
        Stage::Generic,
        Stage::MapFst,
        Stage::MapSnd,
        Stage::Project,
        Stage::ZipPair,
        Stage::Combine,
        Stage::Unary,
        Stage::Broadcast,
        Stage::PairUp,
    ];

    /// The primitives the stage puts in the program, for the favourite bias.
    fn prims(self) -> &'static [Prim] {
        use Prim as P;
        match self {
            Stage::Map | Stage::Generic => &[P::Map, P::MapSeq, P::MapPar],
            Stage::Reduce => &[P::Reduce, P::ReduceSeq],
            Stage::Split => &[P::Split],
            Stage::Join => &[P::Join],
            Stage::Slide => &[P::Slide],
            Stage::Transpose => &[P::Transpose],
            Stage::Take => &[P::Take],
            Stage::Drop => &[P::Drop],
            Stage::Pad => &[P::PadCst, P::PadClamp],
            Stage::Zip | Stage::ZipPair => &[P::Zip],
            Stage::Unzip => &[P::Unzip, P::Zip],
            Stage::Gather => &[P::Generate, P::Idx],
            Stage::Pick => &[P::Idx],
            Stage::Bind => &[P::Let],
            Stage::Id => &[P::Id],
            Stage::Select => &[P::Select],
            Stage::Concat => &[P::Concat],
            Stage::MapFst => &[P::MapFst],
            Stage::MapSnd => &[P::MapSnd],
            Stage::Project => &[P::Fst, P::Snd],
            Stage::Combine => &[P::Add, P::Mul],
            Stage::Unary => &[P::Neg, P::Abs],
            Stage::Broadcast => &[P::Generate],
            Stage::PairUp => &[P::MakePair, P::Fst, P::Snd],
        }
    }

    /// How often the stage is chosen among those that fit, without a bias.
    fn weight(self) -> u32 {
        match self {
            Stage::Map => 8,
            Stage::Reduce | Stage::Join => 5,
            Stage::Split | Stage::Transpose | Stage::Zip | Stage::Unzip => 4,
            Stage::MapFst | Stage::MapSnd | Stage::Combine => 4,
            Stage::Slide | Stage::Take | Stage::Drop => 3,
            Stage::Project | Stage::ZipPair | Stage::Unary | Stage::Broadcast => 2,
            _ => 1,
        }
    }

    /// Whether the stage applies to a value of type `ty` at `depth`.
    fn fits(self, ty: &Type, depth: usize) -> bool {
        use Stage::*;
        match ty.kind() {
            TypeKind::Array(_, elem) => match self {
                Map | Split | Slide | Take | Drop | Pad | Zip | Gather | Pick | Bind | Id
                | Select | Concat => true,
                Generic => depth == 0,
                Reduce => matches!(elem.kind(), TypeKind::Scalar(_)),
                Join | Transpose => matches!(elem.kind(), TypeKind::Array(..)),
                Unzip => matches!(elem.kind(), TypeKind::Pair(..)),
                _ => false,
            },
            TypeKind::Pair(a, b) => match self {
                MapFst | MapSnd | Project | Bind | Id | Select => true,
                ZipPair => matches!(
                    (a.kind(), b.kind()),
                    (TypeKind::Array(n, _), TypeKind::Array(m, _)) if n == m
                ),
                _ => false,
            },
            TypeKind::Scalar(_) => matches!(
                self,
                Combine | Unary | Broadcast | PairUp | Bind | Id | Select
            ),
            _ => false,
        }
    }
}

/// The shapes of a pipeline's input.
#[derive(Clone, Copy)]
enum Shape {
    Vector,
    Matrix,
    Cube,
    TwoVectors,
}

/// The constant length and the element type of an array type.
fn array_parts(ty: &Type) -> Option<(usize, &Type)> {
    match ty.kind() {
        TypeKind::Array(n, elem) => Some((n.as_const()? as usize, elem)),
        _ => None,
    }
}

fn scalar_of(ty: &Type) -> Option<Scalar> {
    match ty.kind() {
        TypeKind::Scalar(s) => Some(*s),
        _ => None,
    }
}

/// How many scalars a value of type `ty` holds.
fn scalars(ty: &Type) -> usize {
    match ty.kind() {
        TypeKind::Array(n, elem) => n.as_const().unwrap_or(1).max(1) as usize * scalars(elem),
        TypeKind::Pair(a, b) => scalars(a) + scalars(b),
        _ => 1,
    }
}

fn array(n: usize, elem: Type) -> Type {
    Type::array(Nat::cst(n as i64), elem)
}

fn prim(p: Prim) -> Term {
    Term::prim(p)
}

fn literal(s: Scalar, value: i32) -> Term {
    Term::literal(match s {
        Scalar::I32 => Literal::I32(value),
        _ => Literal::F32(value as f32),
    })
}

/// The neutral element of `op` (`add` or `mul`).
fn neutral(op: Prim, s: Scalar) -> Term {
    literal(s, i32::from(op == Prim::Mul))
}

fn lambda2(a: Ident, b: Ident, body: Term) -> Term {
    Term::lambda(a, Term::lambda(b, body))
}

fn annotated(term: Term, ty: &Type) -> Term {
    Term::new(Expr::Annotation(term, ty.clone()))
}

/// The divisors of `n` strictly between 1 and `n`.
fn proper_divisors(n: usize) -> Vec<usize> {
    (2..n).filter(|d| n.is_multiple_of(*d)).collect()
}

impl Generator {
    /// Whether `p` is favoured.
    fn favours(&self, p: Prim) -> bool {
        self.favourite == Some(p) || self.favourites.contains(&p)
    }

    /// One of `options` (`(item, weight, primitives)`), by weight, a weight multiplied
    /// by [`BIAS`] when the option has a favourite primitive.
    fn weighted<T: Copy>(&mut self, options: &[(T, u32, &[Prim])]) -> T {
        let weights: Vec<u32> = options
            .iter()
            .map(|(_, w, prims)| {
                if prims.iter().any(|p| self.favours(*p)) {
                    w * BIAS
                } else {
                    *w
                }
            })
            .collect();
        let mut roll = self.rng_below(weights.iter().sum());
        for ((item, _, _), w) in options.iter().zip(&weights) {
            if roll < *w {
                return *item;
            }
            roll -= w;
        }
        options[options.len() - 1].0
    }

    /// The map primitive to use: the favourite's if it is a sequential or parallel
    /// map, else `map`.
    fn map_prim(&self) -> Prim {
        match self.favourite {
            Some(p @ (Prim::MapSeq | Prim::MapPar)) => p,
            _ => Prim::Map,
        }
    }

    /// A scalar type, `f32` more often than `i32`.
    fn scalar_type(&mut self) -> Scalar {
        self.pick(&[Scalar::F32, Scalar::F32, Scalar::F32, Scalar::I32])
    }

    /// The type of a pipeline's input: a 1-, 2- or 3-dimensional array of small,
    /// divisible lengths, or a pair of equally long arrays; shapes that favourite
    /// primitives work on are more likely.
    pub fn pipeline_type(&mut self) -> Type {
        use Prim as P;
        let s = Type::scalar(self.scalar_type());
        let shapes: &[(Shape, u32, &[Prim])] = &[
            (Shape::Vector, 3, &[P::Reduce, P::ReduceSeq, P::Zip]),
            (Shape::Matrix, 4, &[P::Transpose, P::Split, P::Slide]),
            (Shape::Cube, 2, &[P::Transpose, P::Join]),
            (
                Shape::TwoVectors,
                1,
                &[P::MapFst, P::MapSnd, P::Unzip, P::Fst, P::Snd],
            ),
        ];
        match self.weighted(shapes) {
            Shape::Vector => array(self.pick(&LENGTHS), s),
            Shape::Matrix => {
                let [n, m] = [0; 2].map(|_| self.pick(&[2, 3, 4, 4, 6, 8]));
                array(n, array(m, s))
            }
            Shape::Cube => {
                let [a, b, c] = [0; 3].map(|_| self.pick(&[2, 2, 3, 4]));
                array(a, array(b, array(c, s)))
            }
            Shape::TwoVectors => {
                let n = self.pick(&LENGTHS);
                let other = Type::scalar(self.scalar_type());
                Type::pair(array(n, s), array(n, other))
            }
        }
    }

    /// A closed program whose body runs the parameters through pipelines of
    /// `stages` stages: one pipeline, two paired or bound by `let`, the second often
    /// a mirror of the first.
    pub fn pipeline_program(&mut self, stages: usize) -> Term {
        let first = self.pipeline_type();
        let mut params = vec![(self.fresh_ident("x1"), first.clone())];
        if self.chance(70) {
            let second = if self.chance(70) {
                first.clone()
            } else {
                self.pipeline_type()
            };
            params.push((self.fresh_ident("x2"), second));
        }
        if self.chance(40) {
            let s = Type::scalar(self.scalar_type());
            params.push((self.fresh_ident("x3"), s));
        }
        let env: Env = params.clone();
        let input = |i: usize| {
            let (x, ty) = &params[i.min(params.len() - 1)];
            Flow::var(x, ty.clone())
        };
        let body = match self.rng_below(4) {
            0 | 1 => self.pipeline(input(0), stages, &env, 0, ROOM).term,
            2 => {
                let a = self.pipeline(input(0), stages, &env, 0, ROOM);
                let b = if self.chance(60) {
                    self.mirror(&a, &env)
                } else {
                    self.pipeline(input(1), stages, &env, 0, ROOM).term
                };
                app(Prim::MakePair, vec![a.term, b])
            }
            _ => {
                // `let a = P1 in let b = P2 in P3(a)`, `P2` sometimes `P1` again.
                let a = self.pipeline(input(0), stages, &env, 0, ROOM);
                let b = if self.chance(20) {
                    a.clone()
                } else {
                    self.pipeline(input(1), stages.div_ceil(2), &env, 0, ROOM)
                };
                let (ya, yb) = (self.fresh_ident("y"), self.fresh_ident("y"));
                let mut inner = env.clone();
                inner.push((ya.clone(), a.ty.clone()));
                inner.push((yb.clone(), b.ty.clone()));
                let rest = self.pipeline(Flow::var(&ya, a.ty), stages.div_ceil(2), &inner, 0, ROOM);
                let body = match self.rng_below(3) {
                    0 => app(Prim::MakePair, vec![rest.term, Term::var(&yb)]),
                    _ => rest.term,
                };
                let bound = app(Prim::Let, vec![b.term, Term::lambda(yb, body)]);
                app(Prim::Let, vec![a.term, Term::lambda(ya, bound)])
            }
        };
        params.iter().rev().fold(body, |body, (x, ty)| {
            Term::new(Expr::Lambda(x.clone(), Some(ty.clone()), body))
        })
    }

    /// `stages` stages applied to `source`, with the variables of `env`, values of at
    /// most `room` scalars, `depth` element functions deep.
    fn pipeline(
        &mut self,
        source: Flow,
        stages: usize,
        env: &Env,
        depth: usize,
        room: usize,
    ) -> Flow {
        let mut pipe = Pipe {
            env: env.clone(),
            bound: Vec::new(),
            op: None,
            depth,
            room,
            previous: None,
        };
        let mut flow = source;
        for _ in 0..stages {
            flow = self.stage(&mut pipe, flow);
        }
        if pipe.bound.is_empty() {
            return flow;
        }
        let term = pipe.bound.into_iter().rev().fold(flow.term, |body, b| {
            let function = Term::lambda(b.var, body);
            if b.with_let {
                app(Prim::Let, vec![b.value, function])
            } else {
                Term::app(function, b.value)
            }
        });
        // The steps mention the bound variables: no mirror outside.
        Flow::made(term, flow.ty)
    }

    /// One stage after `flow`, of a kind that fits its type.
    fn stage(&mut self, pipe: &mut Pipe, flow: Flow) -> Flow {
        let options: Vec<(Stage, u32, &[Prim])> = Stage::ALL
            .into_iter()
            .filter(|s| *s != Stage::Generic || self.symbolic_sizes)
            .filter(|s| s.fits(&flow.ty, pipe.depth))
            .map(|s| {
                let prims = if pipe.previous == Some(s) {
                    &[]
                } else {
                    s.prims()
                };
                (s, s.weight(), prims)
            })
            .collect();
        if options.is_empty() {
            return flow;
        }
        for _ in 0..4 {
            let stage = self.weighted(&options);
            if let Some(next) = self.apply(stage, pipe, &flow) {
                if scalars(&next.ty) <= pipe.room {
                    pipe.previous = Some(stage);
                    return next;
                }
            }
        }
        flow
    }

    /// The stage `stage` after `flow`, if its sizes work out.
    fn apply(&mut self, stage: Stage, pipe: &mut Pipe, flow: &Flow) -> Option<Flow> {
        let ty = flow.ty.clone();
        let cur = flow.term.clone();
        Some(match stage {
            Stage::Map => {
                let (n, elem) = array_parts(&ty)?;
                let room = pipe.room / n.max(1);
                let (f, out) = self.function(elem, &pipe.env, pipe.depth + 1, room);
                flow.then(app(self.map_prim(), vec![f]), array(n, out))
            }
            Stage::Reduce => {
                let s = scalar_of(array_parts(&ty)?.1)?;
                let (function, op) = self.reduction(s, &pipe.env);
                pipe.op = Some(op);
                flow.then(function, Type::scalar(s))
            }
            Stage::Split
            | Stage::Join
            | Stage::Slide
            | Stage::Transpose
            | Stage::Take
            | Stage::Drop
            | Stage::Pad => {
                let (function, out) = self.layout(stage, &ty, &pipe.env)?;
                flow.then(function, out)
            }
            Stage::Zip => {
                let (n, elem) = array_parts(&ty)?;
                let (other, other_elem) = if self.chance(80) {
                    (self.mirror(flow, &pipe.env), elem.clone())
                } else {
                    let t = Type::scalar(self.scalar_type());
                    (self.partner(&array(n, t.clone()), &pipe.env), t)
                };
                if self.chance(50) {
                    let pair = Type::pair(other_elem, elem.clone());
                    flow.then(app(Prim::Zip, vec![other]), array(n, pair))
                } else {
                    let pair = Type::pair(elem.clone(), other_elem);
                    Flow::made(app(Prim::Zip, vec![cur, other]), array(n, pair))
                }
            }
            Stage::Unzip => {
                let (n, elem) = array_parts(&ty)?;
                let TypeKind::Pair(a, b) = elem.kind() else {
                    return None;
                };
                let out = Type::pair(array(n, a.clone()), array(n, b.clone()));
                flow.then(prim(Prim::Unzip), out)
            }
            Stage::Gather => {
                let (n, elem) = array_parts(&ty)?;
                let i = self.fresh_ident("i");
                let element = app(Prim::Idx, vec![Term::var(&i), cur]);
                let (body, out) = if self.chance(50) {
                    let room = pipe.room / n.max(1);
                    let (f, out) = self.function(elem, &pipe.env, pipe.depth + 1, room);
                    (Term::app(f, element), out)
                } else {
                    (element, elem.clone())
                };
                let out = array(n, out);
                let generated = app(Prim::Generate, vec![Term::lambda(i, body)]);
                Flow::made(annotated(generated, &out), out)
            }
            Stage::Pick => {
                let (n, elem) = array_parts(&ty)?;
                let k = self.rng_below(n as u32) as i64;
                let index = nat_app(
                    Prim::NatAsIndex,
                    &[n as i64],
                    vec![Term::literal(Literal::I64(k))],
                );
                flow.then(app(Prim::Idx, vec![index]), elem.clone())
            }
            Stage::Bind => {
                let y = self.fresh_ident("y");
                pipe.bound.push(Binding {
                    var: y.clone(),
                    value: cur,
                    with_let: self.chance(60),
                });
                pipe.env.push((y.clone(), ty.clone()));
                Flow::var(&y, ty)
            }
            Stage::Id => flow.then(prim(Prim::Id), ty),
            Stage::Select => {
                let s = self.scalar_type();
                let (a, b) = (
                    self.scalar_leaf(s, &pipe.env),
                    self.scalar_leaf(s, &pipe.env),
                );
                let condition = app(Prim::Lt, vec![a, b]);
                let other = self.mirror(flow, &pipe.env);
                if self.chance(50) {
                    flow.then(app(Prim::Select, vec![condition, other]), ty)
                } else {
                    Flow::made(app(Prim::Select, vec![condition, cur, other]), ty)
                }
            }
            Stage::Concat => {
                let (n, elem) = array_parts(&ty)?;
                let k = self.rng_range(1, 4);
                let other = self.partner(&array(k, elem.clone()), &pipe.env);
                let out = array(n + k, elem.clone());
                if self.chance(50) {
                    flow.then(app(Prim::Concat, vec![other]), out)
                } else {
                    Flow::made(app(Prim::Concat, vec![cur, other]), out)
                }
            }
            Stage::Generic => {
                // `depFun(n => fun(x: n.t => map(f)(x)))(len)`: the map written for
                // any length, instantiated.
                let (n, elem) = array_parts(&ty)?;
                let var = NatVar::Named("n".into());
                let x = self.fresh_ident("x");
                let room = pipe.room / n.max(1);
                let (f, out) = self.function(elem, &pipe.env, pipe.depth + 1, room);
                let body = app(self.map_prim(), vec![f, Term::var(&x)]);
                let param = Type::array(Nat::var(var.clone()), elem.clone());
                let generic = Term::new(Expr::NatLambda(
                    var,
                    Term::new(Expr::Lambda(x, Some(param), body)),
                ));
                flow.then(Term::nat_app(generic, Nat::cst(n as i64)), array(n, out))
            }
            Stage::MapFst | Stage::MapSnd => {
                let TypeKind::Pair(a, b) = ty.kind() else {
                    return None;
                };
                let first = stage == Stage::MapFst;
                let side = if first { a } else { b };
                let room = pipe.room.saturating_sub(scalars(if first { b } else { a }));
                let (f, out) = self.function(side, &pipe.env, pipe.depth + 1, room);
                let (p, out) = if first {
                    (Prim::MapFst, Type::pair(out, b.clone()))
                } else {
                    (Prim::MapSnd, Type::pair(a.clone(), out))
                };
                flow.then(app(p, vec![f]), out)
            }
            Stage::Project => {
                let TypeKind::Pair(a, b) = ty.kind() else {
                    return None;
                };
                if self.chance(50) {
                    flow.then(prim(Prim::Fst), a.clone())
                } else {
                    flow.then(prim(Prim::Snd), b.clone())
                }
            }
            Stage::ZipPair => {
                let TypeKind::Pair(a, b) = ty.kind() else {
                    return None;
                };
                let ((n, s), (_, t)) = (array_parts(a)?, array_parts(b)?);
                let out = array(n, Type::pair(s.clone(), t.clone()));
                let zip_of = |p: &Term| {
                    app(
                        Prim::Zip,
                        vec![
                            app(Prim::Fst, vec![p.clone()]),
                            app(Prim::Snd, vec![p.clone()]),
                        ],
                    )
                };
                if self.chance(50) {
                    Flow::made(zip_of(&cur), out)
                } else {
                    let q = self.fresh_ident("q");
                    flow.then(Term::lambda(q.clone(), zip_of(&Term::var(&q))), out)
                }
            }
            Stage::Combine => {
                let s = scalar_of(&ty)?;
                let op = match pipe.op {
                    Some(op) if self.chance(60) => op,
                    _ => self.pick(&[Prim::Add, Prim::Add, Prim::Mul, Prim::Sub, Prim::Max]),
                };
                let x = self.scalar_leaf(s, &pipe.env);
                if self.chance(70) {
                    flow.then(app(op, vec![x]), ty)
                } else {
                    Flow::made(app(op, vec![cur, x]), ty)
                }
            }
            Stage::Unary => {
                let p = self.pick(&[Prim::Neg, Prim::Abs]);
                flow.then(prim(p), ty)
            }
            Stage::Broadcast => {
                let k = self.pick(&[2, 3, 4, 4, 6, 8]);
                let out = array(k, ty);
                let generated = app(
                    Prim::Generate,
                    vec![Term::lambda(self.fresh_ident("i"), cur)],
                );
                Flow::made(annotated(generated, &out), out)
            }
            Stage::PairUp => {
                let s = self.scalar_type();
                let other = self.scalar_leaf(s, &pipe.env);
                let s = Type::scalar(s);
                match self.rng_below(3) {
                    0 => {
                        let pair = app(Prim::MakePair, vec![cur, other]);
                        Flow::made(app(Prim::Fst, vec![pair]), ty)
                    }
                    1 => {
                        let pair = app(Prim::MakePair, vec![other, cur]);
                        Flow::made(app(Prim::Snd, vec![pair]), ty)
                    }
                    _ => flow.then(app(Prim::MakePair, vec![other]), Type::pair(s, ty)),
                }
            }
        })
    }

    /// A reduction of arrays of `s`, `R(op)(init)`, and the operator it combines with:
    /// `add` or `mul` from their neutral element, `max`, or `reduceSeq` of a lambda
    /// that transforms each element (`fun(acc, y => acc + g(y))`).
    fn reduction(&mut self, s: Scalar, env: &Env) -> (Term, Prim) {
        let reduce = if self.favours(Prim::ReduceSeq) || self.chance(20) {
            Prim::ReduceSeq
        } else {
            Prim::Reduce
        };
        match self.rng_below(6) {
            0 | 1 => (
                app(reduce, vec![prim(Prim::Add), neutral(Prim::Add, s)]),
                Prim::Add,
            ),
            2 => (
                app(reduce, vec![prim(Prim::Mul), neutral(Prim::Mul, s)]),
                Prim::Mul,
            ),
            3 => {
                let op = self.pick(&[Prim::Add, Prim::Mul]);
                let (a, b) = (self.fresh_ident("a"), self.fresh_ident("b"));
                let body = app(op, vec![Term::var(&a), Term::var(&b)]);
                (app(reduce, vec![lambda2(a, b, body), neutral(op, s)]), op)
            }
            4 => {
                let init = self.scalar_leaf(s, env);
                (app(reduce, vec![prim(Prim::Max), init]), Prim::Max)
            }
            _ => {
                let op = self.pick(&[Prim::Add, Prim::Add, Prim::Mul]);
                let (acc, y) = (self.fresh_ident("acc"), self.fresh_ident("y"));
                let each = self.chain(s, &Term::var(&y), env);
                let body = app(op, vec![Term::var(&acc), each]);
                let function = lambda2(acc, y, body);
                (app(Prim::ReduceSeq, vec![function, neutral(op, s)]), op)
            }
        }
    }
}
