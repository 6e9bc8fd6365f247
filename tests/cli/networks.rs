//! NumPy `.npy` inputs and `--out`, `--weights` from safetensors, and `elevate import`.

use super::{assert_fails_with, elevate, example, stderr, stdout};
use std::path::{Path, PathBuf};

/// A fresh folder for one test.
pub(super) fn folder(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("elevate-networks-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(super) fn text(path: &Path) -> String {
    path.display().to_string()
}

/// Writes an `.npy` file of `data` (C order) with `shape`.
fn npy<T: npyz::AutoSerialize + Clone>(path: &Path, shape: &[u64], data: &[T]) -> String {
    use npyz::WriterBuilder as _;
    let mut bytes = Vec::new();
    let mut writer = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut bytes)
        .begin_nd()
        .unwrap();
    writer.extend(data.iter().cloned()).unwrap();
    writer.finish().unwrap();
    std::fs::write(path, bytes).unwrap();
    text(path)
}

/// Writes an `.npy` file of version 1.0 with the header `dict` and the bytes `data`.
fn raw_npy(path: &Path, dict: &str, data: &[u8]) -> String {
    let mut header = dict.to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
    text(path)
}

/// The shape and `f32` data of an `.npy` file.
fn read_f32(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let file = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = file.shape().to_vec();
    (shape, file.into_vec().unwrap())
}

/// Writes a safetensors file of `f32` tensors (name, shape, data), in order.
fn safetensors(path: &Path, tensors: &[(&str, &[u64], &[f32])]) -> String {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let start = data.len();
        for v in *values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        header.insert(
            (*name).to_string(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let mut header = serde_json::Value::Object(header).to_string().into_bytes();
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header);
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
    text(path)
}

const A: [f32; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
const B: [f32; 6] = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];

#[test]
fn npy_inputs_and_outputs_agree_with_json() {
    let dir = folder("round-trip");
    let json = elevate(&[
        "eval",
        &example("matmul.rise"),
        "--input",
        &example("a.json"),
        &example("b.json"),
    ]);
    assert!(json.status.success(), "{}", stderr(&json));
    let a = npy(&dir.join("a.npy"), &[2, 3], &A);
    let b = npy(&dir.join("b.npy"), &[3, 2], &B);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&json));
    // JSON and .npy inputs mixed.
    let o = elevate(&[
        "eval",
        &example("matmul.rise"),
        "--input",
        &example("a.json"),
        &b,
    ]);
    assert_eq!(stdout(&o), stdout(&json), "{}", stderr(&o));
    // --out FILE.npy: the same values, nothing on standard output.
    let out = dir.join("c.npy");
    let o = elevate(&[
        "eval",
        &example("matmul.rise"),
        "--input",
        &a,
        &b,
        "--out",
        &text(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(read_f32(&out), (vec![2, 2], vec![58.0, 64.0, 139.0, 154.0]));
    // --out FILE.json: what standard output shows without it.
    let out = dir.join("c.json");
    let o = elevate(&[
        "eval",
        &example("matmul.rise"),
        "--input",
        &a,
        &b,
        "--out",
        &text(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), stdout(&json));
    // The output read back as an input: the product of the 2x2 result with itself.
    let c = text(&dir.join("c.npy"));
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &c, &c]);
    assert_eq!(
        stdout(&o),
        "[[12260.0,13568.0],[29468.0,32612.0]]\n",
        "{}",
        stderr(&o)
    );
    // Nothing else is left in the folder (no temporary files).
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.npy", "b.npy", "c.json", "c.npy"]);
}

#[test]
fn fortran_order_and_big_endian_npy_are_read_as_numpy_means_them() {
    let dir = folder("orders");
    let a = npy(&dir.join("a.npy"), &[2, 3], &A);
    // b = [[7, 8], [9, 10], [11, 12]], big-endian, in Fortran order (columns first).
    let data: Vec<u8> = [7.0f32, 9.0, 11.0, 8.0, 10.0, 12.0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let dict = "{'descr': '>f4', 'fortran_order': True, 'shape': (3, 2), }";
    let b = raw_npy(&dir.join("b.npy"), dict, &data);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &a, &b]);
    assert_eq!(
        stdout(&o),
        "[[58.0,64.0],[139.0,154.0]]\n",
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_wrong_dtype_names_the_parameter_its_type_and_the_shape_found() {
    let dir = folder("dtype");
    let a = npy(&dir.join("a.npy"), &[2, 3], &A);
    let b = npy(&dir.join("b.npy"), &[3, 2], &[7i64, 8, 9, 10, 11, 12]);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &a, &b]);
    assert_fails_with(&o, "b.npy: input error: parameter `b`: expected k.m.f32");
    assert_fails_with(&o, "found an int64 array of shape [3, 2]");
    // A dtype that no RISE scalar is.
    let b = npy(&dir.join("u8.npy"), &[3, 2], &[7u8, 8, 9, 10, 11, 12]);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &a, &b]);
    assert_fails_with(&o, "u8.npy: input error: parameter `b` (k.m.f32)");
    assert_fails_with(&o, "dtype `|u1` and shape [3, 2]");
}

