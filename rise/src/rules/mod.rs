//! The RISE rewrite library: rules, each a named [`Strategy`] with its equation in its
//! doc comment; RISE locations, predicates and normal forms; the loop-nest strategies
//! (`tile`, `reorder`, ...), the ELEVATE matrix-multiplication strategies and the
//! separable-convolution strategy; and a registry of all of them for tests,
//! documentation and the strategy language.
//!
//! Rules match the curried application form the parser produces (`xs |> map(f)` is
//! `map(f)(xs)`) and rebuild terms with fresh binders, so they are safe to apply
//! anywhere. Each rule types what it builds: the new nodes are inferred around the
//! typed nodes the rule reused, against the type of the node replaced
//! ([`crate::infer::retype_as`]); a result that does not type-check is no result. So
//! rules that read sizes from types (`splitJoin`, `vectorize`, ...) compose.
//!
//! | module | holds |
//! |---|---|
//! | `core` | beta (also for nat functions), eta, let inlining, projections, identity |
//! | `algorithmic` | map fusion and fission, `splitJoin`, transpose pairs |
//! | `movement` | exchanges of maps with layout primitives, zip and take/drop rules, `loopInterchange` |
//! | `reduction` | `reduceMapFusion`/`Fission`, `blockedReduce`, `liftReduce`, `reduceMap` |
//! | `layout`, `pairs`, `bindings` | slide/split/join/transpose/take/drop, zip/pair/select, id and let rules |
//! | `lowering` | `mapSeq`, `mapPar`, GPU maps, `reduceSeq`, unrolling, `toMem`, `vectorize`, `storeInMemory`, `defaultLowering` |
//! | `traversal`, `predicates` | RISE locations, predicates, `BENF`, `DFNF`, `RNF`, `CNF`, `isEqualTo`, `contains` |
//! | `tiling` | `tile`, `tileND`, `tileNDList`, `interchange`, `reorder`, `mapped`, `stage` |
//! | `gemm`, `separable` | the seven TVM matmul strategies; separable convolution |

mod algorithmic;
mod bindings;
mod core;
mod equation;
mod gemm;
mod layout;
mod lowering;
mod movement;
mod pairs;
pub(crate) mod pattern;
mod predicates;
mod reduction;
mod separable;
mod tiling;
mod traversal;

pub use self::algorithmic::*;
pub use self::bindings::*;
pub use self::core::*;
pub use self::equation::{equation, equation_names, Equation, Scope};
pub use self::gemm::*;
pub use self::layout::*;
pub use self::lowering::*;
pub use self::movement::*;
pub use self::pairs::*;
pub use self::predicates::*;
pub use self::reduction::*;
pub use self::separable::*;
pub use self::tiling::*;
pub use self::traversal::*;

use crate::prim::Prim;
use crate::term::Term;
use elevate_core::Strategy;
use elevate_strategies::text::{bounded_int_arg, int_arg, name_arg, strategy_arg, Registry, Value};
use elevate_strategies::MAX_APPLY_N;

/// A rule of the library: its name, its equation, and how to make it.
pub struct RuleInfo {
    /// The name in the strategy language.
    pub name: &'static str,
    /// The equation, `lhs -> rhs`.
    pub equation: &'static str,
    /// The rule (rules with a nat parameter are made with a typical value).
    pub make: std::sync::Arc<dyn Fn() -> Strategy<Term> + Send + Sync>,
    /// A primitive whose presence makes the left-hand side likely, to bias random
    /// programs in tests.
    pub bias: Option<Prim>,
    /// A small program in which the rule applies (tests check it there too).
    pub example: &'static str,
}

impl RuleInfo {
    /// A rule's entry in the table.
    pub fn new(
        name: &'static str,
        equation: &'static str,
        make: fn() -> Strategy<Term>,
        bias: Option<Prim>,
        example: &'static str,
    ) -> RuleInfo {
        RuleInfo {
            name,
            equation,
            make: std::sync::Arc::new(make),
            bias,
            example,
        }
    }
}

