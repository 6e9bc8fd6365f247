//! Every fixture model of `tests/onnx/fixtures` (made by `scripts/onnx-fixtures`):
//! imported, type-checked, printed and parsed back, run by the reference interpreter
//! with its weights and compared with ONNX Runtime's output.

use elevate_onnx::{import, ImportOptions, Imported};
use elevate_rise::{evaluate, parse_program, print_definition, NatEnv, Program, Value};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/onnx/fixtures")
}

/// A `.npy` file of `f32`s: its shape and values.
fn npy(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = file.shape().iter().map(|&d| d as usize).collect();
    (shape, file.into_vec::<f32>().unwrap())
}

/// Row-major values as a nested array value.
fn value(shape: &[usize], data: &[f32]) -> Value {
    match shape.split_first() {
        None => Value::F32(data[0]),
        Some((&n, rest)) => {
            let step: usize = rest.iter().product();
            Value::array(
                (0..n)
                    .map(|i| value(rest, &data[i * step..(i + 1) * step]))
                    .collect(),
            )
        }
    }
}

/// The values of a nested array, row-major, and its shape.
fn flatten(v: &Value, shape: &mut Vec<usize>, out: &mut Vec<f32>, depth: usize) {
    match v {
        Value::F32(x) => out.push(*x),
        Value::Array(a) => {
            if shape.len() == depth {
                shape.push(a.len());
            }
            for item in a.to_vec().unwrap() {
                flatten(&item, shape, out, depth + 1);
            }
        }
        other => panic!("unexpected value {:?}", other.scalar_type()),
    }
}

/// The models with ONNX Runtime's output.
fn models() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".ort.npy").map(String::from)
        })
        .collect();
    names.sort();
    names
}

