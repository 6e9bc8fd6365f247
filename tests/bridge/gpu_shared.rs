//! Shared memory on the GPU target: inputs a GPU kernel reads through `toShared`
//! staged a tile of the reduction at a time in each block's shared memory, copied by
//! the block's threads, with barriers.

use super::{compiled_and_interpreted, lowered, sizes};
use elevate::bridge::jit;

fn sgemm_source() -> String {
    super::example("gpu/sgemm.rise")
}

#[test]
fn the_sgemm_s_tiles_of_a_and_b_are_staged_in_shared_memory_with_barriers() {
    let term = lowered(
        &sgemm_source(),
        &sizes(&[("n", 2), ("m", 2), ("k", 4)]),
        "id",
    );
    let p = elevate::bridge::gpu_payload("f", &term, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let script = p.transform_text();
    // Blocks of 64 x 64, the reduction 16 at a time, A and B promoted into the
    // workgroup address space, their copies on the block's 16 x 16 threads, each
    // thread a 4 x 4 tile.
    for expected in [
        "static_tile_sizes = array<i64: 64, 64, 0>",
        "static_sizes = array<i64: 0, 0, 16>",
        "operands_to_promote = [0, 1]",
        "memory_space = #gpu.address_space<workgroup>",
        "static_num_threads = array<i64: 16, 16>",
        "static_tile_sizes = array<i64: 4, 4, 0>",
        "block_dims = array<i64: 16, 16, 1>",
    ] {
        assert!(script.contains(expected), "no `{expected}` in\n{script}");
    }
    let ptx = jit::payload_ptx(&p).unwrap_or_else(|e| panic!("{e}"));
    let product = ptx
        .iter()
        .find(|k| k.text.contains(".shared"))
        .unwrap_or_else(|| panic!("no kernel with shared memory: {ptx:?}"));
    // Two tiles of 64 x 16 floats, written and read by the block's threads, barriers
    // between, and the products fused multiply-adds read from shared memory.
    assert_eq!(product.text.matches(".shared .align 16 .b8").count(), 2);
    assert!(product.text.contains("[4096]"), "{}", product.text);
    for expected in ["st.shared", "ld.shared", "bar.sync", "fma.rn.f32"] {
        assert!(
            product.text.contains(expected),
            "no `{expected}` in\n{}",
            product.text
        );
    }
    // The same program on the CPU (shared memory an ordinary buffer) is the
    // interpreter's.
    let (found, expected) = compiled_and_interpreted(&term, 5);
    assert_eq!(found, expected);
}

#[test]
fn staging_needs_the_reduction_in_tiles_and_matrices() {
    // `toShared` on a kernel whose reduction is not split into tiles.
    let untiled = "def f(a: 64.32.f32, b: 32.64.f32) : 64.64.f32 =
      a |> split(16) |> mapWorkGroup(1, fun(arows =>
        transpose(b) |> split(16) |> mapWorkGroup(0, fun(bcols =>
          toShared(arows) |> mapLocal(1, fun(arow =>
            bcols |> mapLocal(0, fun(bcol =>
              zip(arow, bcol) |> reduceSeq(fun(s, p => s + fst(p) * snd(p)), 0.0)))))))
        |> transpose |> map(join)))
      |> join";
    let term = lowered(untiled, &Default::default(), "id");
    let e = elevate::bridge::gpu_payload("f", &term, &Default::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("does not split its reduction into tiles"),
        "{e}"
    );
    // On the CPU it is memory like any other.
    let (found, expected) = compiled_and_interpreted(&term, 1);
    assert_eq!(found, expected);
}
