//! The loop-nest features an agent sees.

use super::loop_nests::{lowered, MATMUL};
use crate::search::features::{LoopNests, DEPTH, NESTS, PER_NEST};
use crate::Program;
use elevate_strategies::search::Features;

const SIZES: [(&str, i64); 3] = [("n", 64), ("m", 64), ("k", 64)];

/// The numbers of the first nest's loop at `depth`: log2 trips and kind.
fn nest_loop(f: &[f64], depth: usize) -> (f64, f64) {
    (f[1 + depth * 2], f[1 + depth * 2 + 1])
}

#[test]
fn the_naive_matmul_is_one_nest_three_loops_deep() {
    let features = LoopNests::default();
    let f = features.describe(&lowered(MATMUL, &SIZES, "id"));
    assert_eq!(f.len(), features.len());
    assert_eq!(f.len(), 1 + NESTS * PER_NEST);
    assert_eq!(f[0], 1.0, "one nest");
    assert_eq!(nest_loop(&f, 0), (6.0, 1.0));
    assert_eq!(nest_loop(&f, 1), (6.0, 1.0));
    // Innermost, the reduction, the products computed in it.
    assert_eq!(nest_loop(&f, 2), (6.0, 4.0));
    assert_eq!(nest_loop(&f, 3), (0.0, 0.0), "no fourth loop");
    let flops = 2.0 * 64f64.powi(3);
    assert!(
        (f[1 + DEPTH * 2 + 5] - (1.0 + flops).log10()).abs() < 0.01,
        "{f:?}"
    );
    let (lanes, read, written) = (1 + DEPTH * 2, 3 + DEPTH * 2, 4 + DEPTH * 2);
    assert_eq!(f[lanes], 1.0);
    // a and b, and the row of products the naive reduction reads.
    assert!(
        f[read] >= (1.0 + 2.0 * 64.0 * 64.0 * 4.0f64).log2(),
        "{f:?}"
    );
    assert!(f[read] < (2.0 * 2.0 * 64.0 * 64.0 * 4.0f64).log2(), "{f:?}");
    assert!(f[written] >= (1.0 + 64.0 * 64.0 * 4.0f64).log2(), "c");
    assert!(f[1 + PER_NEST..].iter().all(|x| *x == 0.0), "no other nest");
}

#[test]
fn tiling_parallel_loops_and_vectors_show_in_the_features() {
    let features = LoopNests::default();
    let naive = features.describe(&lowered(MATMUL, &SIZES, "id"));
    let par = features.describe(&lowered(MATMUL, &SIZES, "par"));
    assert_ne!(naive, par);
    let (lanes, parallel) = (1 + DEPTH * 2, 2 + DEPTH * 2);
    assert_eq!(naive[parallel], 0.0);
    assert!(par[parallel] >= 1.0, "{par:?}");
    assert!(par[lanes] > 1.0, "{par:?}");
    let depth = |f: &[f64]| (0..DEPTH).filter(|d| nest_loop(f, *d).1 > 0.0).count();
    assert!(depth(&par) > depth(&naive));
}

#[test]
fn a_program_without_loops_has_no_nests_and_features_are_remembered() {
    let features = LoopNests::default();
    let scalar = Program::load("def f(x: f32) = x * 2.0", None).unwrap();
    let described = features.describe(&scalar.entry().term);
    assert_eq!(described.len(), features.len());
    assert_eq!(described[0], 0.0, "no loops");
    let again = features.describe(&scalar.entry().term);
    assert_eq!(described, again);
}
