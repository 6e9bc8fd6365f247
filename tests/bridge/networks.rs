//! Whole networks compiled layer by layer compute what the interpreter computes, with
//! the library's `network` strategy, with layers given their own strategies, and with
//! their weight-only arrays prepared once.

use elevate::network::{Network, NetworkError, NetworkStrategy};
use elevate::onnx::weights::{Tensor, Weights};

/// A residual block at `c` channels of `h x h` pixels, in the form `import` writes.
fn block(c: usize, h: usize) -> String {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/rise/networks/block.rise"
    ))
    .unwrap();
    source
        .replace("1.64.56.56.f32", &format!("1.{c}.{h}.{h}.f32"))
        .replace("64.64.3.3.f32", &format!("{c}.{c}.3.3.f32"))
        .replace("64.f32", &format!("{c}.f32"))
}

/// Reproducible values in [-0.5, 0.5).
fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919 + seed * 104_729) % 1000) as f32 / 1000.0 - 0.5)
        .collect()
}

fn weights(net: &Network) -> Weights {
    let tensors = net
        .weights()
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let shape: Vec<usize> = dims(&p.ty);
            let n = shape.iter().product();
            Tensor::new(p.name.clone(), shape, values(n, k + 1)).unwrap()
        })
        .collect();
    Weights::from_tensors(tensors).unwrap()
}

fn dims(ty: &elevate::rise::Type) -> Vec<usize> {
    let mut out = Vec::new();
    let mut t = ty.clone();
    while let elevate::rise::TypeKind::Array(n, e) = t.kind().clone() {
        out.push(n.as_const().unwrap() as usize);
        t = e;
    }
    out
}

fn assert_close(found: &[f32], expected: &[f32]) {
    assert_eq!(found.len(), expected.len());
    for (i, (a, b)) in found.iter().zip(expected).enumerate() {
        let tolerance = 1e-4 * b.abs().max(1.0);
        assert!((a - b).abs() <= tolerance, "element {i}: {a} against {b}");
    }
}

fn check(strategy: &str, c: usize, h: usize) -> Vec<String> {
    let net = Network::parse(&block(c, h)).unwrap();
    let input = values(c * h * h, 0);
    let expected = net.evaluate(&input, &weights(&net)).unwrap();
    let strategy = NetworkStrategy::parse(strategy).unwrap();
    let compiled = net.compile(&strategy, weights(&net), Some(1)).unwrap();
    assert_close(&compiled.run(&input).unwrap(), &expected);
    // Twice: the buffers of one run do not leak into the next.
    assert_close(&compiled.run(&input).unwrap(), &expected);
    compiled
        .units()
        .iter()
        .map(|u| u.strategy.clone())
        .collect()
}

#[test]
fn the_library_strategy_computes_what_the_interpreter_computes() {
    // An image of 64 pixels: small, its rows joined into one for the convolutions.
    let used = check("network", 16, 8);
    // The convolutions with `convKernel`, what follows them fused into one unit each.
    assert_eq!(used.len(), 4, "{used:?}");
    assert!(
        used[0].starts_with("DFNF ; joinPixels @ topDown ; convKernel(64, "),
        "{used:?}"
    );
    assert!(used[1].starts_with("elementwise"), "{used:?}");
    // Of 100: in rows.
    let used = check("network", 16, 10);
    assert!(used[0].starts_with("convKernel(10, "), "{used:?}");
}

#[test]
fn the_packed_weights_are_prepared_once() {
    let net = Network::parse(&block(16, 8)).unwrap();
    let compiled = net
        .compile(&NetworkStrategy::library(), weights(&net), Some(1))
        .unwrap();
    let conv = &compiled.units()[0];
    assert!(conv.strategy.contains("convKernel"));
    assert_eq!(conv.prepared, 1, "convKernel's packed weights: {conv:?}");
    // The second convolution reuses the first's functions with its own weights.
    assert!(compiled.units()[2].reused);
}

