//! The limits of a measured candidate (`--limits compile=S,run=S,memory=SIZE`): how
//! long its compilation and each of its runs may take, and how much memory its worker
//! may hold. The same text from the command line, Rust and Python.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// What a measured candidate may take before its worker is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CandidateLimits {
    /// Its compilation (the strategy's rewriting aside: `defaultLowering`, the MLIR
    /// pipeline, LLVM).
    pub compile: Duration,
    /// Each of its runs.
    pub run: Duration,
    /// The memory its worker may hold (address space, set by the worker on itself,
    /// and resident memory, watched), in bytes.
    pub memory: u64,
    /// The stack of the thread its runs are on, in bytes (its compiled code's
    /// buffers of registers and promoted tiles live there): a run past it is a stack
    /// overflow, and the candidate `crashed`.
    pub stack: u64,
}

/// The default stack of a candidate's runs.
pub const DEFAULT_STACK: u64 = 64 << 20;

/// The least stack a candidate's runs may be given.
const MIN_STACK: u64 = 64 << 10;

/// The least memory a worker may be given: a worker holds MLIR, LLVM and the
/// interpreter before it compiles anything.
pub const MIN_WORKER_MEMORY: u64 = 1 << 30;

/// The longest limit of time: a day.
const MAX_SECONDS: f64 = 86_400.0;

impl CandidateLimits {
    /// The default compile limit.
    pub const COMPILE: Duration = Duration::from_secs(60);
    /// The default run limit.
    pub const RUN: Duration = Duration::from_secs(10);

    /// The defaults for a search of `jobs` workers within `time` (if it has a time
    /// budget): 60 s to compile, or a tenth of the budget if that is less (at least a
    /// second); 10 s a run; three quarters of the machine's memory shared by the jobs.
    pub fn defaults(jobs: usize, time: Option<Duration>) -> CandidateLimits {
        let compile = match time {
            Some(t) => (t / 10).clamp(Duration::from_secs(1), Self::COMPILE),
            None => Self::COMPILE,
        };
        let share = machine_memory().map_or(4 << 30, |m| m / 4 * 3 / jobs.max(1) as u64);
        CandidateLimits {
            compile,
            run: Self::RUN,
            memory: share.max(MIN_WORKER_MEMORY),
            stack: DEFAULT_STACK,
        }
    }

    /// `text` (`compile=S,run=S,memory=SIZE,stack=SIZE`, any of them, in any order)
    /// over `defaults`. Sizes are bytes or a number with `K`, `M`, `G`, `T` (powers
    /// of 1024; `KiB`, `MB`, ... alike); times are seconds.
    pub fn parse(text: &str, defaults: CandidateLimits) -> Result<CandidateLimits, LimitsError> {
        let mut limits = defaults;
        let mut given = false;
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let error = |why: String| LimitsError {
                item: item.to_string(),
                why,
            };
            let (key, value) = item.split_once('=').ok_or_else(|| {
                error("expected KEY=VALUE (compile=S, run=S, memory=SIZE)".into())
            })?;
            let value = value.trim();
            match key.trim() {
                "compile" => limits.compile = seconds(value).map_err(error)?,
                "run" => limits.run = seconds(value).map_err(error)?,
                "memory" => limits.memory = memory(value).map_err(error)?,
                "stack" => limits.stack = stack(value).map_err(error)?,
                other => {
                    return Err(error(format!(
                        "unknown limit `{other}` (compile, run, memory, stack)"
                    )))
                }
            }
            given = true;
        }
        if !given {
            return Err(LimitsError {
                item: text.to_string(),
                why: "give compile=S, run=S, memory=SIZE or some of them".into(),
            });
        }
        Ok(limits)
    }
}

impl fmt::Display for CandidateLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "compile={},run={},memory={},stack={}",
            self.compile.as_secs_f64(),
            self.run.as_secs_f64(),
            self.memory,
            self.stack
        )
    }
}

impl FromStr for CandidateLimits {
    type Err = LimitsError;

    /// Over the defaults of a one-job search without a time budget.
    fn from_str(text: &str) -> Result<CandidateLimits, LimitsError> {
        CandidateLimits::parse(text, CandidateLimits::defaults(1, None))
    }
}

/// A limit that is not one: which item, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{item}`: {why}")]
pub struct LimitsError {
    /// The item of the text (`memory=1B`).
    pub item: String,
    /// What is wrong with it.
    pub why: String,
}

