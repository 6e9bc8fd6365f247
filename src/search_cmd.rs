//! `elevate search`: a space, a driver and a cost (`spec/search.md`), with a progress
//! bar on standard error (naming the candidate it waits for when one takes long), the
//! report as the last line of standard output, and with `--out DIR` the log (a line
//! per candidate as it comes), the report (after every round), the best point, its
//! program and the pictures; `--resume DIR` goes on with a search from its directory.
//! SIGINT and SIGTERM end the search with what it found (exit 130, 143); a second
//! one ends it at once.

use crate::{load, output, read, Failure};
use elevate::bridge::measure::CandidateLimits;
use elevate::search_costs::{Made, Measuring, Watch};
use elevate::search_dir::{self, Asked, SearchDir, Settings};
use elevate::search_remote::{ProcessExecutor, RemoteCost};
use elevate::search_report::report_json;
use elevate_rise::search::fingerprint;
use elevate_rise::{io, print_definition, Term};
use elevate_strategies::search::{drivers, Known, Pending, Progress, Search, SearchBudget, Space};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct SearchOptions<'a> {
    pub path: &'a Path,
    pub entry: Option<&'a str>,
    pub space: &'a str,
    pub driver: Option<&'a str>,
    pub cost: Option<&'a str>,
    pub budget: SearchBudget,
    pub limits: Option<&'a str>,
    pub seed: Option<u64>,
    pub jobs: Option<usize>,
    pub nats: &'a [(String, i64)],
    pub threads: Option<usize>,
    pub out: Option<&'a Path>,
    pub resume: Option<&'a Path>,
    pub executor: &'a str,
    /// `--weights`: with a network (`spec/networks.md`), its layers are searched.
    pub weights: Option<&'a Path>,
}

/// The network `options` search, with its weights, where the program is one (the form
/// `import` writes), `--weights` is given and no `--entry`.
pub fn network_of<'a>(
    options: &SearchOptions<'a>,
) -> Option<(elevate::network::Network, &'a Path)> {
    let weights = options.weights.filter(|_| options.entry.is_none())?;
    let source = std::fs::read_to_string(options.path).ok()?;
    let network = elevate::network::Network::parse(&source).ok()?;
    Some((network, weights))
}

/// `--budget evals=N,time=S`: either or both; `time` in seconds (fractions allowed).
pub fn parse_budget(text: &str) -> Result<SearchBudget, String> {
    let mut budget = SearchBudget::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("expected KEY=VALUE (evals=N, time=S), found `{item}`"))?;
        match key.trim() {
            "evals" => {
                let n: usize = value.trim().parse().map_err(|_| {
                    format!("evals must be a positive whole number, found `{value}`")
                })?;
                if n == 0 {
                    return Err("evals must be at least 1".into());
                }
                budget = budget.evaluations(n);
            }
            "time" => {
                let s: f64 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("time must be seconds, found `{value}`"))?;
                if !(s > 0.0 && s <= 1e7) {
                    return Err(format!(
                        "time must be more than 0 and at most 10^7 seconds, found {value}"
                    ));
                }
                budget = budget.time(Duration::from_secs_f64(s));
            }
            other => return Err(format!("unknown budget `{other}` (evals, time)")),
        }
    }
    if budget == SearchBudget::default() {
        return Err("give evals=N, time=S or both".into());
    }
    Ok(budget)
}

/// The exit status of a search ended by signal `signal`, as shells report it.
fn exit_status(signal: usize) -> i32 {
    128 + signal as i32
}

/// SIGINT and SIGTERM set `stop` (the search ends with what it found) and say which
/// came in `which`; a second one ends the process at once.
pub fn on_signals(stop: &Arc<AtomicBool>, which: &Arc<AtomicUsize>) -> Result<(), Failure> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM] {
        let code = exit_status(signal as usize);
        signal_hook::flag::register_conditional_shutdown(signal, code, stop.clone())
            .and_then(|_| signal_hook::flag::register_usize(signal, which.clone(), signal as usize))
            .and_then(|_| signal_hook::flag::register(signal, stop.clone()))
            .map_err(|e| Failure(format!("cannot handle signals: {e}")))?;
    }
    Ok(())
}

