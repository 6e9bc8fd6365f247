//! The operator suite (`examples/rise/ops/`): with `defaultLowering` alone, every
//! program compiles to `linalg` and a Transform script (no loops of its own in the
//! payload) and computes what the interpreter computes.

use super::{assert_same, lowered, payload, sizes};

/// The suite's programs at small sizes that no tile divides evenly.
pub const OPS: [(&str, &[(&str, i64)]); 12] = [
    ("matmul.rise", &[("n", 5), ("k", 7), ("m", 3)]),
    (
        "batched_matmul.rise",
        &[("b", 2), ("n", 3), ("k", 5), ("m", 4)],
    ),
    (
        "conv2d_nchw.rise",
        &[("n", 1), ("c", 3), ("h", 5), ("w", 6), ("k", 2)],
    ),
    (
        "conv2d_stride2.rise",
        &[("n", 1), ("c", 2), ("h", 3), ("w", 4), ("k", 3)],
    ),
    ("depthwise_conv.rise", &[("c", 3), ("h", 5), ("w", 4)]),
    ("maxpool.rise", &[("c", 2), ("h", 3), ("w", 2)]),
    ("add.rise", &[("n", 3), ("m", 5)]),
    ("relu.rise", &[("n", 3), ("m", 5)]),
    ("matmul_bias_relu.rise", &[("n", 4), ("k", 6), ("m", 5)]),
    ("softmax.rise", &[("b", 3), ("n", 7)]),
    ("jacobi2d.rise", &[("h", 5), ("w", 7)]),
    ("blur_separable.rise", &[("h", 6), ("w", 5)]),
];

/// The source of an operator of the suite.
pub fn op(name: &str) -> String {
    let path = format!("{}/examples/rise/ops/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_operator_is_structured_and_matches_the_interpreter() {
    let files = std::fs::read_dir(format!("{}/examples/rise/ops", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "rise")
        })
        .count();
    assert_eq!(files, OPS.len(), "a new operator: add it here");
    for (name, nats) in OPS {
        let term = lowered(&op(name), &sizes(nats), "id");
        let p = payload("f", &term);
        assert!(p.transform().is_some(), "{name}: no script");
        assert!(
            !p.mlir().contains("scf.for"),
            "{name}: loops in the payload"
        );
        assert_same(&term, name);
    }
}

#[test]
fn library_strategies_keep_every_kernel_structured_and_match_the_interpreter() {
    // At small sizes the tiles divide (the convolutions' `convKernel` is checked in
    // `conv_kernels`, the padded micro-kernel in `register_tiles`). Every library
    // strategy but pooling's (threads alone) computes on vectors.
    let product: Sizes = &[("n", 16), ("k", 12), ("m", 32)];
    let matrix: Sizes = &[("n", 6), ("m", 8)];
    let threads = "parallel @ outermost(isApplied(isMap)) ; tryAll(reduceSeqUnroll)";
    let cases: [(&str, Sizes, &str); 11] = [
        ("matmul.rise", product, "microKernel(8, 16, 4, 8)"),
        ("matmul.rise", product, "microKernel(8, 16, 4, 8, 4)"),
        ("matmul_bias_relu.rise", product, "microKernel(8, 16, 4, 8)"),
        ("add.rise", matrix, "elementwise(4)"),
        ("relu.rise", matrix, "elementwise(4)"),
        ("softmax.rise", &[("b", 3), ("n", 8)], "elementwise(4)"),
        (
            "batched_matmul.rise",
            &[("b", 2), ("n", 8), ("k", 5), ("m", 16)],
            "reductionTiles(8, 16, 4, 8)",
        ),
        (
            "depthwise_conv.rise",
            &[("c", 2), ("h", 8), ("w", 16)],
            "reductionTiles(4, 16, 2, 8) ; tryAll(unroll)",
        ),
        (
            "blur_separable.rise",
            &[("h", 16), ("w", 16)],
            "reductionTiles(8, 16, 4, 8) ; tryAll(unroll)",
        ),
        ("maxpool.rise", OPS[5].1, threads),
        ("jacobi2d.rise", &[("h", 6), ("w", 8)], "elementwise(4)"),
    ];
    for (name, nats, strategy) in cases {
        let term = lowered(&op(name), &sizes(nats), strategy);
        let p = payload("f", &term);
        let script = p.transform().unwrap_or_default();
        assert_eq!(
            script.contains("transform.structured.vectorize"),
            strategy != threads,
            "{name}, {strategy}: {script}"
        );
        assert!(script.contains("tile_using_forall"), "{name}, {strategy}");
        // Windows whose taps are unrolled: computed in the body, each output written
        // once (no fill, no reduction dimension).
        if strategy.contains("nroll") {
            assert!(
                !p.mlir().contains("\"reduction\""),
                "{name}, {strategy}: {}",
                p.mlir()
            );
            assert!(
                !p.mlir().contains("linalg.fill ins(%init"),
                "{name}, {strategy}: {}",
                p.mlir()
            );
        }
        // A reduction over the lanes of a vector reduction's result (softmax's maximum
        // and sum) stays in that reduction's kernel, unrolled or not: one kernel per
        // reduction, not one per lane.
        if name == "softmax.rise" {
            assert!(p.kernels <= 5, "{:?}\n{}", p.kernels, p.mlir());
        }
        assert_same(&term, &format!("{name} with {strategy}"));
    }
    // Both passes of the separable filter get register tiles: rows unrolled, columns
    // on vectors, the three taps in the body (unrolled or not: a tile filled, then
    // read and written at each of three steps, took four times as long).
    for (strategy, vectors) in [
        ("reductionTiles(8, 16, 4, 8)", "vector_sizes [1, 8]"),
        (
            "reductionTiles(8, 16, 4, 8) ; tryAll(unroll)",
            "vector_sizes [1, 8]",
        ),
    ] {
        let blur = payload(
            "f",
            &lowered(
                &op("blur_separable.rise"),
                &sizes(&[("h", 16), ("w", 16)]),
                strategy,
            ),
        );
        let script = blur.transform().unwrap_or_default();
        assert_eq!(script.matches(vectors).count(), 2, "{strategy}: {script}");
        assert_eq!(
            script.matches("transform.loop.unroll").count(),
            2,
            "{strategy}: {script}"
        );
    }
}