fn seconds(value: &str) -> Result<Duration, String> {
    let s: f64 = value
        .parse()
        .map_err(|_| format!("expected seconds, found `{value}`"))?;
    if !(s > 0.0 && s <= MAX_SECONDS) {
        return Err(format!(
            "a time limit is more than 0 and at most a day ({MAX_SECONDS} s), found {value}"
        ));
    }
    Ok(Duration::from_secs_f64(s))
}

fn stack(value: &str) -> Result<u64, String> {
    let bytes = bytes(value)?;
    if !(MIN_STACK as f64..=MIN_WORKER_MEMORY as f64).contains(&bytes) {
        return Err(format!(
            "a stack is from {} KiB to {}, found {value}",
            MIN_STACK >> 10,
            size(MIN_WORKER_MEMORY)
        ));
    }
    Ok(bytes as u64)
}

fn memory(value: &str) -> Result<u64, String> {
    let bytes = bytes(value)?;
    if bytes < MIN_WORKER_MEMORY as f64 {
        return Err(format!(
            "a worker needs at least {} (MLIR and LLVM alone take half of that), found {value}",
            size(MIN_WORKER_MEMORY)
        ));
    }
    if let Some(machine) = machine_memory() {
        if bytes > machine as f64 {
            return Err(format!(
                "more than the machine's memory ({}), found {value}",
                size(machine)
            ));
        }
    }
    Ok(bytes as u64)
}

/// A size: bytes, or a number with a unit.
fn bytes(value: &str) -> Result<f64, String> {
    let digits = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(digits);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("expected a size such as 4G, 512M or 1073741824, found `{value}`"))?;
    let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        other => return Err(format!("unknown unit `{other}` (B, K, M, G, T)")),
    };
    Ok(number * scale as f64)
}

/// `bytes` for a reader: `512 MiB`, `7.5 GiB`.
pub fn size(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 1.0 {
        format!("{gib:.1} GiB")
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

/// The machine's memory in bytes (`MemTotal`), where the system says.
pub fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> CandidateLimits {
        CandidateLimits {
            compile: Duration::from_secs(60),
            run: Duration::from_secs(10),
            memory: 4 << 30,
            stack: DEFAULT_STACK,
        }
    }

    #[test]
    fn limits_parse_over_the_defaults() {
        let l = CandidateLimits::parse("compile=5, memory=1G", defaults()).unwrap();
        assert_eq!(l.compile, Duration::from_secs(5));
        assert_eq!(l.run, Duration::from_secs(10));
        assert_eq!(l.memory, 1 << 30);
        let l = CandidateLimits::parse("run=0.5,memory=1.5GiB,stack=1M", defaults()).unwrap();
        assert_eq!(l.run, Duration::from_millis(500));
        assert_eq!(l.memory, 3 << 29);
        assert_eq!(l.stack, 1 << 20);
        // What it prints parses again.
        assert_eq!(CandidateLimits::parse(&l.to_string(), defaults()), Ok(l));
    }

    #[test]
    fn zero_negative_unparsable_and_absurd_limits_say_which_and_why() {
        for (text, why) in [
            ("compile=0", "more than 0"),
            ("run=-1", "more than 0"),
            ("run=1e9", "at most a day"),
            ("compile=soon", "expected seconds"),
            ("memory=1B", "at least 1.0 GiB"),
            ("stack=1K", "a stack is from 64 KiB"),
            ("memory=lots", "expected a size"),
            ("memory=4X", "unknown unit"),
            ("memory=1000000T", "machine's memory"),
            ("speed=1", "unknown limit `speed`"),
            ("compile", "expected KEY=VALUE"),
            ("", "give compile=S"),
        ] {
            let e = CandidateLimits::parse(text, defaults()).unwrap_err();
            assert!(e.to_string().contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn the_compile_limit_is_a_tenth_of_a_short_time_budget() {
        let l = CandidateLimits::defaults(2, Some(Duration::from_secs(60)));
        assert_eq!(l.compile, Duration::from_secs(6));
        let l = CandidateLimits::defaults(2, Some(Duration::from_secs(3600)));
        assert_eq!(l.compile, CandidateLimits::COMPILE);
        assert!(l.memory >= MIN_WORKER_MEMORY);
    }
}