#[test]
fn layers_take_their_own_strategies() {
    let used = check(r#"layer(2, id) ; layers("conv", id) ; network"#, 8, 6);
    // Every layer named is a unit of its own.
    assert_eq!(used[0], "id");
    assert_eq!(used[2], "id");
    assert!(used.len() >= 5, "{used:?}");
    // Without `network`, nothing is fused and every layer is lowered alone.
    assert_eq!(check("id", 8, 6).len(), 7);
}

#[test]
fn strategies_that_do_not_fit_the_network_are_errors() {
    let net = Network::parse(&block(8, 6)).unwrap();
    let error =
        |s: &str| match net.compile(&NetworkStrategy::parse(s).unwrap(), weights(&net), None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("`{s}` compiled"),
        };
    assert!(error("layer(7, id)").contains("the network has 7 layers"));
    assert!(error(r#"layers("pool", id)"#).contains("no layer of that kind"));
    assert!(NetworkStrategy::parse("layer(1)").is_err());
    assert!(NetworkStrategy::parse("noSuchRule").is_err());
}

#[test]
fn weights_and_inputs_that_do_not_fit_are_errors_naming_them() {
    let net = Network::parse(&block(8, 6)).unwrap();
    let mut tensors = weights(&net).into_tensors();
    let strategy = NetworkStrategy::library();
    let missing = Weights::from_tensors(tensors[1..].to_vec()).unwrap();
    let e = net.compile(&strategy, missing, None).err().unwrap();
    assert!(
        matches!(e, NetworkError::Weights(_)) && e.to_string().contains("conv1_w"),
        "{e}"
    );
    tensors[1] = Tensor::new("conv1_b", vec![9], vec![0.0; 9]).unwrap();
    let e = net
        .compile(
            &strategy,
            Weights::from_tensors(tensors.clone()).unwrap(),
            None,
        )
        .err()
        .unwrap();
    assert!(e.to_string().contains("`conv1_b` has shape [9]"), "{e}");
    tensors[1] = Tensor::new("conv1_b", vec![8], vec![0.0; 8]).unwrap();
    tensors.push(Tensor::new("stray", vec![1], vec![0.0]).unwrap());
    let e = net
        .compile(&strategy, Weights::from_tensors(tensors).unwrap(), None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("`stray` is no parameter"), "{e}");
    let compiled = net.compile(&strategy, weights(&net), None).unwrap();
    let e = compiled.run(&[0.0; 5]).unwrap_err();
    assert!(
        e.to_string()
            .contains("5 values for an input of [1, 8, 6, 6]"),
        "{e}"
    );
}

#[test]
fn programs_that_are_not_networks_are_located_errors() {
    let e = Network::parse("def f(x: 4.f32) : 4.f32 = x |> map(fun(v => v + 1.0))").unwrap_err();
    assert!(e.to_string().contains("not a network"), "{e}");
    let e = Network::parse(
        "def relu(x: 4.f32) : 4.f32 = x |> map(fun(v => max(v, 0.0)))
         def net(x: 4.f32) : 4.f32 = let y = relu(x |> map(fun(v => v))) in y",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("a layer's argument is a parameter or an earlier layer"),
        "{e}"
    );
}

/// A `.npy` file of f32s: its shape and values.
fn npy(path: &std::path::Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = file.shape().to_vec();
    (shape, file.into_vec::<f32>().unwrap())
}

/// The small networks of the fixtures (`scripts/onnx-fixtures`, with ONNX Runtime's
/// output: a residual block, one that downsamples, an inverted residual block, a VGG
/// block, the classifier head, a symbolic batch, a tiny ResNet) imported, compiled
/// with `network` and run, equal to ONNX Runtime's output within 1e-4 relative.
/// (Every fixture, each operator alone too, is compiled by the Python package's
/// tests, `python/tests/test_networks.py`, in a release build.)
#[test]
fn imported_networks_compiled_compute_what_onnx_runtime_computes() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/onnx/fixtures");
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".ort.npy").map(String::from)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 40, "{names:?}");
    let small_networks = [
        "resnet_block",
        "resnet_down",
        "mobilenet_block",
        "vgg_block",
        "classifier_head",
        "batch_symbolic",
        "tiny_resnet",
    ];
    assert!(
        small_networks.iter().all(|n| names.iter().any(|m| m == n)),
        "{names:?}"
    );
    names.retain(|n| small_networks.contains(&n.as_str()));
    let mut failures = Vec::new();
    for name in &names {
        let model = folder.join(format!("{name}.onnx"));
        let (shape, input) = npy(&folder.join(format!("{name}.input.npy")));
        // The batch of a model whose batch is symbolic: the input's.
        let options = elevate::onnx::ImportOptions {
            batch: Some(shape[0] as i64),
        };
        let imported = elevate::onnx::import(&model, &options).unwrap();
        let net = Network::parse(&imported.program).unwrap();
        let compiled = net
            .compile(&NetworkStrategy::library(), imported.weights(), Some(1))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (_, expected) = npy(&folder.join(format!("{name}.ort.npy")));
        let found = compiled.run(&input).unwrap();
        let worst = found
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0f32, f32::max);
        if found.len() != expected.len() || worst > 1e-4 {
            failures.push(format!(
                "{name}: {} values, worst relative error {worst}",
                found.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A convolution and the inference BatchNorm after it, then a ReLU (as an exporter
/// that does not fold BatchNorm writes them), at `c` channels of `h x h` pixels.
fn conv_batchnorm(c: usize, h: usize) -> String {
    let conv = block(c, h);
    let conv = &conv[..conv.find("def bias_nchw").unwrap()];
    format!(
        "{conv}
def batchnorm_eps0p00001(x: n.c.h.w.f32, scale: c.f32, bias: c.f32, mean: c.f32, var: c.f32) : n.c.h.w.f32 =
  x |> map(fun(img =>
    zip(img, zip(zip(scale, bias), zip(mean, var))) |> map(fun(cp =>
      let g = fst(fst(snd(cp))) / sqrt(snd(snd(snd(cp))) + 0.00001) in
      fst(cp) |> map(map(fun(v => (v - fst(snd(snd(cp)))) * g + snd(fst(snd(cp))))))))))

def relu_nchw(x: n.k.h.w.f32) : n.k.h.w.f32 =
  x |> map(map(map(map(fun(v => max(v, 0.0))))))

def net(input: 1.{c}.{h}.{h}.f32, w: {c}.{c}.3.3.f32, scale: {c}.f32, shift: {c}.f32,
        mean: {c}.f32, var: {c}.f32) : 1.{c}.{h}.{h}.f32 =
  let y = conv_k3x3_s1_p1111(input, w) in
  let z = batchnorm_eps0p00001(y, scale, shift, mean, var) in
  let r = relu_nchw(z) in
  r"
    )
}

#[test]
fn a_batchnorm_after_a_convolution_is_folded_into_its_weights() {
    let net = Network::parse(&conv_batchnorm(16, 8)).unwrap();
    let mut tensors = weights(&net).into_tensors();
    // A variance must be positive.
    for v in &mut tensors[4].data {
        *v = v.abs() + 0.1;
    }
    let bound = || Weights::from_tensors(tensors.clone()).unwrap();
    let input = values(16 * 8 * 8, 0);
    let expected = net.evaluate(&input, &bound()).unwrap();
    let compiled = net
        .compile(&NetworkStrategy::library(), bound(), Some(1))
        .unwrap();
    assert_eq!(compiled.batchnorms_folded(), 1);
    assert_close(&compiled.run(&input).unwrap(), &expected);
    // The convolution with its folded weights prepared, the BatchNorm a bias fused
    // with the ReLU.
    let defs: Vec<Vec<String>> = compiled.units().iter().map(|u| u.defs.clone()).collect();
    assert_eq!(defs.len(), 2, "{defs:?}");
    assert!(compiled.units()[0].strategy.contains("convKernel"));
    assert_eq!(defs[1], ["bias_foldedbatchnorm", "relu_nchw"]);
    // A convolution given its own strategy still has its BatchNorm folded.
    let own = NetworkStrategy::parse("layer(0, convKernel) ; network").unwrap();
    let compiled = net.compile(&own, bound(), Some(1)).unwrap();
    assert_eq!(compiled.batchnorms_folded(), 1);
    assert_close(&compiled.run(&input).unwrap(), &expected);
    // A BatchNorm given its own strategy is not folded, and computes the same.
    let own = NetworkStrategy::parse("layer(1, id) ; network").unwrap();
    let compiled = net.compile(&own, bound(), Some(1)).unwrap();
    assert_eq!(compiled.batchnorms_folded(), 0);
    assert_close(&compiled.run(&input).unwrap(), &expected);
}

/// A network of 100,000 layers (a bias, then ReLUs) parses, plans and compiles: the
/// chain is units of a few layers each, compiled once.
#[test]
fn a_network_of_100000_layers_compiles_and_runs() {
    let mut source = String::from(
        "def relu_nc(x: n.c.f32) : n.c.f32 = x |> map(map(fun(v => max(v, 0.0))))
         def bias_nc(x: n.m.f32, b: m.f32) : n.m.f32 =
           x |> map(fun(row => zip(row, b) |> map(fun(p => fst(p) + snd(p)))))
         def net(input: 1.4.f32, b: 4.f32) : 1.4.f32 =
           let v0 = bias_nc(input, b) in\n",
    );
    for i in 1..100_000 {
        source.push_str(&format!("let v{i} = relu_nc(v{}) in\n", i - 1));
    }
    source.push_str("v99999\n");
    let net = Network::parse(&source).unwrap();
    assert_eq!(net.layers().len(), 100_000);
    let weights = Weights::from_tensors(vec![
        Tensor::new("b", vec![4], vec![0.5, -2.0, 0.0, 1.0]).unwrap()
    ])
    .unwrap();
    let compiled = net
        .compile(&NetworkStrategy::library(), weights, Some(1))
        .unwrap();
    let found = compiled.run(&[1.0, 1.0, -1.0, 0.25]).unwrap();
    assert_eq!(found, [1.5, 0.0, 0.0, 1.25]);
    assert!(compiled.units().iter().filter(|u| !u.reused).count() <= 4);
}

#[test]
fn the_block_compiled_as_one_program_is_a_stage_per_layer_that_computes_what_the_interpreter_computes(
) {
    // Fused, the second convolution would read, through its padding, an image that the
    // first one's reduction computes, which is no loop program: each `let` is a stage.
    let term = super::lowered(&block(4, 6), &super::sizes(&[]), "id");
    let p = super::payload("block", &term);
    let stages = p
        .mlir()
        .lines()
        .filter(|l| l.contains("memref.alloc()") && l.ends_with(": memref<1x4x6x6xf32>"))
        .count();
    assert_eq!(stages, 7, "a buffer per layer:\n{}", p.mlir());
    // Each convolution: its padded image filled, the image copied in, the product;
    // the other four layers and the result's copy a kernel each.
    assert_eq!(p.kernels, 2 * 3 + 4 + 1 + 1, "{}", p.mlir());
    super::assert_same(&term, "the residual block as one program");
}

/// A 1x1 convolution of stride 1 in the form `import` writes, from `c` to `k` channels
/// of `h x h` pixels, then a ReLU.
fn pointwise(c: usize, k: usize, h: usize) -> String {
    format!(
        "def conv_k1x1_s1_p0000(x: n.c.h.w.f32, wt: k.c.1.1.f32) : n.k.h.w.f32 =
  x |> map(fun(img =>
    let nbhs = img
      |> map(fun(ch => ch |> map(slide(1, 1)) |> slide(1, 1) |> map(transpose)))
      |> transpose |> map(transpose) in
    wt |> map(fun(wk =>
      nbhs |> map(map(fun(nbh =>
        zip(join(join(nbh)), join(join(wk)))
          |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))))))

def relu_nchw(x: n.c.h.w.f32) : n.c.h.w.f32 =
  x |> map(map(map(map(fun(v => max(v, 0.0))))))

def net(input: 1.{c}.{h}.{h}.f32, w: {k}.{c}.1.1.f32) : 1.{k}.{h}.{h}.f32 =
  let y = conv_k1x1_s1_p0000(input, w) in
  let r = relu_nchw(y) in
  r"
    )
}

#[test]
fn a_pointwise_convolution_of_a_large_image_is_a_product_that_computes_what_the_interpreter_computes(
) {
    let run = |c: usize, k: usize, h: usize| {
        let net = Network::parse(&pointwise(c, k, h)).unwrap();
        let input = values(c * h * h, 0);
        let expected = net.evaluate(&input, &weights(&net)).unwrap();
        let compiled = net
            .compile(&NetworkStrategy::library(), weights(&net), Some(1))
            .unwrap();
        assert_close(&compiled.run(&input).unwrap(), &expected);
        compiled.units()[0].strategy.clone()
    };
    // 56x56 pixels of few channels: the weights times the image, by `microKernel`.
    assert!(run(16, 24, 56).starts_with("microKernel"));
    // A small image keeps the convolution's own schedule.
    assert!(run(16, 24, 14).contains("convKernel"));
}

/// Depthwise convolutions in the form `import` writes: `c` channels of `h x h` pixels
/// at stride 1, then of `2h x 2h` at stride 2.
fn depthwise(c: usize, h: usize) -> String {
    let h2 = 2 * h;
    format!(
        "def depthwise_k3x3_s1_p1111(x: n.c.h.w.f32, wt: c.1.3.3.f32) : n.c.h.w.f32 =
  x |> map(fun(img =>
    zip(img, wt) |> map(fun(cw =>
      fst(cw) |> map(padCst(1, 1, 0.0)) |> padCst(1, 1, generate(fun(i => 0.0)))
      |> map(slide(3, 1)) |> slide(3, 1) |> map(transpose) |> map(map(fun(nbh =>
        zip(join(nbh), join(join(snd(cw))))
          |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))))))

def depthwise_k3x3_s2_p1100(x: n.c.(2*h+2).(2*w+2).f32, wt: c.1.3.3.f32) : n.c.(h+1).(w+1).f32 =
  x |> map(fun(img =>
    zip(img, wt) |> map(fun(cw =>
      fst(cw) |> map(padCst(1, 0, 0.0)) |> padCst(1, 0, generate(fun(i => 0.0)))
      |> map(slide(3, 2)) |> slide(3, 2) |> map(transpose) |> map(map(fun(nbh =>
        zip(join(nbh), join(join(snd(cw))))
          |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))))))

def net(input: 1.{c}.{h2}.{h2}.f32, w1: {c}.1.3.3.f32, w2: {c}.1.3.3.f32) : 1.{c}.{h}.{h}.f32 =
  let y = depthwise_k3x3_s1_p1111(input, w1) in
  let z = depthwise_k3x3_s2_p1100(y, w2) in
  z"
    )
}

#[test]
fn a_depthwise_convolution_of_stride_2_unrolls_its_taps_and_one_of_stride_1_on_a_small_image_takes_vectors(
) {
    let net = Network::parse(&depthwise(16, 8)).unwrap();
    let input = values(16 * 16 * 16, 0);
    let expected = net.evaluate(&input, &weights(&net)).unwrap();
    let compiled = net
        .compile(&NetworkStrategy::library(), weights(&net), Some(1))
        .unwrap();
    assert_close(&compiled.run(&input).unwrap(), &expected);
    let strategies: Vec<&str> = compiled
        .units()
        .iter()
        .map(|u| u.strategy.as_str())
        .collect();
    // Stride 1 on 16x16 pixels: windows on vectors; stride 2: each output its taps.
    assert!(
        strategies[0].starts_with("reductionTiles"),
        "{strategies:?}"
    );
    assert!(
        strategies[1].starts_with("tryAll(reduceSeqUnroll)"),
        "{strategies:?}"
    );
}
