//! What a search and its workers say to each other: one JSON object per line, a
//! request on the worker's standard input, its reply on the worker's standard output.
//! The local pool, the Python package's workers and a Ray cluster's tasks speak it
//! alike.
//!
//! A worker is set up once ([`Request::Setup`]: the start program, the seed of the
//! inputs, its memory), then compiles and runs candidates, each named by its key (the
//! program's fingerprint, in hexadecimal) and sent as RISE text. It keeps what it
//! compiled, so that a run of a candidate it compiled before costs no compilation.

use serde::{Deserialize, Serialize};

/// A request to a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    /// Sets the worker up: answered by [`Reply::Ready`] or [`Reply::Error`].
    Setup {
        /// The program searches start from, as RISE text (a definition with concrete
        /// sizes): its signature gives the inputs.
        start: String,
        /// The seed of the random inputs every candidate runs on.
        seed: u64,
        /// Threads of parallel loops (`None`: one per core).
        threads: Option<usize>,
        /// The address space the worker may take, in bytes (0: unlimited).
        memory: u64,
        /// The stack of the thread candidates run on, in bytes.
        stack: u64,
    },
    /// Computes the start program's values on the inputs with the interpreter (the
    /// reference candidates are checked against) and keeps them: answered by
    /// [`Reply::Reference`] with them as JSON text.
    Reference,
    /// The reference values (JSON text) to check candidates against, computed
    /// elsewhere: answered by [`Reply::Ready`].
    Expect {
        /// The values as JSON text.
        values: String,
    },
    /// Compiles a candidate: answered by [`Reply::Compiled`] or [`Reply::Failed`].
    Compile {
        /// The candidate's key.
        key: String,
        /// Its program as RISE text.
        program: String,
    },
    /// Runs a candidate (compiling it first if the worker does not hold it): a
    /// warm-up run (checked against the reference if `check`), then up to `runs`
    /// timed runs; answered by [`Reply::Measured`] or [`Reply::Failed`].
    Run {
        /// The candidate's key.
        key: String,
        /// Its program as RISE text.
        program: String,
        /// How to run it.
        #[serde(flatten)]
        how: RunSpec,
    },
}

/// How to run a candidate ([`Request::Run`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Whether to check its values against the reference.
    pub check: bool,
    /// Whether to run it once untimed first.
    pub warm_up: bool,
    /// The most timed runs.
    pub runs: usize,
    /// The best median so far, in milliseconds (a candidate much slower stops after
    /// one timed run); none before any.
    pub best_ms: Option<f64>,
    /// A run longer than this (milliseconds) is a timeout.
    pub run_limit_ms: f64,
    /// Whether to answer with the values of its last run too (JSON text).
    #[serde(default)]
    pub output: bool,
}

impl Default for RunSpec {
    /// Checked, warmed up, 5 timed runs, no best yet, 10 s a run.
    fn default() -> RunSpec {
        RunSpec {
            check: true,
            warm_up: true,
            runs: 5,
            best_ms: None,
            run_limit_ms: 1e4,
            output: false,
        }
    }
}

/// A worker's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// Set up (or the reference taken).
    Ready {
        /// The worker's process.
        pid: u32,
    },
    /// The reference values as JSON text.
    Reference {
        /// The values.
        values: String,
    },
    /// Compiled.
    Compiled {
        /// The candidate's key.
        key: String,
        /// How long it took, in milliseconds.
        compile_ms: f64,
    },
    /// Run.
    Measured {
        /// The candidate's key.
        key: String,
        /// The compilation's time, where this request compiled it.
        compile_ms: Option<f64>,
        /// The warm-up run's time (where there was one), in milliseconds.
        warm_up_ms: Option<f64>,
        /// Each timed run's time, in milliseconds (none where the warm-up alone said
        /// enough: [`Reply::Measured::raced`]).
        times_ms: Vec<f64>,
        /// Whether it was not timed as often as asked, being clearly slower than the
        /// best so far.
        raced: bool,
        /// The values of its last run (JSON text), where asked for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
    },
    /// The candidate failed: its status as the log writes it, and why.
    Failed {
        /// The candidate's key.
        key: String,
        /// `compile failed`, `wrong values`, `timeout`.
        status: String,
        /// Why.
        reason: String,
    },
    /// The request could not be served (not set up, not JSON).
    Error {
        /// Why.
        reason: String,
    },
}

impl Request {
    /// As one line of JSON.
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Reply {
    /// As one line of JSON.
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_are_one_line_of_json_each_and_read_back() {
        let request = Request::Run {
            key: "00ff".into(),
            program: "def f(x: 4.f32) =\n  x".into(),
            how: RunSpec {
                best_ms: Some(1.5),
                ..RunSpec::default()
            },
        };
        let line = request.line();
        assert!(!line.contains('\n') && line.starts_with("{\"request\":\"run\""));
        assert_eq!(serde_json::from_str::<Request>(&line).unwrap(), request);
        let reply = Reply::Measured {
            key: "00ff".into(),
            compile_ms: None,
            warm_up_ms: Some(2.0),
            times_ms: vec![1.0, 1.25],
            raced: false,
            output: None,
        };
        assert_eq!(serde_json::from_str::<Reply>(&reply.line()).unwrap(), reply);
    }
}
