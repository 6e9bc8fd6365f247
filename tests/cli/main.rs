//! The `elevate` command line, end to end: output, exit status, messages.

use std::path::PathBuf;
use std::process::{Command, Output};

fn elevate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args(args)
        .output()
        .expect("run elevate")
}

fn example(name: &str) -> String {
    format!("{}/../shared/examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str, contents: &str) -> String {
    let dir = std::env::temp_dir().join(format!("elevate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
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
