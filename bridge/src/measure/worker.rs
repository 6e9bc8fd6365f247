//! The worker: a process that compiles and runs a search's candidates for it
//! ([`serve`]), so that nothing a candidate does (a compilation that never ends, a
//! crash, memory without end) touches the search. [`Engine`] is what it does with
//! each request, usable in process too (to compare the two).

use super::protocol::{Reply, Request, RunSpec};
use super::WORKER_ENV;
use crate::driver::{compile_term, Options};
use crate::jit::{Compiled, OpenMp};
use elevate_rise::{evaluate, io, NatEnv, Program, Term, Value};
use elevate_strategies::search::{Rejection, Status};
use serde_json::Value as Json;
use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::time::Instant;

/// A candidate whose first timed run already takes this many times the best median
/// so far is not timed further: its cost is that run's time. A slow candidate then
/// costs two runs instead of six, which is most of a search's time at large sizes.
/// The warm-up itself says too little: it touches its buffers for the first time (on
/// large arrays, ten times slower than a later run) and may start the OpenMP
/// runtime's threads.
pub const RACE_FACTOR: f64 = 3.0;

/// How much slower a warm-up run may be than a later run of the same program (first
/// touch of fresh buffers, the OpenMP runtime starting): a candidate whose warm-up
/// takes more than this times [`RACE_FACTOR`] times the best median is not run again.
const WARM_UP_SLOWDOWN: f64 = 10.0;

/// Timed runs stop once they have taken this long together (at least one is timed):
/// a run of seconds says its time well enough by itself.
const TIMED_RUNS_MS: f64 = 1_000.0;

/// How many compiled candidates a worker keeps (the oldest goes first): a round's,
/// for their runs after every candidate of it compiled.
const KEPT: usize = 64;

/// The stack of the thread that compiles candidates (and, by default, of the one
/// they run on): as large as a main thread's and more (a register tile's buffers live
/// on it).
pub const CANDIDATE_STACK_BYTES: usize = 64 << 20;

/// What a worker holds: the start program's inputs, the reference values, the
/// candidates it compiled.
pub struct Engine {
    start: Term,
    inputs: Vec<Value>,
    options: Options,
    threads: Option<usize>,
    reference: Option<Json>,
    compiled: VecDeque<(String, Compiled)>,
    stack: usize,
}

/// How a candidate's runs went.
#[derive(Debug, Clone, PartialEq)]
pub struct Runs {
    /// The compilation's time, where the run compiled it.
    pub compile_ms: Option<f64>,
    /// The warm-up run's time.
    pub warm_up_ms: Option<f64>,
    /// The timed runs' times.
    pub times_ms: Vec<f64>,
    /// Whether it was timed less, being slower than the best.
    pub raced: bool,
    /// The values of its last run (JSON), where asked for.
    pub output: Option<Json>,
}

impl Engine {
    /// An engine for candidates of `start` (RISE text: a definition with concrete
    /// sizes), on the random inputs of `seed`, their parallel loops on `threads`.
    pub fn new(start: &str, seed: u64, threads: Option<usize>) -> Result<Engine, String> {
        let program = Program::load(start, None)
            .map_err(|e| format!("the start program does not load: {}", e.message))?;
        let term = program.entry().term.clone();
        Engine::of_term(&term, seed, threads)
    }

    /// [`Engine::new`] of a typed term.
    pub fn of_term(start: &Term, seed: u64, threads: Option<usize>) -> Result<Engine, String> {
        let signature = io::signature(start);
        let inputs = io::random_inputs(&signature, &NatEnv::default(), seed)
            .map_err(|e| format!("the inputs of the program cannot be made: {e}"))?;
        Ok(Engine {
            start: start.clone(),
            inputs,
            options: Options::default(),
            threads,
            reference: None,
            compiled: VecDeque::new(),
            stack: CANDIDATE_STACK_BYTES,
        })
    }

    /// The same engine, running candidates on a stack of `bytes`.
    pub fn stack(mut self, bytes: u64) -> Engine {
        self.stack = usize::try_from(bytes).unwrap_or(usize::MAX);
        self
    }

    /// The inputs every candidate runs on.
    pub fn inputs(&self) -> &[Value] {
        &self.inputs
    }

