//! The `elevate` command line, end to end: output, exit status, messages.

#[cfg(feature = "mlir")]
mod bridge;
#[cfg(feature = "mlir")]
mod network_search;
mod networks;
mod output;
#[cfg(feature = "egraph")]
mod saturate;
#[cfg(feature = "mlir")]
mod search;
#[cfg(feature = "mlir")]
mod workers;

use std::path::PathBuf;
use std::process::{Command, Output};

fn elevate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args(args)
        .output()
        .expect("run elevate")
}

fn example(name: &str) -> String {
    format!("{}/examples/rise/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str, contents: &str) -> String {
    let dir = std::env::temp_dir().join(format!("elevate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

/// Asserts that the command failed with exit status 1 and said `message`.
fn assert_fails_with(o: &Output, message: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    assert!(stderr(o).contains(message), "{}", stderr(o));
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_prints_every_definition_entry_last() {
    let o = elevate(&["check", &example("conv2d.rise")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "slide2d : n.m.f32 -> (n - 2).(m - 2).3.3.f32\nconv3x3 : n.m.f32 -> 3.3.f32 -> n.m.f32\n"
    );
    let o = elevate(&["check", &example("conv2d.rise"), "--entry", "slide2d"]);
    assert_eq!(
        stdout(&o),
        "conv3x3 : n.m.f32 -> 3.3.f32 -> n.m.f32\nslide2d : n.m.f32 -> (n - 2).(m - 2).3.3.f32\n"
    );
}

#[test]
fn eval_reads_json_inputs() {
    let a = temp("a.json", "[[1, 2, 3], [4, 5, 6]]");
    let b = temp("b.json", "[[7, 8], [9, 10], [11, 12]]");
    let o = elevate(&["eval", &example("matmul.rise"), "--input", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[[58.0,64.0],[139.0,154.0]]\n");
}

#[test]
fn eval_makes_reproducible_random_inputs() {
    let run = || {
        elevate(&[
            "eval",
            &example("dot.rise"),
            "--random",
            "7",
            "--nat",
            "n=16",
        ])
    };
    let (first, second) = (run(), run());
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stdout(&first), stdout(&second));
    let value: f64 = stdout(&first).trim().parse().unwrap();
    assert!(value.abs() <= 16.0);
}

#[test]
fn bad_programs_exit_1_with_a_located_message() {
    let path = temp("bad.rise", "def f(x: 1000.f32) =\n  x |> split(3)\n");
    let o = elevate(&["check", &path]);
    assert_eq!(o.status.code(), Some(1));
    let message = stderr(&o);
    assert!(
        message.contains("bad.rise:2:3: nat constraint error"),
        "{message}"
    );
    assert!(message.contains("1000 is not divisible by 3"), "{message}");
    assert!(message.contains("x |> split(3)"), "{message}");
}

#[test]
fn bad_inputs_exit_1() {
    let a = temp("short.json", "[1, 2]");
    let b = temp("long.json", "[1, 2, 3]");
    let o = elevate(&["eval", &example("dot.rise"), "--input", &a, &b]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("input error"), "{}", stderr(&o));
    let not_json = temp("not.json", "[1, 2");
    let o = elevate(&["eval", &example("dot.rise"), "--input", &not_json, &b]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not JSON"), "{}", stderr(&o));
    let o = elevate(&["eval", &example("dot.rise"), "--random", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--nat n="), "{}", stderr(&o));
    let o = elevate(&["check", "/no/such/file.rise"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn random_bytes_are_an_error_not_a_crash() {
    let bytes: Vec<u8> = (0..2000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let dir = std::env::temp_dir().join(format!("elevate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("random.rise");
    std::fs::write(&path, &bytes).unwrap();
    let o = elevate(&["check", &path.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(elevate(&["check"]).status.code(), Some(2));
    assert_eq!(elevate(&["frobnicate"]).status.code(), Some(2));
    let o = elevate(&["eval", &example("dot.rise"), "--random", "1", "--nat", "n"]);
    assert_eq!(o.status.code(), Some(2));
}

const TILED_MATMUL: &str = "def mm<n, k, m>(a: (4*n).k.f32, b: k.m.f32) =\n  a |> map(fun(arow => b |> transpose |> map(fun(bcol =>\n    zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))\n";

#[test]
fn rewrite_prints_a_program_that_checks_again() {
    let program = temp("mm4.rise", TILED_MATMUL);
    let o = elevate(&[
        "rewrite",
        &program,
        "--strategy",
        "topDown(splitJoin(4)) ; topDown(reduceSeq)",
        "--trace",
        "--stats",
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("split(4)") && out.contains("reduceSeq(add, 0.0)") && out.contains("|> join"),
        "{out}"
    );
    let err = stderr(&o);
    assert!(err.contains("splitJoin @ [0, 0, 0, 0, 0]"), "{err}");
    assert!(err.contains("\"steps\":2"), "{err}");
    assert!(err.contains("check: same type, same values"), "{err}");
    // The output is a program: it checks with the same type.
    let again = temp("mm4-rewritten.rise", &out);
    let o = elevate(&["check", &again]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "mm : (n: nat) -> (k: nat) -> (m: nat) -> (4*n).k.f32 -> k.m.f32 -> (4*n).m.f32\n"
    );
}

#[test]
fn rewrite_reads_strategy_files_and_reports_failures() {
    let program = temp("mm4b.rise", TILED_MATMUL);
    let file = temp(
        "s.elv",
        "// tile the rows\ndef rows(n) = topDown(splitJoin(n))\nrows(4) ; BENF",
    );
    let o = elevate(&["rewrite", &program, "--strategy", &format!("@{file}")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = elevate(&[
        "rewrite",
        &program,
        "--strategy",
        "topDown(removeTransposePair)",
    ]);
    assert_fails_with(&o, "strategy `topDown` failed");
    let o = elevate(&["rewrite", &program, "--strategy", "topDown(nope)"]);
    assert_fails_with(&o, "strategy:1:9: strategy error: unknown strategy `nope`");
    let o = elevate(&[
        "rewrite",
        &program,
        "--strategy",
        "normalize(idAfter)",
        "--budget-steps",
        "1000",
    ]);
    assert_fails_with(&o, "budget of 1000 strategy applications exhausted");
}

#[test]
fn strategies_lists_every_name_with_its_meaning() {
    let o = elevate(&["strategies"]);
    assert!(o.status.success());
    let out = stdout(&o);
    for line in [
        "topDown(s)",
        "splitJoin(n)",
        "mapFusion",
        "argumentOf(PRIM, s)",
        "BENF",
        // A network's strategy.
        "network ",
        "layer(i, s)",
        "layers(\"KIND\", s)",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(line)),
            "{line} missing:\n{out}"
        );
    }
    assert!(
        out.lines().all(|l| l.split_whitespace().count() >= 2),
        "{out}"
    );
}

#[test]
fn rewrite_runs_the_matmul_strategies_from_the_tvm_strategy_file() {
    // The shared strategy file defines `tiled` and ends with `blocking`.
    let o = elevate(&[
        "rewrite",
        &example("matmul.rise"),
        "--strategy",
        &format!("@{}", example("matmul-tvm.elv")),
        "--stats",
        "--check",
        "--nat",
        "n=64",
        "--nat",
        "k=64",
        "--nat",
        "m=64",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("\"successes\":"), "{err}");
    assert!(err.contains("check: same type, same values"), "{err}");
    assert!(stdout(&o).contains("split(32)") && stdout(&o).contains("split(4)"));
    let o = elevate(&["rewrite", &example("matmul.rise"), "--strategy", "par"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("mapPar") && stdout(&o).contains("asVector(32)"));
    // Sizes that the tiles do not divide: a clear message, exit status 1.
    let o = elevate(&[
        "rewrite",
        &example("matmul.rise"),
        "--strategy",
        "baseline ; (tile(32, 32) @ outermost(mapNest(2)))",
        "--check",
    ]);
    assert_fails_with(
        &o,
        "cannot evaluate the nat m/32: m/32 is not a whole number (sizes for --check come from --nat",
    );
    let o = elevate(&["strategies"]);
    for name in [
        "tile(x, y)",
        "reorder([p1, ..., pk])",
        "par ",
        "separableConvolution",
        "defaultLowering",
    ] {
        assert!(stdout(&o).contains(name), "{name}");
    }
}

#[test]
fn compile_and_run_go_through_mlir() {
    let dot = example("dot.rise");
    for (stage, expect) in [
        ("rise", "reduceSeq"),
        ("payload", "func.func @dot("),
        ("mlir", "llvm.func @dot("),
        ("llvm", "define void @dot("),
    ] {
        let o = elevate(&["compile", &dot, "--emit", stage, "--nat", "n=8"]);
        assert!(o.status.success(), "{stage}: {}", stderr(&o));
        assert!(stdout(&o).contains(expect), "{stage}: {}", stdout(&o));
    }
    // dot is one linalg reduction, scheduled by its script.
    let o = elevate(&["compile", &dot, "--emit", "transform", "--nat", "n=8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = stdout(&o);
    assert!(
        script.contains("transform.structured.match ops{[\"linalg.generic\"]}")
            && script.contains("tile_using_for"),
        "{script}"
    );
    // A body of a thousand operations: one kernel, scheduled as any.
    let long = temp(
        "long.rise",
        &format!(
            "def f(x: 2048.f32) = x |> mapSeq(fun(v => v * 2.0{}))",
            " + 0.0".repeat(1001)
        ),
    );
    let o = elevate(&["compile", &long, "--emit", "transform"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = stdout(&o);
    assert!(
        script.contains("transform.structured.match ops{[\"linalg.generic\"]}"),
        "{script}"
    );
    // The loop program: dot's one reduction kernel, its schedule; the long body's
    // kernel.
    let o = elevate(&["compile", &dot, "--emit", "loops", "--nat", "n=8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let loops = stdout(&o);
    assert!(
        loops.starts_with("// loop program: 3 buffers, 1 kernel\n")
            && loops.contains("kernel 0: %out0[] = 0.0 + Σ(d0) (in0 * in1)")
            && loops.contains("dims      d0: 8 reduction")
            && loops.contains("schedule  reduce d0 by 1 (8 trips)"),
        "{loops}"
    );
    let o = elevate(&["compile", &long, "--emit", "loops"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let loops = stdout(&o);
    assert!(
        loops.starts_with("// loop program: 2 buffers, 1 kernel\n")
            && loops.matches(" + 0.0").count() == 1001,
        "{loops}"
    );
    let o = elevate(&["compile", &dot, "--emit", "ptx", "--nat", "n=8"]);
    assert_fails_with(&o, "PTX and its launches are the GPU target's");
    let o = elevate(&[
        "compile", &dot, "--target", "tpu", "--emit", "ptx", "--nat", "n=8",
    ]);
    assert_fails_with(&o, "unknown target `tpu` (cpu, gpu)");
    // A program outside GPU maps has no kernel for the GPU.
    let o = elevate(&[
        "compile", &dot, "--target", "gpu", "--emit", "ptx", "--nat", "n=8",
    ]);
    assert_fails_with(&o, "in no GPU map");
    let mapped = temp(
        "mapped.rise",
        "def f(x: n.f32) : n.f32 = x |> mapGlobal(0, fun(v => v * v))",
    );
    let o = elevate(&[
        "compile", &mapped, "--target", "gpu", "--emit", "ptx", "--nat", "n=4096",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ptx = stdout(&o);
    assert!(
        ptx.contains(".target sm_90") && ptx.contains("%tid.x"),
        "{ptx}"
    );
    let o = elevate(&[
        "compile", &mapped, "--target", "gpu", "--emit", "launch", "--nat", "n=4096",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        manifest["launches"][0]["grid"],
        serde_json::json!([16, 1, 1])
    );
    assert_eq!(
        manifest["launches"][0]["block"],
        serde_json::json!([256, 1, 1])
    );
    let o = elevate(&["compile", &dot, "--emit", "scheduled", "--nat", "n=8"]);
    assert_fails_with(
        &o,
        "unknown stage `scheduled` (rise, loops, payload, transform, mlir, llvm, ptx, launch)",
    );
    let o = elevate(&["compile", &dot, "--emit", "payload"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no size for `n`"), "{}", stderr(&o));
    let o = elevate(&["run", &dot, "--random", "1", "--nat", "n=64", "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("check: same values as the interpreter"));
    let interpreted = elevate(&["eval", &dot, "--random", "1", "--nat", "n=64"]);
    let (a, b): (f64, f64) = (
        stdout(&o).trim().parse().unwrap(),
        stdout(&interpreted).trim().parse().unwrap(),
    );
    assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "{a} vs {b}");
    let o = elevate(&[
        "run",
        &example("matmul.rise"),
        "--strategy",
        "par",
        "--random",
        "1",
        "--nat",
        "n=64",
        "--nat",
        "k=64",
        "--nat",
        "m=64",
        "--bench",
        "2",
        "--threads",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(
        line["median_ms"].as_f64().is_some() && line["gflops"].as_f64().is_some(),
        "{line}"
    );
}

// --- eval: sizes, integer semantics, NaN, input and --nat errors, --check messages ---

/// Runs `eval` on a program written to `name`, with the JSON inputs given.
fn eval_program(name: &str, source: &str, inputs: &[&str]) -> Output {
    let path = temp(name, source);
    let files: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(i, json)| temp(&format!("{name}.{i}.json"), json))
        .collect();
    let mut args = vec!["eval", path.as_str()];
    if !files.is_empty() {
        args.push("--input");
        args.extend(files.iter().map(String::as_str));
    }
    elevate(&args)
}

#[test]
fn eval_refuses_arrays_over_the_memory_limit_before_making_them() {
    let o = eval_program(
        "gen.rise",
        "def f = generate(fun(i => 1.0)) : 1099511627776.f32",
        &[],
    );
    assert_fails_with(&o, "gen.rise:1:9: evaluation error: the result of `generate` has 1099511627776 elements (24.0 TiB), over the limit of");
    let o = eval_program(
        "pad.rise",
        "def f(x: 4.f32) = padCst(1099511627776, 0, 0.0, x)",
        &["[1, 2, 3, 4]"],
    );
    assert_fails_with(
        &o,
        "pad.rise:1:19: evaluation error: the result of `padCst` has 1099511627780 elements",
    );
    let o = elevate(&[
        "eval",
        &example("scal.rise"),
        "--random",
        "1",
        "--nat",
        "n=1099511627776",
    ]);
    assert_fails_with(
        &o,
        "input error: parameter `x` (n.f32) has 1099511627776 elements",
    );
    // The limit is the user's to change.
    let o = Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args([
            "eval",
            &example("scal.rise"),
            "--random",
            "1",
            "--nat",
            "n=100000",
        ])
        .env("ELEVATE_MAX_BYTES", "1M")
        .output()
        .unwrap();
    assert_fails_with(
        &o,
        "over the limit of 1.0 MiB (set ELEVATE_MAX_BYTES to change it)",
    );
}

#[test]
fn eval_integer_division_errors_are_located() {
    let program = "def f(x: i32, y: i32) = x / y";
    let o = eval_program("div0.rise", program, &["1", "0"]);
    assert_fails_with(
        &o,
        "div0.rise:1:25: evaluation error: division by zero: 1 / 0 in i32",
    );
    let o = eval_program("intmin.rise", program, &["-2147483648", "-1"]);
    assert_fails_with(
        &o,
        "intmin.rise:1:25: evaluation error: integer overflow: -2147483648 / -1 in i32",
    );
    let o = eval_program(
        "wrap.rise",
        "def f(x: i32, y: i32) = x * y + 1",
        &["65536", "65536"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "1\n");
}

#[test]
fn eval_prints_nan_and_infinities_as_strings_and_reads_them() {
    let o = eval_program(
        "nan.rise",
        "def f(x: f32) = (x / 0.0, ((0.0 - x) / 0.0, x * (0.0 / 0.0)))",
        &["1"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[\"Infinity\",[\"-Infinity\",\"NaN\"]]\n");
    let o = eval_program(
        "nanin.rise",
        "def f(x: 2.f64) = x",
        &["[\"NaN\", \"-Infinity\"]"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[\"NaN\",\"-Infinity\"]\n");
}

#[test]
fn eval_inputs_out_of_range_or_not_integers_say_so() {
    let program = "def f(x: i32, y: i64, b: bool) = (x, (y, b))";
    let o = eval_program("range.rise", program, &["3000000000", "1", "true"]);
    assert_fails_with(
        &o,
        "input error: parameter `x`: 3000000000 is out of range for i32",
    );
    let o = eval_program("frac.rise", program, &["1.5", "1", "true"]);
    assert_fails_with(
        &o,
        "input error: parameter `x`: 1.5 is not an integer (expected i32)",
    );
    let o = eval_program("big.rise", program, &["1", "18446744073709551616", "true"]);
    assert_fails_with(
        &o,
        "parameter `y`: 18446744073709551616 is out of range for i64",
    );
    let o = eval_program("bool.rise", program, &["1", "1", "0"]);
    assert_fails_with(&o, "parameter `b`: expected bool (true or false), found 0");
    let o = eval_program("shape.rise", "def f(x: 2.2.f32) = x", &["[[1, 2], [3]]"]);
    assert_fails_with(
        &o,
        "parameter `x` at [1]: expected 2 elements (2.f32), found 1",
    );
}

#[test]
fn nat_sizes_must_name_a_parameter_once() {
    let scal = example("scal.rise");
    let random = |nats: &[&str]| {
        let mut args = vec!["eval", scal.as_str(), "--random", "1"];
        for n in nats {
            args.extend(["--nat", n]);
        }
        elevate(&args)
    };
    let o = random(&["q=4"]);
    assert_fails_with(
        &o,
        "scal.rise: --nat q=...: the program has no nat parameter `q` (it has `n`)",
    );
    let o = random(&["n=4", "n=5"]);
    assert_fails_with(&o, "scal.rise: --nat n: given twice (4, then 5)");
    let o = random(&["n=4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = elevate(&[
        "rewrite",
        &example("dot.rise"),
        "--strategy",
        "id",
        "--check",
        "--nat",
        "m=4",
    ]);
    assert_fails_with(
        &o,
        "--check: --nat m=...: the program has no nat parameter `m` (it has `n`)",
    );
}

#[test]
fn eval_output_that_cannot_be_written_is_an_error_not_a_crash() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let o = Command::new(env!("CARGO_BIN_EXE_elevate"))
            .args([
                "eval",
                &example("scal.rise"),
                "--random",
                "1",
                "--nat",
                "n=1000",
            ])
            .stdout(full)
            .output()
            .unwrap();
        assert_fails_with(
            &o,
            "scal.rise: cannot write the result: No space left on device",
        );
    }
    // A reader that stops early ends the output quietly.
    let mut child = Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args([
            "eval",
            &example("scal.rise"),
            "--random",
            "1",
            "--nat",
            "n=200000",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first[0], b'[');
}

#[test]
fn run_reads_and_writes_nan_and_infinities_as_the_interpreter_does() {
    let program = temp(
        "nanrun.rise",
        "def f(x: 4.f32) = x |> map(fun(v => v / 0.0))",
    );
    let input = temp("nanrun.json", "[1, -1, 0, \"Infinity\"]");
    let o = elevate(&["run", &program, "--input", &input, "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "[\"Infinity\",\"-Infinity\",\"NaN\",\"Infinity\"]\n"
    );
    assert!(
        stderr(&o).contains("check: same values as the interpreter"),
        "{}",
        stderr(&o)
    );
}
