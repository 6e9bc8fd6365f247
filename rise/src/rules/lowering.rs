//! Lowering rules: choose how a high-level primitive is computed. Each keeps the type.

use super::catalogue::{EGraphUse, Make, Param, RuleDef, LOWERING};
use super::pattern::{applied, call, rule, rule_with_names};
use super::predicates::benf;
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::{Type, TypeKind};
use elevate_core::NodeId;
use elevate_core::{
    Context, Failure, Name, NameSupply, RewriteResult, Rule, Strategy, StrategyImpl, Traversable,
};
use elevate_strategies::normalize;
use elevate_strategies::text::{strategy_arg, Registry};
use rustc_hash::FxHashSet;

fn replace(from: Prim, to: Prim, nats: Vec<i64>) -> impl Fn(&Term) -> Option<Term> {
    move |t: &Term| match t.expr() {
        Expr::Prim(p) if *p == from => Some(
            nats.iter()
                .fold(Term::prim(to), |f, n| Term::nat_app(f, Nat::cst(*n))),
        ),
        _ => None,
    }
}

/// `map -> mapSeq`: a sequential loop.
pub fn map_seq() -> Strategy<Term> {
    rule("mapSeq", replace(Prim::Map, Prim::MapSeq, vec![]))
}

/// `map -> mapSeqUnroll`: a fully unrolled loop.
pub fn map_seq_unroll() -> Strategy<Term> {
    rule(
        "mapSeqUnroll",
        replace(Prim::Map, Prim::MapSeqUnroll, vec![]),
    )
}

/// `map -> mapPar`: a loop whose iterations run on CPU threads.
pub fn map_par() -> Strategy<Term> {
    rule("mapPar", replace(Prim::Map, Prim::MapPar, vec![]))
}

/// `map -> mapGlobal(d)`: GPU global threads of dimension `d`.
pub fn map_global(d: i64) -> Strategy<Term> {
    super::catalogue::sized("mapGlobal", d)
}

/// [`map_global`] without checking the argument.
fn map_global_unchecked(d: i64) -> Strategy<Term> {
    rule(
        format!("mapGlobal({d})"),
        replace(Prim::Map, Prim::MapGlobal, vec![d]),
    )
}

/// `map -> mapWorkGroup(d)`: GPU blocks of dimension `d`.
pub fn map_work_group(d: i64) -> Strategy<Term> {
    super::catalogue::sized("mapWorkGroup", d)
}

/// [`map_work_group`] without checking the argument.
fn map_work_group_unchecked(d: i64) -> Strategy<Term> {
    rule(
        format!("mapWorkGroup({d})"),
        replace(Prim::Map, Prim::MapWorkGroup, vec![d]),
    )
}

/// `map -> mapLocal(d)`: GPU threads within a block, dimension `d`.
pub fn map_local(d: i64) -> Strategy<Term> {
    super::catalogue::sized("mapLocal", d)
}

/// [`map_local`] without checking the argument.
fn map_local_unchecked(d: i64) -> Strategy<Term> {
    rule(
        format!("mapLocal({d})"),
        replace(Prim::Map, Prim::MapLocal, vec![d]),
    )
}

/// `reduce -> reduceSeq`: a sequential left fold.
pub fn reduce_seq() -> Strategy<Term> {
    rule("reduceSeq", replace(Prim::Reduce, Prim::ReduceSeq, vec![]))
}

/// `reduce -> reduceSeqUnroll`: an unrolled left fold.
pub fn reduce_seq_unroll() -> Strategy<Term> {
    rule(
        "reduceSeqUnroll",
        replace(Prim::Reduce, Prim::ReduceSeqUnroll, vec![]),
    )
}

/// `unroll`: `reduceSeq -> reduceSeqUnroll`.
pub fn unroll() -> Strategy<Term> {
    rule(
        "unroll",
        replace(Prim::ReduceSeq, Prim::ReduceSeqUnroll, vec![]),
    )
}