/// Imports a fixture at its input's batch.
fn imported(name: &str) -> (Imported, Vec<usize>, Vec<f32>) {
    let (shape, input) = npy(&fixtures().join(format!("{name}.input.npy")));
    let options = ImportOptions {
        batch: Some(shape[0] as i64),
    };
    let net = import(&fixtures().join(format!("{name}.onnx")), &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (net, shape, input)
}

/// Runs the network's program on `input` with its weights.
fn run(net: &Imported, shape: &[usize], input: &[f32]) -> (Vec<usize>, Vec<f32>) {
    run_text(&net.program, net, shape, input)
}

/// Runs `text`, a program of the network's parameters, on `input` with its weights.
fn run_text(text: &str, net: &Imported, shape: &[usize], input: &[f32]) -> (Vec<usize>, Vec<f32>) {
    let program = Program::load(text, None).unwrap();
    let weights = net.weights();
    let mut args = vec![value(shape, input)];
    for p in &net.parameters {
        let t = weights.get(&p.name).unwrap();
        assert_eq!(t.shape, p.shape);
        args.push(value(&t.shape, &t.data));
    }
    let result = evaluate(&program.entry().term, &NatEnv::default(), &args)
        .unwrap_or_else(|e| panic!("{}: {e}", net.name));
    let (mut out_shape, mut out) = (Vec::new(), Vec::new());
    flatten(&result, &mut out_shape, &mut out, 0);
    (out_shape, out)
}

#[test]
fn every_fixture_matches_onnx_runtime() {
    let names = models();
    assert!(names.len() >= 40, "{names:?}");
    let mut failures = Vec::new();
    for name in &names {
        let (net, shape, input) = imported(name);
        let (expected_shape, expected) = npy(&fixtures().join(format!("{name}.ort.npy")));
        let (out_shape, out) = run(&net, &shape, &input);
        assert_eq!(out_shape, expected_shape, "{name}");
        assert_eq!(net.output_shape, expected_shape, "{name}");
        // Relative to the value, or to the output's scale where a value is near 0
        // (a sum that cancels): ONNX Runtime adds in another order.
        let scale = expected.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-6);
        let worst = out
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs() / b.abs().max(scale * 1e-2))
            .fold(0f32, f32::max);
        if worst > 1e-4 {
            failures.push(format!("{name}: relative difference {worst:e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fixture_type_checks_prints_and_parses_back() {
    for name in models() {
        let (net, ..) = imported(&name);
        let program = Program::load(&net.program, None).unwrap();
        assert_eq!(program.entry().name, net.entry, "{name}");
        // The whole program as the entry point's typed term (the layers' defs
        // inlined, their sizes applied), printed, parsed and printed again.
        let printed = print_definition(&program.entry().name, &program.entry().term);
        let reloaded = Program::load(&printed, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = print_definition(&reloaded.entry().name, &reloaded.entry().term);
        assert_eq!(printed, again, "{name}");
        assert_eq!(
            reloaded.entry().ty.to_string(),
            program.entry().ty.to_string()
        );
        // And the program's own text, def by def, parses back.
        assert_eq!(
            parse_program(&net.program).unwrap().len(),
            program.defs.len()
        );
    }
}

#[test]
fn the_network_def_is_a_chain_of_lets() {
    const KINDS: &[&str] = &[
        "conv",
        "depthwise",
        "bias",
        "batchnorm",
        "relu",
        "clip",
        "add",
        "mul",
        "maxpool",
        "avgpool",
        "globalavgpool",
        "flatten",
        "gemm",
        "matmul",
        "softmax",
        "concat",
    ];
    for name in models() {
        let (net, ..) = imported(&name);
        let program = Program::load(&net.program, None).unwrap();
        let defs: Vec<&str> = program.defs.iter().map(|d| d.name.as_str()).collect();
        for d in &defs[..defs.len() - 1] {
            let kind = d.split('_').next().unwrap();
            assert!(KINDS.contains(&kind), "{name}: def {d}");
        }
        let text = net
            .program
            .split(&format!("def {}(", net.entry))
            .nth(1)
            .unwrap();
        let mut known: Vec<String> = vec![net.input.0.clone()];
        known.extend(net.parameters.iter().map(|p| p.name.clone()));
        let body: Vec<&str> = text.lines().skip(1).map(str::trim).collect();
        let (last, lets) = body
            .iter()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .split_last()
            .map(|(l, r)| (l.to_string(), r.to_vec()))
            .unwrap();
        assert_eq!(lets.len(), net.layers.len(), "{name}");
        for (line, layer) in lets.iter().zip(&net.layers) {
            let rest = line.strip_prefix("let ").unwrap();
            let (var, call) = rest.split_once(" = ").unwrap();
            let call = call.strip_suffix(" in").unwrap();
            let (def, args) = call.split_once('(').unwrap();
            let args: Vec<&str> = args.strip_suffix(')').unwrap().split(", ").collect();
            assert!(defs.contains(&def), "{name}: {line}");
            assert_eq!((var, def), (layer.var.as_str(), layer.def.as_str()));
            for a in &args {
                assert!(known.iter().any(|k| k == a), "{name}: {line}: {a}");
            }
            known.push(var.to_string());
        }
        assert!(known.contains(&last), "{name}: {last}");
    }
}

#[test]
fn weights_are_in_the_model_order_with_their_shapes() {
    let (net, ..) = imported("resnet_block");
    let onnx: Vec<&str> = net.parameters.iter().map(|p| p.onnx.as_str()).collect();
    assert_eq!(
        onnx,
        [
            "conv1.weight",
            "bn2.weight",
            "bn2.bias",
            "bn2.running_mean",
            "bn2.running_var",
            "conv4.weight",
            "bn5.weight",
            "bn5.bias",
            "bn5.running_mean",
            "bn5.running_var",
        ]
    );
    assert_eq!(net.parameters[0].name, "conv1_weight");
    assert_eq!(net.parameters[0].shape, [4, 4, 3, 3]);
    let summary = net.summary();
    assert_eq!(summary["model"], "resnet_block");
    assert_eq!(summary["nodes"], 7);
    assert_eq!(summary["layers"], 7);
    assert_eq!(summary["parameters"], 10);
    assert_eq!(summary["weights_bytes"], 4 * (2 * 4 * 4 * 9 + 8 * 4));
    let flops = summary["flops"].as_f64().unwrap();
    assert!(flops > 2.0 * 2.0 * 4.0 * 64.0 * 36.0, "{flops}");
    // A broadcast bias is a parameter of its channels alone.
    let (bias, ..) = imported("add_bias");
    assert_eq!(bias.parameters[0].shape, [3]);
    assert_eq!(bias.layers[0].def, "bias_nchw");
}

#[test]
fn write_makes_both_files_and_they_load_back() {
    let (net, shape, input) = imported("tiny_resnet");
    let dir = std::env::temp_dir().join(format!("elevate-onnx-write-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (rise, weights) = net.write(&dir.join("out")).unwrap();
    assert_eq!(rise, dir.join("out/tiny_resnet.rise"));
    assert_eq!(std::fs::read_to_string(&rise).unwrap(), net.program);
    let back = elevate_onnx::Weights::read(&weights).unwrap();
    assert_eq!(back, net.weights());
    let names: Vec<&str> = back.iter().map(|t| t.name.as_str()).collect();
    let params: Vec<&str> = net.parameters.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, params);
    // Nothing else is left in the folder.
    assert_eq!(std::fs::read_dir(dir.join("out")).unwrap().count(), 2);
    let summary = net.summary();
    assert_eq!(summary["rise"], rise.display().to_string());
    assert_eq!(summary["weights"], weights.display().to_string());
    let (_, out) = run(&net, &shape, &input);
    assert_eq!(out.len(), 6);
    // A folder that cannot be made: an error, nothing written.
    std::fs::write(dir.join("file"), b"").unwrap();
    let e = net.write(&dir.join("file/sub")).unwrap_err();
    assert!(e.to_string().contains("cannot write"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn symbolic_batch_takes_the_batch_asked_for() {
    let path = fixtures().join("batch_symbolic.onnx");
    let one = import(&path, &ImportOptions::default()).unwrap();
    assert_eq!(one.input.1, [1, 3, 8, 8]);
    assert!(one.program.contains(": 1.3.8.8.f32"));
    let four = import(&path, &ImportOptions { batch: Some(4) }).unwrap();
    assert_eq!(four.input.1, [4, 3, 8, 8]);
    assert_eq!(four.output_shape, [4, 3]);
    // A fixed batch cannot be changed.
    let e = import(
        &fixtures().join("resnet_block.onnx"),
        &ImportOptions { batch: Some(2) },
    )
    .unwrap_err();
    assert!(e.to_string().contains("fixed batch of 1"), "{e}");
    let e = import(&path, &ImportOptions { batch: Some(0) }).unwrap_err();
    assert!(e.to_string().contains("at least 1"), "{e}");
}

/// The library's kernels rewrite the layers as the importer writes them:
/// `convKernel` every convolution, `microKernel` every product; the rewritten network
/// computes what it did.
#[test]
fn convolutions_and_products_take_the_library_kernels() {
    use elevate_core::Context;
    let mut rewritten = 0;
    for name in models() {
        let (net, shape, input) = imported(&name);
        // The models of one convolution or product (and its bias): the strategies
        // apply to a network layer by layer, here the layer is the network.
        let Some(first) = net.layers.first() else {
            continue;
        };
        if net.layers[1..].iter().any(|l| l.kind != "bias") {
            continue;
        }
        let strategy = match first.kind.as_str() {
            "conv" => {
                let (k, ow) = (first.shape[1], first.shape[3]);
                let w = if k % 2 == 0 { 2 } else { k };
                format!("convKernel({ow}, {k}, 1, {w})")
            }
            "gemm" | "matmul" => {
                let (n, m) = (first.shape[0], first.shape[1]);
                format!(
                    "microKernel({n}, {m}, 1, {})",
                    if m % 2 == 0 { 2 } else { m }
                )
            }
            _ => continue,
        };
        let program = Program::load(&net.program, None).unwrap();
        let kernel = elevate_rise::registry().parse(&strategy).unwrap();
        let term = kernel
            .apply(&program.entry().term, &mut Context::default())
            .unwrap_or_else(|e| panic!("{name}: {strategy}: {e}"));
        let printed = print_definition(&net.entry, &term);
        let (tiled_shape, tiled) = run_text(&printed, &net, &shape, &input);
        let (plain_shape, plain) = run(&net, &shape, &input);
        assert_eq!(tiled_shape, plain_shape, "{name}");
        for (a, b) in tiled.iter().zip(&plain) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "{name}: {a} != {b}"
            );
        }
        rewritten += 1;
    }
    assert!(rewritten >= 17, "{rewritten}");
}
