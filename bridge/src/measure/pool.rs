//! The search's worker processes: started, asked, watched (their time, their memory,
//! their death) and killed.
//!
//! A worker is a process of its own group (a terminal's Ctrl-C reaches the search,
//! which then kills its workers, not the workers in the middle of a candidate), its
//! standard input and output the protocol's ([`super::protocol`]), its standard error
//! kept (the last few lines say why one died). One that passes a limit is killed with
//! SIGKILL and reaped, and its reader threads end with its pipes: a killed worker
//! leaves nothing behind. A worker whose search dies sees its input end and exits.

use super::limits::size;
use super::protocol::{Reply, Request};
use elevate_strategies::search::{Rejection, Status};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The environment variable naming the program a search starts its workers from
/// (one that serves the protocol when [`super::WORKER_ENV`] is set: `elevate`
/// itself), where the process searching is not one.
pub const WORKER_PROGRAM_ENV: &str = "ELEVATE_WORKER";

/// The environment variable that makes a process that calls
/// `serve_if_asked` (the first thing `elevate`'s `main` does) a worker.
pub const WORKER_ENV: &str = "ELEVATE_WORKER_PROCESS";

/// How to start a worker: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    program: PathBuf,
    args: Vec<OsString>,
}

impl WorkerCommand {
    /// `program` with `args` (the Python package: `python -m elevate.worker`).
    pub fn new(program: impl Into<PathBuf>, args: &[&str]) -> WorkerCommand {
        WorkerCommand {
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
        }
    }

    /// This very program, which serves as a worker when started as one (its `main`
    /// calls [`super::serve_if_asked`] first: `elevate`, the benchmarks).
    pub fn this_program() -> Result<WorkerCommand, String> {
        std::env::current_exe()
            .map(|p| WorkerCommand::new(p, &[]))
            .map_err(|e| format!("cannot find this program to start workers from: {e}"))
    }

    /// The program [`WORKER_PROGRAM_ENV`] names, else [`WorkerCommand::this_program`].
    pub fn from_env() -> Result<WorkerCommand, String> {
        match std::env::var_os(WORKER_PROGRAM_ENV) {
            Some(program) => Ok(WorkerCommand::new(PathBuf::from(program), &[])),
            None => WorkerCommand::this_program(),
        }
    }

    /// As a reader would type it.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(|s| s.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env(WORKER_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        command
    }
}

/// What a worker's pipes bring.
enum Event {
    /// A reply line from worker `id`.
    Line(u64, String),
    /// Worker `id`'s output ended: it died (or exited).
    Closed(u64),
}

/// One worker process.
struct Worker {
    id: u64,
    child: Child,
    stdin: ChildStdin,
    /// Its standard error's last few kilobytes.
    stderr: Arc<Mutex<String>>,
    /// The most address space seen, in bytes.
    peak_vm: u64,
    /// Candidates it compiled or ran.
    served: usize,
    /// The keys of the candidates it holds compiled.
    holds: Vec<String>,
    /// Whether it has the reference values.
    has_reference: bool,
}

/// What a worker is busy with, and how long it may take.
#[derive(Debug, Clone)]
pub(super) struct Busy {
    /// Its slot.
    pub slot: usize,
    /// Since when.
    pub since: Instant,
    /// How long it may take.
    pub limit: Duration,
    /// What passing the limit is: `compile timeout` or `timeout`.
    pub over: Status,
    /// What the limit is, for the reason (`the compile limit`).
    pub what: &'static str,
}

/// How often a waiting pool looks at its workers' memory and the clock.
const POLL: Duration = Duration::from_millis(20);

/// How long a worker may take to start and set up.
const STARTUP: Duration = Duration::from_secs(60);

/// A worker is replaced after this many candidates (what it keeps does not grow
/// without bound).
const MAX_SERVED: usize = 256;

/// How much of standard error is kept.
const STDERR_TAIL: usize = 4096;

/// The workers of a search.
pub(super) struct Pool {
    command: WorkerCommand,
    setup: Request,
    memory: u64,
    slots: Vec<Option<Worker>>,
    events: Receiver<Event>,
    sender: Sender<Event>,
    /// Events of workers that were not waited for when they came (a reply while the
    /// pool waited for another worker to start), kept for when they are.
    stash: std::collections::VecDeque<Event>,
    next_id: u64,
    /// Workers started, in all.
    pub started: usize,
}