/// Every rule of the library.
pub fn library() -> Vec<RuleInfo> {
    macro_rules! info {
        ($name:literal, $equation:literal, $make:expr, $bias:expr) => {
            info!($name, $equation, $make, $bias, "")
        };
        ($name:literal, $equation:literal, $make:expr, $bias:expr, $example:literal) => {
            RuleInfo {
                name: $name,
                equation: $equation,
                make: std::sync::Arc::new($make),
                bias: $bias,
                example: $example,
            }
        };
    }
    let mut all = vec![
        info!(
            "betaReduction",
            "fun(x => b)(a) -> b[x := a]",
            beta_reduction,
            Some(Prim::Let)
        ),
        info!(
            "etaReduction",
            "fun(x => f(x)) -> f   (x not free in f)", eta_reduction, None
        ),
        info!(
            "etaAbstraction",
            "f -> fun(x => f(x))   (f a function)",
            eta_abstraction,
            Some(Prim::Map)
        ),
        info!(
            "letInline",
            "let(v, fun(x => b)) -> b[x := v]",
            let_inline,
            Some(Prim::Let)
        ),
        info!(
            "separateDotHV",
            "sum(zip(join(nbh), join(u ⊗ v)) |> map(mul)) -> dot(map(fun(r => dot(r, v)))(nbh), u)   (u ⊗ v = map(fun(a => map(fun(b => a * b))(v)))(u))",
            separate_dot_hv,
            None,
            "fun(nbh: 3.3.f32, u: 3.f32, v: 3.f32 => zip(join(nbh), join(u |> map(fun(a => v |> map(fun(b => a * b)))))) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))"
        ),
        info!(
            "separateDotVH",
            "sum(zip(join(nbh), join(u ⊗ v)) |> map(mul)) -> dot(map(fun(c => dot(c, u)))(transpose(nbh)), v)",
            separate_dot_vh,
            None,
            "fun(nbh: 3.3.f32, u: 3.f32, v: 3.f32 => zip(join(u |> map(fun(a => v |> map(fun(b => b * a))))), join(nbh)) |> map(fun(p => snd(p) * fst(p))) |> reduce(fun(x, y => x + y), 0.0))"
        ),
        info!(
            "betaNatReduction",
            "depFun(n => b)(k) -> b[n := k]",
            beta_nat_reduction,
            None,
            "fun(y: 4.f32 => depFun(n => fun(x: n.f32 => x |> map(neg)))(4, y))"
        ),
        info!("fstReduction", "fst((a, b)) -> a", fst_reduction, None),
        info!("sndReduction", "snd((a, b)) -> b", snd_reduction, None),
        info!(
            "mapFusion",
            "map(f)(map(g)(x)) -> map(fun(y => f(g(y))))(x)",
            map_fusion,
            Some(Prim::Map)
        ),
        info!(
            "mapLastFission",
            "map(fun(x => f(e)))(xs) -> map(f)(map(fun(x => e))(xs))   (x not free in f; e data, not a variable)",
            map_last_fission,
            Some(Prim::Map)
        ),
        info!(
            "mapFullFission",
            "map(fun(x => f1(f2(...fk(x)))))(xs) -> map(f1)(map(f2)(...map(fk)(xs)))   (x not in any fi)",
            map_full_fission,
            Some(Prim::Map),
            "fun(xs: 3.f32 => xs |> map(fun(x => neg(abs(neg(x))))))"
        ),
        info!(
            "mapFirstFission",
            "map(fun(x => f1(...fk(x))))(xs) -> map(fun(z => f1(...f(k-1)(z))))(map(fk)(xs))   (x not in any fi)",
            map_first_fission,
            Some(Prim::Map),
            "fun(xs: 3.4.f32 => xs |> map(fun(x => neg(x |> reduce(add, 0.0) |> abs))))"
        ),
        info!(
            "removeTransposePair",
            "transpose(transpose(x)) -> x",
            remove_transpose_pair,
            Some(Prim::Transpose)
        ),
        info!(
            "createTransposePair",
            "x -> transpose(transpose(x))   (x a 2D array)",
            create_transpose_pair,
            Some(Prim::Transpose)
        ),
        info!("idAfter", "x -> id(x)", id_after, None),
        info!("removeId", "id(x) -> x", remove_id, None),
        info!(
            "splitJoin(2)",
            "map(f)(x) -> join(map(map(f))(split(n)(x)))   (n divides the length)",
            || split_join(2),
            Some(Prim::Map)
        ),
        info!(
            "joinSplit",
            "join(split(n)(x)) -> x",
            join_split,
            Some(Prim::Split)
        ),
        info!(
            "reduceMapFusion",
            "R(op)(init)(map(f)(xs)) -> reduceSeq(fun(a, y => op(a)(f(y))))(init)(xs)   (R = reduce, reduceSeq)",
            reduce_map_fusion,
            Some(Prim::Reduce),
            "fun(xs: 4.f32 => (xs |> map(neg) |> reduce(add, 0.0), xs |> map(fun(x => x * 2.0)) |> reduceSeq(fun(a, y => a + y), 1.0)))"
        ),
        info!(
            "fuseReduceMap",
            "same as reduceMapFusion",
            fuse_reduce_map,
            Some(Prim::Reduce),
            "fun(xs: 4.f32 => xs |> map(neg) |> reduce(add, 0.0))"
        ),
        info!(
            "reduceMapFission",
            "R(fun(acc, y => op(acc)(e)))(init)(xs) -> reduce(op)(init)(map(fun(y => e))(xs))   (acc only as op's first argument)",
            reduce_map_fission,
            Some(Prim::ReduceSeq),
            "fun(a: 4.f32, b: 4.f32 => zip(a, b) |> reduceSeq(fun(acc, p => acc + fst(p) * snd(p)), 0.0))"
        ),
        info!(
            "blockedReduce(2)",
            "reduce(op)(init)(xs) -> reduceSeq(fun(acc, y => op(acc)(reduce(op)(init)(y))))(init)(split(n)(xs))   (op add/mul, init neutral, n divides the length)",
            || blocked_reduce(2),
            Some(Prim::Reduce),
            "fun(xs: 6.f32, ys: 4.i32 => (xs |> reduce(add, 0.0), ys |> reduce(fun(a, b => a * b), 1)))"
        ),
        info!(
            "splitStrategy(2)",
            "same as blockedReduce(n)",
            || split_strategy(2),
            Some(Prim::Reduce),
            "fun(xs: 6.f32 => xs |> reduce(add, 0.0))"
        ),
        info!(
            "reduceSeqInitFusion",
            "op(x)(reduceSeq(fun(a, y => op(a)(e)))(init)(ys)) -> reduceSeq(fun(a, y => op(a)(e)))(x)(ys)   (op add/mul, init neutral)",
            reduce_seq_init_fusion,
            Some(Prim::ReduceSeq),
            "fun(x: f32, ys: 4.f32 => x + (ys |> reduceSeq(fun(a, y => a + y * y), 0.0)))"
        ),
        info!(
            "liftReduce",
            "map(fun(v => R(op)(init)(e)))(xs) -> R(fun(acc, y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y))))(generate(fun(i => init)))(transpose(map(fun(v => e))(xs)))   (v not in op)",
            lift_reduce,
            Some(Prim::Reduce),
            "fun(m: 3.4.f32, w: 4.f32 => (m |> map(fun(r => r |> reduce(add, 0.0))), (m |> map(fun(r => zip(r, w) |> reduceSeq(fun(a, p => a + fst(p) * snd(p)), 0.0))), m |> map(fun(r => r |> reduceSeq(fun(a, x => a + x), r |> reduce(max, 0.0)))))))"
        ),
        info!("mapSeq", "map -> mapSeq", map_seq, Some(Prim::Map)),
        info!(
            "mapSeqUnroll",
            "map -> mapSeqUnroll",
            map_seq_unroll,
            Some(Prim::Map)
        ),
        info!("mapPar", "map -> mapPar", map_par, Some(Prim::Map)),
        info!(
            "mapGlobal(0)",
            "map -> mapGlobal(d)",
            || map_global(0),
            Some(Prim::Map)
        ),
        info!(
            "mapWorkGroup(0)",
            "map -> mapWorkGroup(d)",
            || map_work_group(0),
            Some(Prim::Map)
        ),
        info!(
            "mapLocal(0)",
            "map -> mapLocal(d)",
            || map_local(0),
            Some(Prim::Map)
        ),
        info!(
            "reduceSeq",
            "reduce -> reduceSeq",
            reduce_seq,
            Some(Prim::Reduce)
        ),
        info!(
            "reduceSeqUnroll",
            "reduce -> reduceSeqUnroll",
            reduce_seq_unroll,
            Some(Prim::Reduce)
        ),
        info!("mapMapFBeforeTranspose", "transpose(map(map(f))(y)) -> map(map(f))(transpose(y))", map_map_f_before_transpose, None,
            "fun(y: 2.3.f32 => y |> map(map(neg)) |> transpose)"),
        info!("transposeBeforeMapMapF", "map(map(f))(transpose(y)) -> transpose(map(map(f))(y))", transpose_before_map_map_f, None,
            "fun(y: 2.3.f32 => y |> transpose |> map(map(neg)))"),
        info!("slideBeforeMapMapF", "map(map(f))(slide(n, m)(y)) -> slide(n, m)(map(f)(y)), likewise split(n)", slide_before_map_map_f, None,
            "fun(y: 6.f32 => (y |> slide(3, 1) |> map(map(neg)), y |> split(2) |> map(map(neg))))"),
        info!("slideBeforeMap", "slide(n, m)(map(f)(y)) -> map(map(f))(slide(n, m)(y))", slide_before_map, Some(Prim::Slide),
            "fun(y: 6.f32 => y |> map(neg) |> slide(3, 1))"),
        info!("splitBeforeMap", "split(n)(map(f)(y)) -> map(map(f))(split(n)(y))", split_before_map, Some(Prim::Split),
            "fun(y: 6.f32 => y |> map(neg) |> split(2))"),
        info!("joinBeforeMapF", "map(f)(join(y)) -> join(map(map(f))(y))", join_before_map_f, Some(Prim::Join),
            "fun(y: 2.3.f32 => y |> join |> map(neg))"),
        info!("mapMapFBeforeJoin", "join(map(map(f))(y)) -> map(f)(join(y))", map_map_f_before_join, None,
            "fun(y: 2.3.f32 => y |> map(map(neg)) |> join)"),
        info!("takeBeforeMap", "take(n)(map(f)(x)) -> map(f)(take(n)(x))", take_before_map, Some(Prim::Take),
            "fun(y: 5.f32 => y |> map(neg) |> take(2))"),
        info!("dropBeforeMap", "drop(n)(map(f)(x)) -> map(f)(drop(n)(x))", drop_before_map, Some(Prim::Drop),
            "fun(y: 5.f32 => y |> map(neg) |> drop(2))"),
        info!("takeAfterMap", "map(f)(take(n)(x)) -> take(n)(map(f)(x))", take_after_map, Some(Prim::Take),
            "fun(y: 5.f32 => y |> take(2) |> map(neg))"),
        info!("joinBeforeJoin", "join(join(y)) -> join(map(join)(y))", join_before_join, Some(Prim::Join),
            "fun(y: 2.3.2.i32 => y |> join |> join)"),
        info!("mapJoinBeforeJoin", "join(map(join)(y)) -> join(join(y))", map_join_before_join, None,
            "fun(y: 2.3.2.i32 => y |> map(join) |> join)"),
        info!("joinBeforeTranspose", "transpose(join(y)) -> map(join)(transpose(map(transpose)(y)))", join_before_transpose, None,
            "fun(y: 2.3.4.i32 => y |> join |> transpose)"),
        info!("mapTransposeBeforeJoin", "join(map(transpose)(y)) -> transpose(map(join)(transpose(y)))", map_transpose_before_join, None,
            "fun(y: 2.3.4.i32 => y |> map(transpose) |> join)"),
        info!("mapOutsideZip", "zip(map(fa)(a))(map(fb)(b)) -> map(fun(p => (fa(fst(p)), fb(snd(p)))))(zip(a)(b))", map_outside_zip, Some(Prim::Zip),
            "fun(a: 3.f32, b: 3.i32 => zip(a |> map(neg), b |> map(fun(v => v * 2))))"),
        info!("zipSame", "zip(a)(a) -> map(fun(x => (x, x)))(a)", zip_same, Some(Prim::Zip),
            "fun(a: 3.f32 => zip(a, a))"),
        info!("loopInterchange", "map(map(g))(x) -> transpose(map(map(g))(transpose(x))); map(fun(a => map(fun(b => f))(e)))(x) -> transpose(map(fun(b => map(fun(a => f))(x)))(e))   (a not in e)", loop_interchange, None,
            "fun(x: 2.3.f32, y: 4.f32 => (x |> map(map(neg)), (x |> map(fun(a => a |> map(fun(v => v * 2.0)))), x |> map(fun(a => y |> map(fun(v => (a |> reduce(add, 0.0)) * v)))))))"),
        info!("dropBeforeTake", "drop(m)(take(k)(x)) -> take(k - m)(drop(m)(x))", drop_before_take, Some(Prim::Take),
            "fun(x: 6.f32 => x |> take(5) |> drop(2))"),
        info!("takeBeforeDrop", "take(n)(drop(m)(x)) -> drop(m)(take(n + m)(x))", take_before_drop, Some(Prim::Drop),
            "fun(x: 6.f32 => x |> drop(2) |> take(3))"),
        info!("takeInZip", "take(n)(zip(a)(b)) -> zip(take(n)(a))(take(n)(b))", take_in_zip, Some(Prim::Zip),
            "fun(a: 4.f32, b: 4.i32 => zip(a, b) |> take(2))"),
        info!("dropInZip", "drop(n)(zip(a)(b)) -> zip(drop(n)(a))(drop(n)(b))", drop_in_zip, Some(Prim::Zip),
            "fun(a: 4.f32, b: 4.i32 => zip(a, b) |> drop(1))"),
        info!("takeOutsideZip", "zip(take(n)(a))(take(n)(b)) -> take(n)(zip(a)(b))   (a, b equally long)", take_outside_zip, Some(Prim::Zip),
            "fun(a: 4.f32, b: 4.i32, c: 5.i32 => (zip(a |> take(3), b |> take(3)), zip(a |> take(3), c |> take(3))))"),
        info!("takeBeforeSlide", "take(t)(slide(n, m)(x)) -> slide(n, m)(take(m*(t - 1) + n)(x))", take_before_slide, Some(Prim::Slide),
            "fun(x: 9.f32 => x |> slide(3, 2) |> take(2))"),
        info!("dropBeforeSlide", "drop(d)(slide(n, m)(x)) -> slide(n, m)(drop(d*m)(x))", drop_before_slide, Some(Prim::Slide),
            "fun(x: 9.f32 => x |> slide(3, 2) |> drop(2))"),
        info!("mapFstFusion", "mapFst(f)(mapFst(g)(p)) -> mapFst(fun(y => f(g(y))))(p)", map_fst_fusion, None,
            "fun(p: (f32, i32) => p |> mapFst(neg) |> mapFst(fun(v => v * 2.0)))"),
        info!("mapSndFusion", "mapSnd(f)(mapSnd(g)(p)) -> mapSnd(fun(y => f(g(y))))(p)", map_snd_fusion, None,
            "fun(p: (f32, i32) => p |> mapSnd(neg) |> mapSnd(fun(v => v + 1)))"),
        info!("mapFstBeforeMapSnd", "mapFst(g)(mapSnd(f)(p)) -> mapSnd(f)(mapFst(g)(p))", map_fst_before_map_snd, None,
            "fun(p: (f32, i32) => p |> mapSnd(neg) |> mapFst(neg))"),
        info!("separateSumHV", "reduce(add, 0)(join(x)) -> reduce(add, 0)(map(reduce(add, 0))(x))", separate_sum_hv, Some(Prim::Join),
            "fun(x: 3.4.f32 => x |> join |> reduce(add, 0.0))"),
        info!("separateSumVH", "reduce(add, 0)(join(x)) -> reduce(add, 0)(map(reduce(add, 0))(transpose(x)))", separate_sum_vh, Some(Prim::Join),
            "fun(x: 3.4.i32 => x |> join |> reduce(add, 0))"),
        info!("mapIdentityAfter", "e -> map(fun(x => x))(e)   (e an array)", map_identity_after, None),
        info!("mapIdentity", "map(fun(x => x))(xs) -> xs", map_identity, None,
            "fun(xs: 3.f32 => xs |> map(fun(x => x)))"),
        info!("dropNothing", "drop(0)(x) -> x", drop_nothing, None, "fun(x: 3.f32 => x |> drop(0))"),
        info!("takeAll", "take(n)(x) -> x   (x has n elements)", take_all, None, "fun(x: 3.f32 => x |> take(3))"),
        info!("slideAfter", "e -> join(slide(1, 1)(e))   (e an array)", slide_after, None),
        info!("zipRotateLeft", "zip(a)(zip(b)(c)) -> map(fun(x => (fst(fst(x)), (snd(fst(x)), snd(x)))))(zip(zip(a)(b))(c))", zip_rotate_left, Some(Prim::Zip),
            "fun(a: 3.f32, b: 3.i32, c: 3.f32 => zip(a, zip(b, c)))"),
        info!("zipRotateRight", "zip(zip(a)(b))(c) -> map(fun(x => ((fst(x), fst(snd(x))), snd(snd(x)))))(zip(a)(zip(b)(c)))", zip_rotate_right, Some(Prim::Zip),
            "fun(a: 3.f32, b: 3.i32, c: 3.f32 => zip(zip(a, b), c))"),
        info!("zipSwap", "zip(a)(b) -> map(fun(x => (snd(x), fst(x))))(zip(b)(a))", zip_swap, Some(Prim::Zip)),
        info!("unzipZipIsPair", "unzip(zip(a)(b)) -> (a, b)", unzip_zip_is_pair, Some(Prim::Zip),
            "fun(a: 3.f32, b: 3.i32 => unzip(zip(a, b)))"),
        info!("reduceMap", "R(fun(acc, y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y))))(generate(fun(i => init)))(transpose(xs)) -> map(fun(v => R(op)(init)(v)))(xs)", reduce_map, None,
            "fun(m: 3.4.f32 => m |> transpose |> reduce(fun(acc, y => zip(acc, y) |> map(fun(q => fst(q) + snd(q)))), generate(fun(i => 0.0))))"),
        info!("padCstAfterMap", "map(f)(padCst(l, r, c)(x)) -> padCst(l, r, f(c))(map(f)(x))", pad_cst_after_map, Some(Prim::PadCst),
            "fun(x: 4.f32 => x |> padCst(1, 2, 3.0) |> map(fun(v => v * 2.0)))"),
        info!("padClampAfterMap", "map(f)(padClamp(l, r)(x)) -> padClamp(l, r)(map(f)(x))", pad_clamp_after_map, Some(Prim::PadClamp),
            "fun(x: 4.f32 => x |> padClamp(2, 1) |> map(fun(v => v * 2.0)))"),
        info!("unroll", "reduceSeq -> reduceSeqUnroll", unroll, Some(Prim::ReduceSeq),
            "fun(x: 4.f32 => x |> reduceSeq(fun(a, y => a + y), 0.0))"),
        info!("parallel", "map(f) -> mapPar(f)   (f computes on scalars)", parallel, Some(Prim::Map),
            "fun(x: 4.3.f32 => x |> map(fun(r => r |> map(fun(v => v * 2.0)))))"),
        info!("mapSeqCompute", "map(f) -> mapSeq(f)   (f computes on scalars)", map_seq_compute, Some(Prim::Map),
            "fun(x: 4.3.f32 => (x |> map(fun(r => r |> map(fun(v => v * 2.0)))), x |> transpose |> map(fun(c => c |> reduce(add, 0.0)))))"),
        info!("toMemAfterMapSeq", "mapSeq(f)(x) -> toMem(mapSeq(f)(x))", to_mem_after_map_seq, Some(Prim::MapSeq),
            "fun(x: 4.f32 => x |> mapSeq(fun(v => v + 1.0)))"),
        info!("toMemAfter", "e -> toMem(e)   (e data, not already toMem(...))", to_mem_after, None,
            "fun(x: 4.f32 => x |> map(neg) |> toMem)"),
        info!("toMemInit", "R(op)(init)(xs) -> R(op)(toMem(init))(xs)   (R sequential, init an array)", to_mem_init, Some(Prim::ReduceSeq),
            "fun(x: 3.4.f32 => x |> reduceSeq(fun(acc, r => zip(acc, r) |> map(fun(p => fst(p) + snd(p)))), generate(fun(i => 0.0))))"),
        info!("copyAfter", "e -> map(fun(x => ... fun(z => z) ...))(e)   (e an array of scalars)", copy_after, None,
            "fun(x: 2.3.f32 => x |> transpose)"),
        info!("vectorize(4)", "map(f)(xs) -> asScalar(map(f on vectors)(V(xs)))   (f scalar arithmetic on scalars or pairs of them, 4 divides the length)", || vectorize(4), Some(Prim::Map),
            "fun(x: 8.f32, y: 8.f32 => (x |> map(fun(v => v * 2.0 + 1.0)), zip(x, y) |> map(fun(p => fst(p) * snd(p)))))"),
    ];
    all.extend(layout::infos());
    all.extend(pairs::infos());
    all.extend(bindings::infos());
    // The equations that are rules of their own (made for the e-graph; as
    // strategies too).
    let (plain, _) = equation_names();
    for (name, text, example) in equation::EQUATIONS {
        if plain.contains(name) && !all.iter().any(|i| i.name == *name) {
            all.push(RuleInfo {
                name,
                equation: text,
                make: std::sync::Arc::new(move || equation::library_equation(name)),
                bias: None,
                example,
            });
        }
    }
    all.push(RuleInfo {
        name: "blockedSum(4)",
        equation: "reduce(add)(0.0)(xs) -> reduceSeq(fun(acc => fun(y => add(acc)(reduce(add)(0.0)(y)))))(0.0)(split(n)(xs))",
        make: std::sync::Arc::new(|| equation("blockedSum", &[4]).expect("blockedSum(4)").strategy()),
        bias: Some(Prim::Reduce),
        example: "fun(xs: 8.f32 => xs |> reduce(add, 0.0))",
    });
    all
}

