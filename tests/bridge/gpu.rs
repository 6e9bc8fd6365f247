//! PTX from kernels a Transform script maps to GPU blocks and threads (no GPU is
//! needed to make it).

use super::{compiled_and_interpreted, lowered, payload};
use elevate::bridge::error::Stage;
use elevate::bridge::jit;
use elevate::rise::NatEnv;

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

/// The CPU check of GPU schedules: a mapped program, its GPU maps run as parallel
/// loops on the CPU, is structured and computes what the interpreter computes.
fn cpu_check(source: &str, strategy: &str) -> elevate::bridge::Payload {
    let term = lowered(source, &NatEnv::default(), strategy);
    let text = elevate::rise::print_term(&term);
    assert!(
        text.contains("mapGlobal") || text.contains("mapWorkGroup"),
        "{text}"
    );
    let p = payload("f", &term);
    let (found, expected) = compiled_and_interpreted(&term, 7);
    assert_eq!(found, expected, "{source}");
    p
}

#[test]
fn gpu_maps_run_as_parallel_loops_on_the_cpu_and_match_the_interpreter() {
    // Global threads; blocks of threads over chunks; a 2-D grid of dot products.
    let global = cpu_check(
        "def f(x: 1024.f32) : 1024.f32 = x |> mapGlobal(0, fun(v => v * v + 1.0))",
        "id",
    );
    assert!(global
        .transform()
        .is_some_and(|s| s.contains("tile_using_forall")));
    cpu_check(
        "def f(x: 1024.f32) : 1024.f32 =
           x |> split(128) |> mapWorkGroup(0, mapLocal(0, fun(v => v * 2.0))) |> join",
        "id",
    );
    cpu_check(
        "def f(a: 64.32.f32, b: 32.48.f32) : 64.48.f32 =
           a |> mapGlobal(1, fun(arow => transpose(b) |> mapGlobal(0, fun(bcol =>
             zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))",
        "id",
    );
}

#[test]
fn the_gpu_mapping_strategy_s_programs_run_on_the_cpu() {
    // The matmul example, its outer maps made GPU maps by rewriting.
    let source = super::example("matmul.rise");
    cpu_check(
        &source
            .replace(
                "def mm(a: n.k.f32, b: k.m.f32)",
                "def f(a: 32.16.f32, b: 16.24.f32)",
            )
            .replace(": n.m.f32", ": 32.24.f32"),
        "DFNF ; mapGlobal(1) @ outermost(isMap) ; mapGlobal(0) @ outermost(isMap)",
    );
}

/// The GPU payload of `source` (after `strategy` and `defaultLowering`) and its PTX.
fn gpu(source: &str, strategy: &str) -> (elevate::bridge::Payload, Vec<jit::Ptx>) {
    let term = lowered(source, &NatEnv::default(), strategy);
    let p = elevate::bridge::gpu_payload("f", &term, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let ptx = jit::payload_ptx(&p).unwrap_or_else(|e| panic!("{e}\n{}", p.transform_text()));
    (p, ptx)
}

#[test]
fn global_threads_are_blocks_of_256_threads() {
    let (p, ptx) = gpu(
        "def f(x: 4096.f32) : 4096.f32 = x |> mapGlobal(0, fun(v => v * v + 1.0))",
        "id",
    );
    let script = p.transform_text();
    assert!(
        script.contains("#gpu.block<x>") && script.contains("#gpu.thread<x>"),
        "{script}"
    );
    assert!(
        script.contains("block_dims = array<i64: 256, 1, 1>"),
        "{script}"
    );
    assert!(
        script.contains("static_tile_sizes = array<i64: 256>"),
        "{script}"
    );
    assert_eq!(ptx.len(), 1);
    for expected in [
        ".entry",
        "%ctaid.x",
        "%tid.x",
        ".maxntid 256, 1, 1",
        "ld.global",
        "st.global",
    ] {
        assert!(
            ptx[0].text.contains(expected),
            "no `{expected}` in\n{}",
            ptx[0].text
        );
    }
}

#[test]
fn work_groups_and_their_local_threads_are_blocks_and_threads() {
    let (p, ptx) = gpu(
        "def f(x: 1024.f32) : 1024.f32 =
           x |> split(128) |> mapWorkGroup(0, mapLocal(0, fun(v => v * 2.0))) |> join",
        "id",
    );
    let script = p.transform_text();
    assert!(
        script.contains("block_dims = array<i64: 128, 1, 1>"),
        "{script}"
    );
    assert!(
        ptx[0].text.contains(".maxntid 128, 1, 1"),
        "{}",
        ptx[0].text
    );
}

#[test]
fn a_2d_grid_of_dot_products_is_a_fill_and_a_product_of_fmas_each_launched() {
    // Rows on y, columns on x (x a divisor of 48 up to a warp: 24; y one of 64 up to
    // what is left of 256 threads: 8); the reduction's start values a launch before
    // the product's.
    let (p, ptx) = gpu(
        "def f(a: 64.32.f32, b: 32.48.f32) : 64.48.f32 =
           a |> mapGlobal(1, fun(arow => transpose(b) |> mapGlobal(0, fun(bcol =>
             zip(arow, bcol) |> map(fun(pr => fst(pr) * snd(pr))) |> reduce(add, 0.0)))))",
        "id",
    );
    let script = p.transform_text();
    assert!(script.contains("#gpu.block<y>, #gpu.block<x>"), "{script}");
    assert!(
        script.contains("block_dims = array<i64: 24, 8, 1>"),
        "{script}"
    );
    assert_eq!(
        ptx.len(),
        2,
        "{:?}",
        ptx.iter().map(|k| &k.module).collect::<Vec<_>>()
    );
    assert!(ptx.iter().any(|k| k.text.contains("%tid.y")), "{ptx:?}");
    // Multiplications and additions may contract, as CUDA compiles them.
    assert!(ptx.iter().any(|k| k.text.contains("fma.rn.f32")), "{ptx:?}");
}

#[test]
fn a_kernel_in_no_gpu_map_is_an_error_for_the_gpu_target() {
    let term = lowered(
        "def f(x: 64.f32) : 64.f32 = x |> map(fun(v => v * 2.0))",
        &NatEnv::default(),
        "id",
    );
    let e = elevate::bridge::gpu_payload("f", &term, &Default::default()).unwrap_err();
    assert!(e.to_string().contains("in no GPU map"), "{e}");
}

#[test]
fn every_gpu_example_is_ptx_and_matches_the_interpreter_on_the_cpu() {
    let dir = format!("{}/examples/rise/gpu", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let source = std::fs::read_to_string(&path).unwrap();
        let program = elevate::rise::Program::load(&source, None).unwrap();
        // Small sizes: the SGEMM's are multiples of its tiles (128 x 32 x 128).
        let nats = super::sizes(&[("n", 2), ("m", 2), ("k", 2), ("h", 2), ("w", 2)]);
        let term = elevate::bridge::choose(&program, &nats, None, &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let p = elevate::bridge::gpu_payload("f", &term, &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ptx = jit::payload_ptx(&p).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            !ptx.is_empty() && ptx.iter().all(|k| k.text.contains(".entry")),
            "{}",
            path.display()
        );
        let (found, expected) = compiled_and_interpreted(&term, 3);
        assert_eq!(found, expected, "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 4, "{seen} GPU examples in {dir}");
}

#[test]
fn the_launch_manifest_covers_each_kernel_s_output_with_its_grid_and_blocks() {
    let (p, _) = gpu(
        "def f(a: 64.32.f32, b: 32.48.f32) : 64.48.f32 =
           a |> mapGlobal(1, fun(arow => transpose(b) |> mapGlobal(0, fun(bcol =>
             zip(arow, bcol) |> map(fun(pr => fst(pr) * snd(pr))) |> reduce(add, 0.0)))))",
        "id",
    );
    let launches = jit::payload_launches(&p).unwrap();
    assert_eq!(launches.len(), 2, "{launches:?}");
    for l in &launches {
        // x over the 48 columns, y over the 64 rows.
        assert_eq!(
            (
                l.grid[0] * l.block[0],
                l.grid[1] * l.block[1],
                l.grid[2] * l.block[2]
            ),
            (48, 64, 1),
            "{l:?}"
        );
    }
    // The fill writes the result; the product reads a and b and writes the result.
    let arguments = |l: &jit::Launch| -> Vec<usize> {
        l.params
            .iter()
            .filter_map(|p| match p {
                jit::Param::Argument { argument, .. } => Some(*argument),
                jit::Param::View { .. } | jit::Param::Constant { .. } => None,
            })
            .collect()
    };
    assert_eq!(arguments(&launches[0]), vec![2]);
    assert_eq!(arguments(&launches[1]), vec![0, 1, 2]);
    let manifest = jit::payload_manifest(&p).unwrap();
    assert_eq!(
        manifest["arguments"],
        serde_json::json!([
            "memref<64x32xf32>",
            "memref<32x48xf32>",
            "memref<64x48xf32>"
        ])
    );
    assert_eq!(
        manifest["launches"][1]["block"],
        serde_json::json!([24, 8, 1])
    );
}

#[test]
fn random_programs_mapped_to_global_threads_match_on_the_cpu_and_compile_to_ptx() {
    use elevate::core::Context;
    use elevate::rise::generate::Generator;
    use elevate::rise::{infer, io, registry, rules};
    // The library's GPU lowering: a map nest's two outer maps on global threads.
    let strategy = registry().parse("gpuGlobal").unwrap();
    let (mut mapped, mut ptx_programs) = (0, 0);
    let mut refused = std::collections::BTreeMap::<String, usize>::new();
    for seed in 0..100u64 {
        let mut generator = Generator::new(seed + 90_000);
        let program = infer(&generator.program(8 + (seed % 16) as usize)).unwrap();
        let Ok(gpu_program) = strategy.apply(&program, &mut Context::default()) else {
            continue;
        };
        let low = rules::default_lowering()
            .apply(&gpu_program, &mut Context::default())
            .unwrap();
        if !elevate::rise::print_term(&low).contains("mapGlobal") {
            continue;
        }
        mapped += 1;
        let (found, expected) = compiled_and_interpreted(&low, seed);
        assert!(
            io::approx_eq(&found, &expected),
            "seed {seed}: {found} vs {expected}"
        );
        match elevate::bridge::gpu_payload("f", &low, &Default::default()) {
            Ok(p) => {
                let ptx = jit::payload_ptx(&p)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", p.transform_text()));
                assert!(!ptx.is_empty(), "seed {seed}");
                ptx_programs += 1;
            }
            Err(e) => {
                let why = e.to_string();
                // The reason, without the kernel's number.
                let reason = why.split("the GPU target: kernel ").nth(1).unwrap_or(&why);
                let key = reason
                    .split_once(' ')
                    .map_or(reason, |(_, rest)| rest)
                    .chars()
                    .take(50)
                    .collect::<String>();
                *refused.entry(key).or_default() += 1;
            }
        }
    }
    println!("{mapped} mapped programs, {ptx_programs} to PTX; refused for the GPU: {refused:?}");
    // Every mapped program matches on the CPU; every GPU payload the bridge makes is
    // PTX (the others are refused with their reason: a GPU map inside a reduction, a
    // kernel the strategy left unmapped, two maps on one dimension).
    assert!(mapped >= 50, "{mapped} programs mapped");
    assert!(ptx_programs >= 15, "{ptx_programs} programs to PTX");
}

#[test]
fn vectors_of_a_thread_are_single_aligned_loads_and_stores() {
    // Four lanes per thread: one `ld.global.v4` and one `st.global.v4` each.
    let (p, ptx) = gpu(
        "def f(x: 4096.f32) : 4096.f32 =
           x |> asVector(4) |> mapGlobal(0, fun(v => v * v + v)) |> asScalar",
        "id",
    );
    assert!(
        p.transform_text().contains("vector_sizes [4]")
            || p.transform_text()
                .contains("static_vector_sizes = array<i64: 4>"),
        "{}",
        p.transform_text()
    );
    let text = &ptx[0].text;
    assert!(
        text.contains("ld.global.v4.b32") && text.contains("st.global.v4.b32"),
        "{text}"
    );
    assert!(!text.contains("ld.global.b32"), "{text}");
    // Vectors one element into the buffer are not whole vectors of it: refused, not
    // loaded misaligned.
    let term = lowered(
        "def f(x: 4100.f32) : 4096.f32 =
           x |> drop(1) |> take(4096) |> asVector(4) |> mapGlobal(0, fun(v => v * v)) |> asScalar",
        &NatEnv::default(),
        "id",
    );
    let e = elevate::bridge::gpu_payload("f", &term, &Default::default()).unwrap_err();
    assert!(e.to_string().contains("not whole vectors"), "{e}");
    // On the CPU the vector program is the interpreter's.
    let low = lowered(
        "def f(x: 4096.f32) : 4096.f32 =
           x |> asVector(4) |> mapGlobal(0, fun(v => v * v + v)) |> asScalar",
        &NatEnv::default(),
        "id",
    );
    let (found, expected) = compiled_and_interpreted(&low, 3);
    assert_eq!(found, expected);
}

#[test]
fn the_gpu_target_s_llvm_ir_is_each_kernel_s_nvvm_module() {
    use elevate::bridge::{emit, Emit, Options, Target};
    let program = elevate::rise::Program::load(&super::example("gpu/vectors.rise"), None).unwrap();
    let gpu = Options {
        target: Target::Gpu,
        ..Options::default()
    };
    let text = emit(
        &program,
        &super::sizes(&[("n", 1024)]),
        None,
        &gpu,
        Emit::Llvm,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for expected in [
        "; kernel module squares_kernel",
        "define ptx_kernel void @squares_kernel",
        "llvm.nvvm.read.ptx.sreg.tid.x",
        "load <4 x float>, ptr",
        "align 16",
    ] {
        assert!(text.contains(expected), "no `{expected}` in\n{text}");
    }
}