impl Pool {
    /// A pool starting workers by `command`, each set up by `setup` with at most
    /// `memory` bytes.
    pub fn new(command: WorkerCommand, setup: Request, memory: u64) -> Pool {
        let (sender, events) = channel();
        Pool {
            command,
            setup,
            memory,
            slots: Vec::new(),
            events,
            sender,
            stash: std::collections::VecDeque::new(),
            next_id: 0,
            started: 0,
        }
    }

    /// How it starts workers.
    pub fn command(&self) -> &WorkerCommand {
        &self.command
    }

    /// Makes room for `n` workers (started when first needed).
    pub fn resize(&mut self, n: usize) {
        while self.slots.len() < n.max(1) {
            self.slots.push(None);
        }
        while self.slots.len() > n.max(1) {
            if let Some(w) = self.slots.pop().flatten() {
                kill(w);
            }
        }
    }

    /// How many slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The id of the worker in `slot`, if one runs.
    pub fn id(&self, slot: usize) -> Option<u64> {
        self.slots.get(slot)?.as_ref().map(|w| w.id)
    }

    /// Whether the worker in `slot` holds candidate `key` compiled.
    pub fn holds(&self, slot: usize, key: &str) -> bool {
        self.worker(slot)
            .is_some_and(|w| w.holds.iter().any(|k| k == key))
    }

    /// Whether the worker in `slot` has the reference values.
    pub fn has_reference(&self, slot: usize) -> bool {
        self.worker(slot).is_some_and(|w| w.has_reference)
    }

    /// Notes that the worker in `slot` has the reference values.
    pub fn set_has_reference(&mut self, slot: usize) {
        if let Some(w) = self.worker_mut(slot) {
            w.has_reference = true;
        }
    }

    /// Notes that the worker in `slot` served candidate `key` (and holds it).
    pub fn served(&mut self, slot: usize, key: &str) {
        if let Some(w) = self.worker_mut(slot) {
            w.served += 1;
            if !w.holds.iter().any(|k| k == key) {
                w.holds.push(key.to_string());
            }
        }
    }

    fn worker(&self, slot: usize) -> Option<&Worker> {
        self.slots.get(slot)?.as_ref()
    }

    fn worker_mut(&mut self, slot: usize) -> Option<&mut Worker> {
        self.slots.get_mut(slot)?.as_mut()
    }

    /// Starts a worker in `slot` if none runs there, and sets it up.
    pub fn ensure(&mut self, slot: usize) -> Result<(), String> {
        if self.worker(slot).is_some() {
            return Ok(());
        }
        let worker = self.spawn()?;
        self.slots[slot] = Some(worker);
        self.send(slot, &self.setup.clone())
            .map_err(|r| format!("the worker could not be set up: {}", r.reason))?;
        let mut busy = vec![Busy {
            slot,
            since: Instant::now(),
            limit: STARTUP,
            over: Status::CompileTimeout,
            what: "the time to start a worker",
        }];
        match self.wait(&mut busy, None, None).1 {
            Ok(Reply::Ready { .. }) => Ok(()),
            Ok(Reply::Error { reason }) => {
                self.kill(slot);
                Err(format!("the worker could not be set up: {reason}"))
            }
            Ok(other) => {
                self.kill(slot);
                Err(format!("the worker answered {other:?} to its setup"))
            }
            Err(r) => Err(format!("the worker could not be set up: {}", r.reason)),
        }
    }

