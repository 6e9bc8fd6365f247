//! `elevate compile` and `elevate run` on extreme but legal input: errors located and
//! named, never a crash.

use super::{assert_fails_with, elevate, example, stderr, stdout, temp};

#[test]
fn integer_division_traps_are_located_errors_not_crashes() {
    let program = temp("intdiv.rise", "def f(x: i32, y: i32) = x / y");
    let (one, zero) = (temp("one.json", "1"), temp("zero.json", "0"));
    let (min, minus_one) = (temp("min.json", "-2147483648"), temp("m1.json", "-1"));
    let o = elevate(&["run", &program, "--input", &one, &zero]);
    assert_fails_with(
        &o,
        "intdiv.rise:1:25: evaluation error: division by zero (`div`)",
    );
    let o = elevate(&["run", &program, "--input", &min, &minus_one]);
    assert_fails_with(&o, "integer overflow: the smallest i32 divided by -1");
    let o = elevate(&["run", &program, "--input", &min, &one]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "-2147483648");
}

#[test]
fn run_prints_what_eval_prints_for_nan_and_infinities() {
    let program = temp(
        "special.rise",
        "def f(x: 3.f32) = x |> mapSeq(fun(v => v / 0.0))",
    );
    let input = temp("special.json", "[0.0, 1.0, -1.0]");
    let run = elevate(&["run", &program, "--input", &input]);
    let eval = elevate(&["eval", &program, "--input", &input]);
    assert_eq!(run.status.code(), eval.status.code(), "{}", stderr(&run));
    assert_eq!(stdout(&run), stdout(&eval));
    assert!(!stdout(&run).is_empty());
}

#[test]
fn a_chain_of_100000_additions_compiles_and_runs() {
    let program = temp(
        "chain.rise",
        &format!("def f(x: i32) = x{}", " + x".repeat(99_999)),
    );
    let one = temp("one.json", "1");
    let o = elevate(&["run", &program, "--input", &one]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "100000");
    let o = elevate(&["compile", &program, "--emit", "mlir"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("llvm.func @f("));
}

#[test]
fn bench_and_threads_are_checked_before_anything_is_allocated() {
    let scal = example("scal.rise");
    let run = |flag: &str, value: &str| {
        elevate(&["run", &scal, "--random", "1", "--nat", "n=4", flag, value])
    };
    for (flag, value, message) in [
        (
            "--bench",
            "4000000000",
            "4000000000 is over the maximum of 1000000 runs",
        ),
        (
            "--threads",
            "100000",
            "100000 is over the maximum of 4096 threads",
        ),
        ("--threads", "-1", "must be non-negative"),
        ("--bench", "-5", "must be non-negative"),
        ("--bench", "many", "expected a non-negative integer"),
    ] {
        let o = run(flag, value);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(message),
            "{flag} {value}: {}",
            stderr(&o)
        );
    }
    let o = run("--threads", "2");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run("--bench", "3");
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["runs"], 3, "{line}");
}

#[test]
fn bridge_errors_are_compile_errors_with_a_location() {
    let program = temp(
        "scan.rise",
        "def f(x: 4.f32) =\n  x |> scanSeq(fun(a, y => a + y), 0.0)",
    );
    for command in ["run", "compile"] {
        let mut args = vec![command, &program];
        if command == "compile" {
            args.extend(["--emit", "payload"]);
        } else {
            args.extend(["--random", "1"]);
        }
        let o = elevate(&args);
        assert_fails_with(&o, "scan.rise:2:");
        assert!(
            stderr(&o).contains("compile error: unsupported construct: `scanSeq`"),
            "{}",
            stderr(&o)
        );
    }
    // Sizes over the machine's memory: named, with the limit.
    let o = elevate(&[
        "run",
        &example("scal.rise"),
        "--random",
        "1",
        "--nat",
        "n=1099511627776",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1099511627776 elements"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn run_and_compile_end_quietly_when_their_reader_stops_early() {
    // A reader that closes standard output after a few bytes: no panic, nothing on
    // standard error (the command ends as `strategies` and `search` do).
    let path = example("scal.rise");
    for args in [
        vec!["run", path.as_str(), "--random", "1", "--nat", "n=200000"],
        vec![
            "compile",
            path.as_str(),
            "--nat",
            "n=200000",
            "--emit",
            "llvm",
        ],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_elevate"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 8];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{args:?}: {:?}",
            o.status
        );
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

/// `elevate` with the CUDA driver it loads pointed at a file that is not there.
fn without_gpu(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args(args)
        .env("ELEVATE_CUDA_DRIVER", "/nonexistent/libcuda.so.1")
        .output()
        .expect("run elevate")
}

#[test]
fn a_gpu_run_without_a_driver_exits_1_saying_so() {
    let scale = example("gpu/scale.rise");
    let n = ["--nat", "n=1024", "--random", "1"];
    let o = without_gpu(&[&["run", &scale, "--target", "gpu"][..], &n].concat());
    assert_fails_with(
        &o,
        "no GPU to run on: the CUDA driver (/nonexistent/libcuda.so.1)",
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let o = elevate(
        &[
            &["run", &scale, "--target", "gpu", "--threads", "2"][..],
            &n,
        ]
        .concat(),
    );
    assert_fails_with(&o, "--threads sets the CPU's threads");
    let o = elevate(&[&["run", &scale, "--bundle", "/tmp/x"][..], &n].concat());
    assert_fails_with(&o, "--bundle is the GPU target's");
}

#[test]
fn a_bundle_is_what_the_runner_without_llvm_packs_and_checks() {
    let dir = std::env::temp_dir().join(format!("elevate-bundle-{}", std::process::id()));
    let dir = dir.display().to_string();
    let matmul = example("gpu/matmul.rise");
    let sizes = ["--nat", "n=64", "--nat", "k=32", "--nat", "m=48"];
    let mut args = vec![
        "run", &matmul, "--target", "gpu", "--random", "3", "--check",
    ];
    args.extend(sizes);
    args.extend(["--bundle", &dir]);
    let o = elevate(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["launches"], 2);
    assert_eq!(line["expected"], true);
    let script = format!("{}/scripts/gpu-check", env!("CARGO_MANIFEST_DIR"));
    let check = |args: &[&str]| {
        std::process::Command::new("python3")
            .arg(&script)
            .args(args)
            .env("ELEVATE_CUDA_DRIVER", "/nonexistent/libcuda.so.1")
            .output()
            .expect("python3 runs scripts/gpu-check")
    };
    // The runner packs each launch's parameters as `elevate` does (buffer k at
    // 0x10000 * (k + 1)): a memref's pointers, offset, sizes and strides.
    let o = check(&["--dry-run", &dir]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let (a, b, c) = (0x10000, 0x20000, 0x30000);
    assert_eq!(
        line["params"],
        serde_json::json!([
            [c, c, 0, 64, 48, 48, 1],
            [a, a, 0, 64, 32, 32, 1, b, b, 0, 32, 48, 48, 1, c, c, 0, 64, 48, 48, 1]
        ])
    );
    let o = check(&[&dir]);
    assert_fails_with(&o, "no GPU to run on");
    // A bundle whose input lost bytes is refused before anything runs.
    std::fs::write(format!("{dir}/arg0.bin"), [0u8; 12]).unwrap();
    let o = check(&["--dry-run", &dir]);
    assert_fails_with(&o, "arg0.bin has 12 bytes, its shape 8192");
}