#[test]
fn windows_padding_and_inner_reductions_become_kernels_of_their_own() {
    let kernels = |name: &str, nats: &[(&str, i64)]| {
        let p = payload("f", &lowered(&op(name), &sizes(nats), "id"));
        p.mlir().matches("linalg.generic").count() + p.mlir().matches("linalg.matmul").count()
    };
    // A 2-D zero padding: a fill, a copy into the interior, the convolution.
    let conv = payload(
        "f",
        &lowered(&op("conv2d_nchw.rise"), &sizes(OPS[2].1), "id"),
    );
    assert_eq!(kernels("conv2d_nchw.rise", OPS[2].1), 3, "{}", conv.mlir());
    // A large padded array read at its output's positions is split into boxes: the
    // interior reads it in place, the first and last rows read padded copies of one
    // row each, the first and last columns read nothing out of bounds but the
    // constant.
    let large: &[(&str, i64)] = &[("h", 2048), ("w", 2048)];
    assert_eq!(kernels("jacobi2d.rise", large), 9);
    let jacobi = payload("f", &lowered(&op("jacobi2d.rise"), &sizes(large), "id"));
    assert_eq!(
        jacobi.mlir().matches("memref.alloc").count(),
        2,
        "{}",
        jacobi.mlir()
    );
    assert_eq!(
        jacobi.mlir().matches(": memref<1x2050xf32>\n").count(),
        4,
        "{}",
        jacobi.mlir()
    );
    // Padded reads at a reduction's positions (the sum of each padded row) read a
    // padded copy of the whole; a large one has its border filled, not the whole (its
    // interior is written once, by the copy): a slab on each side of the columns.
    let rows = lowered(
        "def f(x: 2048.2048.f32) : 2048.f32 =
           x |> map(fun(r => r |> padCst(1, 1, 0.0) |> reduce(add, 0.0)))",
        &sizes(&[]),
        "id",
    );
    let padded = payload("f", &rows);
    assert!(
        padded.mlir().contains("memref<2048x2050xf32>"),
        "{}",
        padded.mlir()
    );
    assert!(
        padded.mlir().contains("[0, 0] [2048, 1]") && padded.mlir().contains("[0, 2049] [2048, 1]"),
        "{}",
        padded.mlir()
    );
    assert!(conv.mlir().contains("memref.subview"), "{}", conv.mlir());
    // Pooling reads its input at `2y + dy`: a view of it with one dimension per loop
    // (the window's overlapping the pixels'), so that the operation is a projected
    // permutation and needs no operand of the window's shape.
    let pool = payload("f", &lowered(&op("maxpool.rise"), &sizes(OPS[5].1), "id"));
    assert!(
        pool.mlir().contains("memref.reinterpret_cast"),
        "{}",
        pool.mlir()
    );
    assert!(!pool.mlir().contains("memref<3x3xf32>"), "{}", pool.mlir());
    assert!(pool.mlir().contains("arith.maxnumf"), "{}", pool.mlir());
    // The product's reduction into a buffer of its own, then the bias and the relu.
    assert_eq!(kernels("matmul_bias_relu.rise", OPS[8].1), 2);
    // Softmax: the maximum of each row, the sum of the exponentials, the quotient.
    assert_eq!(kernels("softmax.rise", OPS[9].1), 3);
}