    /// The interpreter's values of the start program on the inputs, kept as the
    /// reference.
    pub fn reference(&mut self) -> Result<&Json, String> {
        if self.reference.is_none() {
            let values = evaluate(&self.start, &NatEnv::default(), &self.inputs)
                .map_err(|e| e.to_string())?
                .to_json()
                .map_err(|e| e.to_string())?;
            self.reference = Some(values);
        }
        Ok(self.reference.as_ref().expect("just set"))
    }

    /// Takes `values` as the reference.
    pub fn expect(&mut self, values: Json) {
        self.reference = Some(values);
    }

    /// Compiles `program` as candidate `key` (kept for its runs): the time it took,
    /// in milliseconds.
    pub fn compile(&mut self, key: &str, program: &Term) -> Result<f64, Rejection> {
        if self.compiled.iter().any(|(k, _)| k == key) {
            return Ok(0.0);
        }
        let start = Instant::now();
        let compiled = compile_term("f", program, None, &self.options)
            .map_err(|e| Rejection::new(Status::CompileFailed, e.to_string()))?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if self.compiled.len() >= KEPT {
            self.compiled.pop_front();
        }
        self.compiled.push_back((key.to_string(), compiled));
        Ok(ms)
    }

    /// Runs candidate `key` (compiling `program` first if it is not kept) as `how`
    /// says.
    pub fn run(&mut self, key: &str, program: &Term, how: &RunSpec) -> Result<Runs, Rejection> {
        let RunSpec {
            check,
            warm_up,
            runs,
            best_ms,
            run_limit_ms,
            output,
        } = *how;
        let compile_ms = match self.compiled.iter().any(|(k, _)| k == key) {
            true => None,
            false => Some(self.compile(key, program)?),
        };
        if check {
            self.reference().map_err(|why| {
                Rejection::new(
                    Status::WrongValues,
                    format!("the interpreter cannot compute the reference values: {why}"),
                )
            })?;
        }
        let reference = self.reference.as_ref().filter(|_| check);
        let (_, compiled) = self
            .compiled
            .iter()
            .find(|(k, _)| k == key)
            .expect("compiled above");
        let timing = Timing {
            compiled,
            inputs: &self.inputs,
            reference,
            threads: self.threads,
            warm_up,
            runs,
            best: best_ms.unwrap_or(f64::INFINITY),
            run_limit_ms,
            output,
        };
        // On a thread of the candidate's stack: a run past it overflows, and the
        // worker dies of it (a `crashed` candidate), not a search.
        let thread = std::thread::Builder::new()
            .name("candidate runs".into())
            .stack_size(self.stack);
        let measured = std::thread::scope(|scope| {
            let runs = thread.spawn_scoped(scope, || timing.time()).map_err(|e| {
                Rejection::new(Status::Crashed, format!("no thread to run it on: {e}"))
            })?;
            runs.join()
                .unwrap_or_else(|_| Err(Rejection::new(Status::Crashed, "its run panicked")))
        })?;
        Ok(Runs {
            compile_ms,
            ..measured
        })
    }

    /// Serves one request.
    pub fn serve(&mut self, request: Request) -> Reply {
        let failed = |key: String, r: Rejection| Reply::Failed {
            key,
            status: r.status.as_str().into(),
            reason: r.reason,
        };
        match request {
            Request::Setup { .. } => Reply::Error {
                reason: "the worker is set up already".into(),
            },
            Request::Reference => match self.reference() {
                Ok(values) => Reply::Reference {
                    values: values.to_string(),
                },
                Err(reason) => Reply::Error { reason },
            },
            Request::Expect { values } => match serde_json::from_str(&values) {
                Ok(values) => {
                    self.expect(values);
                    Reply::Ready {
                        pid: std::process::id(),
                    }
                }
                Err(e) => Reply::Error {
                    reason: format!("the reference values are not JSON: {e}"),
                },
            },
            Request::Compile { key, program } => match candidate(&program) {
                Ok(term) => match self.compile(&key, &term) {
                    Ok(compile_ms) => Reply::Compiled { key, compile_ms },
                    Err(r) => failed(key, r),
                },
                Err(r) => failed(key, r),
            },
            Request::Run { key, program, how } => {
                let result = candidate(&program).and_then(|term| self.run(&key, &term, &how));
                match result {
                    Ok(r) => Reply::Measured {
                        key,
                        compile_ms: r.compile_ms,
                        warm_up_ms: r.warm_up_ms,
                        times_ms: r.times_ms,
                        raced: r.raced,
                        output: r.output.map(|v| v.to_string()),
                    },
                    Err(r) => failed(key, r),
                }
            }
        }
    }
}

