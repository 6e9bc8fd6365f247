//! The analytical model: it ranks the matmul strategies as they measure, and each of
//! its effects (parallel loops, vectors, register tiles, caches) moves estimates the
//! way it moves run times.

use super::loop_nests::{lowered, MATMUL};
use crate::search::model::{estimate, Machine};
use crate::search::ModelCost;
use crate::Program;
use elevate_strategies::search::{Cost, Status};

fn ms(source: &str, nats: &[(&str, i64)], strategy: &str) -> f64 {
    estimate(&lowered(source, nats, strategy), &Machine::default())
        .unwrap()
        .ms
}

const SEVEN: [&str; 7] = [
    "baseline",
    "blocking",
    "vectorization",
    "loopPerm",
    "arrayPacking",
    "cacheBlocks",
    "par",
];

/// The seven strategies' estimates for the `n`-cubed matmul, in [`SEVEN`]'s order.
fn seven(n: i64) -> Vec<f64> {
    SEVEN
        .iter()
        .map(|s| ms(MATMUL, &[("n", n), ("m", n), ("k", n)], s))
        .collect()
}

#[test]
fn the_matmul_strategies_rank_as_they_measure() {
    // Measured at 1024 on the development machine (README): baseline 4.6 s,
    // blocking 80 ms, vectorization 71, loopPerm 20, arrayPacking 20, cacheBlocks
    // 18.5, par 10.3 (two threads).
    let e = seven(1024);
    let [baseline, blocking, vectorization, loop_perm, array_packing, cache_blocks, par] = e[..]
    else {
        unreachable!()
    };
    assert!(baseline > 10.0 * blocking, "{e:?}");
    assert!(blocking > loop_perm && vectorization > loop_perm, "{e:?}");
    assert!(vectorization <= blocking, "{e:?}");
    assert!(
        cache_blocks < loop_perm && cache_blocks < array_packing,
        "{e:?}"
    );
    assert!(par < 0.7 * cache_blocks, "{e:?}");
    // Close in time, as measured: within a third of each other.
    assert!((loop_perm / array_packing - 1.0).abs() < 0.33, "{e:?}");
    // And the same order at 256, where everything fits in L2.
    let e = seven(256);
    assert!(
        e[0] > e[1] && e[1] > e[3] && e[2] > e[3] && e[3] > e[6],
        "{e:?}"
    );
}

#[test]
fn the_flops_are_the_program_s() {
    let low = lowered(MATMUL, &[("n", 128), ("m", 64), ("k", 32)], "par");
    let e = estimate(&low, &Machine::default()).unwrap();
    assert_eq!(e.ops, 2.0 * 128.0 * 64.0 * 32.0);
}

#[test]
fn a_parallel_loop_divides_compute_bound_work_by_the_cores() {
    // Enough arithmetic per element that memory does not bound it.
    let source =
        "def f(x: 4096.64.f32) = x |> map(fun(row => row |> map(fun(v => exp(exp(exp(v)))))))";
    let seq = ms(source, &[], "DFNF");
    let par = ms(source, &[], "DFNF ; parallel @ outermost(isApplied(isMap))");
    let machine = Machine::default();
    let speedup = seq / par;
    assert!(
        speedup > 0.8 * f64::from(machine.cores) && speedup <= f64::from(machine.cores) * 1.01,
        "{seq} / {par}"
    );
    let more = Machine {
        cores: 8,
        ..machine
    };
    let low = lowered(source, &[], "DFNF ; parallel @ outermost(isApplied(isMap))");
    assert!(estimate(&low, &more).unwrap().ms < 0.5 * par);
    // A parallel loop of two iterations keeps two cores busy, however many there are.
    let two = "def f(x: 2.65536.f32) = x |> map(fun(row => row |> map(fun(v => exp(exp(v))))))";
    let low = lowered(two, &[], "DFNF ; parallel @ outermost(isApplied(isMap))");
    let on8 = estimate(&low, &more).unwrap().ms;
    let on2 = estimate(&low, &machine).unwrap().ms;
    assert!((on8 / on2 - 1.0).abs() < 0.01, "{on8} {on2}");
}

#[test]
fn starting_a_parallel_loop_costs_time_so_inner_parallel_loops_cost_more() {
    let source = "def f(x: 1024.64.f32) = x |> map(fun(row => row |> map(fun(v => v * 2.0))))";
    let outer = ms(source, &[], "DFNF ; parallel @ outermost(isApplied(isMap))");
    let inner = ms(source, &[], "DFNF ; parallel @ innermost(isApplied(isMap))");
    assert!(inner > 10.0 * outer, "{inner} {outer}");
}

