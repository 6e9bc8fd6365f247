//! One rule for the output of every command (`src/output.rs`): standard output a full
//! disk is an error (exit status 1, `cannot write the ...: No space left on device`),
//! standard output a closed pipe ends the command quietly (exit status 0: a reader that
//! stops early is not an error), and standard error a full disk loses the messages but
//! not the exit status. Never a panic. And allocations too large for the process end
//! in an error naming the buffer and its size, never an abort.

use super::{assert_fails_with, elevate, example, stderr, stdout};
use std::fs::File;
use std::process::{Command, Output, Stdio};

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_elevate"));
    c.args(args);
    c
}

/// `/dev/full`, where the system has one.
fn full() -> Option<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .ok()
}

/// `elevate ARGS` with standard output a pipe whose reader has gone away before
/// anything is written (so that even a short output meets the closed pipe).
fn with_stdout_closed(args: &[&str]) -> Output {
    let mut child = command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run elevate");
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for elevate")
}

/// What every command that prints does, with the sizes and programs to make it print.
fn printing_commands() -> Vec<Vec<String>> {
    let (dot, scal, conv) = (
        example("dot.rise"),
        example("scal.rise"),
        example("conv2d.rise"),
    );
    let lower = "topDown(reduceSeq)";
    let mut commands = vec![
        vec!["check", &conv],
        vec!["eval", &scal, "--random", "1", "--nat", "n=200000"],
        vec!["rewrite", &dot, "--strategy", lower],
        vec!["rewrite", &dot, "--strategy", lower, "--trace"],
        vec!["rewrite", &dot, "--strategy", lower, "--stats", "--check"],
        vec!["strategies"],
        vec!["--help"],
    ];
    if cfg!(feature = "mlir") {
        for stage in ["rise", "payload", "transform", "mlir", "llvm"] {
            commands.push(vec!["compile", &scal, "--nat", "n=1024", "--emit", stage]);
        }
        commands.push(vec!["run", &scal, "--random", "1", "--nat", "n=100000"]);
        commands.push(vec![
            "run", &scal, "--random", "1", "--nat", "n=64", "--check",
        ]);
        commands.push(vec![
            "run", &scal, "--random", "1", "--nat", "n=64", "--bench", "2",
        ]);
        commands.push(vec![
            "search", &dot, "--space", "auto", "--budget", "evals=3", "--nat", "n=64",
        ]);
    }
    if cfg!(feature = "egraph") {
        commands.push(vec![
            "saturate",
            &dot,
            "--rules",
            "default",
            "--limits",
            "iterations=3",
        ]);
    }
    commands
        .into_iter()
        .map(|c| c.into_iter().map(String::from).collect())
        .collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn every_command_says_when_its_output_cannot_be_written() {
    if full().is_none() {
        return;
    }
    for args in printing_commands() {
        let o = command(&strs(&args))
            .stdout(full().unwrap())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("cannot write the") && err.contains("No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn every_command_ends_quietly_when_its_reader_goes_away() {
    for args in printing_commands() {
        let o = with_stdout_closed(&strs(&args));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("cannot write") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
    // Quietly: nothing at all where the command writes nothing else.
    let o = with_stdout_closed(&["strategies"]);
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

#[test]
fn a_reader_that_stops_after_a_byte_ends_the_output_quietly() {
    let scal = example("scal.rise");
    let mut commands = vec![
        vec!["strategies"],
        vec!["eval", &scal, "--random", "1", "--nat", "n=200000"],
    ];
    if cfg!(feature = "mlir") {
        commands.push(vec!["run", &scal, "--random", "1", "--nat", "n=200000"]);
    }
    for args in commands {
        let mut child = command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 1];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
fn a_full_standard_error_changes_no_exit_status() {
    if full().is_none() {
        return;
    }
    let status = |args: &[&str]| {
        let o = command(args).stderr(full().unwrap()).output().unwrap();
        (o.status.code(), o)
    };
    // Commands that succeed, and write to standard error as they go.
    for args in printing_commands() {
        let (code, o) = status(&strs(&args));
        assert_eq!(code, Some(0), "{args:?}");
        assert!(!stdout(&o).is_empty(), "{args:?}");
    }
    // Commands that fail: their message is lost, their status is not.
    let missing = "/nonexistent/program.rise";
    let dot = example("dot.rise");
    let mut failing = vec![
        (vec!["check", missing], 1),
        (vec!["eval", &dot, "--random", "1", "--nat", "q=4"], 1),
        (vec!["rewrite", &dot, "--strategy", "reduceSeq"], 1),
        (
            vec!["rewrite", &dot, "--strategy", "reduceSeq", "--stats"],
            1,
        ),
        (vec!["no-such-command"], 2),
    ];
    if cfg!(feature = "mlir") {
        failing.push((vec!["run", missing, "--random", "1"], 1));
        failing.push((vec!["compile", &dot, "--emit", "nothing"], 1));
        failing.push((vec!["search", &dot, "--space", "{"], 1));
    }
    if cfg!(feature = "egraph") {
        failing.push((vec!["saturate", &dot, "--rules", "noSuchRule"], 1));
    }
    for (args, expected) in failing {
        let (code, _) = status(&args);
        assert_eq!(code, Some(expected), "{args:?}");
    }
}

/// `elevate ARGS` in a process that may take at most `kib` KiB of address space, with
/// no limit of elevate's own in the way (`ELEVATE_MAX_BYTES`).
#[cfg(all(feature = "mlir", target_os = "linux"))]
fn within_address_space(kib: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_elevate"))
        .args(args)
        .env("ELEVATE_MAX_BYTES", "1T")
        .output()
        .expect("run elevate under sh")
}

/// `elevate run` of the matmul of `n x 1` by `1 x n` (small inputs, a large result)
/// within `kib` KiB of address space.
#[cfg(all(feature = "mlir", target_os = "linux"))]
fn matmul_within(kib: u64, n: u64) -> Output {
    let (n, m) = (format!("n={n}"), format!("m={n}"));
    let matmul = example("matmul.rise");
    let args = [
        "run", &matmul, "--random", "1", "--nat", &n, "--nat", &m, "--nat", "k=1",
    ];
    within_address_space(kib, &args)
}

#[cfg(all(feature = "mlir", target_os = "linux"))]
#[test]
fn buffers_the_system_refuses_are_errors_naming_them_not_aborts() {
    // The result's buffer: 47000 x 47000 floats, 8.8 GB.
    super::assert_fails_with(
        &matmul_within(8_000_000, 47_000),
        "matmul.rise:3:3: evaluation error: cannot allocate 8836000000 bytes for the buffer \
         of the result: out of memory",
    );
    // The buffer fits (20000 x 20000 floats, 1.6 GB), the result's values (24 bytes
    // each) do not.
    super::assert_fails_with(
        &matmul_within(3_000_000, 20_000),
        "cannot allocate 9600000000 bytes for the result's values: out of memory",
    );
}

#[cfg(feature = "mlir")]
#[test]
fn search_out_a_path_that_cannot_be_a_directory_says_so() {
    let o = elevate(&[
        "search",
        &example("dot.rise"),
        "--space",
        "auto",
        "--budget",
        "evals=2",
        "--nat",
        "n=64",
        "--out",
        "/dev/full",
    ]);
    assert_fails_with(
        &o,
        "--out /dev/full: /dev/full is not a directory (the search writes its files into one)",
    );
}