/// A compiled candidate's runs, timed.
struct Timing<'a> {
    compiled: &'a Compiled,
    inputs: &'a [Value],
    reference: Option<&'a Json>,
    threads: Option<usize>,
    warm_up: bool,
    runs: usize,
    best: f64,
    run_limit_ms: f64,
    output: bool,
}

// SAFETY: a `Timing` is used by one thread at a time: the thread that makes it waits
// (joins) while the thread of the candidate's runs uses it. What it borrows is only
// read: the compiled candidate's payload, interface and packed wrapper, which
// computes on the memory each call gives it.
unsafe impl Sync for Timing<'_> {}

impl Timing<'_> {
    /// A warm-up run (checked against the reference, if any), then the timed runs.
    fn time(&self) -> Result<Runs, Rejection> {
        if let (Some(threads), Some(openmp)) = (self.threads, OpenMp::get()) {
            openmp.set_threads(threads);
        }
        let failed = |e: crate::Error| match e {
            crate::Error::Memory { .. } => Rejection::new(Status::OutOfMemory, e.to_string()),
            e => Rejection::new(Status::WrongValues, e.to_string()),
        };
        let mut call = self.compiled.prepare(self.inputs).map_err(failed)?;
        let limit = self.run_limit_ms;
        let time = |call: &mut crate::jit::Call<'_>| {
            let start = Instant::now();
            call.invoke().map_err(failed)?;
            let ms = start.elapsed().as_secs_f64() * 1e3;
            if ms > limit {
                return Err(Rejection::new(
                    Status::Timeout,
                    format!("a run took {ms:.1} ms, more than the run limit of {limit:.1} ms"),
                ));
            }
            Ok(ms)
        };
        let best = self.best;
        let mut measured = Runs {
            compile_ms: None,
            warm_up_ms: None,
            times_ms: Vec::new(),
            raced: false,
            output: None,
        };
        if self.warm_up || self.reference.is_some() {
            let ms = time(&mut call)?;
            measured.warm_up_ms = Some(ms);
            if ms > WARM_UP_SLOWDOWN * RACE_FACTOR * best {
                // So slow that even a first touch of the buffers cannot explain it:
                // its warm-up's time (an upper bound) says enough.
                measured.raced = true;
            }
        }
        if let Some(expected) = self.reference {
            let found = call
                .try_output()
                .map_err(failed)?
                .to_json()
                .map_err(|e| Rejection::new(Status::WrongValues, e.to_string()))?;
            if let Some(d) = io::first_difference(expected, &found) {
                return Err(Rejection::new(
                    Status::WrongValues,
                    format!("the compiled program differs from the reference values {d}"),
                ));
            }
        }
        let mut total = 0.0;
        while !measured.raced && measured.times_ms.len() < self.runs.max(1) {
            let ms = time(&mut call)?;
            measured.times_ms.push(ms);
            total += ms;
            if ms > RACE_FACTOR * best {
                // Clearly slower than the best: one timed run says enough.
                measured.raced = measured.times_ms.len() < self.runs;
                break;
            }
            if total > TIMED_RUNS_MS {
                break;
            }
        }
        if self.output {
            let values = call.try_output().map_err(failed)?.to_json();
            measured.output =
                Some(values.map_err(|e| Rejection::new(Status::WrongValues, e.to_string()))?);
        }
        Ok(measured)
    }
}

/// A candidate's program from its RISE text.
fn candidate(text: &str) -> Result<Term, Rejection> {
    Program::load(text, None)
        .map(|p| p.entry().term.clone())
        .map_err(|e| {
            Rejection::new(
                Status::CompileFailed,
                format!("the candidate does not load: {}", e.message),
            )
        })
}