#[test]
fn vectors_divide_the_arithmetic_by_their_lanes() {
    let source =
        "def f(x: 1024.1024.f32) = x |> map(fun(row => row |> map(fun(v => exp(exp(v))))))";
    let scalar = lowered(source, &[], "DFNF");
    let vector = lowered(
        source,
        &[],
        "DFNF ; vectorize(16) @ outermost(isApplied(isApplied(isMap)))",
    );
    let plain = Machine {
        auto_vectorize: false,
        ..Machine::default()
    };
    let (s, v) = (
        estimate(&scalar, &plain).unwrap(),
        estimate(&vector, &plain).unwrap(),
    );
    assert_eq!(s.ops, v.ops);
    let compute =
        |e: &crate::search::model::Estimate| e.nests.iter().map(|n| n.compute).sum::<f64>();
    assert_eq!(compute(&s), 16.0 * compute(&v));
    assert!(v.ms < s.ms / 8.0, "{} {}", v.ms, s.ms);
    // A compiler that vectorizes the inner loop by itself does as well.
    let auto = Machine::default();
    let a = estimate(&scalar, &auto).unwrap();
    assert_eq!(compute(&a), compute(&v));
}

#[test]
fn register_tiles_keep_accumulators_out_of_memory() {
    // par's inner reduction accumulates a row of 32 lanes in registers; blocking's
    // accumulates a 32x32 block in memory.
    for (strategy, in_registers) in [("par", true), ("loopPerm", true), ("blocking", false)] {
        let low = lowered(MATMUL, &[("n", 64), ("m", 64), ("k", 64)], strategy);
        let e = estimate(&low, &Machine::default()).unwrap();
        let latency: f64 = e.nests.iter().map(|n| n.latency).sum();
        assert_eq!(latency > 0.0, in_registers, "{strategy}: {e:?}");
    }
}

#[test]
fn a_cache_size_moves_the_estimate_of_a_program_that_does_not_fit() {
    let low = lowered(MATMUL, &[("n", 512), ("m", 512), ("k", 512)], "baseline");
    let small = Machine::default();
    let mut big = small;
    big.caches[0].bytes = 4.0 * 1024.0 * 1024.0;
    assert!(
        estimate(&low, &big).unwrap().ms < estimate(&low, &small).unwrap().ms,
        "a column of b fits in an L1 of 4 MB"
    );
}

#[test]
fn the_model_cost_lowers_first_and_rejects_what_it_cannot_read() {
    let high = Program::load(MATMUL, None).unwrap();
    let mut env = crate::NatEnv::default();
    for n in ["n", "m", "k"] {
        env.insert(crate::nat::NatVar::Named(n.into()), 32);
    }
    let term = high.instantiate(&env).unwrap();
    let m = ModelCost::default().evaluate(&term).unwrap();
    assert_eq!(m.model, Some(m.cost));
    assert_eq!(m.cost, ms(MATMUL, &[("n", 32), ("m", 32), ("k", 32)], "id"));
    let symbolic = ModelCost::default()
        .evaluate(&high.entry().term)
        .unwrap_err();
    assert_eq!(symbolic.status, Status::CompileFailed);
    assert!(symbolic.reason.contains("concrete"), "{symbolic}");
    assert_eq!(ModelCost::default().name(), "model");
}

#[test]
fn vectors_of_windows_two_elements_apart_cost_more_than_scalar_loads() {
    // Max pooling at stride 2: vectors of neighbouring windows read each tap two
    // elements apart, a gather (a load and an insert per lane), which measured slower
    // than the scalar loops with the taps unrolled; the model ranks them so.
    let pool = "def f(x: 16.113.113.f32) =
      x |> map(fun(ch => ch |> map(slide(3, 2)) |> slide(3, 2) |> map(transpose)
        |> map(map(fun(nbh => join(nbh) |> reduce(max, -1000.0))))))";
    let scalar = ms(
        pool,
        &[],
        "DFNF ; try(fuseReduceMap @ topDown) ; (unroll <+ reduceSeqUnroll) @ innermost(isReduceSeq <+ isReduce)",
    );
    let gathers = ms(
        pool,
        &[],
        "DFNF ; try(fuseReduceMap @ topDown) ; tileNDList([4, 4, 8]) @ outermost(mapNest(3)) ;; reorder([1, 2, 3, 4, 5, 7, 6]) ;; (unroll <+ reduceSeqUnroll) @ innermost(isReduceSeq <+ isReduce) ;; vectorize(8) @ innermost(isFullyAppliedMap)",
    );
    assert!(scalar < gathers, "scalar {scalar} ms, gathers {gathers} ms");
}
