//! Payloads with a Transform-dialect script: the script is applied in process, what it
//! leaves lowers, and the result computes what it should.

use super::{example, limits, lowered, payload, sizes};
use elevate::bridge::{jit, Payload, Stage};
use elevate::rise::{io, Value};

const N: usize = 64;

/// `out = a * b` for 64x64 matrices: a `linalg.fill` and a `linalg.matmul` on the
/// memrefs of the function boundary, in `payload()`'s convention.
const MATMUL: &str = r#"module {
  func.func @mm(%arg0_0: memref<64x64xf32>, %arg1_0: memref<64x64xf32>, %out0: memref<64x64xf32>) attributes {llvm.emit_c_interface} {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%out0 : memref<64x64xf32>)
    linalg.matmul ins(%arg0_0, %arg1_0 : memref<64x64xf32>, memref<64x64xf32>) outs(%out0 : memref<64x64xf32>)
    return
  }
}
"#;

/// The matmul's schedule: 32-row blocks on threads, 32-column blocks, the reduction
/// split by 4, one row at a time, vectorized into outer products (FMAs on vectors of
/// 32), the transfers of `b` hoisted out of the row loop. The fill is left to the
/// lowering.
const SCHEDULE: &str = r#"module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %t1, %forall = transform.structured.tile_using_forall %mm tile_sizes [32, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t2, %l2 = transform.structured.tile_using_for %t1 tile_sizes [0, 32, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t3, %l3 = transform.structured.tile_using_for %t2 tile_sizes [0, 0, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t4, %l4 = transform.structured.tile_using_for %t3 tile_sizes [1, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %t4 : !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %f2 = transform.structured.hoist_redundant_vector_transfers %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.transfer_to_scf full_unroll = true
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
"#;

/// [`MATMUL`] with `script`: how to call it (name, parameters, result, flops) is what
/// `payload()` says for `matmul.rise` at the same sizes; the module and the script are
/// this file's.
fn matmul_payload(script: &str) -> Payload {
    let n = N as i64;
    let term = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", n), ("k", n), ("m", n)]),
        "id",
    );
    payload("mm", &term)
        .with_mlir(MATMUL)
        .with_transform(Some(script.into()))
}

/// A matrix of small exact values (their products and sums are exact in f32).
fn matrix(seed: usize) -> Vec<Vec<f32>> {
    (0..N)
        .map(|i| {
            (0..N)
                .map(|j| ((i * 7 + j * 3 + seed) % 11) as f32 - 5.0)
                .collect()
        })
        .collect()
}

/// A matrix as the interpreter's value.
fn value(m: &[Vec<f32>]) -> Value {
    Value::array(
        m.iter()
            .map(|row| Value::array(row.iter().map(|x| Value::F32(*x)).collect()))
            .collect(),
    )
}

fn product(a: &[Vec<f32>], b: &[Vec<f32>]) -> Vec<Vec<f32>> {
    (0..N)
        .map(|i| {
            (0..N)
                .map(|j| (0..N).map(|k| a[i][k] * b[k][j]).sum())
                .collect()
        })
        .collect()
}

#[test]
fn a_transform_script_tiles_and_vectorizes_a_linalg_matmul_that_then_computes_it() {
    let payload = matmul_payload(SCHEDULE);
    let scheduled = jit::transformed(&payload).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        scheduled.contains("scf.forall")
            && scheduled.contains("vector.fma")
            && !scheduled.contains("linalg.matmul")
            && scheduled.contains("linalg.fill"),
        "{scheduled}"
    );
    let compiled = jit::compile_payload(&payload, &limits()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        compiled.llvm_dialect().contains("omp.parallel"),
        "the forall runs on threads: {}",
        compiled.llvm_dialect()
    );
    let (a, b) = (matrix(0), matrix(5));
    let inputs = [value(&a), value(&b)];
    let expected = serde_json::to_value(product(&a, &b)).unwrap();
    let run = |compiled: &jit::Compiled| {
        compiled
            .run(&inputs)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_json()
            .unwrap()
    };
    let found = run(&compiled);
    assert!(io::approx_eq(&found, &expected), "{found}");
    // The same payload without the script lowers its linalg ops to plain loops.
    let plain = payload.with_transform(None);
    let compiled = jit::compile_payload(&plain, &limits()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!compiled.llvm_dialect().contains("omp."));
    assert!(io::approx_eq(&run(&compiled), &expected));
    let lowered = jit::lower_payload(&plain).unwrap();
    assert!(lowered.contains("llvm.func @mm("), "{lowered}");
}

#[test]
fn a_broken_script_is_a_transform_error_with_mlir_s_message() {
    let error = |script: &str| {
        let e = jit::compile_payload(&matmul_payload(script), &limits())
            .err()
            .expect("a broken script fails");
        assert_eq!(e.stage(), Stage::Transform, "{e}");
        e.to_string()
    };
    // The interpreter fails: a function cannot be tiled.
    let tile_the_function = SCHEDULE.replace(
        r#"tile_using_forall %mm"#,
        r#"tile_using_forall %f0"#,
    )
    .replace(
        "    %mm = transform",
        "    %f0 = transform.structured.match ops{[\"func.func\"]} in %root : (!transform.any_op) -> !transform.any_op\n    %mm = transform",
    );
    let message = error(&tile_the_function);
    assert!(
        message.starts_with("transform script error: the transform script failed")
            && message.contains("loc(\"transform\":5:20): only TilingInterface ops are supported")
            && message.contains("loc(\"payload\":2:3): note: target op"),
        "{message}"
    );
    // It does not parse.
    let message = error(&SCHEDULE.replace("tile_using_for %t1", "tile_using_fr %t1"));
    assert!(
        message.contains("does not parse") && message.contains("tile_using_fr"),
        "{message}"
    );
    // It does not verify: MLIR's message, without the operation printed in full.
    let message = error(&SCHEDULE.replace("tile_sizes [0, 32, 0]", "tile_sizes [0, 32, 0, 1]"));
    assert!(
        message.contains(
            "expected number of loops to tile (2) to match number of `loops` results (1)"
        ) && !message.contains("see current operation"),
        "{message}"
    );
    // It is not a module.
    let message = error("transform.yield");
    assert!(message.contains("not one `module"), "{message}");
    // It has no entry point.
    let message = error(&SCHEDULE.replace("@__transform_main", "@main"));
    assert!(message.contains("@__transform_main"), "{message}");
    // The same errors through the other entry points.
    let e = jit::lower_payload(&matmul_payload(&tile_the_function)).unwrap_err();
    assert_eq!(e.stage(), Stage::Transform);
    let e = jit::payload_llvm_ir(&matmul_payload(&tile_the_function)).unwrap_err();
    assert_eq!(e.stage(), Stage::Transform);
}