/// Whether `f` computes something: contains arithmetic, a comparison, a reduction,
/// or a lambda on scalars or vectors (or pairs of them), as opposed to a function that
/// only rearranges data (`transpose`, `split`, `zip`, `fst`, ...).
fn contains_computation(f: &Term) -> bool {
    if matches!(f.expr(), Expr::Prim(p) if p.computes()) {
        return true;
    }
    fn on_scalars(ty: &Type) -> bool {
        match ty.kind() {
            TypeKind::Scalar(_) | TypeKind::Vector(..) => true,
            TypeKind::Pair(a, b) => on_scalars(a) && on_scalars(b),
            _ => false,
        }
    }
    let here = matches!(f.expr(), Expr::Lambda(..))
        && matches!(f.ty().map(Type::kind), Some(TypeKind::Fun(param, _)) if on_scalars(param));
    here || (0..f.arity()).any(|i| contains_computation(f.child(i)))
}

/// `copyAfter`: `e -> map(fun(x => map(fun(y => ... fun(z => z) ...))(x)))(e)` for an
/// array `e` of scalars (any depth): an explicit element-wise copy, which `toMem` or
/// a lowering materializes (ELEVATE's `insertCopyAfter`).
pub fn copy_after() -> Strategy<Term> {
    fn copy(depth: usize, e: Term, names: &mut NameSupply) -> Term {
        if depth == 0 {
            return e;
        }
        let x = Ident::supplied(names, "x");
        let inner = copy(depth - 1, Term::var(&x), names);
        call(Prim::Map, &[], [Term::lambda(x, inner), e])
    }
    rule_with_names("copyAfter", |t: &Term, names| {
        let mut depth = 0;
        let mut ty = t.ty()?;
        while let TypeKind::Array(_, elem) = ty.kind() {
            depth += 1;
            ty = elem;
        }
        (depth > 0 && matches!(ty.kind(), TypeKind::Scalar(_)))
            .then(|| copy(depth, t.clone(), names))
    })
}

/// `map(f) -> p(f)` for a partially applied `map` whose function computes something.
fn map_compute(name: &'static str, p: Prim) -> Strategy<Term> {
    rule(name, move |t: &Term| {
        let (_, args) = applied(t, Prim::Map, 1)?;
        contains_computation(&args[0]).then(|| call(p, &[], [args[0].clone()]))
    })
}

/// `parallel` (ELEVATE's `mapParCompute`): `map(f) -> mapPar(f)` where `f` computes
/// something (not for pure reshaping such as `map(transpose)`).
pub fn parallel() -> Strategy<Term> {
    map_compute("parallel", Prim::MapPar)
}

/// `mapSeqCompute`: `map(f) -> mapSeq(f)` where `f` computes something.
pub fn map_seq_compute() -> Strategy<Term> {
    map_compute("mapSeqCompute", Prim::MapSeq)
}

/// `toMemAfterMapSeq`: `mapSeq(f)(x) -> toMem(mapSeq(f)(x))`: the loop writes to memory.
pub fn to_mem_after_map_seq() -> Strategy<Term> {
    rule("toMemAfterMapSeq", |t: &Term| {
        applied(t, Prim::MapSeq, 2)?;
        Some(call(Prim::ToMem, &[], [t.clone()]))
    })
}

/// Whether `t` is stored already: `toMem(e)`, or `e` in a GPU address space.
fn stored(t: &Term) -> bool {
    let (head, args) = t.value_arguments();
    matches!(head.expr(), Expr::Prim(p) if p.stores()) && args.len() == 1
}

/// `toMemAfter`: `e -> toMem(e)` for data `e` not already in memory.
pub fn to_mem_after() -> Strategy<Term> {
    rule("toMemAfter", |t: &Term| {
        if !t.ty()?.is_data() || stored(t) {
            return None;
        }
        Some(call(Prim::ToMem, &[], [t.clone()]))
    })
}

/// `toMemInit`: `R(op)(init)(xs) -> R(op)(toMem(init))(xs)` for a sequential
/// reduction whose start value is an array not yet in memory: the accumulator is a
/// buffer.
pub fn to_mem_init() -> Strategy<Term> {
    rule("toMemInit", |t: &Term| {
        let (p, args) = [Prim::ReduceSeq, Prim::ReduceSeqUnroll]
            .into_iter()
            .find_map(|p| applied(t, p, 3).map(|(_, a)| (p, a)))?;
        let init = &args[1];
        if !matches!(init.ty()?.kind(), TypeKind::Array(..)) || stored(init) {
            return None;
        }
        Some(call(
            p,
            &[],
            [
                args[0].clone(),
                call(Prim::ToMem, &[], [init.clone()]),
                args[2].clone(),
            ],
        ))
    })
}