#[test]
fn a_wrong_shape_names_the_parameter_its_type_and_the_shape_found() {
    let dir = folder("shape");
    let a = npy(&dir.join("a.npy"), &[2, 3], &A);
    // k is 3 from `a`: a 2x2 `b` does not fit.
    let b = npy(&dir.join("b.npy"), &[2, 2], &B[..4]);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &a, &b]);
    assert_fails_with(
        &o,
        "parameter `b`: expected k.m.f32 (a float32 array of shape [3, m]), \
         found a float32 array of shape [2, 2]",
    );
    // A dimension too many.
    let b = npy(&dir.join("b3.npy"), &[3, 2, 1], &B);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &a, &b]);
    assert_fails_with(&o, "parameter `b`: expected k.m.f32");
    assert_fails_with(&o, "found a float32 array of shape [3, 2, 1]");
    // A fixed size that differs.
    let program = dir.join("fixed.rise");
    std::fs::write(&program, "def f(x: 4.f32) = x |> map(fun(v => v * 2.0))\n").unwrap();
    let x = npy(&dir.join("x.npy"), &[3], &A[..3]);
    let o = elevate(&["eval", &text(&program), "--input", &x]);
    assert_fails_with(&o, "x.npy: input error: parameter `x`: expected 4.f32");
    assert_fails_with(&o, "found a float32 array of shape [3]");
}

#[test]
fn a_truncated_or_corrupt_npy_is_an_error_naming_the_file() {
    let dir = folder("truncated");
    let a = npy(&dir.join("a.npy"), &[2, 3], &A);
    let whole = std::fs::read(&a).unwrap();
    let short = dir.join("short.npy");
    std::fs::write(&short, &whole[..whole.len() - 3]).unwrap();
    let b = npy(&dir.join("b.npy"), &[3, 2], &B);
    let o = elevate(&[
        "eval",
        &example("matmul.rise"),
        "--input",
        &text(&short),
        &b,
    ]);
    assert_fails_with(
        &o,
        "short.npy: input error: truncated: the header says 6 elements",
    );
    std::fs::write(&short, &whole[..40]).unwrap();
    let o = elevate(&[
        "eval",
        &example("matmul.rise"),
        "--input",
        &text(&short),
        &b,
    ]);
    assert_fails_with(
        &o,
        "short.npy: input error: truncated: the file ends inside its header",
    );
    let garbage = dir.join("garbage.npy");
    std::fs::write(&garbage, b"{\"not\": \"numpy\"}").unwrap();
    let o = elevate(&[
        "eval",
        &example("matmul.rise"),
        "--input",
        &text(&garbage),
        &b,
    ]);
    assert_fails_with(&o, "garbage.npy: input error: not a NumPy .npy file");
    // Headers whose shapes say more than the file holds, or than any memory does.
    let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (20000, 30000), }";
    let big = raw_npy(&dir.join("big.npy"), dict, &whole[128..]);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &big, &b]);
    assert_fails_with(
        &o,
        "big.npy: input error: truncated: the header says 600000000 elements",
    );
    let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }";
    let huge = raw_npy(&dir.join("huge.npy"), dict, &whole[128..]);
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &huge, &b]);
    assert_fails_with(&o, "the shape [4294967296, 4294967296] is too large");
}