/// Serves requests from `requests`, one JSON line each, answering each on `replies`,
/// until `requests` ends: what a worker process does ([`serve_stdio`]). The first
/// request sets the worker up.
pub fn serve(requests: impl BufRead, mut replies: impl Write) -> std::io::Result<()> {
    let mut engine: Option<Engine> = None;
    for line in requests.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match (serde_json::from_str::<Request>(&line), engine.as_mut()) {
            (Err(e), _) => Reply::Error {
                reason: format!("not a request: {e}"),
            },
            (
                Ok(Request::Setup {
                    start,
                    seed,
                    threads,
                    memory,
                    stack,
                }),
                None,
            ) => {
                limit_memory(memory);
                match Engine::new(&start, seed, threads) {
                    Ok(e) => {
                        engine = Some(e.stack(stack));
                        Reply::Ready {
                            pid: std::process::id(),
                        }
                    }
                    Err(reason) => Reply::Error { reason },
                }
            }
            (Ok(request), Some(engine)) => engine.serve(request),
            (Ok(_), None) => Reply::Error {
                reason: "the worker is not set up".into(),
            },
        };
        writeln!(replies, "{}", reply.line())?;
        replies.flush()?;
    }
    Ok(())
}

/// Limits the process's address space to `bytes` (0: no limit), so that a candidate
/// that takes memory without end fails in its worker, not in the machine.
fn limit_memory(bytes: u64) {
    if bytes == 0 {
        return;
    }
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: bytes as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct it is given; a failure leaves the limit as
    // it was (the search still watches the worker's resident memory).
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &limit);
    }
}

/// Serves the worker protocol on this process's standard input and output, then ends
/// the process: what `elevate` does when a search starts it as a worker (and the
/// Python package's `python -m elevate.worker`).
///
/// Standard output carries only replies: the descriptor is kept for them and
/// standard output is pointed at standard error, so that nothing else a candidate or
/// a library prints can corrupt them. Requests are read on a thread of their own: the
/// end of the input (the search ended, or died) ends the worker at once, even in the
/// middle of a compilation or a run. Candidates compile and run on a thread with a
/// large stack.
pub fn serve_stdio() -> ! {
    // SAFETY: plain descriptor calls; a failure leaves standard output as it was.
    let replies_fd = unsafe {
        let fd = libc::dup(1);
        if fd >= 0 {
            libc::dup2(2, 1);
        }
        fd
    };
    if replies_fd < 0 {
        end(2);
    }
    // SAFETY: `replies_fd` is a descriptor this process owns from here on.
    let replies: std::fs::File = unsafe { std::os::fd::FromRawFd::from_raw_fd(replies_fd) };
    let (send, receive) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::Builder::new().name("requests".into());
    let spawned = reader.spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(line) => {
                    if send.send(line).is_err() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        // The search is gone: so is the worker, whatever it is doing.
        end(0);
    });
    if spawned.is_err() {
        end(2);
    }
    let engine = std::thread::Builder::new()
        .name("candidates".into())
        .stack_size(CANDIDATE_STACK_BYTES)
        .spawn(move || {
            let requests = std::io::BufReader::new(ChannelReader {
                lines: receive,
                buffer: Vec::new(),
                at: 0,
            });
            let _ = serve(requests, std::io::LineWriter::new(replies));
            end(0);
        });
    match engine {
        Ok(handle) => {
            let _ = handle.join();
            end(0)
        }
        Err(_) => end(2),
    }
}

/// Ends the process at once, without running exit handlers (LLVM's global
/// destructors must not run beside a compilation on another thread).
fn end(code: i32) -> ! {
    // SAFETY: _exit ends the process; nothing after it runs.
    unsafe { libc::_exit(code) }
}

/// The lines of a channel as a reader.
struct ChannelReader {
    lines: std::sync::mpsc::Receiver<String>,
    buffer: Vec<u8>,
    at: usize,
}

impl std::io::Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at >= self.buffer.len() {
            match self.lines.recv() {
                Ok(line) => {
                    self.buffer = line.into_bytes();
                    self.buffer.push(b'\n');
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buffer.len() - self.at);
        out[..n].copy_from_slice(&self.buffer[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Makes this process a worker ([`serve_stdio`]) if it was started as one (the
/// environment variable [`WORKER_ENV`] is set): the first thing a program that
/// measures candidates with [`super::WorkerCommand::this_program`] does in `main`.
pub fn serve_if_asked() {
    if std::env::var_os(WORKER_ENV).is_some() {
        serve_stdio();
    }
}