/// The names of the strategy language for RISE: Elevate's combinators, the RISE
/// locations, the rules of [`library`], and the normal forms.
pub fn registry() -> Registry<Term> {
    let mut r = Registry::with_combinators();
    for info in library() {
        if !info.name.contains('(') {
            let make = info.make.clone();
            r.add(info.name, "", info.equation, move |a| {
                if !a.is_empty() {
                    return Err(format!("takes no arguments, found {}", a.len()));
                }
                Ok(make())
            });
        }
    }
    r.add(
        "blockedSum",
        "(n)",
        "reduce(add)(0.0)(xs) -> reduceSeq(fun(acc, y => acc + reduce(add)(0.0)(y)))(0.0)(split(n)(xs))   (an f32 sum in blocks of n)",
        |a| {
            let n = int_arg(a, 0)? as i64;
            equation("blockedSum", &[n])
                .map(|e| e.strategy())
                .ok_or_else(|| format!("the block size must be positive, found {n}"))
        },
    );
    r.add(
        "splitJoin",
        "(n)",
        "map(f)(x) -> join(map(map(f))(split(n)(x)))   (n divides the length)",
        |a| Ok(split_join(int_arg(a, 0)? as i64)),
    );
    r.add(
        "blockedReduce",
        "(n)",
        "reduce(op)(init)(xs) -> reduceSeq(fun(acc, y => op(acc)(reduce(op)(init)(y))))(init)(split(n)(xs))",
        |a| Ok(blocked_reduce(int_arg(a, 0)? as i64)),
    );
    r.add(
        "splitStrategy",
        "(n)",
        "blockedReduce(n), under the ELEVATE paper's name",
        |a| Ok(split_strategy(int_arg(a, 0)? as i64)),
    );
    add_strategies(&mut r);
    layout::register(&mut r);
    type Lowering = fn(i64) -> Strategy<Term>;
    let gpu: [(&str, &str, Lowering); 3] = [
        (
            "mapGlobal",
            "map -> mapGlobal(d): GPU global threads, dimension d",
            map_global,
        ),
        (
            "mapWorkGroup",
            "map -> mapWorkGroup(d): GPU blocks, dimension d",
            map_work_group,
        ),
        (
            "mapLocal",
            "map -> mapLocal(d): GPU threads of a block, dimension d",
            map_local,
        ),
    ];
    for (name, doc, make) in gpu {
        r.add(name, "(d)", doc, move |a| {
            let d = int_arg(a, 0)?;
            if d > 2 {
                return Err(format!("the dimension must be 0, 1 or 2, found {d}"));
            }
            Ok(make(d as i64))
        });
    }
    type Location = fn(Strategy<Term>) -> Strategy<Term>;
    let locations: [(&str, &str, Location); 3] = [
        ("body", "s on the body of a lambda", body),
        (
            "function",
            "s on the function of an application f(a)",
            function,
        ),
        (
            "argument",
            "s on the argument of an application f(a)",
            argument,
        ),
    ];
    for (name, doc, make) in locations {
        r.unary(name, doc, make);
    }
    r.unary(
        "fmap",
        "function(argumentOf(map, body(s))): s in the lambda of an applied map",
        fmap,
    );
    r.add(
        "mapNest",
        "(d)",
        "predicate: d maps nested in each other's lambda bodies",
        |a| Ok(map_nest(int_arg(a, 0)?)),
    );
    type WithPredicate = fn(Strategy<Term>, Strategy<Term>) -> Strategy<Term>;
    let guided: [(&str, &str, WithPredicate); 3] = [
        (
            "outermost",
            "topDown(p ; s): s where p holds first, top-down",
            outermost,
        ),
        (
            "innermost",
            "bottomUp(p ; s): s where p holds first, bottom-up",
            innermost,
        ),
        ("check", "p ; s", check),
    ];
    for (name, doc, make) in guided {
        r.guided(name, doc, make);
    }
    r.unary("everywhere", "normalize(s)", everywhere);
    r.add(
        "argumentOf",
        "(PRIM, s)",
        "s on the argument of PRIM(a)",
        |a| {
            let prim = prim_arg(a, 0)?;
            Ok(argument_of(prim, strategy_arg(a, 1)?))
        },
    );
    #[cfg(feature = "egraph")]
    add_saturate(&mut r);
    r.rule(
        "BENF",
        "beta-eta normal form: normalize(etaReduction <+ betaReduction <+ betaNatReduction)",
        benf,
    );
    r.rule(
        "DFNF",
        "data-flow normal form: BENF, then maps and reduces applied to lambdas",
        dfnf,
    );
    r.rule(
        "RNF",
        "rewrite normal form: repeat(DFNF ; topDown(mapLastFission)) ; DFNF",
        rnf,
    );
    r.rule("CNF", "codegen normal form: normalize(mapFusion)", cnf);
    r.rule(
        "inferTypes",
        "re-infers the types of a closed term; fails if it does not type-check",
        infer_types,
    );
    type Predicate = fn() -> Strategy<Term>;
    let predicates: [(&str, &str, Predicate); 8] = [
        ("isMap", "the node is the map primitive", is_map),
        ("isReduce", "the node is the reduce primitive", is_reduce),
        (
            "isReduceSeq",
            "the node is the reduceSeq primitive",
            is_reduce_seq,
        ),
        (
            "isTranspose",
            "the node is the transpose primitive",
            is_transpose,
        ),
        ("isLet", "the node is the let primitive", is_let),
        (
            "isGenerate",
            "the node is the generate primitive",
            is_generate,
        ),
        ("isLambda", "the node is a lambda", is_lambda),
        ("isApply", "the node is an application f(a)", is_apply),
    ];
    for (name, doc, make) in predicates {
        r.rule(name, doc, make);
    }
    r.unary(
        "isApplied",
        "the node is f(a) where s succeeds on f",
        is_applied,
    );
    r.add(
        "isPrimitive",
        "(PRIM)",
        "the node is the primitive PRIM",
        |a| {
            let prim = prim_arg(a, 0)?;
            Ok(is_primitive(prim))
        },
    );
    r
}