pub fn search(options: SearchOptions<'_>) -> Result<(), Failure> {
    let path = options.path;
    let (program, _) = load(path, options.entry)?;
    let at = |e: &dyn std::fmt::Display| Failure(format!("{}: {e}", path.display()));
    let nats = io::bind_nats(&program.signature(), options.nats, None).map_err(|e| at(&e))?;
    let start = program.instantiate(&nats).map_err(|e| at(&e))?;
    let space = read_space(options.space)?;
    // A resumed search is the search in its directory: its driver and seed.
    let program_hash = format!("{:016x}", fingerprint(&start));
    let asked = Asked {
        program_hash: &program_hash,
        space: options.space,
        driver: options.driver,
        seed: options.seed,
        cost: options.cost,
    };
    let (dir, settings, known) = match (options.resume, options.out) {
        (Some(dir), _) => {
            let (opened, settings, known) = search_dir::open(dir, true, &asked)
                .map_err(|e| Failure(format!("--resume {}: {e}", dir.display())))?;
            (Some(opened), settings, known)
        }
        (None, Some(dir)) => {
            let (opened, settings, known) = search_dir::open(dir, false, &asked)
                .map_err(|e| Failure(format!("--out {}: {e}", dir.display())))?;
            (Some(opened), settings, known)
        }
        (None, None) => {
            let settings = Settings {
                program_hash,
                space: options.space.to_string(),
                driver: options.driver.unwrap_or(search_dir::DEFAULT_DRIVER).into(),
                seed: options.seed.unwrap_or(0),
                cost: options.cost.unwrap_or(search_dir::DEFAULT_COST).into(),
            };
            (None, settings, Known::default())
        }
    };
    let driver = drivers::from_text::<Term>(&settings.driver)
        .map_err(|e| Failure(format!("--driver: {e}")))?;
    let jobs = options
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let defaults = CandidateLimits::defaults(jobs, options.budget.time);
    let limits = match options.limits {
        Some(text) => {
            CandidateLimits::parse(text, defaults).map_err(|e| Failure(format!("--limits: {e}")))?
        }
        None => defaults,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let signal = Arc::new(AtomicUsize::new(0));
    on_signals(&stop, &signal)?;
    let Made {
        cost,
        watch,
        reference,
    } = make_cost(&options, &settings.cost, &program, &start, limits, &stop)?;
    let cost_name = cost.name();
    let space_size = space.start(&start).size_estimate();
    let mut dir = dir;
    let progress = Shown::new(&options.budget, watch);
    let written: Mutex<Option<String>> = Mutex::new(None);
    let search = Search::new(space, driver, cost)
        .budget(options.budget)
        .seed(settings.seed)
        .jobs(jobs)
        .baseline(start.clone())
        .known(known)
        .stop_on(stop.clone())
        .pending(progress.pending.clone())
        .observe(|p: &Progress<'_>| {
            progress.show(p);
            let Some(dir) = dir.as_mut() else { return };
            if let Err(e) = dir.record(p, &settings, space_size) {
                // A full disk: the search stops; what was written stays.
                if let Ok(mut slot) = written.lock() {
                    slot.get_or_insert(e);
                }
                stop.store(true, Ordering::Relaxed);
            }
        });
    let report = search.run(&start);
    progress.finish();
    let best_program = report
        .best()
        .map(|best| replay(&best.strategy, &start))
        .transpose()
        .map_err(|e| at(&e))?;
    let dir_name = |d: &SearchDir| d.path().display().to_string();
    if let Some(e) = written.into_inner().ok().flatten() {
        let name = dir.as_ref().map(dir_name).unwrap_or_default();
        return Err(Failure(format!(
            "{name}: {e} (the search stopped; what was written before is kept)"
        )));
    }
    if let Some(dir) = dir.as_mut() {
        dir.finish(&report, &program, best_program.as_ref())
            .map_err(|e| Failure(format!("{}: {e}", dir_name(dir))))?;
    }
    let source = reference.and_then(|r| r.lock().ok().and_then(|s| *s));
    if let Some(source) = source.filter(|s| *s != "the interpreter") {
        output::eprintln(&format!(
            "search: the interpreter took longer than it may (a quarter of the time budget) \
             for the reference values: candidates were checked against {source}"
        ));
    }
    let line = report_json(&report, &cost_name, best_program.as_ref()).to_string();
    output::println(&line)?;
    signal_exit(&signal)
}

/// Ends the process with a signal's exit status where one ended the search.
pub fn signal_exit(signal: &AtomicUsize) -> Result<(), Failure> {
    match signal.load(Ordering::Relaxed) {
        0 => Ok(()),
        s => std::process::exit(exit_status(s)),
    }
}

/// The cost, local (its measured candidates in worker processes) or on an executor.
fn make_cost(
    options: &SearchOptions<'_>,
    name: &str,
    program: &elevate_rise::Program,
    start: &Term,
    limits: CandidateLimits,
    stop: &Arc<AtomicBool>,
) -> Result<Made, Failure> {
    match options.executor {
        "local" => {
            let measuring = Measuring {
                threads: options.threads,
                limits: Some(limits),
                worker: None,
                stop: Some(stop.clone()),
                time: options.budget.time,
            };
            elevate::search_costs::make(name, start, &measuring)
                .map_err(|e| Failure(format!("--cost: {e}")))
        }
        target => {
            if !elevate::search_costs::is_cost(name) {
                return Err(Failure(format!(
                    "--cost: unknown cost `{name}` (model, measured, model+measured)"
                )));
            }
            let cost = RemoteCost {
                name: name.to_string(),
                entry: program.entry().name.clone(),
                start: print_definition(&program.entry().name, start),
                executor: ProcessExecutor::start(target)
                    .map_err(|e| Failure(format!("--executor {target}: {e}")))?,
            };
            Ok(Made {
                cost: Box::new(cost),
                watch: None,
                reference: None,
            })
        }
    }
}

