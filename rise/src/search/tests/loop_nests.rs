//! The loop nests: loops, work and accesses of low-level programs, from their loop
//! programs.

use crate::search::loop_nests::{loop_nests, Access, LoopKind, Nests, NestsError, Role};
use crate::{registry, NatEnv, Program, Term};
use elevate_core::Context;

/// The entry point of `source` at the sizes `nats`, rewritten by `strategy` and
/// `defaultLowering`.
pub(super) fn lowered(source: &str, nats: &[(&str, i64)], strategy: &str) -> Term {
    let program = Program::load(source, None).unwrap_or_else(|e| panic!("{e}"));
    let mut env = NatEnv::default();
    for (n, v) in nats {
        env.insert(crate::nat::NatVar::Named((*n).into()), *v);
    }
    let term = program.instantiate(&env).unwrap();
    let s = registry()
        .parse(&format!("{strategy} ; defaultLowering"))
        .unwrap_or_else(|e| panic!("{strategy}: {}", e.message));
    s.apply(&term, &mut Context::default())
        .unwrap_or_else(|f| panic!("{strategy}: {f}"))
}

pub(super) const MATMUL: &str = include_str!("../../../../examples/rise/matmul.rise");

fn accesses(t: &Nests, role: Role, write: bool) -> Vec<&Access> {
    t.accesses
        .iter()
        .filter(|a| t.buffers[a.buffer].role == role && a.write == write)
        .collect()
}

#[test]
fn the_matmul_baseline_reads_a_row_of_a_and_a_column_of_b() {
    let (n, m, k) = (8, 16, 32);
    let low = lowered(MATMUL, &[("n", n), ("m", m), ("k", k)], "baseline");
    let t = loop_nests(&low).unwrap();
    let kinds: Vec<(i64, LoopKind)> = t.loops.iter().map(|l| (l.trips, l.kind)).collect();
    assert_eq!(
        kinds,
        [
            (n, LoopKind::Seq),
            (m, LoopKind::Seq),
            (k, LoopKind::Reduce)
        ]
    );
    assert_eq!(t.ops(), (2 * n * m * k) as f64);
    let (i, j, r) = (0, 1, 2);
    let inputs = accesses(&t, Role::Input, false);
    assert_eq!(inputs.len(), 2);
    let a = inputs.iter().find(|a| a.stride(i) != 0).unwrap();
    let b = inputs.iter().find(|a| a.stride(j) != 0).unwrap();
    assert_eq!((a.stride(i), a.stride(j), a.stride(r)), (k, 0, 1));
    assert_eq!((b.stride(i), b.stride(j), b.stride(r)), (0, 1, m));
    // The result is written once per (i, j), in place: no copy.
    let out = accesses(&t, Role::Output, true);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].stride(i), out[0].stride(j)), (m, 1));
    assert!(t.loops.iter().all(|l| l.kind != LoopKind::Copy));
}

#[test]
fn nested_loops_write_their_part_of_the_outer_result() {
    let source = "def f(x: 4.8.f32) = x |> mapSeq(mapSeq(fun(v => v * 2.0))) |> transpose |> join";
    let t = loop_nests(&lowered(source, &[], "id")).unwrap();
    assert_eq!(t.loops.len(), 2, "no copy for the rearranged result");
    let out = accesses(&t, Role::Output, true);
    assert_eq!(out.len(), 1);
    // Each element is written where the transposed result has it: `out[4 j + i]`.
    assert_eq!((out[0].stride(0), out[0].stride(1)), (1, 4));
}

