//! Standard output that never panics. `print!` panics when stdout is a closed pipe
//! (`elevate eval ... | head -c 10`) or a full disk; here a closed pipe ends the
//! command quietly, as Unix tools do, and any other write error is a failure that
//! says what happened.

use crate::Failure;
use std::io::{ErrorKind, Write};

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| match e.kind() {
            ErrorKind::BrokenPipe => Failure::quiet(),
            _ => Failure(format!("cannot write the output: {e}")),
        })
}

/// Writes `line` and a newline to standard output.
pub fn println(line: &str) -> Result<(), Failure> {
    print(&format!("{line}\n"))
}
