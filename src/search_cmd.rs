//! `elevate search`: a space, a driver and a cost (`spec/search.md`), with a progress
//! bar on standard error, the report as the last line of standard output, and with
//! `--out DIR` the log, the report, the best point and its program.

use crate::{load, output, read, Failure};
use elevate::search_remote::{ProcessExecutor, RemoteCost};
use elevate::search_report::{log_line, report_json};
use elevate_rise::{io, print_definition, Program, Term};
use elevate_strategies::search::{drivers, Progress, Report, Search, SearchBudget, Space};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub struct SearchOptions<'a> {
    pub path: &'a Path,
    pub entry: Option<&'a str>,
    pub space: &'a str,
    pub driver: &'a str,
    pub cost: &'a str,
    pub budget: SearchBudget,
    pub seed: u64,
    pub jobs: Option<usize>,
    pub nats: &'a [(String, i64)],
    pub threads: Option<usize>,
    pub out: Option<&'a Path>,
    pub executor: &'a str,
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

pub fn search(options: SearchOptions<'_>) -> Result<(), Failure> {
    let path = options.path;
    let (program, _) = load(path, options.entry)?;
    let at = |e: &dyn std::fmt::Display| Failure(format!("{}: {e}", path.display()));
    let nats = io::bind_nats(&program.signature(), options.nats, None).map_err(|e| at(&e))?;
    let start = program.instantiate(&nats).map_err(|e| at(&e))?;
    let space = read_space(options.space)?;
    let driver = drivers::from_text::<Term>(options.driver)
        .map_err(|e| Failure(format!("--driver: {e}")))?;
    let cost = elevate::search_costs::make(options.cost, &start, options.threads)
        .map_err(|e| Failure(format!("--cost: {e}")))?;
    let cost: Box<dyn elevate_strategies::search::Cost<Term>> = match options.executor {
        "local" => cost,
        target => Box::new(RemoteCost {
            name: cost.name(),
            entry: program.entry().name.clone(),
            start: print_definition(&program.entry().name, &start),
            executor: ProcessExecutor::start(target)
                .map_err(|e| Failure(format!("--executor {target}: {e}")))?,
        }),
    };
    let cost_name = cost.name();
    let jobs = options
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = progress_bar(&options.budget);
    let search = Search::new(space, driver, cost)
        .budget(options.budget)
        .seed(options.seed)
        .jobs(jobs)
        .baseline(start.clone())
        .observe(|p: &Progress<'_>| show(&bar, p));
    let report = search.run(&start);
    bar.finish_and_clear();
    let best_program = report
        .best()
        .map(|best| replay(&best.strategy, &start))
        .transpose()
        .map_err(|e| at(&e))?;
    if let Some(dir) = options.out {
        write_outputs(dir, &report, &program, best_program.as_ref())
            .map_err(|e| Failure(format!("--out {}: {e}", dir.display())))?;
    }
    let line = report_json(&report, &cost_name, best_program.as_ref()).to_string();
    output::println(&line)
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

fn progress_bar(budget: &SearchBudget) -> ProgressBar {
    let bar = match budget.evaluations {
        Some(n) => ProgressBar::new(n as u64),
        None => ProgressBar::no_length(),
    };
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} evaluations, eta {eta} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// One candidate more: the bar moves; when standard error is not a terminal, a plain
/// line every tenth of the budget (or every 100 candidates).
fn show(bar: &ProgressBar, progress: &Progress<'_>) {
    bar.set_position(progress.evaluations as u64);
    let best = progress
        .best
        .map_or("none yet".to_string(), |b| format!("{b:.4}"));
    bar.set_message(format!("best {best}"));
    if bar.is_hidden() {
        let every = progress.max_evaluations.map_or(100, |n| (n / 10).max(1));
        if progress.evaluations.is_multiple_of(every) {
            eprintln!(
                "search: {} evaluations, {:.1} s, best {best}",
                progress.evaluations,
                progress.elapsed.as_secs_f64()
            );
        }
    }
}

fn write_outputs(
    dir: &Path,
    report: &Report,
    program: &Program,
    best_program: Option<&Term>,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let file = |name: &str| -> PathBuf { dir.join(name) };
    let write = |name: &str, text: &str| {
        std::fs::write(file(name), text).map_err(|e| format!("{name}: {e}"))
    };
    let mut log = String::new();
    for c in &report.log {
        let _ = writeln!(log, "{}", log_line(c));
    }
    write("log.jsonl", &log)?;
    let cost = report.cost.clone();
    write(
        "report.json",
        &format!("{}\n", report_json(report, &cost, best_program)),
    )?;
    if let (Some(best), Some(term)) = (report.best(), best_program) {
        write("best.elv", &format!("{}\n", best.strategy))?;
        let name = &program.entry().name;
        write("best.rise", &print_definition(name, term))?;
        match elevate::search_costs::mlir_text(name, term) {
            Ok(text) => write("best.mlir", &text)?,
            Err(e) => write(
                "best.mlir",
                &format!("// the best program does not compile: {e}\n"),
            )?,
        }
    }
    crate::search_plot::write(dir, report)
}