/// Sizes of a program of the suite, by name.
type Sizes = &'static [(&'static str, i64)];

/// `term` compiled and run on random inputs from `seed`.
fn compiled_result(term: &elevate::rise::Term, seed: u64) -> serde_json::Value {
    run_payload(&payload("f", term), term, seed)
}

/// Payload `p` of `term` compiled and run on random inputs from `seed`.
fn run_payload(
    p: &elevate::bridge::Payload,
    term: &elevate::rise::Term,
    seed: u64,
) -> serde_json::Value {
    use elevate::rise::{io, NatEnv};
    let limits = elevate::rise::limits::Limits::default();
    let compiled =
        elevate::bridge::jit::compile_payload(p, &limits).unwrap_or_else(|e| panic!("{e}"));
    let inputs = io::random_inputs(&io::signature(term), &NatEnv::default(), seed).unwrap();
    compiled.run(&inputs).unwrap().to_json().unwrap()
}

#[test]
fn library_strategies_at_full_size_compute_what_default_lowering_computes() {
    // At these sizes the interpreter takes minutes (5 s for a 256³ product), so the
    // register-tiled code is checked against the plain loops of `defaultLowering`,
    // which the interpreter checks at small sizes: the 1000³ product padded to the
    // micro-kernel's tiles, and the ResNet-18 convolution (64 channels, 56 x 56).
    let cases: [(&str, Sizes, &str); 2] = [
        (
            "matmul.rise",
            &[("n", 1000), ("k", 1000), ("m", 1000)],
            "microKernel(60, 64, 6, 16)",
        ),
        (
            "conv2d_nchw.rise",
            &[("n", 1), ("c", 64), ("h", 56), ("w", 56), ("k", 64)],
            "convKernel(28, 64, 4, 16)",
        ),
    ];
    for (name, nats, strategy) in cases {
        let fast = lowered(&op(name), &sizes(nats), strategy);
        let plain = lowered(&op(name), &sizes(nats), "id");
        let (found, expected) = (compiled_result(&fast, 7), compiled_result(&plain, 7));
        assert!(
            elevate::rise::io::approx_eq(&found, &expected),
            "{name} with {strategy}: {:?}",
            elevate::rise::io::first_difference(&expected, &found)
        );
    }
}

#[test]
fn a_large_padded_read_reads_the_interior_in_place_and_copies_only_borders() {
    // Over a million elements, a kernel whose reads are padded is split into boxes:
    // the interior reads the array where it is (a window of the parameter, no padded
    // copy of the whole), the slabs around it read padded copies of the little they
    // read. The boxes' sides are multiples of the tiles (8 columns here), and the
    // stored first pass of the blur is split too. At this size the interpreter takes
    // minutes: the values are checked against the program's without a schedule
    // (`id`: boxes of other sides, no vectors), which the interpreter checks at
    // small sizes.
    let big: Sizes = &[("h", 1024), ("w", 1032)];
    for (name, strategy) in [
        ("jacobi2d.rise", "elementwise(8)"),
        (
            "blur_separable.rise",
            "reductionTiles(8, 1032, 4, 8) ; tryAll(unroll)",
        ),
    ] {
        let term = lowered(&op(name), &sizes(big), strategy);
        let p = payload("f", &term);
        let whole = [
            "memref<1026x1034xf32>",
            "memref<1024x1034xf32>",
            "memref<1026x1032xf32>",
        ];
        assert!(
            !whole.iter().any(|t| p.mlir().contains(t)),
            "{name}: {}",
            p.mlir()
        );
        let plain = lowered(&op(name), &sizes(big), "id");
        let unscheduled = payload("f", &plain);
        let (found, expected) = (
            run_payload(&p, &term, 3),
            run_payload(&unscheduled, &plain, 3),
        );
        assert!(
            elevate::rise::io::approx_eq(&found, &expected),
            "{name} with {strategy}: {:?}",
            elevate::rise::io::first_difference(&expected, &found)
        );
    }
    let jacobi = payload(
        "f",
        &lowered(&op("jacobi2d.rise"), &sizes(big), "elementwise(8)"),
    );
    // The interior: rows 1..1023, columns 8..1024 (aligned to the vectors of 8).
    assert!(
        jacobi
            .mlir()
            .contains("memref.subview %arg1[1, 8] [1022, 1016]"),
        "{}",
        jacobi.mlir()
    );
    assert!(
        jacobi
            .mlir()
            .contains("memref.subview %arg0[1, 7] [1022, 1016]"),
        "{}",
        jacobi.mlir()
    );
}
