//! `elevate saturate`: equality saturation of a program, then extraction.

use crate::{load, Failure};
use elevate_rise::egraph::{
    CostModel, Limits, Progress, Report, RiseGraph, RuleSet, Saturation, Step,
};
use elevate_rise::{infer, print_definition};
use indicatif::ProgressBar;
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

/// The largest e-graph `--dot` writes, in e-nodes: Graphviz lays out larger ones
/// slowly and unreadably.
pub const DOT_MAX_ENODES: usize = 2_000;

/// What `elevate saturate` was asked to do.
pub struct SaturateOptions<'a> {
    pub path: &'a Path,
    pub entry: Option<&'a str>,
    pub rules: &'a str,
    pub limits: Limits,
    pub cost: CostModel,
    pub dot: Option<&'a Path>,
    pub explain: bool,
}

/// `--cost NAME`.
pub fn parse_cost(name: &str) -> Result<CostModel, String> {
    CostModel::from_name(name).ok_or_else(|| format!("unknown cost model `{name}` (lowered, size)"))
}

/// Saturates the entry point, extracts the best program, prints it, then the report
/// as one JSON line.
pub fn saturate(o: SaturateOptions) -> Result<(), Failure> {
    let rules = RuleSet::parse(o.rules).map_err(|e| Failure(format!("--rules: {e}")))?;
    let (program, _) = load(o.path, o.entry)?;
    let entry = program.entry();
    let at = |e: &dyn std::fmt::Display| Failure(format!("{}: {e}", o.path.display()));

    let started = Instant::now();
    let progress = Reporter::new();
    let mut saturation = Saturation::new(rules.clone(), o.limits, o.cost).with_progress({
        let progress = progress.clone();
        move |p| progress.iteration(p)
    });
    if o.explain {
        saturation = saturation.with_explanations();
    }
    let grown = saturation.grow(&entry.term);
    progress.finish(grown.as_ref().ok().map(|g| &g.report));
    let mut grown = grown.map_err(|e| at(&e))?;
    let best = grown.extract(o.cost);
    grown.report.time = started.elapsed();

    if let Some(file) = o.dot {
        write_dot(&grown.egraph, file)?;
    }
    let extracted = grown.program(&best);
    let typed = infer(&extracted.erase_types()).map_err(|e| {
        at(&format!(
            "the extracted program does not type-check (a bug): {e}\n{}",
            print_definition(&entry.name, &extracted)
        ))
    })?;
    if typed.ty() != entry.term.ty() {
        return Err(at(&format!(
            "the extracted program's type {} is not the input's {} (a bug)",
            typed.ty().map(ToString::to_string).unwrap_or_default(),
            entry.term.ty().map(ToString::to_string).unwrap_or_default(),
        )));
    }
    if o.explain {
        print_explanation(&grown.explain(&best));
    }
    let mut report = grown.report.to_json();
    report["cost"] = ((grown.report.cost * 1000.0).round() / 1000.0).into();
    report["cost_model"] = o.cost.name().into();
    report["rules"] = rules.text().into();
    print!("{}", print_definition(&entry.name, &typed));
    println!("{report}");
    Ok(())
}

/// Writes the e-graph in Graphviz format, unless it is too large to draw.
fn write_dot(egraph: &RiseGraph, file: &Path) -> Result<(), Failure> {
    let enodes = egraph.total_number_of_nodes();
    if enodes > DOT_MAX_ENODES {
        return Err(Failure(format!(
            "--dot: the e-graph has {enodes} e-nodes, too large to draw (at most \
             {DOT_MAX_ENODES}); lower --limits, e.g. `--limits iterations=3,nodes={DOT_MAX_ENODES}`"
        )));
    }
    egraph
        .dot()
        .to_dot(file)
        .map_err(|e| Failure(format!("{}: cannot write: {e}", file.display())))
}

/// The explanation on standard error: the input, then one line per rewrite with the
/// rule (`RULE <=` where it was used from right to left) and the whole program after it.
fn print_explanation(steps: &[Step]) {
    eprintln!(
        "explanation: {} rewrite(s) from the input to the extracted program",
        steps.len().saturating_sub(1)
    );
    for step in steps {
        eprintln!(
            "  {}: {}",
            step.rule.as_deref().unwrap_or("input"),
            step.program
        );
    }
}

/// Progress on standard error: a spinner line on a terminal, one plain line per
/// iteration otherwise (logs and tests see every iteration).
#[derive(Clone)]
struct Reporter(Option<ProgressBar>);

impl Reporter {
    fn new() -> Reporter {
        if !std::io::stderr().is_terminal() {
            return Reporter(None);
        }
        let bar = ProgressBar::new_spinner();
        bar.set_message("saturating: building the e-graph");
        bar.enable_steady_tick(Duration::from_millis(100));
        Reporter(Some(bar))
    }

    fn iteration(&self, p: &Progress) {
        let top = match &p.top_rule {
            Some((rule, n)) => format!("{rule} x{n}"),
            None => "no rule".into(),
        };
        let line = format!(
            "iteration {}: {} e-nodes, {} e-classes, {:.0} MB, most applied {top}, {:.2} s",
            p.iteration,
            p.enodes,
            p.eclasses,
            p.memory_mb,
            p.elapsed.as_secs_f64()
        );
        match &self.0 {
            Some(bar) => bar.set_message(line),
            None => eprintln!("saturate: {line}"),
        }
    }

    /// The last line: why the saturation stopped, and the e-graph's final size.
    fn finish(&self, report: Option<&Report>) {
        let line = report.map(|r| {
            format!(
                "stopped ({}) after {} iteration(s): {} e-nodes, {} e-classes, peak {:.0} MB, {:.2} s",
                r.stop_reason,
                r.iterations,
                r.enodes,
                r.eclasses,
                r.peak_mb,
                r.time.as_secs_f64()
            )
        });
        match (&self.0, line) {
            (Some(bar), Some(line)) => bar.finish_with_message(format!("saturate: {line}")),
            (Some(bar), None) => bar.finish_and_clear(),
            (None, Some(line)) => eprintln!("saturate: {line}"),
            (None, None) => {}
        }
    }
}