/// `defaultLowering`: makes any well-typed program low-level, as the MLIR bridge
/// needs it: `BENF ; normalize(mapSeqCompute <+ reduceSeq) ; normalize(toMemInit)`:
/// every map that computes becomes a sequential loop, every reduction a sequential
/// fold, array accumulators live in memory. Maps that only rearrange data (`transpose`,
/// `split`, `zip`, ...) stay: they are index functions, not loops, and materializing
/// them would copy whole arrays. Loops already chosen (`mapPar`, `reduceSeqUnroll`,
/// ...) stay.
pub fn default_lowering() -> Strategy<Term> {
    super::pattern::named(
        "defaultLowering",
        benf() >> normalize(map_seq_compute() | reduce_seq()) >> normalize(to_mem_init()),
    )
}

/// The primitives a vectorized function may apply to its (vector) argument.
fn lane_wise(p: Prim) -> bool {
    use Prim::*;
    matches!(
        p,
        Add | Sub | Mul | Div | Neg | Max | Min | Exp | Sqrt | Abs | Fst | Snd | MakePair
    )
}

/// How the body of a function that is vectorized reads its argument `x`: whole (a
/// scalar, or a pair of them), or by its elements at positions that do not depend on
/// it (a window: a stencil's neighbours).
#[derive(Clone, Copy, PartialEq)]
enum Reads {
    Whole,
    Elements,
}

impl Reads {
    /// Whether `t`, which mentions `x`, is a read of it: a leaf of the computation.
    fn leaf(self, t: &Term, x: &Ident) -> bool {
        match self {
            Reads::Whole => matches!(t.expr(), Expr::Var(_)),
            Reads::Elements => {
                is_read(t, x)
                    && t.ty()
                        .is_some_and(|ty| matches!(ty.kind(), TypeKind::Scalar(_)))
            }
        }
    }
}

/// Whether `t`, the body of a function of `x`, computes lane-wise: what depends on `x`
/// is built with [`lane_wise`] primitives, what does not is a scalar (a literal or a
/// typed scalar expression, which becomes a broadcast vector).
pub(super) fn vectorizable(t: &Term, x: &Ident) -> bool {
    computes_lane_wise(t, x, Reads::Whole)
}

/// The nodes of `t` in which `x` occurs free, found in one walk (each shared node
/// once, without recursion): asking each node again would be quadratic in a body
/// 100,000 operations long.
fn occurrences(t: &Term, x: &Ident) -> FxHashSet<NodeId> {
    let mut occurs = FxHashSet::default();
    let mut done = FxHashSet::default();
    // (node, its children done)
    let mut pending = vec![(t, false)];
    while let Some((t, children_done)) = pending.pop() {
        let Some(id) = t.node_id() else { continue };
        if t.name_floor() <= x.id || (!children_done && done.contains(&id)) {
            continue;
        }
        match t.expr() {
            Expr::Var(v) if v.id == x.id => {
                occurs.insert(id);
            }
            Expr::Lambda(v, _, _) if v.id == x.id => {}
            _ if !children_done => {
                pending.push((t, true));
                pending.extend((0..t.arity()).map(|i| (t.child(i), false)));
                continue;
            }
            _ => {
                let child = |i| t.child(i).node_id().is_some_and(|c| occurs.contains(&c));
                if (0..t.arity()).any(child) {
                    occurs.insert(id);
                }
            }
        }
        done.insert(id);
    }
    occurs
}