/// `saturate("RULES", "LIMITS", "COST")`: equality saturation as a strategy. Only
/// the rules are required; the limits default to [`Limits::default`] and the cost
/// model to `lowered`.
///
/// [`Limits::default`]: crate::egraph::Limits
#[cfg(feature = "egraph")]
fn add_saturate(r: &mut Registry<Term>) {
    use crate::egraph::{saturate, CostModel, Limits, RuleSet};
    use elevate_strategies::text::str_arg;
    r.add(
        "saturate",
        "(\"RULES\", \"LIMITS\", \"COST\")",
        "equality saturation, then extraction: RULES as for `elevate saturate --rules` \
         (e.g. \"default\"), LIMITS e.g. \"iterations=10,nodes=50000,ms=5000\", \
         COST \"lowered\" (default) or \"size\"",
        |a| {
            if a.is_empty() || a.len() > 3 {
                return Err(format!("expects 1 to 3 arguments, found {}", a.len()));
            }
            let rules = RuleSet::parse(str_arg(a, 0)?)?;
            let limits = match a.get(1) {
                Some(_) => str_arg(a, 1)?
                    .parse::<Limits>()
                    .map_err(|e| e.to_string())?,
                None => Limits::default(),
            };
            let cost = match a.get(2) {
                Some(_) => {
                    let name = str_arg(a, 2)?;
                    CostModel::from_name(name)
                        .ok_or_else(|| format!("unknown cost model `{name}` (lowered, size)"))?
                }
                None => CostModel::Lowered,
            };
            Ok(saturate(rules, limits, cost))
        },
    );
    r.add(
        "sketchGuided",
        "(\"SKETCH\", \"RULES\", \"LIMITS\", ..., \"COST\")",
        "sketch-guided equality saturation: per step a sketch (as `elevate saturate \
         --sketch`), its rules and its limits; each step saturates from the previous \
         step's program until the sketch is satisfiable and extracts the cheapest such \
         program; COST \"lowered\" or \"size\"",
        |a| {
            use crate::egraph::sketch::{sketch_guided, GuideStep, Sketch};
            if a.len() < 4 || a.len() % 3 != 1 {
                return Err(format!(
                    "expects triples (sketch, rules, limits) and a cost model, found {} arguments",
                    a.len()
                ));
            }
            let mut steps = Vec::new();
            for k in (0..a.len() - 1).step_by(3) {
                let sketch = Sketch::parse(str_arg(a, k)?).map_err(|e| e.message)?;
                let rules = RuleSet::parse(str_arg(a, k + 1)?)?;
                let limits = str_arg(a, k + 2)?
                    .parse::<Limits>()
                    .map_err(|e| e.to_string())?;
                steps.push(GuideStep::new(sketch, rules, limits));
            }
            let name = str_arg(a, a.len() - 1)?;
            let cost = CostModel::from_name(name)
                .ok_or_else(|| format!("unknown cost model `{name}` (lowered, size)"))?;
            Ok(sketch_guided(steps, cost))
        },
    );
}

