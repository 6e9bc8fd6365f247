//! A search's directory (`--out DIR`, `spec/search.md`): written as the search goes,
//! so that a search killed at any moment leaves every result it had, and read again
//! to resume it.
//!
//! - `search.json`: what the search is (the program's fingerprint, the space, the
//!   driver, the seed, the cost, the sizes), written first; a resumed search must be
//!   the same search.
//! - `log.jsonl`: a line per candidate, each flushed as its result comes.
//! - `report.json`: rewritten (whole, by a rename) after every round, and at the end.
//! - `best.elv`, `best.rise`, `best.mlir`, `progress.svg`, `progress.png`: at the end.
//!
//! A resumed search replays from the start, its logged programs known
//! ([`Search::known`](elevate_strategies::search::Search::known)): its new log is
//! written beside the old one (`log.jsonl.resumed`) and takes its place once it has
//! as many lines, so that the old log stays whole until the new one holds as much.

use crate::search_report::{log_line, report_json};
use elevate_rise::{print_definition, Program, Term};
use elevate_strategies::search::{Candidate, Known, Measure, Progress, Rejection, Report, Status};
use serde_json::{json, Value as Json};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a search is: a resumed one must be the same.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The start program's fingerprint (at its sizes), in hexadecimal.
    pub program_hash: String,
    /// The space, as given.
    pub space: String,
    /// The driver, as text.
    pub driver: String,
    /// The seed.
    pub seed: u64,
    /// The cost's name.
    pub cost: String,
}

/// What a search to resume was asked to be: the program and space as given, the
/// driver, seed and cost where given (a resumed search has its own).
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The start program's fingerprint, in hexadecimal.
    pub program_hash: &'a str,
    /// The space.
    pub space: &'a str,
    /// The driver, if given.
    pub driver: Option<&'a str>,
    /// The seed, if given.
    pub seed: Option<u64>,
    /// The cost, if given.
    pub cost: Option<&'a str>,
}

impl Settings {
    /// Whether the search `asked` for is this one (to resume it).
    pub fn check_same(&self, asked: &Asked<'_>) -> Result<(), String> {
        let differs = |what: &str, there: &str, here: &str| {
            Err(format!(
                "its search has {what} `{there}`, not `{here}` (resume the same search)"
            ))
        };
        if self.program_hash != asked.program_hash {
            return Err(format!(
                "its search is of another program (or other sizes): program hash {}, not {}",
                self.program_hash, asked.program_hash
            ));
        }
        if self.space != asked.space {
            return differs("the space", &self.space, asked.space);
        }
        if let Some(driver) = asked.driver.filter(|d| *d != self.driver) {
            return differs("the driver", &self.driver, driver);
        }
        if let Some(seed) = asked.seed.filter(|s| *s != self.seed) {
            return differs("the seed", &self.seed.to_string(), &seed.to_string());
        }
        if let Some(cost) = asked.cost.filter(|c| *c != self.cost) {
            return differs("the cost", &self.cost, cost);
        }
        Ok(())
    }

    fn to_json(&self) -> Json {
        json!({
            "program_hash": self.program_hash,
            "space": self.space,
            "driver": self.driver,
            "seed": self.seed,
            "cost": self.cost,
        })
    }

    fn from_json(json: &Json) -> Option<Settings> {
        let text = |key: &str| json.get(key)?.as_str().map(str::to_string);
        Some(Settings {
            program_hash: text("program_hash")?,
            space: text("space")?,
            driver: text("driver")?,
            seed: json.get("seed")?.as_u64()?,
            cost: text("cost")?,
        })
    }
}

/// A search's directory, open for writing.
pub struct SearchDir {
    dir: PathBuf,
    log: File,
    /// While a resumed search's new log has fewer lines than the old one: the old
    /// log's line count (the new one is `log.jsonl.resumed` until then).
    catching_up: Option<usize>,
    lines: usize,
}

const SETTINGS: &str = "search.json";
const LOG: &str = "log.jsonl";
const RESUMED_LOG: &str = "log.jsonl.resumed";

impl SearchDir {
    /// Makes `dir` (if it is not there) for a new search, its log empty.
    pub fn create(dir: &Path, settings: &Settings) -> Result<SearchDir, String> {
        make_dir(dir)?;
        write_settings(dir, settings)?;
        let log = File::create(dir.join(LOG)).map_err(|e| format!("{LOG}: {e}"))?;
        Ok(SearchDir {
            dir: dir.to_path_buf(),
            log,
            catching_up: None,
            lines: 0,
        })
    }