/// The space given as text, `@FILE.elv`, or `auto`.
fn read_space(text: &str) -> Result<Space<Term>, Failure> {
    let (name, source) = match text.strip_prefix('@') {
        Some(file) => (file.to_string(), read(Path::new(file))?),
        None => ("space".to_string(), text.to_string()),
    };
    Space::parse_with_auto(
        &source,
        Arc::new(elevate_rise::registry()),
        elevate::search_costs::auto(),
    )
    .map_err(|e| {
        let (line, column) = e.line_col(&source);
        Failure(format!("{name}:{line}:{column}: space error: {e}"))
    })
}

/// The program `strategy` makes from `start` (the best point, replayed).
fn replay(strategy: &str, start: &Term) -> Result<Term, String> {
    let strategy = elevate_rise::registry()
        .parse(strategy)
        .map_err(|e| format!("the best point does not parse again: {}", e.message))?;
    strategy
        .apply(start, &mut elevate_core::Context::default())
        .map_err(|e| format!("the best point does not replay: {e}"))
}

/// A candidate in flight this long is named by the progress display.
const SHOW_AFTER: Duration = Duration::from_secs(3);

/// The progress display: a bar (plain lines when standard error is not a terminal),
/// and a thread that names the candidate the search waits for when one takes long.
struct Shown {
    bar: ProgressBar,
    best: Arc<Mutex<String>>,
    pending: Pending,
    done: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Shown {
    fn new(budget: &SearchBudget, watch: Option<Watch>) -> Shown {
        let bar = match budget.evaluations {
            Some(n) => ProgressBar::new(n as u64),
            None => ProgressBar::no_length(),
        };
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} evaluations, eta {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        let best = Arc::new(Mutex::new("best none yet".to_string()));
        let pending: Pending = Arc::default();
        let done = Arc::new(AtomicBool::new(false));
        let ticker = watch.and_then(|watch| {
            let (bar, best, pending, done) =
                (bar.clone(), best.clone(), pending.clone(), done.clone());
            std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || tick(&bar, &best, &pending, &done, &*watch))
                .ok()
        });
        Shown {
            bar,
            best,
            pending,
            done,
            ticker,
        }
    }

    /// One candidate more: the bar moves; when standard error is not a terminal, a
    /// plain line every tenth of the budget (or every 100 candidates).
    fn show(&self, progress: &Progress<'_>) {
        self.bar.set_position(progress.evaluations as u64);
        let best = progress
            .best
            .map_or("none yet".to_string(), |b| format!("{b:.4}"));
        if let Ok(mut b) = self.best.lock() {
            *b = format!("best {best}");
        }
        self.bar.set_message(format!("best {best}"));
        if self.bar.is_hidden() {
            let every = progress.max_evaluations.map_or(100, |n| (n / 10).max(1));
            if progress.evaluations.is_multiple_of(every) {
                output::eprintln(&format!(
                    "search: {} evaluations, {:.1} s, best {best}",
                    progress.evaluations,
                    progress.elapsed.as_secs_f64()
                ));
            }
        }
    }

    fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

/// Names the longest candidate in flight once it has taken [`SHOW_AFTER`]: on the
/// bar, or (standard error not a terminal) in a line when it passes 10 s, 60 s, ...
fn tick(
    bar: &ProgressBar,
    best: &Mutex<String>,
    pending: &Pending,
    done: &AtomicBool,
    watch: &(dyn Fn() -> Vec<elevate::bridge::measure::InFlight> + Send + Sync),
) {
    let mut said: Option<(u64, Instant, u64)> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(250));
        let Some(longest) = watch().into_iter().next() else {
            continue;
        };
        let waited = longest.since.elapsed();
        if waited < SHOW_AFTER {
            continue;
        }
        let strategy = pending
            .lock()
            .ok()
            .and_then(|p| {
                p.iter()
                    .find(|(h, _)| *h == longest.program_hash)
                    .map(|(_, s)| s.clone())
            })
            .unwrap_or_else(|| format!("program {:016x}", longest.program_hash));
        let shown: String = strategy.chars().take(80).collect();
        let best = best.lock().map(|b| b.clone()).unwrap_or_default();
        let line = format!(
            "{best} · {} {shown} for {:.0} s",
            longest.phase,
            waited.as_secs_f64()
        );
        if bar.is_hidden() {
            // 10 s, 60 s, 360 s, ... into one candidate.
            let mark = match said {
                Some((h, since, mark)) if h == longest.program_hash && since == longest.since => {
                    mark
                }
                _ => 10,
            };
            if waited.as_secs() >= mark {
                output::eprintln(&format!("search: {line}"));
                said = Some((longest.program_hash, longest.since, mark * 6));
            }
        } else {
            bar.set_message(line);
        }
    }
}