    fn spawn(&mut self) -> Result<Worker, String> {
        let name = self.command.display();
        let mut child = self
            .command
            .command()
            .spawn()
            .map_err(|e| format!("cannot start the worker `{name}`: {e}"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the worker `{name}` has no pipes"));
        };
        let id = self.next_id;
        self.next_id += 1;
        self.started += 1;
        let events = self.sender.clone();
        let lines = std::thread::Builder::new().name(format!("worker {id} replies"));
        let spawned = lines.spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if events.send(Event::Line(id, line)).is_err() {
                    return;
                }
            }
            let _ = events.send(Event::Closed(id));
        });
        let tail = Arc::new(Mutex::new(String::new()));
        let kept = tail.clone();
        let errors = std::thread::Builder::new().name(format!("worker {id} errors"));
        let spawned_errors = errors.spawn(move || {
            let mut stderr = stderr;
            let mut chunk = [0u8; 1024];
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = kept.lock() {
                    t.push_str(&String::from_utf8_lossy(&chunk[..n]));
                    if t.len() > STDERR_TAIL {
                        let cut = t.len() - STDERR_TAIL;
                        let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(0);
                        t.drain(..cut);
                    }
                }
            }
        });
        if spawned.is_err() || spawned_errors.is_err() {
            let _ = child.kill();
            let _ = child.wait();
            return Err("no thread to read a worker's output on".into());
        }
        Ok(Worker {
            id,
            child,
            stdin,
            stderr: tail,
            peak_vm: 0,
            served: 0,
            holds: Vec::new(),
            has_reference: false,
        })
    }

    /// Sends `request` to the worker in `slot`; one that cannot be written to died.
    pub fn send(&mut self, slot: usize, request: &Request) -> Result<(), Rejection> {
        let Some(worker) = self.worker_mut(slot) else {
            return Err(Rejection::new(Status::Crashed, "no worker"));
        };
        let line = request.line();
        let written = writeln!(worker.stdin, "{line}").and_then(|()| worker.stdin.flush());
        match written {
            Ok(()) => Ok(()),
            Err(_) => {
                let worker = self.slots[slot].take().expect("a worker here");
                Err(death(worker, self.memory))
            }
        }
    }

    /// Waits for the first of `busy` to reply, pass its limit, run out of memory or
    /// die, or for `deadline` or `stop` (which stop all of `busy`: the first is
    /// returned, the others stay in `busy`, each to be waited for in turn). The slot
    /// and what came of it; the slot leaves `busy`.
    pub fn wait(
        &mut self,
        busy: &mut Vec<Busy>,
        deadline: Option<Instant>,
        stop: Option<&AtomicBool>,
    ) -> (usize, Result<Reply, Rejection>) {
        loop {
            if busy.is_empty() {
                return (
                    0,
                    Err(Rejection::new(Status::Stopped, "nothing to wait for")),
                );
            }
            // A stopped search, a spent budget, a limit passed, memory passed.
            let now = Instant::now();
            let stopped = stop.is_some_and(|s| s.load(Ordering::Relaxed));
            if stopped || deadline.is_some_and(|d| now >= d) {
                let b = busy.remove(0);
                self.kill(b.slot);
                let why = match stopped {
                    true => "the search was stopped before it was evaluated",
                    false => "stopped by the budget: the search's time was up",
                };
                return (b.slot, Err(Rejection::new(Status::Stopped, why)));
            }
            if let Some(k) = busy.iter().position(|b| now - b.since > b.limit) {
                let b = busy.remove(k);
                self.kill(b.slot);
                let why = format!(
                    "it took more than {} of {:.1} s (its worker was killed)",
                    b.what,
                    b.limit.as_secs_f64()
                );
                return (b.slot, Err(Rejection::new(b.over, why)));
            }
            for k in 0..busy.len() {
                let slot = busy[k].slot;
                let memory = self.memory;
                let Some(w) = self.worker_mut(slot) else {
                    continue;
                };
                let (vm, resident) = memory_of(w.child.id());
                w.peak_vm = w.peak_vm.max(vm);
                if memory > 0 && resident > memory {
                    busy.remove(k);
                    self.kill(slot);
                    let why = format!(
                        "its worker held {} of memory, more than the limit of {} (it was killed)",
                        size(resident),
                        size(memory)
                    );
                    return (slot, Err(Rejection::new(Status::OutOfMemory, why)));
                }
            }
            let mut wake = POLL;
            if let Some(d) = deadline {
                wake = wake.min(d.saturating_duration_since(now));
            }
            let waited_for = |pool: &Pool, e: &Event| {
                let id = match e {
                    Event::Line(id, _) | Event::Closed(id) => *id,
                };
                busy.iter().any(|b| pool.id(b.slot) == Some(id))
            };
            let stashed = self.stash.iter().position(|e| waited_for(self, e));
            let event = match stashed {
                Some(k) => Ok(self.stash.remove(k).expect("an event here")),
                None => self.events.recv_timeout(wake),
            };
            // An event of a live worker not waited for now is kept; one of a worker
            // killed before it answered is dropped.
            if let Ok(e) = &event {
                if !waited_for(self, e) {
                    let id = match e {
                        Event::Line(id, _) | Event::Closed(id) => *id,
                    };
                    let live = (0..self.slots.len()).any(|s| self.id(s) == Some(id));
                    if live {
                        self.stash.push_back(event.expect("an event"));
                    }
                    continue;
                }
            }
            match event {
                Ok(Event::Line(id, line)) => {
                    let Some(k) = busy.iter().position(|b| self.id(b.slot) == Some(id)) else {
                        continue;
                    };
                    let b = busy.remove(k);
                    let reply = serde_json::from_str::<Reply>(&line).map_err(|e| {
                        Rejection::new(
                            Status::Crashed,
                            format!("its worker answered other than the protocol ({e}): {line}"),
                        )
                    });
                    return (b.slot, reply);
                }
                Ok(Event::Closed(id)) => {
                    let Some(slot) = (0..self.slots.len()).find(|&s| self.id(s) == Some(id)) else {
                        continue;
                    };
                    let worker = self.slots[slot].take().expect("a worker here");
                    let rejection = death(worker, self.memory);
                    if let Some(k) = busy.iter().position(|b| b.slot == slot) {
                        busy.remove(k);
                        return (slot, Err(rejection));
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    // Cannot happen: the pool keeps a sender.
                    let b = busy.remove(0);
                    return (b.slot, Err(Rejection::new(Status::Crashed, "no replies")));
                }
            }
        }
    }

    /// Kills the worker in `slot` (if any) and reaps it.
    pub fn kill(&mut self, slot: usize) {
        if let Some(w) = self.slots.get_mut(slot).and_then(Option::take) {
            let id = w.id;
            self.stash
                .retain(|e| !matches!(e, Event::Line(i, _) | Event::Closed(i) if *i == id));
            kill(w);
        }
    }

    /// Replaces the workers that served many candidates or hold much memory (half
    /// their limit): between rounds, where nothing they hold is needed.
    pub fn retire_worn(&mut self) {
        for slot in 0..self.slots.len() {
            let Some(w) = self.worker(slot) else { continue };
            let (_, resident) = memory_of(w.child.id());
            let worn = w.served >= MAX_SERVED || (self.memory > 0 && resident > self.memory / 2);
            if worn {
                self.kill(slot);
            }
        }
    }

    /// The resident memory of each running worker, in bytes.
    pub fn resident(&self) -> Vec<u64> {
        self.slots
            .iter()
            .flatten()
            .map(|w| memory_of(w.child.id()).1)
            .collect()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for slot in 0..self.slots.len() {
            self.kill(slot);
        }
    }
}

