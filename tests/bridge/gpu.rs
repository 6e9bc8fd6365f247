//! PTX from kernels a Transform script maps to GPU blocks and threads (no GPU is
//! needed to make it).

use elevate::bridge::error::Stage;
use elevate::bridge::jit;

/// `y = a * a` (elementwise) or `y = A x` (a reduction per row), `block` elements per
/// block on `threads` threads, mapped as `tile_using_forall` to blocks, then to threads,
/// then `map_forall_to_blocks` (generating the launch) and
/// `map_nested_forall_to_threads`.
fn mapped(kernel: &str, block: i64, threads: i64) -> (String, String) {
    let payload = match kernel {
        "square" => "#map = affine_map<(d0) -> (d0)>
module {
  func.func @f(%a: memref<4096xf32>, %b: memref<4096xf32>) {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = [\"parallel\"]}
        ins(%a : memref<4096xf32>) outs(%b : memref<4096xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.mulf %x, %x : f32
      linalg.yield %y : f32
    }
    return
  }
}"
        .to_string(),
        // Multiplications and additions that may contract (as the bridge emits for
        // the GPU): PTX's `mul.rn` and `add.rn` forbid fusing them otherwise.
        _ => "#a = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (j)>
#y = affine_map<(i, j) -> (i)>
module {
  func.func @f(%a: memref<1024x512xf32>, %x: memref<512xf32>, %y: memref<1024xf32>) {
    linalg.generic {indexing_maps = [#a, #x, #y], iterator_types = [\"parallel\", \"reduction\"]}
        ins(%a, %x : memref<1024x512xf32>, memref<512xf32>) outs(%y : memref<1024xf32>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %p = arith.mulf %u, %v fastmath<contract> : f32
      %s = arith.addf %acc, %p fastmath<contract> : f32
      linalg.yield %s : f32
    }
    return
  }
}"
        .to_string(),
    };
    let op = "linalg.generic";
    let sizes = if kernel == "square" { "" } else { ", 0" };
    let script = format!(
        "module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %k = transform.structured.match ops{{[\"{op}\"]}} in %root : (!transform.any_op) -> !transform.any_op
    %b, %fb = transform.structured.tile_using_forall %k tile_sizes [{block}{sizes}] (mapping = [#gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %ft = transform.structured.tile_using_forall %b tile_sizes [1{sizes}] (mapping = [#gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f = transform.structured.match ops{{[\"func.func\"]}} in %root : (!transform.any_op) -> !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %f {{ generate_gpu_launch }} : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [{threads}, 1, 1] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }}
}}"
    );
    (payload, script)
}

#[test]
fn an_elementwise_kernel_mapped_to_blocks_and_threads_is_ptx_for_sm_90() {
    let (payload, script) = mapped("square", 256, 256);
    let kernels = jit::ptx(&payload, Some(&script)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kernels.len(), 1, "{kernels:?}");
    let ptx = &kernels[0].text;
    for expected in [
        ".target sm_90",
        ".visible .entry",
        "%ctaid.x",
        "%tid.x",
        "ld.global",
        "st.global",
        "mul.rn.f32",
        ".maxntid 256, 1, 1",
    ] {
        assert!(ptx.contains(expected), "no `{expected}` in\n{ptx}");
    }
}

#[test]
fn a_reduction_per_thread_is_a_loop_of_fused_multiply_adds() {
    let (payload, script) = mapped("matvec", 128, 128);
    let kernels = jit::ptx(&payload, Some(&script)).unwrap_or_else(|e| panic!("{e}"));
    let ptx = &kernels[0].text;
    assert!(ptx.contains("fma.rn.f32"), "{ptx}");
    assert!(ptx.contains("bra"), "the reduction is a loop: {ptx}");
}

#[test]
fn a_mapping_that_does_not_fit_its_block_is_a_transform_error() {
    // 256 iterations per block on 8 threads.
    let (payload, script) = mapped("square", 256, 8);
    let e = jit::ptx(&payload, Some(&script)).unwrap_err();
    assert_eq!(e.stage(), Stage::Transform, "{e}");
}