/// Argument `i` as a primitive's name. Some primitives are also the names of rules
/// (`reduceSeq`, `mapSeq`, ...), which the text parser reads as strategies.
fn prim_arg(a: &[Value<Term>], i: usize) -> Result<Prim, String> {
    let name = match a.get(i) {
        Some(Value::Strategy(s)) => s.to_string(),
        _ => name_arg(a, i)?.to_string(),
    };
    Prim::from_name(&name).ok_or_else(|| format!("`{name}` is not a primitive"))
}

/// A name, its meaning, and the strategy.
type Named = (&'static str, &'static str, fn() -> Strategy<Term>);

/// The most dimensions or loop levels that the loop-nest strategies take: building
/// one costs a power of its depth (pipeline stages take up to `MAX_APPLY_N`).
const MAX_NEST_DEPTH: usize = 64;

/// The loop-nest and matrix-multiplication strategies.
fn add_strategies(r: &mut Registry<Term>) {
    let sizes = |a: &[Value<Term>], from: usize| -> Result<Vec<i64>, String> {
        (from..a.len())
            .map(|i| int_arg(a, i).map(|n| n as i64))
            .collect()
    };
    r.add(
        "tile",
        "(x, y)",
        "2-D tiling of a two-deep map nest: tileNDList([x, y])",
        move |a| {
            let s = sizes(a, 0)?;
            match s.as_slice() {
                [x, y] => Ok(tile(*x, *y)),
                _ => Err(format!("expects 2 sizes, found {}", s.len())),
            }
        },
    );
    r.add(
        "tileND",
        "(d)(n)",
        "d-dimensional tiling with blocks of n",
        |a| {
            Ok(tile_nd(
                bounded_int_arg(a, 0, MAX_NEST_DEPTH)?,
                int_arg(a, 1)? as i64,
            ))
        },
    );
    r.add(
        "tileNDList",
        "([n1, ..., nd])",
        "tiling of a d-deep map nest: fmap(tileNDList(rest)) ; splitJoin(n1) ; interchange(d)",
        |a| match a.first() {
            Some(Value::List(l)) if a.len() == 1 && l.len() <= MAX_NEST_DEPTH => {
                Ok(tile_nd_list(l))
            }
            _ => Err(format!(
                "expects one list of at most {MAX_NEST_DEPTH} sizes"
            )),
        },
    );
    r.add(
        "interchange",
        "(d)",
        "after a split of the outermost of d tiled dimensions: moves its element loop inside the block loops",
        |a| Ok(interchange(bounded_int_arg(a, 0, MAX_NEST_DEPTH)?)),
    );
    r.add(
        "loopInterchangeAtLevel",
        "(l)",
        "loopInterchange at nest level l, then RNF",
        |a| {
            Ok(loop_interchange_at_level(bounded_int_arg(
                a,
                0,
                MAX_NEST_DEPTH,
            )?))
        },
    );
    r.add(
        "reorder",
        "([p1, ..., pk])",
        "permutes the loops of a nest (maps and reductions): the loop at depth p1 becomes the outermost, ...",
        |a| match a.first() {
            Some(Value::List(l)) if a.len() == 1 && l.iter().all(|p| *p > 0) => {
                Ok(reorder(&l.iter().map(|p| *p as usize).collect::<Vec<_>>()))
            }
            _ => Err("expects one list of loop depths (1 = outermost)".into()),
        },
    );
    r.add(
        "moveTowardsArgument",
        "(i)(s)",
        "s on the i-th stage of a pipeline, towards its input: argument^i(s)",
        |a| {
            Ok(move_towards_argument(
                bounded_int_arg(a, 0, MAX_APPLY_N)?,
                strategy_arg(a, 1)?,
            ))
        },
    );
    r.unary(
        "stage",
        "s on the first stage of a pipeline where it succeeds",
        stage,
    );
    r.unary(
        "fmapRNF",
        "DFNF ; try(mapFusion) ; DFNF ; fmap(s) ; DFNF ; try(mapFullFission)",
        fmap_rnf,
    );
    r.unary(
        "mapped",
        "s <+ fmapRNF(mapped(s)): s here or inside the functions of nested maps",
        mapped,
    );
    r.unary(
        "freduce",
        "s on the body of a reduction's operator",
        freduce,
    );
    r.rule(
        "isFullyAppliedReduce",
        "the node is reduce(op)(init)(xs)",
        is_fully_applied_reduce,
    );
    let matmul: [Named; 7] = [
        ("baseline", "TVM matmul: DFNF ; fuseReduceMap @ topDown", baseline),
        (
            "blocking",
            "TVM matmul: baseline, 32x32 tiles, reduction split by 4, loops reordered [1, 2, 5, 6, 3, 4]",
            blocking,
        ),
        (
            "vectorization",
            "TVM matmul: blocking ;; vectorize(32) @ innermost(isApplied(isApplied(isMap)))",
            vectorization,
        ),
        (
            "loopPerm",
            "TVM matmul: as blocking with loops [1, 2, 5, 3, 6, 4], vectorized",
            loop_perm,
        ),
        (
            "arrayPacking",
            "TVM matmul: packB ;; loopPerm (transpose(b) packed in 32-column blocks, once)",
            array_packing,
        ),
        (
            "cacheBlocks",
            "TVM matmul: arrayPacking ;; unroll @ innermost(isReduceSeq)",
            cache_blocks,
        ),
        (
            "par",
            "TVM matmul: arrayPacking ;; parallel @ outermost(isApplied(isMap)) ;; unroll @ innermost(isReduceSeq)",
            par,
        ),
    ];
    for (name, doc, make) in matmul {
        r.rule(name, doc, make);
    }
    for (name, doc, make) in [
        (
            "isEqualTo",
            "predicate: the program is PROGRAM (RISE text; free variables by name)",
            is_equal_to as fn(Term) -> Strategy<Term>,
        ),
        (
            "contains",
            "predicate: the program has a subterm that is PROGRAM",
            contains,
        ),
    ] {
        r.add(name, "(\"PROGRAM\")", doc, move |a| match a {
            [Value::Str(text)] => crate::parser::parse_pattern(text)
                .map(make)
                .map_err(|e| format!("argument 1 is not a RISE program: {}", e.message)),
            _ => Err("expects one RISE program as a string".into()),
        });
    }
    r.rule(
        "separableConvolution",
        "a 3x3 convolution with weights u ⊗ v becomes a vertical then a horizontal 1-D convolution",
        separable_convolution,
    );
    r.rule(
        "packB",
        "TVM matmul: storeInMemory(isTransposedB, permuteB ;; vectorize ;; parallel) @ inLambda",
        pack_b,
    );
    r.rule(
        "permuteB",
        "transpose(b) copied into 32-column blocks, read back through join(map(transpose))",
        permute_b,
    );
    r.rule(
        "isFullyAppliedMap",
        "the node is map(f)(xs)",
        is_fully_applied_map,
    );
    r.rule("isTransposedB", "the node is transpose(x)", is_transposed_b);
    r.unary(
        "inLambda",
        "s on the body below the leading lambdas",
        in_lambda,
    );
    r.add(
        "vectorize",
        "(n)",
        "map(f)(xs) -> asScalar(map(f on vectors)(asVector(n)(xs)))   (f scalar arithmetic, n divides the length)",
        |a| Ok(vectorize(int_arg(a, 0)? as i64)),
    );
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
    let lowering: [Named; 8] = [
        (
            "copyAfter",
            "e -> map(fun(x => ... fun(z => z) ...))(e): an element-wise copy of an array",
            copy_after,
        ),
        ("unroll", "reduceSeq -> reduceSeqUnroll", unroll),
        ("parallel", "map(f) -> mapPar(f)   (f computes)", parallel),
        (
            "mapSeqCompute",
            "map(f) -> mapSeq(f)   (f computes)",
            map_seq_compute,
        ),
        (
            "toMemAfterMapSeq",
            "mapSeq(f)(x) -> toMem(mapSeq(f)(x))",
            to_mem_after_map_seq,
        ),
        ("toMemAfter", "e -> toMem(e)   (e data)", to_mem_after),
        (
            "toMemInit",
            "R(op)(init)(xs) -> R(op)(toMem(init))(xs)   (array init)",
            to_mem_init,
        ),
        (
            "fuseReduceMap",
            "reduceMapFusion under its other name",
            fuse_reduce_map,
        ),
    ];
    for (name, doc, make) in lowering {
        r.rule(name, doc, make);
    }
}

/// Helpers for the rules' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::term::{Expr, Term};
    use crate::{infer, parse_term, print_term};
    use elevate_core::{Context, Strategy};

    /// `rule` applied to the body of the program `source` (a lambda), printed.
    pub(crate) fn rewrite(rule: Strategy<Term>, source: &str) -> Option<String> {
        let t = infer(&parse_term(source).unwrap()).unwrap();
        let Expr::Lambda(_, _, body) = t.expr() else {
            panic!("a program");
        };
        let r = rule.apply(body, &mut Context::default()).ok()?;
        Some(print_term(&r))
    }
}
