//! The trace: loops, work and accesses of low-level programs.

use crate::search::loop_trace::{trace, Access, LoopKind, Role, Trace, TraceError};
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

fn accesses(t: &Trace, role: Role, write: bool) -> Vec<&Access> {
    t.accesses
        .iter()
        .filter(|a| t.buffers[a.buffer].role == role && a.write == write)
        .collect()
}

#[test]
fn the_matmul_baseline_reads_a_row_of_a_and_a_column_of_b() {
    let (n, m, k) = (8, 16, 32);
    let low = lowered(MATMUL, &[("n", n), ("m", m), ("k", k)], "baseline");
    let t = trace(&low).unwrap();
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
    let t = trace(&lowered(source, &[], "id")).unwrap();
    assert_eq!(t.loops.len(), 2, "no copy for the rearranged result");
    let out = accesses(&t, Role::Output, true);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].stride(0), out[0].stride(1)), (8, 1));
}

#[test]
fn vectors_are_loads_of_lanes_in_a_row_and_transposed_lanes_are_gathered() {
    let source = "def f(x: 64.f32) = x |> asVector(8) |> mapSeq(fun(v => v * v)) |> asScalar";
    let t = trace(&lowered(source, &[], "id")).unwrap();
    let read = accesses(&t, Role::Input, false);
    assert_eq!(
        (read[0].lanes, read[0].lane_stride, read[0].stride(0)),
        (8, 1, 8)
    );
    assert_eq!(t.loops[0].trips, 8);
    assert_eq!((t.loops[0].work.vector, t.loops[0].work.lanes), (1.0, 8));
    assert_eq!(t.ops(), 64.0);
    let source = "def f(x: 8.8.f32) = x |> transpose |> mapSeq(fun(col => col |> asVector(8) |> mapSeq(fun(v => v + v)) |> asScalar))";
    let t = trace(&lowered(source, &[], "id")).unwrap();
    let read = accesses(&t, Role::Input, false);
    assert_eq!((read[0].lanes, read[0].lane_stride), (8, 8));
}

#[test]
fn a_padded_stencil_reads_its_neighbours_one_element_apart() {
    let source = "def f(x: 1024.f32) = x |> padCst(1, 1, 0.0) |> slide(3, 1) |> map(fun(w => w |> reduce(add, 0.0)))";
    let t = trace(&lowered(source, &[], "DFNF")).unwrap();
    let reads = accesses(&t, Role::Input, false);
    assert_eq!(reads.len(), 1, "{reads:?}");
    // One step of the outer loop moves one element, as does one of the window's:
    // the inside of the padded array, not its border, where the index is clamped.
    assert_eq!((reads[0].stride(0), reads[0].stride(1)), (1, 1));
    // Reading the window runs as a reduction over three elements.
    assert!(t
        .loops
        .iter()
        .any(|l| l.kind == LoopKind::Reduce && l.trips == 3));
}

#[test]
fn reductions_keep_scalar_accumulators_in_registers_and_arrays_in_memory() {
    let t = trace(&lowered(
        MATMUL,
        &[("n", 64), ("m", 64), ("k", 64)],
        "blocking",
    ))
    .unwrap();
    use crate::search::loop_trace::Accumulator;
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
    let t = trace(&lowered(
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
    let t = trace(&lowered(source, &[], "id"));
    assert!(matches!(t, Err(TraceError::Unsupported(ref m)) if m.contains("mapGlobal")));
    // Symbolic sizes.
    let program = Program::load(MATMUL, None).unwrap();
    assert!(matches!(
        trace(&program.entry().term),
        Err(TraceError::Unsupported(_))
    ));
}

#[test]
fn a_pipeline_of_100000_loops_has_a_trace() {
    let stages = 100_000;
    let source = format!(
        "def f(x: 4.f32) = x{}",
        " |> mapSeq(fun(v => v + 1.0))".repeat(stages)
    );
    let program = Program::load(&source, None).unwrap_or_else(|e| panic!("{e}"));
    match trace(&program.entry().term) {
        Ok(t) => {
            assert_eq!(t.loops.len(), stages);
            assert_eq!(t.ops(), (4 * stages) as f64);
        }
        Err(e) => assert!(matches!(e, TraceError::TooLarge(_)), "{e}"),
    }
}

#[test]
fn explicit_loops_allocate_inside_loops_and_copy_where_the_structured_translation_does_not() {
    use crate::search::loop_trace::{trace_as, Translation};
    use crate::search::model::{estimate_trace, Machine};
    let low = lowered(MATMUL, &[("n", 64), ("m", 64), ("k", 64)], "blocking");
    let structured = trace_as(&low, Translation::Structured).unwrap();
    let loops = trace_as(&low, Translation::Loops).unwrap();
    assert!(structured.buffers.iter().all(|b| b.allocated_in.is_none()));
    // The accumulator block, computed into a buffer of its own at each step.
    assert!(loops.buffers.iter().any(|b| b
        .allocated_in
        .is_some_and(|l| loops.loops[l as usize].kind.reduction())));
    let copies = |t: &Trace| t.loops.iter().filter(|l| l.kind == LoopKind::Copy).count();
    assert!(copies(&loops) > copies(&structured));
    // The same arithmetic either way; more time for the copies and allocations.
    assert_eq!(loops.ops(), structured.ops());
    let m = Machine::default();
    let (s, l) = (estimate_trace(&structured, &m), estimate_trace(&loops, &m));
    assert!(l.nests.iter().map(|n| n.allocation).sum::<f64>() > 0.0);
    assert!(l.ms > s.ms, "{} {}", l.ms, s.ms);
}