fn computes_lane_wise(t: &Term, x: &Ident, reads: Reads) -> bool {
    let occurs = occurrences(t, x);
    let mentions = |t: &Term| t.node_id().is_some_and(|id| occurs.contains(&id));
    // Every computation must be lane-wise, every function a lane-wise primitive
    // applied to such computations: (term, whether it is a function).
    let mut pending = vec![(t, false)];
    while let Some((t, function)) = pending.pop() {
        let ok = match (function, t.expr()) {
            (true, Expr::Prim(p)) => lane_wise(*p),
            (true, Expr::App(g, a)) => {
                pending.extend([(g, true), (a, false)]);
                true
            }
            (true, _) => false,
            (false, _) if !mentions(t) => match t.ty() {
                Some(ty) => matches!(ty.kind(), TypeKind::Scalar(_)),
                None => matches!(t.expr(), Expr::Literal(_)),
            },
            (false, _) if reads.leaf(t, x) => true,
            (false, Expr::App(f, a)) => {
                pending.extend([(f, true), (a, false)]);
                true
            }
            (false, _) => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The computation `t` of `x` on vectors: scalars that do not depend on `x` become
/// `vectorFromScalar(s)`; the rest is rebuilt untyped (inference gives the vector
/// types).
pub(super) fn on_vectors(t: &Term, x: &Ident) -> Term {
    rebuilt_on_vectors(t, x, Reads::Whole)
}

/// [`on_vectors`], where a window's reads stay reads (of a window of vectors): their
/// positions are not broadcast.
fn rebuilt_on_vectors(t: &Term, x: &Ident, reads: Reads) -> Term {
    let occurs = occurrences(t, x);
    OnVectors { reads, occurs }.computation(t)
}

/// Rebuilding a computation of `x` on vectors, knowing where `x` occurs.
struct OnVectors {
    reads: Reads,
    occurs: FxHashSet<NodeId>,
}

impl OnVectors {
    /// As deep as the computation is (on a fresh stack segment where needed).
    fn computation(&self, t: &Term) -> Term {
        elevate_core::stack::guard(|| {
            if !t.node_id().is_some_and(|id| self.occurs.contains(&id)) {
                return call(Prim::VectorFromScalar, &[], [t.clone()]);
            }
            if let (Reads::Elements, Some((_, args))) = (self.reads, applied(t, Prim::Idx, 2)) {
                let array = match args[1].expr() {
                    Expr::Var(_) => Term::new(args[1].expr().clone()),
                    _ => self.computation(&args[1]),
                };
                return call(Prim::Idx, &[], [args[0].clone(), array]);
            }
            match t.expr() {
                Expr::App(f, a) => Term::app(self.function(f), self.computation(a)),
                e => Term::new(e.clone()),
            }
        })
    }

    fn function(&self, f: &Term) -> Term {
        elevate_core::stack::guard(|| match f.expr() {
            Expr::App(g, a) => Term::app(self.function(g), self.computation(a)),
            e => Term::new(e.clone()),
        })
    }
}

/// Whether every leaf of `ty` (through pairs) is a scalar.
pub(super) fn scalar_tree(ty: &Type) -> bool {
    match ty.kind() {
        TypeKind::Scalar(_) => true,
        TypeKind::Pair(a, b) => scalar_tree(a) && scalar_tree(b),
        _ => false,
    }
}

/// `xs`, of scalar trees, as an array of vectors of `n`: `asVector(n)(xs)` for
/// scalars, `zip(V(fst(unzip(xs))))(V(snd(unzip(xs))))` for pairs.
pub(super) fn as_vectors(xs: Term, elem: &Type, n: i64) -> Term {
    match elem.kind() {
        TypeKind::Pair(a, b) => {
            let unzipped = call(Prim::Unzip, &[], [xs]);
            let first = as_vectors(call(Prim::Fst, &[], [unzipped.clone()]), a, n);
            let second = as_vectors(call(Prim::Snd, &[], [unzipped]), b, n);
            call(Prim::Zip, &[], [first, second])
        }
        _ => call(Prim::AsVector, &[Nat::cst(n)], [xs]),
    }
}

/// The rank of an array of scalars (`3.3.f32`: 2), if `ty` is one.
fn array_rank(ty: &Type) -> Option<usize> {
    let mut rank = 0;
    let mut ty = ty;
    while let TypeKind::Array(_, elem) = ty.kind() {
        rank += 1;
        ty = elem;
    }
    (rank > 0 && matches!(ty.kind(), TypeKind::Scalar(_))).then_some(rank)
}

/// Whether `t` reads an element of `x` at positions that do not depend on it:
/// `idx(i)(x)`, `idx(j)(idx(i)(x))`, ...
fn is_read(t: &Term, x: &Ident) -> bool {
    // Terms are shared: a clone is a reference count.
    let mut t = t.clone();
    let mut reads = 0;
    while let Some((_, mut args)) = applied(&t, Prim::Idx, 2) {
        if args[0].has_free(x.id) {
            return false;
        }
        reads += 1;
        t = args.swap_remove(1);
    }
    reads > 0 && matches!(t.expr(), Expr::Var(v) if v.id == x.id)
}

/// `map(map(...(f)))`, `depth` maps deep.
fn mapped(depth: usize, f: Term) -> Term {
    (0..depth).fold(f, |f, _| Term::app(Term::prim(Prim::Map), f))
}

/// `xs : l.d1...dk.s`, windows of `rank` k, as `(l/n).d1...dk.<n>`: the windows of
/// `n` consecutive elements side by side in vectors (the outer dimension moved
/// innermost by transposes, `asVector(n)`, moved back out).
fn window_vectors(xs: Term, rank: usize, n: i64) -> Term {
    let transpose = || Term::prim(Prim::Transpose);
    let mut t = xs;
    for depth in 0..rank {
        t = Term::app(mapped(depth, transpose()), t);
    }
    let as_vector = Term::nat_app(Term::prim(Prim::AsVector), Nat::cst(n));
    t = Term::app(mapped(rank, as_vector), t);
    for depth in (0..rank).rev() {
        t = Term::app(mapped(depth, transpose()), t);
    }
    t
}

/// `vectorize(n)`: `map(f)(xs) -> asScalar(map(f')(V(xs)))` where `f` computes on
/// scalars (or pairs of them) and returns a scalar, `V` turns `xs` into vectors of
/// `n` (`asVector(n)`, through `unzip`/`zip` for pairs) and `f'` is `f` on vectors
/// (literals as `vectorFromScalar`); `n` divides the length. Where the elements are
/// windows (arrays of scalars: a stencil's neighbourhoods) that `f` reads at constant
/// positions, `V` puts `n` consecutive windows side by side, each position a vector.
struct Vectorize(i64);

impl Rule<Term> for Vectorize {
    fn name(&self) -> Name {
        Name::new("vectorize")
    }

    fn rewrite(&self, t: &Term, _names: &mut NameSupply) -> Option<Term> {
        let (_, args) = applied(t, Prim::Map, 2)?;
        let Expr::Lambda(x, None, body) = args[0].expr() else {
            return None;
        };
        let TypeKind::Array(len, elem) = args[1].ty()?.kind() else {
            return None;
        };
        let TypeKind::Array(_, result) = t.ty()?.kind() else {
            return None;
        };
        // A window (an array of scalars, read at constant positions) or scalars.
        let window = match scalar_tree(elem) {
            true => None,
            false => Some(array_rank(elem)?),
        };
        let computes = match window {
            Some(_) => computes_lane_wise(body, x, Reads::Elements),
            None => vectorizable(body, x),
        };
        if self.0 <= 1
            || len.as_const().is_some_and(|l| l % self.0 != 0)
            || !matches!(result.kind(), TypeKind::Scalar(_))
            // A constant function has no vector width to infer from its argument.
            || !body.has_free(x.id)
            || !computes
        {
            return None;
        }
        let (f, vectors) = match window {
            Some(rank) => (
                Term::lambda(x.clone(), rebuilt_on_vectors(body, x, Reads::Elements)),
                window_vectors(args[1].clone(), rank, self.0),
            ),
            None => (
                Term::lambda(x.clone(), on_vectors(body, x)),
                as_vectors(args[1].clone(), elem, self.0),
            ),
        };
        let mapped = call(Prim::Map, &[], [f, vectors]);
        super::typing::typed_result(t, call(Prim::AsScalar, &[], [mapped]))
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "vectorize({})", self.0)
    }
}

/// `vectorize(n)`: `map(f)(xs) -> asScalar(map(f')(V(xs)))` where `f` computes on
/// scalars (or pairs of them) and returns a scalar, `V` turns `xs` into vectors of `n`
/// (`asVector(n)`, through `unzip`/`zip` for pairs), `f'` is `f` on vectors (literals
/// as `vectorFromScalar`), and `n` divides the length.
pub fn vectorize(n: i64) -> Strategy<Term> {
    super::catalogue::sized("vectorize", n)
}

/// [`vectorize`] without checking the argument.
fn vectorize_unchecked(n: i64) -> Strategy<Term> {
    Strategy::from_rule(Vectorize(n))
}

/// `storeInMemory(what, how)`: computes a value once, in memory, before the term that
/// uses it: the first subterm `v` where the predicate `what` holds (top-down; its free
/// variables must be bound outside the term) becomes `let(toMem(how(v)))(fun(x => t'))`
/// where `t'` is the term with every occurrence of `v` replaced by `x`.
pub fn store_in_memory(what: Strategy<Term>, how: Strategy<Term>) -> Strategy<Term> {
    Strategy::new(StoreInMemory { what, how })
}

struct StoreInMemory {
    what: Strategy<Term>,
    how: Strategy<Term>,
}

/// The first subterm of `t` (pre-order) where `what` applies, as deep as `t` is.
fn find_first(t: &Term, what: &Strategy<Term>, cx: &mut Context) -> Result<Option<Term>, Failure> {
    elevate_core::stack::guard(|| {
        if what.attempt(t, cx)?.is_some() {
            return Ok(Some(t.clone()));
        }
        for i in 0..t.arity() {
            if let Some(found) = find_first(t.child(i), what, cx)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    })
}

/// `t` with every occurrence of `old` replaced by `new`, as deep as `t` is.
fn replace_all(t: &Term, old: &Term, new: &Term) -> Term {
    elevate_core::stack::guard(|| {
        if t == old {
            return new.clone();
        }
        t.map_children(|c| replace_all(c, old, new))
    })
}

impl StrategyImpl<Term> for StoreInMemory {
    fn apply(&self, t: &Term, cx: &mut Context) -> RewriteResult<Term> {
        let failure = || Failure::no_match("storeInMemory");
        // `what` and `how` run on subterms of `t`: names they make, and `x`, must be
        // new to all of `t`.
        cx.names_mut().reserve_above(t.name_floor());
        let found = find_first(t, &self.what, cx)?.ok_or_else(failure)?;
        let outside = t.free_vars();
        if !found.free_vars().iter().all(|v| outside.contains(v)) {
            return Err(failure());
        }
        let ty = found.ty().cloned().ok_or_else(failure)?;
        let stored = self.how.apply(&found, cx)?;
        let x = Ident::supplied(cx.names_mut(), "x");
        let var = Term::with(Expr::Var(x.clone()), Some(ty), None);
        let rest = Term::lambda(x, replace_all(t, &found, &var));
        let result = call(Prim::Let, &[], [call(Prim::ToMem, &[], [stored]), rest]);
        super::typing::typed_result(t, result).ok_or_else(failure)
    }

    fn name(&self) -> Name {
        Name::new("storeInMemory")
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "storeInMemory({}, {})", self.what, self.how)
    }
}

/// Registers the lowering strategies in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.add(
        "storeInMemory",
        "(what, how)",
        "the first v where the predicate what holds becomes let(toMem(how(v)))(fun(x => ... x ...))",
        |a| Ok(store_in_memory(strategy_arg(a, 0)?, strategy_arg(a, 1)?)),
    );
    r.rule(
        "defaultLowering",
        "every map that computes mapSeq, every reduce reduceSeq, array accumulators in memory (maps that only rearrange data stay views)",
        default_lowering,
    );
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule("mapSeq", "map -> mapSeq", map_seq)
        .bias(Prim::Map)
        .example("fun(xs: 4.f32 => xs |> map(neg))")
        .egraph(EGraphUse::Equation("map(f)(xs) -> mapSeq(f)(xs)"))
        .sets(LOWERING),
    RuleDef::rule("mapSeqUnroll", "map -> mapSeqUnroll", map_seq_unroll)
        .bias(Prim::Map)
        .example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::rule("mapPar", "map -> mapPar", map_par)
        .bias(Prim::Map)
        .example("fun(xs: 4.f32 => xs |> map(neg))")
        .egraph(EGraphUse::Equation("map(f)(xs) -> mapPar(f)(xs)"))
        .sets(LOWERING),
    RuleDef::sized("mapGlobal", &[Param::dimension("d")], "map -> mapGlobal(d)", map_global_unchecked)
        .bias(Prim::Map)
        .typical(&[0])
        .example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::sized("mapWorkGroup", &[Param::dimension("d")], "map -> mapWorkGroup(d)", map_work_group_unchecked)
        .bias(Prim::Map)
        .typical(&[0])
        .example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::sized("mapLocal", &[Param::dimension("d")], "map -> mapLocal(d)", map_local_unchecked)
        .bias(Prim::Map)
        .typical(&[0])
        .example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::rule("reduceSeq", "reduce -> reduceSeq", reduce_seq)
        .bias(Prim::Reduce)
        .example("fun(xs: 4.f32 => xs |> reduce(add, 0.0))")
        .egraph(EGraphUse::Equation("reduce(op)(init)(xs) -> reduceSeq(op)(init)(xs)"))
        .sets(LOWERING),
    RuleDef::rule("reduceSeqUnroll", "reduce -> reduceSeqUnroll", reduce_seq_unroll)
        .bias(Prim::Reduce)
        .example("fun(xs: 4.f32 => xs |> reduce(add, 0.0))"),
    RuleDef::rule("unroll", "reduceSeq -> reduceSeqUnroll", unroll)
        .bias(Prim::ReduceSeq)
        .example("fun(x: 4.f32 => x |> reduceSeq(fun(a, y => a + y), 0.0))")
        .egraph(EGraphUse::Equation("reduceSeq(op)(init)(xs) -> reduceSeqUnroll(op)(init)(xs)"))
        .sets(LOWERING),
    RuleDef::rule("parallel", "map(f) -> mapPar(f)", parallel)
        .note("f computes on scalars")
        .bias(Prim::Map)
        .example("fun(x: 4.3.f32 => x |> map(fun(r => r |> map(fun(v => v * 2.0)))))"),
    RuleDef::rule("mapSeqCompute", "map(f) -> mapSeq(f)", map_seq_compute)
        .note("f computes on scalars")
        .bias(Prim::Map)
        .example("fun(x: 4.3.f32 => (x |> map(fun(r => r |> map(fun(v => v * 2.0)))), x |> transpose |> map(fun(c => c |> reduce(add, 0.0)))))"),
    RuleDef::rule("toMemAfterMapSeq", "mapSeq(f)(x) -> toMem(mapSeq(f)(x))", to_mem_after_map_seq)
        .bias(Prim::MapSeq)
        .example("fun(x: 4.f32 => x |> mapSeq(fun(v => v + 1.0)))"),
    RuleDef::rule("toMemAfter", "e -> toMem(e)", to_mem_after)
        .note("e data, not already toMem(...)")
        .example("fun(x: 4.f32 => x |> map(neg) |> toMem)"),
    RuleDef::rule("toMemInit", "R(op)(init)(xs) -> R(op)(toMem(init))(xs)", to_mem_init)
        .note("R sequential, init an array")
        .bias(Prim::ReduceSeq)
        .example("fun(x: 3.4.f32 => x |> reduceSeq(fun(acc, r => zip(acc, r) |> map(fun(p => fst(p) + snd(p)))), generate(fun(i => 0.0))))"),
    RuleDef::rule("copyAfter", "e -> map(fun(x => ... fun(z => z) ...))(e)", copy_after)
        .note("e an array of scalars")
        .example("fun(x: 2.3.f32 => x |> transpose)"),
    RuleDef::sized("vectorize", &[Param::width("n")], "map(f)(xs) -> asScalar(map(f on vectors)(V(xs)))", vectorize_unchecked)
        .note("f scalar arithmetic on scalars or pairs of them, n divides the length")
        .bias(Prim::Map)
        .example("fun(x: 8.f32, y: 8.f32 => (x |> map(fun(v => v * 2.0 + 1.0)), zip(x, y) |> map(fun(p => fst(p) * snd(p)))))")
        .typical(&[4])
        .egraph(EGraphUse::At("map(f)(xs)", Make::Sized(vectorize_unchecked))),
];