    /// Opens `dir` to resume the search it holds: its settings and what its log knows
    /// (every candidate with a result; the strategies that failed are found again,
    /// and candidates stopped by a budget or a signal are evaluated again).
    pub fn resume(dir: &Path) -> Result<(SearchDir, Settings, Known), String> {
        let settings = read_settings(dir)?;
        let log_text = match std::fs::read_to_string(dir.join(LOG)) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("{LOG}: {e}")),
        };
        let mut known = Known::default();
        let mut old_lines = 0;
        for (n, line) in log_text.lines().enumerate() {
            let Ok(json) = serde_json::from_str::<Json>(line) else {
                // A line cut short by a kill: the last one; nothing after it counts.
                if n + 1 == log_text.lines().count() {
                    break;
                }
                return Err(format!("{LOG}:{}: not a line of a search's log", n + 1));
            };
            old_lines += 1;
            if let Some((hash, result)) = known_result(&json) {
                known.insert(hash, result);
            }
        }
        // A resumed log that never caught up is dropped: the old log is whole.
        let log = File::create(dir.join(RESUMED_LOG)).map_err(|e| format!("{RESUMED_LOG}: {e}"))?;
        let mut opened = SearchDir {
            dir: dir.to_path_buf(),
            log,
            catching_up: Some(old_lines),
            lines: 0,
        };
        opened.caught_up()?;
        Ok((opened, settings, known))
    }

    /// Adds candidate `c`'s line to the log, flushed.
    pub fn log(&mut self, c: &Candidate) -> Result<(), String> {
        let name = if self.catching_up.is_some() {
            RESUMED_LOG
        } else {
            LOG
        };
        writeln!(self.log, "{}", log_line(c))
            .and_then(|()| self.log.flush())
            .map_err(|e| format!("{name}: {e}"))?;
        self.lines += 1;
        self.caught_up()
    }

    /// The resumed log takes the old one's place once it holds as many lines.
    fn caught_up(&mut self) -> Result<(), String> {
        if self.catching_up.is_some_and(|old| self.lines >= old) {
            self.take_place()?;
        }
        Ok(())
    }

    fn take_place(&mut self) -> Result<(), String> {
        if self.catching_up.take().is_some() {
            std::fs::rename(self.dir.join(RESUMED_LOG), self.dir.join(LOG))
                .map_err(|e| format!("{LOG}: {e}"))?;
        }
        Ok(())
    }

    /// Writes `report.json` whole (a reader never sees half of one).
    pub fn report(&self, report: &Json) -> Result<(), String> {
        write_whole(&self.dir.join("report.json"), &format!("{report}\n"))
    }

    /// The end of the search: the log in place, the report, the best point, its
    /// program and its MLIR, the pictures.
    pub fn finish(
        &mut self,
        report: &Report,
        program: &Program,
        best_program: Option<&Term>,
    ) -> Result<(), String> {
        self.take_place()?;
        let cost = report.cost.clone();
        self.report(&report_json(report, &cost, best_program))?;
        let write = |name: &str, text: &str| write_whole(&self.dir.join(name), text);
        if let (Some(best), Some(term)) = (report.best(), best_program) {
            write("best.elv", &format!("{}\n", best.strategy))?;
            let name = &program.entry().name;
            write("best.rise", &print_definition(name, term))?;
            match crate::search_costs::mlir_text(name, term) {
                Ok(text) => write("best.mlir", &text)?,
                Err(e) => write(
                    "best.mlir",
                    &format!("// the best program does not compile: {e}\n"),
                )?,
            }
        }
        crate::search_plot::write(&self.dir, report)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// What a search's observer does with each candidate: its line in the log, and at
    /// the end of a round the report of the search so far (`settings`' search, of a
    /// space of `space_size` points).
    pub fn record(
        &mut self,
        progress: &Progress<'_>,
        settings: &Settings,
        space_size: f64,
    ) -> Result<(), String> {
        self.log(progress.candidate)?;
        if !progress.end_of_round {
            return Ok(());
        }
        let log = progress.log;
        let mut seen = std::collections::HashSet::new();
        let report = Report {
            driver: settings.driver.clone(),
            seed: settings.seed,
            cost: settings.cost.clone(),
            evaluations: log.len(),
            distinct_programs: log
                .iter()
                .filter(|c| c.status != Status::StrategyFailed)
                .filter(|c| seen.insert(c.program_hash))
                .count(),
            failed: log.iter().filter(|c| c.status != Status::Ok).count(),
            space_size,
            seconds: progress.elapsed.as_secs_f64(),
            baseline: None,
            compared: None,
            log: log.to_vec(),
        };
        self.report(&report_json(&report, &settings.cost, None))
    }
}

