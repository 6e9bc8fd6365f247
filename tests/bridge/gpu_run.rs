//! Running the GPU target: the parameters of each launch, the bundle a runner without
//! LLVM takes, and a run that needs a GPU (an error that says so where there is none;
//! on a machine with one, the interpreter's values).

use elevate::bridge::{jit, Error, Options};
use elevate::rise::{evaluate, io, NatEnv, Program, Value};

/// The 2-D product on global threads (64 x 32 times 32 x 48).
const PRODUCT: &str = "def f(a: 64.32.f32, b: 32.48.f32) : 64.48.f32 =
  a |> mapGlobal(1, fun(arow => transpose(b) |> mapGlobal(0, fun(bcol =>
    zip(arow, bcol) |> map(fun(pr => fst(pr) * snd(pr))) |> reduce(add, 0.0)))))";

/// A scalar parameter beside a buffer.
const SCALED: &str =
    "def f(s: f32, x: 256.f32) : 256.f32 = x |> mapGlobal(0, fun(v => v * s + 1.0))";

fn compiled(source: &str) -> (Program, jit::GpuCompiled, Vec<Value>) {
    let program = Program::load(source, None).unwrap();
    let gpu = Options {
        target: elevate::bridge::Target::Gpu,
        ..Options::default()
    };
    let compiled = elevate::bridge::compile_gpu(&program, &NatEnv::default(), None, &gpu)
        .unwrap_or_else(|e| panic!("{e}"));
    let inputs = io::random_inputs(&program.signature(), &NatEnv::default(), 7).unwrap();
    (program, compiled, inputs)
}

fn little_endian_f32(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pending = vec![v.clone()];
    while let Some(v) = pending.pop() {
        match v {
            Value::F32(x) => out.extend(x.to_le_bytes()),
            Value::Array(a) => {
                let items: Vec<Value> = (0..a.len()).map(|i| a.get(i).unwrap()).collect();
                pending.extend(items.into_iter().rev());
            }
            other => panic!("not f32 data: {other:?}"),
        }
    }
    out
}

#[test]
fn each_buffer_is_passed_as_mlir_passes_a_memref() {
    let (_, compiled, inputs) = compiled(PRODUCT);
    let (a, b, c) = (0x1000, 0x2000, 0x3000);
    let params = compiled.launch_parameters(&inputs, &[a, b, c]).unwrap();
    // The fill writes c; the product reads a and b and writes c: each its allocated
    // and aligned pointers, offset 0, sizes, row-major strides.
    assert_eq!(params[0], vec![c, c, 0, 64, 48, 48, 1]);
    assert_eq!(
        params[1],
        vec![a, a, 0, 64, 32, 32, 1, b, b, 0, 32, 48, 48, 1, c, c, 0, 64, 48, 48, 1]
    );
    let e = compiled.launch_parameters(&inputs, &[a]).unwrap_err();
    assert!(e.to_string().contains("1 addresses for 3 buffers"), "{e}");
}

#[test]
fn a_scalar_argument_is_passed_by_value() {
    let (_, compiled, inputs) = compiled(SCALED);
    let Value::F32(s) = inputs[0] else {
        panic!("{:?}", inputs[0])
    };
    let params = compiled.launch_parameters(&inputs, &[0x10, 0x20]).unwrap();
    assert_eq!(params.len(), 1);
    assert!(
        params[0].contains(&u64::from(s.to_bits())),
        "{params:?} lacks {s}"
    );
}

#[test]
fn a_bundle_holds_the_ptx_the_manifest_the_inputs_and_the_expected_result() {
    let (program, compiled, inputs) = compiled(PRODUCT);
    let expected = evaluate(&program.entry().term, &NatEnv::default(), &inputs).unwrap();
    let bundle = compiled.bundle(&inputs, Some(&expected)).unwrap();
    let file = |name: &str| {
        bundle
            .files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, bytes)| bytes.clone())
            .unwrap_or_else(|| {
                panic!(
                    "no {name} in {:?}",
                    bundle.files.iter().map(|f| &f.0).collect::<Vec<_>>()
                )
            })
    };
    let manifest: serde_json::Value = serde_json::from_slice(&file("manifest.json")).unwrap();
    assert_eq!(manifest["format"], jit::BUNDLE_FORMAT);
    assert_eq!(manifest["launches"], compiled.manifest()["launches"]);
    for k in manifest["kernels"].as_array().unwrap() {
        let ptx = String::from_utf8(file(k["file"].as_str().unwrap())).unwrap();
        assert!(
            ptx.contains(".target sm_90") && ptx.contains(".entry"),
            "{ptx}"
        );
    }
    let roles: Vec<&str> = manifest["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["input", "input", "output"]);
    assert_eq!(manifest["buffers"][1]["shape"], serde_json::json!([32, 48]));
    assert_eq!(file("arg0.bin"), little_endian_f32(&inputs[0]));
    assert_eq!(file("arg1.bin"), little_endian_f32(&inputs[1]));
    assert_eq!(file("expected2.bin"), little_endian_f32(&expected));
    assert_eq!(manifest["flops"], 2 * 64 * 48 * 32);
    // Without the expected result: no file for it.
    let bare = compiled.bundle(&inputs, None).unwrap();
    assert!(bare.files.iter().all(|(n, _)| !n.starts_with("expected")));
}

#[test]
fn a_gpu_run_is_the_interpreter_s_values_or_an_error_saying_there_is_no_gpu() {
    for source in [PRODUCT, SCALED] {
        let (program, compiled, inputs) = compiled(source);
        match compiled.run(&inputs) {
            Err(Error::Gpu { message }) => {
                assert!(message.contains("no GPU to run on"), "{message}");
                assert!(message.contains("CUDA driver"), "{message}");
            }
            Err(e) => panic!("{e}"),
            Ok(found) => {
                let expected =
                    evaluate(&program.entry().term, &NatEnv::default(), &inputs).unwrap();
                assert!(
                    io::approx_eq(&found.to_json().unwrap(), &expected.to_json().unwrap()),
                    "the GPU computed other values than the interpreter"
                );
            }
        }
    }
}

#[test]
fn a_view_of_an_argument_is_passed_with_its_own_offset_sizes_and_strides() {
    // A 2 x 2 product reads the columns of `a` and the rows of `b` through views of
    // the arguments (the host's `memref.reinterpret_cast`s).
    let (_, compiled, inputs) = compiled(
        "def f(a: 2.2.f32, b: 2.2.f32) : 2.2.f32 =
           a |> mapGlobal(1, fun(arow => transpose(b) |> mapGlobal(0, fun(bcol =>
             zip(arow, bcol) |> map(fun(pr => fst(pr) * snd(pr))) |> reduce(add, 0.0)))))",
    );
    let views: Vec<(usize, i64, Vec<i64>)> = compiled
        .launches()
        .iter()
        .flat_map(|l| &l.params)
        .filter_map(|p| match p {
            jit::Param::View {
                argument,
                offset,
                strides,
                ..
            } => Some((*argument, *offset, strides.clone())),
            _ => None,
        })
        .collect();
    assert!(views.contains(&(0, 1, vec![2])), "{views:?}");
    let params = compiled
        .launch_parameters(&inputs, &[0x100, 0x200, 0x300])
        .unwrap();
    // `a`'s second column: its pointers, offset 1, size 2, stride 2.
    let all: Vec<u64> = params.concat();
    assert!(
        all.windows(5).any(|w| w == [0x100, 0x100, 1, 2, 2]),
        "{params:?}"
    );
}
