//! Standard output and standard error that never panic. `print!` panics when stdout
//! is a closed pipe (`elevate eval ... | head -c 10`) or a full disk, and `eprintln!`
//! when stderr is. The rule, for every command:
//!
//! - a closed pipe on stdout ends the command quietly, with exit status 0: a reader
//!   that stops early (`| head`) is not an error ([`Failure::quiet`]);
//! - any other failure to write stdout is a failure, `cannot write the output: WHY`
//!   (exit status 1);
//! - a failure to write stderr is ignored: there is nowhere left to report it, and the
//!   command ends with the status it would have had.

use crate::Failure;
use std::io::{ErrorKind, Write};

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| write_failure(&e))
}

/// Writes `line` and a newline to standard output.
pub fn println(line: &str) -> Result<(), Failure> {
    print(&format!("{line}\n"))
}

/// The failure of a write to standard output: quiet where the reader went away.
pub fn write_failure(e: &std::io::Error) -> Failure {
    match e.kind() {
        ErrorKind::BrokenPipe => Failure::quiet(),
        _ => Failure(format!("cannot write the output: {e}")),
    }
}

/// Writes `line` and a newline to standard error, ignoring failures (a full disk, a
/// closed pipe): a message that cannot be written is lost, never a panic.
pub fn eprintln(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