/// Opens the directory of a search: a new search's (its log empty) or, with
/// `resume`, the search in `dir` to go on with, which must be the one `asked` for.
/// Python's `search(out=DIR, resume=True)` starts a new search where `dir` holds none.
pub fn open(
    dir: &Path,
    resume: bool,
    asked: &Asked<'_>,
) -> Result<(SearchDir, Settings, Known), String> {
    if resume {
        let (opened, settings, known) = SearchDir::resume(dir)?;
        settings.check_same(asked)?;
        return Ok((opened, settings, known));
    }
    let settings = new_settings(asked);
    let opened = SearchDir::create(dir, &settings)?;
    Ok((opened, settings, Known::default()))
}

/// The settings of a new search `asked` for: the driver, seed and cost it names, or
/// the defaults.
pub fn new_settings(asked: &Asked<'_>) -> Settings {
    Settings {
        program_hash: asked.program_hash.to_string(),
        space: asked.space.to_string(),
        driver: asked.driver.unwrap_or(DEFAULT_DRIVER).to_string(),
        seed: asked.seed.unwrap_or(0),
        cost: asked.cost.unwrap_or(DEFAULT_COST).to_string(),
    }
}

/// The settings `dir` holds (`search.json`).
pub fn read_settings(dir: &Path) -> Result<Settings, String> {
    let path = dir.join(SETTINGS);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e} (is it a search's directory, written by --out?)",
            path.display()
        )
    })?;
    serde_json::from_str(&text)
        .ok()
        .and_then(|j| Settings::from_json(&j))
        .ok_or_else(|| format!("{}: not a search's settings", path.display()))
}

/// Writes `settings` into `dir` (`search.json`), whole.
pub fn write_settings(dir: &Path, settings: &Settings) -> Result<(), String> {
    write_whole(&dir.join(SETTINGS), &format!("{}\n", settings.to_json()))
}

/// Whether `dir` holds a search to resume.
pub fn holds_search(dir: &Path) -> bool {
    dir.join(SETTINGS).is_file()
}

/// The driver of a search that names none.
pub const DEFAULT_DRIVER: &str = "random";
/// The cost of a search that names none.
pub const DEFAULT_COST: &str = "model";

/// What a log line says of its program: its fingerprint and result, where it has
/// one that a resumed search takes as known.
fn known_result(line: &Json) -> Option<(u64, Result<Measure, Rejection>)> {
    let hash = u64::from_str_radix(line.get("program_hash")?.as_str()?, 16).ok()?;
    let status = Status::parse(line.get("status")?.as_str()?)?;
    let number = |key: &str| line.get(key).and_then(Json::as_f64);
    let result = match status {
        // Found again when the strategy is applied again; evaluated again.
        Status::StrategyFailed | Status::Stopped => return None,
        Status::Ok => Ok(Measure {
            cost: number("cost")?,
            model: number("model_cost"),
            ms: number("median_ms"),
            compile_ms: number("compile_ms"),
            spread_ms: number("min_ms").zip(number("max_ms")),
        }),
        failed => Err(Rejection::new(
            failed,
            line.get("reason").and_then(Json::as_str).unwrap_or(""),
        )),
    };
    Some((hash, result))
}

fn make_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "{} is not a directory (the search writes its files into one)",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make the directory: {e}"))
}

/// Writes `text` to `path` through a file beside it and a rename: a reader never sees
/// half of it.
pub fn write_whole(path: &Path, text: &str) -> Result<(), String> {
    let name = path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let partial = path.with_extension("partial");
    let written = File::create(&partial).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.flush()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("{name}: {e}"));
    }
    std::fs::rename(&partial, path).map_err(|e| format!("{name}: {e}"))
}