#[test]
fn vectors_are_loads_of_lanes_in_a_row_and_transposed_lanes_are_gathered() {
    let source = "def f(x: 64.f32) = x |> asVector(8) |> mapSeq(fun(v => v * v)) |> asScalar";
    let t = loop_nests(&lowered(source, &[], "id")).unwrap();
    let read = accesses(&t, Role::Input, false);
    assert_eq!(
        (read[0].lanes, read[0].lane_stride, read[0].stride(0)),
        (8, 1, 8)
    );
    assert_eq!(t.loops[0].trips, 8);
    assert_eq!((t.loops[0].work.vector, t.loops[0].work.lanes), (1.0, 8));
    assert_eq!(t.ops(), 64.0);
    let source = "def f(x: 8.8.f32) = x |> transpose |> mapSeq(fun(col => col |> asVector(8) |> mapSeq(fun(v => v + v)) |> asScalar))";
    let t = loop_nests(&lowered(source, &[], "id")).unwrap();
    let read = accesses(&t, Role::Input, false);
    assert_eq!((read[0].lanes, read[0].lane_stride), (8, 8));
}

#[test]
fn a_padded_stencil_reads_its_neighbours_one_element_apart() {
    let source = "def f(x: 1024.f32) = x |> padCst(1, 1, 0.0) |> slide(3, 1) |> map(fun(w => w |> reduce(add, 0.0)))";
    let t = loop_nests(&lowered(source, &[], "DFNF")).unwrap();
    // The padded copy (a fill and a copy of the inside), then the stencil: its three
    // taps unrolled in the body, each moving one element per step.
    let stencil = t.loops.len() as u32 - 1;
    let taps: Vec<&Access> = t
        .accesses
        .iter()
        .filter(|a| a.owner == Some(stencil) && !a.write)
        .collect();
    assert_eq!(taps.len(), 3, "{taps:?}");
    assert!(taps.iter().all(|a| a.stride(stencil) == 1), "{taps:?}");
    let mut offsets: Vec<i64> = taps.iter().map(|a| a.offset).collect();
    offsets.sort();
    assert_eq!(
        offsets,
        [0, 0, 2],
        "the padded copy's first and third, x's own"
    );
    assert_eq!(t.ops(), 3.0 * 1024.0);
}

#[test]
fn reductions_keep_scalar_accumulators_in_registers_and_arrays_in_memory() {
    let t = loop_nests(&lowered(
        MATMUL,
        &[("n", 64), ("m", 64), ("k", 64)],
        "blocking",
    ))
    .unwrap();
    use crate::search::loop_nests::Accumulator;
    let arrays = t
        .loops
        .iter()
        .filter(|l| {
            matches!(
                l.accumulator,
                Some(Accumulator::Buffer { elements: 1024, .. })
            )
        })
        .count();
    assert_eq!(arrays, 2, "the 32x32 blocks of the two reductions");
    let t = loop_nests(&lowered(
        MATMUL,
        &[("n", 64), ("m", 64), ("k", 64)],
        "baseline",
    ))
    .unwrap();
    assert!(matches!(
        t.loops[2].accumulator,
        Some(Accumulator::Register(1))
    ));
}

#[test]
fn what_has_no_cpu_loop_is_an_error_not_a_panic() {
    let source = "def f(x: 64.f32) = x |> mapGlobal(0)(fun(v => v * 2.0))";
    let t = loop_nests(&lowered(source, &[], "id"));
    assert!(matches!(t, Err(NestsError::Unsupported(ref m)) if m.contains("mapGlobal")));
    // Symbolic sizes.
    let program = Program::load(MATMUL, None).unwrap();
    assert!(matches!(
        loop_nests(&program.entry().term),
        Err(NestsError::Unsupported(_))
    ));
}

#[test]
fn a_pipeline_of_100000_loops_has_loop_nests_or_says_why_not() {
    let stages = 100_000;
    let source = format!(
        "def f(x: 4.f32) = x{}",
        " |> mapSeq(fun(v => v + 1.0))".repeat(stages)
    );
    let program = Program::load(&source, None).unwrap_or_else(|e| panic!("{e}"));
    match loop_nests(&program.entry().term) {
        Ok(t) => {
            assert_eq!(t.loops.len(), stages);
            assert_eq!(t.ops(), (4 * stages) as f64);
        }
        Err(e) => assert!(matches!(e, NestsError::Unsupported(_)), "{e}"),
    }
}