#[test]
fn out_to_a_place_that_cannot_be_written_leaves_nothing() {
    let dir = folder("unwritable");
    let a = npy(&dir.join("a.npy"), &[2, 3], &A);
    let b = npy(&dir.join("b.npy"), &[3, 2], &B);
    let args = |out: &str| {
        elevate(&[
            "eval",
            &example("matmul.rise"),
            "--input",
            &a,
            &b,
            "--out",
            out,
        ])
    };
    let missing = dir.join("no-such-folder").join("c.npy");
    assert_fails_with(&args(&text(&missing)), "c.npy: cannot write");
    assert!(!missing.exists());
    // A folder where the file would go.
    let taken = dir.join("taken.npy");
    std::fs::create_dir(&taken).unwrap();
    assert_fails_with(&args(&text(&taken)), "taken.npy: cannot write");
    assert!(taken.is_dir());
    // A result with no .npy form: the file that was there is kept as it was.
    let pairs = dir.join("pairs.rise");
    std::fs::write(&pairs, "def f(x: n.f32) = zip(x, x)\n").unwrap();
    let x = npy(&dir.join("x.npy"), &[3], &A[..3]);
    let kept = dir.join("kept.npy");
    std::fs::write(&kept, "old").unwrap();
    let o = elevate(&["eval", &text(&pairs), "--input", &x, "--out", &text(&kept)]);
    assert_fails_with(
        &o,
        "kept.npy: cannot write: a result with pairs has no .npy form",
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a.npy",
            "b.npy",
            "kept.npy",
            "pairs.rise",
            "taken.npy",
            "x.npy"
        ]
    );
    // Another extension is a usage error.
    assert_eq!(args(&text(&dir.join("c.txt"))).status.code(), Some(2));
}

/// `x · w + b`, elementwise: a program whose parameters after the first are weights.
const AFFINE: &str =
    "def affine(x: n.f32, w: n.f32, b: f32) =\n  zip(x, w) |> map(fun(p => fst(p) * snd(p) + b))\n";

#[test]
fn weights_bind_the_parameters_after_the_first_by_name() {
    let dir = folder("weights");
    let program = dir.join("affine.rise");
    std::fs::write(&program, AFFINE).unwrap();
    let program = text(&program);
    let x = npy(&dir.join("x.npy"), &[3], &[1.0f32, 1.0, 2.0]);
    // In another order than the parameters': bound by name.
    let w = dir.join("w.safetensors");
    let w = safetensors(&w, &[("b", &[], &[0.5]), ("w", &[3], &[1.0, 2.0, 3.0])]);
    let o = elevate(&["eval", &program, "--input", &x, "--weights", &w]);
    assert_eq!(stdout(&o), "[1.5,2.5,6.5]\n", "{}", stderr(&o));
    // The same as every parameter given as an input.
    let json = |name: &str, contents: &str| {
        let path = dir.join(name);
        std::fs::write(&path, contents).unwrap();
        text(&path)
    };
    let (xj, wj, bj) = (
        json("x.json", "[1, 1, 2]"),
        json("w.json", "[1, 2, 3]"),
        json("b.json", "0.5"),
    );
    let o = elevate(&["eval", &program, "--input", &xj, &wj, &bj]);
    assert_eq!(stdout(&o), "[1.5,2.5,6.5]\n", "{}", stderr(&o));
    // A JSON first input with weights.
    let o = elevate(&["eval", &program, "--input", &xj, "--weights", &w]);
    assert_eq!(stdout(&o), "[1.5,2.5,6.5]\n", "{}", stderr(&o));
    // --random draws the first parameter only, its sizes from the weights.
    let o = elevate(&["eval", &program, "--random", "3", "--weights", &w]);
    assert!(o.status.success(), "{}", stderr(&o));
    let values: Vec<f64> = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(values.len(), 3);
    let o = elevate(&[
        "eval",
        &program,
        "--random",
        "3",
        "--nat",
        "n=4",
        "--weights",
        &w,
    ]);
    assert_fails_with(&o, "--nat n=4, but the weights make it 3");
    // --input gives the first parameter only.
    let o = elevate(&["eval", &program, "--input", &x, &x, "--weights", &w]);
    assert_fails_with(&o, "expected 1 input (x: n.f32)");
}

