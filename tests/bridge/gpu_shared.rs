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

/// A product whose reduction is not split: `rows` rows of A (of `k` columns) per
/// block, staged whole.
fn untiled(k: usize, rows: usize) -> String {
    format!(
        "def f(a: 64.{k}.f32, b: {k}.64.f32) : 64.64.f32 =
      a |> split({rows}) |> mapWorkGroup(1, fun(arows =>
        transpose(b) |> split(16) |> mapWorkGroup(0, fun(bcols =>
          toShared(arows) |> mapLocal(1, fun(arow =>
            bcols |> mapLocal(0, fun(bcol =>
              zip(arow, bcol) |> reduceSeq(fun(s, p => s + fst(p) * snd(p)), 0.0)))))))
        |> transpose |> map(join)))
      |> join"
    )
}

#[test]
fn without_tiles_of_the_reduction_a_block_stages_all_it_reads_if_it_fits() {
    // 16 rows of 32 floats: 2 KiB of shared memory, once per block.
    let term = lowered(&untiled(32, 16), &Default::default(), "id");
    let p = elevate::bridge::gpu_payload("f", &term, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !p.transform_text().contains("tile_using_for "),
        "{}",
        p.transform_text()
    );
    let ptx = jit::payload_ptx(&p).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        ptx.iter().any(|k| k
            .text
            .contains(".shared .align 16 .b8 __elevate_shared_0[2048]")),
        "{ptx:?}"
    );
    let (found, expected) = compiled_and_interpreted(&term, 1);
    assert_eq!(found, expected);
    // 64 rows of 4096 floats (1 MiB) do not fit a block's 48 KiB.
    let term = lowered(&untiled(4096, 64), &Default::default(), "id");
    let e = elevate::bridge::gpu_payload("f", &term, &Default::default()).unwrap_err();
    assert!(
        e.to_string().contains(
            "stages 1048576 bytes in each block's shared memory, more than a block has (49152)"
        ),
        "{e}"
    );
}

#[test]
fn the_blur_stages_its_tile_and_halo_once_and_reads_its_taps_from_shared_memory() {
    let term = lowered(
        &super::example("gpu/blur.rise"),
        &sizes(&[("h", 2), ("w", 3)]),
        "id",
    );
    let p = elevate::bridge::gpu_payload("f", &term, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let ptx = jit::payload_ptx(&p).unwrap_or_else(|e| panic!("{e}"));
    let blur = ptx
        .iter()
        .find(|k| k.text.contains(".shared"))
        .unwrap_or_else(|| panic!("no kernel with shared memory: {ptx:?}"));
    // 18 x 18 pixels of 4 bytes; each thread's nine taps read from shared memory.
    assert!(
        blur.text.contains("__elevate_shared_0[1296]"),
        "{}",
        blur.text
    );
    assert_eq!(blur.text.matches("ld.shared").count(), 9, "{}", blur.text);
    assert!(blur.text.contains("bar.sync"), "{}", blur.text);
    let (found, expected) = compiled_and_interpreted(&term, 2);
    assert_eq!(found, expected);
}

#[test]
fn the_library_s_sgemm_strategy_makes_the_staged_kernel_from_the_matmul_example() {
    // `matmul.rise` as it is, rewritten by `gpuSgemm`: the same kernel as the
    // hand-written SGEMM.
    let nats = sizes(&[("n", 128), ("m", 64), ("k", 32)]);
    let term = lowered(
        &super::example("matmul.rise"),
        &nats,
        "gpuSgemm(32, 32, 4, 4, 8)",
    );
    let p = elevate::bridge::gpu_payload("f", &term, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let script = p.transform_text();
    for expected in [
        "static_tile_sizes = array<i64: 32, 32, 0>",
        "static_sizes = array<i64: 0, 0, 8>",
        "operands_to_promote = [0, 1]",
        "block_dims = array<i64: 8, 8, 1>",
    ] {
        assert!(script.contains(expected), "no `{expected}` in\n{script}");
    }
    let ptx = jit::payload_ptx(&p).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        ptx.iter().any(|k| k.text.contains(".shared")
            && k.text.contains("bar.sync")
            && k.text.contains("fma.rn.f32")),
        "{ptx:?}"
    );
    // Its loop program: blocks of 32x32, threads of 4x4 within them, the reduction 8
    // at a time, both inputs staged in shared memory.
    let loops = elevate::bridge::payload::gpu_loop_program_text(&term, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    for expected in [
        "in0 = %arg0_0[d0, d2] (shared), in1 = %arg1_0[d2, d1] (shared)",
        "workgroup(1) d0 by 32 (4 trips), workgroup(0) d1 by 32 (2 trips)",
        "local(1) d0 by 4 (8 trips), local(0) d1 by 4 (8 trips)",
        "reduce d2 by 8 (4 trips)",
    ] {
        assert!(loops.contains(expected), "no `{expected}` in\n{loops}");
    }
    let (found, expected) = compiled_and_interpreted(&term, 4);
    assert!(elevate::rise::io::approx_eq(&found, &expected));
}

#[test]
fn the_library_s_stencil_strategy_stages_each_block_s_tile_and_halo() {
    // A blur written as the map nest of its neighbourhoods, tiled by `gpuStencil`.
    let source = "def blur(img: (n+2).(m+2).f32) : n.m.f32 =
      img |> map(slide(3, 1)) |> slide(3, 1) |> map(transpose)
        |> map(map(fun(nbh => nbh |> join |> map(fun(x => x * 0.11111111)) |> reduce(add, 0.0))))";
    let nats = sizes(&[("n", 32), ("m", 48)]);
    let term = lowered(source, &nats, "gpuStencil(16, 16)");
    let p = elevate::bridge::gpu_payload("f", &term, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        p.transform_text()
            .contains("block_dims = array<i64: 16, 16, 1>"),
        "{}",
        p.transform_text()
    );
    let ptx = jit::payload_ptx(&p).unwrap_or_else(|e| panic!("{e}"));
    let blur = ptx
        .iter()
        .find(|k| k.text.contains(".shared"))
        .unwrap_or_else(|| panic!("no kernel with shared memory: {ptx:?}"));
    assert!(
        blur.text.contains("__elevate_shared_0[1296]"),
        "{}",
        blur.text
    );
    assert_eq!(blur.text.matches("ld.shared").count(), 9, "{}", blur.text);
    let (found, expected) = compiled_and_interpreted(&term, 6);
    assert!(elevate::rise::io::approx_eq(&found, &expected));
}
