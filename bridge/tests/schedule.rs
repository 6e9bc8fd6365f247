//! The Transform script carries the schedule the low-level program encodes: tile
//! sizes from its splits, `scf.forall` from `mapPar`, vector widths from `asVector`,
//! unroll factors from the `*Unroll` primitives; the payload is `linalg`. (That these
//! programs compute what the interpreter computes is checked, with MLIR, by the root
//! package's `tests/bridge/scheduled.rs`.)

mod common;

use common::{example, lowered, printed_payload as payload, sizes};

const SCALE: &str = "def f(x: 64.64.f32) = x |> map(map(fun(v => v * 2.0)))";

fn script(source: &str, nats: &[(&str, i64)], strategy: &str) -> (String, String) {
    let term = lowered(source, &sizes(nats), strategy);
    let p = payload("f", &term);
    let script = p.transform().expect("a script");
    (p.mlir().to_string(), script.to_string())
}

#[test]
fn tile_sizes_are_the_program_s_splits() {
    for (x, y) in [(16, 8), (32, 4)] {
        let (mlir, script) = script(SCALE, &[], &format!("DFNF ; body(tile({x}, {y}))"));
        assert!(mlir.contains("linalg.generic"), "{mlir}");
        // Rows in blocks of x, columns in blocks of y, then each block's rows and columns.
        let tiles: Vec<&str> = script
            .lines()
            .filter(|l| l.contains("tile_using_for"))
            .collect();
        assert_eq!(tiles.len(), 4, "{script}");
        for (line, sizes) in tiles.iter().zip([
            format!("[{x}, 0]"),
            format!("[0, {y}]"),
            "[1, 0]".into(),
            "[0, 1]".into(),
        ]) {
            assert!(line.contains(&format!("tile_sizes {sizes}")), "{line}");
        }
    }
}

#[test]
fn map_par_is_a_forall_vectors_keep_their_width_and_unrolled_maps_unroll() {
    for (width, vectors) in [(8, 8), (16, 4)] {
        let source = format!(
            "def f(x: 64.64.f32) = x |> mapPar(fun(r => r |> asVector({width}) |> mapSeqUnroll(fun(v => v * vectorFromScalar(2.0))) |> asScalar))"
        );
        let (_, script) = script(&source, &[], "id");
        assert!(
            script
                .lines()
                .any(|l| l.contains("tile_using_forall") && l.contains("tile_sizes [1, 0]")),
            "{script}"
        );
        assert!(
            script.contains(&format!("tile_sizes [0, {width}]")),
            "{script}"
        );
        assert!(
            script.contains(&format!("vector_sizes [1, {width}]")),
            "{script}"
        );
        assert!(
            script.contains(&format!("{{factor = {vectors} : i64}} : !transform.any_op")),
            "{script}"
        );
    }
}

#[test]
fn the_matmul_strategies_scripts_are_their_schedules() {
    let nats = [("n", 64), ("m", 64), ("k", 64)];
    // baseline: the named op, one loop per dimension, nothing else.
    let (mlir, base) = script(&example("matmul.rise"), &nats, "baseline");
    assert!(mlir.contains("linalg.matmul"), "{mlir}");
    assert_eq!(base.matches("tile_using_for").count(), 3, "{base}");
    assert!(
        !base.contains("vectorize") && !base.contains("forall"),
        "{base}"
    );
    // par: the packed B is a kernel of its own (its layout the packing), the outer
    // rows parallel in blocks of 32, columns in blocks of 32 accumulated in a promoted
    // block, the reduction in steps of 4 unrolled into the vector operation whose
    // width is the 32 columns.
    let (mlir, par) = script(&example("matmul.rise"), &nats, "par");
    assert!(mlir.contains("memref<2x64x32xf32>"), "{mlir}");
    assert_eq!(mlir.matches("linalg.generic").count(), 2, "{mlir}");
    assert!(
        par.lines()
            .any(|l| l.contains("tile_using_forall") && l.contains("tile_sizes [32, 0, 0, 0]")),
        "{par}"
    );
    assert!(par.contains("transform.structured.promote"), "{par}");
    assert!(par.contains("tile_sizes [0, 0, 4, 0]"), "{par}");
    assert!(par.contains("vector_sizes [1, 1, 4, 32]"), "{par}");
}

#[test]
fn a_body_of_a_thousand_operations_is_scheduled_as_any() {
    let long = format!(
        "def f(x: 2048.f32) = x |> asVectorAligned(8) |> mapSeq(fun(v => v * vectorFromScalar(2.0){})) |> asScalar",
        " + vectorFromScalar(0.0)".repeat(1001)
    );
    let (mlir, script) = script(&long, &[], "id");
    assert_eq!(mlir.matches("arith.addf").count(), 1001, "{mlir}");
    assert!(
        script.contains("transform.structured.vectorize"),
        "{script}"
    );
}

#[test]
fn a_result_of_pairs_is_structured_a_kernel_per_component() {
    let term = lowered(
        "def f(x: 8.f32) = x |> mapSeq(fun(v => makePair(v, v * 2.0)))",
        &sizes(&[]),
        "id",
    );
    let p = payload("f", &term);
    assert_eq!(p.kernels, 2);
    assert!(
        p.mlir().contains("outs(%arg1") && p.mlir().contains("outs(%arg2"),
        "{}",
        p.mlir()
    );
}

#[test]
fn the_output_tile_is_promoted_only_once_the_output_is_tiled() {
    // At 32, blocking's 32 x 32 blocks are the whole output: nothing to promote (the
    // script promoted the untiled operation, which failed). At 64, the block is
    // promoted inside the loops over blocks.
    let nats = [("n", 32), ("m", 32), ("k", 32)];
    let (_, at_32) = script(&example("matmul.rise"), &nats, "blocking");
    assert!(!at_32.contains("promote"), "{at_32}");
    let nats = [("n", 64), ("m", 64), ("k", 64)];
    let (_, at_64) = script(&example("matmul.rise"), &nats, "blocking");
    let promote = at_64.find("promote").expect("a promoted block");
    assert!(
        at_64[..promote].contains("tile_sizes [32, 0, 0]"),
        "{at_64}"
    );
}

#[test]
fn a_map_unrolled_more_than_1024_times_is_a_plain_loop_of_its_kernel() {
    // Unrolled 16 times: the rows on threads, each row's loop unrolled. Unrolled 2048
    // times: the same kernel, on threads, its row loop kept (the code would only grow).
    for (width, unrolled) in [(16, true), (2048, false)] {
        let (mlir, script) = script(
            &format!("def f(x: 4.{width}.f32) = x |> mapPar(fun(r => r |> mapSeqUnroll(fun(v => v * 2.0))))"),
            &[],
            "id",
        );
        assert!(mlir.contains("linalg.generic"), "{mlir}");
        assert!(script.contains("tile_using_forall"), "{script}");
        assert_eq!(
            script.contains("transform.loop.unroll"),
            unrolled,
            "{script}"
        );
    }
}