#[test]
fn a_missing_extra_or_misshapen_tensor_is_an_error_naming_it() {
    let dir = folder("bad-weights");
    let program = dir.join("affine.rise");
    std::fs::write(&program, AFFINE).unwrap();
    let program = text(&program);
    let x = npy(&dir.join("x.npy"), &[3], &[1.0f32, 1.0, 2.0]);
    let eval = |name: &str, tensors: &[(&str, &[u64], &[f32])]| {
        let w = safetensors(&dir.join(name), tensors);
        elevate(&["eval", &program, "--input", &x, "--weights", &w])
    };
    let w: &[f32] = &[1.0, 2.0, 3.0];
    let o = eval("missing.safetensors", &[("w", &[3], w)]);
    assert_fails_with(
        &o,
        "missing.safetensors: input error: no tensor `b` for the parameter `b` (f32) of `affine`",
    );
    let o = eval(
        "extra.safetensors",
        &[("w", &[3], w), ("b", &[], &[0.5]), ("c", &[1], &[1.0])],
    );
    assert_fails_with(
        &o,
        "extra.safetensors: input error: tensor `c` is not a parameter of `affine`",
    );
    let o = eval(
        "long.safetensors",
        &[("w", &[4], &[1.0, 2.0, 3.0, 4.0]), ("b", &[], &[0.5])],
    );
    assert_fails_with(
        &o,
        "long.safetensors: input error: tensor `w`: expected n.f32 (a float32 array of shape \
         [3]), found a float32 array of shape [4]",
    );
    let o = eval("rank.safetensors", &[("w", &[3], w), ("b", &[1], &[0.5])]);
    assert_fails_with(&o, "tensor `b`: expected f32 (a float32 array of shape [])");
    // Not a safetensors file at all.
    let bad = dir.join("bad.safetensors");
    std::fs::write(&bad, "not weights").unwrap();
    let o = elevate(&["eval", &program, "--input", &x, "--weights", &text(&bad)]);
    assert_fails_with(&o, "bad.safetensors");
    // `compile` checks the weights, and takes its sizes from them.
    let w = safetensors(
        &dir.join("w.safetensors"),
        &[("w", &[3], w), ("b", &[], &[0.5])],
    );
    let o = elevate(&["compile", &program, "--weights", &w, "--emit", "rise"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("def affine(x: 3.f32, w: 3.f32, b: f32)"),
        "{}",
        stdout(&o)
    );
    let extra = text(&dir.join("extra.safetensors"));
    let o = elevate(&["compile", &program, "--weights", &extra, "--emit", "rise"]);
    assert_fails_with(&o, "tensor `c` is not a parameter of `affine`");
}

#[cfg(feature = "mlir")]
#[test]
fn run_reads_and_writes_npy_and_passes_weights_as_arguments() {
    let dir = folder("run");
    let a = npy(&dir.join("a.npy"), &[2, 3], &A);
    let b = npy(&dir.join("b.npy"), &[3, 2], &B);
    let out = dir.join("c.npy");
    let o = elevate(&[
        "run",
        &example("matmul.rise"),
        "--input",
        &a,
        &b,
        "--out",
        &text(&out),
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(read_f32(&out), (vec![2, 2], vec![58.0, 64.0, 139.0, 154.0]));
    let program = dir.join("affine.rise");
    std::fs::write(&program, AFFINE).unwrap();
    let x = npy(&dir.join("x.npy"), &[3], &[1.0f32, 1.0, 2.0]);
    let w = dir.join("w.safetensors");
    let w = safetensors(&w, &[("w", &[3], &[1.0, 2.0, 3.0]), ("b", &[], &[0.5])]);
    let o = elevate(&[
        "run",
        &text(&program),
        "--input",
        &x,
        "--weights",
        &w,
        "--check",
    ]);
    assert_eq!(stdout(&o), "[1.5,2.5,6.5]\n", "{}", stderr(&o));
    let short = safetensors(
        &dir.join("short.safetensors"),
        &[("w", &[3], &[1.0, 2.0, 3.0])],
    );
    let o = elevate(&["run", &text(&program), "--input", &x, "--weights", &short]);
    assert_fails_with(&o, "no tensor `b`");
}

/// A model of `tests/onnx/fixtures/` (committed with the importer's tests).
pub(super) fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/onnx/fixtures")
        .join(name);
    assert!(path.exists(), "the fixture {} is missing", path.display());
    text(&path)
}

/// The largest difference between two `.npy` files of `f32`s of one shape.
fn max_difference(a: &Path, b: &Path) -> f32 {
    let ((sa, a), (sb, b)) = (read_f32(a), read_f32(b));
    assert_eq!(sa, sb);
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn import_writes_a_program_and_its_weights_that_compute_what_onnx_runtime_does() {
    let dir = folder("import");
    let o = elevate(&["import", &fixture("resnet_block.onnx"), "-o", &text(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    for key in [
        "model",
        "nodes",
        "layers",
        "parameters",
        "weights_bytes",
        "rise",
        "weights",
        "flops",
    ] {
        assert!(line.get(key).is_some(), "{key} missing: {line}");
    }
    assert_eq!(line["model"], "resnet_block");
    let (rise, weights) = (
        dir.join("resnet_block.rise"),
        dir.join("resnet_block.safetensors"),
    );
    assert_eq!(line["rise"], text(&rise));
    assert!(rise.exists() && weights.exists());
    // The program with its weights and ONNX Runtime's input gives ONNX Runtime's output.
    let out = dir.join("y.npy");
    let o = elevate(&[
        "eval",
        &text(&rise),
        "--input",
        &fixture("resnet_block.input.npy"),
        "--weights",
        &text(&weights),
        "--out",
        &text(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = PathBuf::from(fixture("resnet_block.ort.npy"));
    let difference = max_difference(&out, &reference);
    assert!(
        difference < 1e-4,
        "differs from ONNX Runtime by {difference}"
    );
    // A symbolic batch becomes --batch.
    let o = elevate(&[
        "import",
        &fixture("batch_symbolic.onnx"),
        "-o",
        &text(&dir),
        "--batch",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let program = std::fs::read_to_string(dir.join("batch_symbolic.rise")).unwrap();
    let entry = program.lines().rfind(|l| l.starts_with("def ")).unwrap();
    assert!(entry.contains("2.3.8.8.f32"), "{entry}");
    // Without -o, into the current folder.
    let here = folder("import-here");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args(["import", &fixture("relu.onnx")])
        .current_dir(&here)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(here.join("relu.rise").exists() && here.join("relu.safetensors").exists());
}

#[test]
fn a_model_that_cannot_be_imported_is_an_error_naming_it_and_writes_nothing() {
    let dir = folder("import-errors");
    let import = |model: &str| elevate(&["import", &fixture(model), "-o", &text(&dir)]);
    let o = import("bad_unsupported_op.onnx");
    assert_fails_with(&o, "bad_unsupported_op.onnx: node 1 `the_tanh` (Tanh)");
    let o = import("bad_truncated.onnx");
    assert_fails_with(&o, "bad_truncated.onnx: not an ONNX model");
    let o = elevate(&["import", &text(&dir.join("none.onnx")), "-o", &text(&dir)]);
    assert_fails_with(&o, "none.onnx");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let o = elevate(&["import", &fixture("relu.onnx"), "--batch", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `run` of an imported network: compiled layer by layer with `network`, equal to
/// ONNX Runtime's output, `--check`ed against the interpreter, timed by `--bench`.
#[cfg(feature = "mlir")]
#[test]
fn run_compiles_an_imported_network_layer_by_layer() {
    let dir = folder("run-network");
    let o = elevate(&["import", &fixture("tiny_resnet.onnx"), "-o", &text(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (rise, weights) = (
        dir.join("tiny_resnet.rise"),
        dir.join("tiny_resnet.safetensors"),
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            rise.to_str().unwrap(),
            "--weights",
            weights.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        elevate(&args)
    };
    let out = dir.join("y.npy");
    let input = fixture("tiny_resnet.input.npy");
    let o = run(&[
        "--input",
        &input,
        "--out",
        &text(&out),
        "--check",
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("check: same values as the interpreter"),
        "{}",
        stderr(&o)
    );
    let reference = PathBuf::from(fixture("tiny_resnet.ort.npy"));
    let difference = max_difference(&out, &reference);
    assert!(
        difference < 1e-4,
        "differs from ONNX Runtime by {difference}"
    );
    // --bench: one line, the units compiled once each.
    let o = run(&["--input", &input, "--bench", "3", "--strategy", "network"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["runs"], 3);
    assert!(
        line["units"].as_u64().unwrap() <= line["layers"].as_u64().unwrap(),
        "{line}"
    );
    assert!(
        line["prepared"].as_u64().unwrap() >= 1,
        "convKernel's packed weights: {line}"
    );
    // A layer given its own strategy; a strategy naming a layer it does not have.
    let o = run(&["--random", "1", "--strategy", "layer(0, id) ; network"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["--random", "1", "--strategy", "layer(999, id)"]);
    assert_fails_with(&o, "layer(999, ...): the network has");
    let o = run(&["--random", "1", "--strategy", r#"layers("nope", id)"#]);
    assert_fails_with(&o, "no layer of that kind");
    // An input of another shape names the parameter and the shape expected.
    let wrong = dir.join("wrong.npy");
    let wrong = npy(&wrong, &[1, 2, 2], &[0f32; 4]);
    let o = run(&["--input", &wrong]);
    assert_fails_with(&o, "expected");
    assert!(stderr(&o).contains("[1, 2, 2]"), "{}", stderr(&o));
    let (shape, values) = read_f32(Path::new(&input));
    let as_f64: Vec<f64> = values.iter().map(|v| f64::from(*v)).collect();
    let doubles = npy(&dir.join("doubles.npy"), &shape, &as_f64);
    let o = run(&["--input", &doubles]);
    assert_fails_with(&o, "found a float64 array");
    // Weights without one of the network's tensors, or with one of another shape.
    let tensors = elevate::onnx::weights::Weights::read(&weights)
        .unwrap()
        .into_tensors();
    let name = tensors[0].name.clone();
    let fewer = elevate::onnx::weights::Weights::from_tensors(tensors[1..].to_vec()).unwrap();
    let missing = dir.join("missing.safetensors");
    fewer.write(&missing).unwrap();
    let o = elevate(&[
        "run",
        &text(&rise),
        "--weights",
        &text(&missing),
        "--random",
        "1",
    ]);
    assert_fails_with(&o, &format!("`{name}`"));
    let mut reshaped = tensors.clone();
    let n = reshaped[0].data.len();
    reshaped[0] =
        elevate::onnx::weights::Tensor::new(name.clone(), vec![n], reshaped[0].data.clone())
            .unwrap();
    let misshapen = dir.join("misshapen.safetensors");
    elevate::onnx::weights::Weights::from_tensors(reshaped)
        .unwrap()
        .write(&misshapen)
        .unwrap();
    let o = elevate(&[
        "run",
        &text(&rise),
        "--weights",
        &text(&misshapen),
        "--random",
        "1",
    ]);
    assert_fails_with(&o, &format!("`{name}` has shape [{n}]"));
}