fn kill(mut worker: Worker) {
    let _ = worker.child.kill();
    let _ = worker.child.wait();
}

/// Why `worker` (whose output ended) died: reaped, its signal or status, its memory.
fn death(mut worker: Worker, memory: u64) -> Rejection {
    // Its output ended: it is gone or going. A worker that closed its output and
    // lives on is killed.
    let patience = Instant::now() + Duration::from_secs(2);
    let status = loop {
        match worker.child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < patience => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = worker.child.kill();
                break worker.child.wait().ok();
            }
        }
    };
    // The reader of its standard error ends with it; what it read is here by now or
    // a moment later.
    std::thread::sleep(Duration::from_millis(20));
    let stderr = worker.stderr.lock().map(|t| t.clone()).unwrap_or_default();
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let last: String = last.chars().take(300).collect();
    let said = |what: &str| stderr.contains(what);
    let out_of_memory = said("memory allocation of")
        || said("out of memory")
        || said("bad_alloc")
        || said("Cannot allocate memory")
        || (memory > 0 && worker.peak_vm as f64 >= 0.9 * memory as f64);
    let how = match status {
        Some(s) => match s.signal() {
            Some(signal) => format!("died of {} (signal {signal})", signal_name(signal)),
            None => format!("exited with status {}", s.code().unwrap_or(-1)),
        },
        None => "ended".to_string(),
    };
    let said = if last.is_empty() {
        String::new()
    } else {
        format!(": {last}")
    };
    if out_of_memory {
        let why = format!(
            "its worker {how} out of memory (the limit is {}){said}",
            size(memory)
        );
        Rejection::new(Status::OutOfMemory, why)
    } else {
        Rejection::new(Status::Crashed, format!("its worker {how}{said}"))
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGXCPU => "SIGXCPU",
        _ => "a signal",
    }
}

/// The address space and resident memory of process `pid`, in bytes (0 where the
/// system does not say).
fn memory_of(pid: u32) -> (u64, u64) {
    let Ok(statm) = std::fs::read_to_string(format!("/proc/{pid}/statm")) else {
        return (0, 0);
    };
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let mut fields = statm
        .split_whitespace()
        .map(|f| f.parse::<u64>().unwrap_or(0));
    let vm = fields.next().unwrap_or(0);
    let resident = fields.next().unwrap_or(0);
    (vm * page, resident * page)
}
