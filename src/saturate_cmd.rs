//! `elevate saturate`: equality saturation of a program, then extraction.

use crate::output;
use crate::{load, Failure};
use elevate_rise::egraph::sketch::{satisfied, Sketch};
use elevate_rise::egraph::{
    CostModel, Progress, Report, RiseGraph, RuleSet, Saturation, SaturationLimits,
};
use elevate_rise::{infer, print_definition};
use indicatif::ProgressBar;
use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

/// The largest e-graph `--dot` writes, in e-nodes: Graphviz lays out larger ones
/// slowly and unreadably.
pub const DOT_MAX_ENODES: usize = 2_000;

/// What `elevate saturate` was asked to do.
pub struct SaturateOptions<'a> {
    pub path: &'a Path,
    pub entry: Option<&'a str>,
    pub rules: &'a [String],
    pub sketches: &'a [String],
    pub limits: SaturationLimits,
    pub cost: CostModel,
    pub dot: Option<&'a Path>,
    pub explain: bool,
}

/// A `--cost` that names no cost model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cost model `{0}` (lowered, size)")]
pub struct UnknownCostModel(pub String);

/// `--cost NAME`.
pub fn parse_cost(name: &str) -> Result<CostModel, UnknownCostModel> {
    CostModel::from_name(name).ok_or_else(|| UnknownCostModel(name.to_string()))
}

/// One saturation of a search: its rules and, if guided, its sketch.
struct Phase {
    rules: RuleSet,
    sketch: Option<Sketch>,
}

/// The steps `--rules` and `--sketch` ask for: one unguided saturation, or one step
/// per sketch (with one rule set for all, or one each).
fn phases(rules: &[String], sketches: &[String]) -> Result<Vec<Phase>, Failure> {
    let parse_rules =
        |text: &String| RuleSet::parse(text).map_err(|e| Failure(format!("--rules: {e}")));
    if sketches.is_empty() {
        if rules.len() > 1 {
            return Err(Failure(
                "--rules: several rule sets need as many --sketch steps".into(),
            ));
        }
        return Ok(vec![Phase {
            rules: parse_rules(&rules[0])?,
            sketch: None,
        }]);
    }
    if rules.len() != 1 && rules.len() != sketches.len() {
        return Err(Failure(format!(
            "--rules: {} rule sets for {} sketches (give one for all steps, or one per step)",
            rules.len(),
            sketches.len()
        )));
    }
    sketches
        .iter()
        .enumerate()
        .map(|(k, text)| {
            let sketch = Sketch::parse(text).map_err(|e| {
                Failure(format!(
                    "--sketch {}: {}",
                    k + 1,
                    e.render("sketch", text).trim_end()
                ))
            })?;
            Ok(Phase {
                rules: parse_rules(&rules[k.min(rules.len() - 1)])?,
                sketch: Some(sketch),
            })
        })
        .collect()
}

/// Saturates the entry point (in sketch-guided steps if asked), extracts the best
/// program (satisfying the step's sketch), prints it, then the report as one JSON
/// line per step.
pub fn saturate(o: SaturateOptions) -> Result<(), Failure> {
    let steps = phases(o.rules, o.sketches)?;
    let (program, _) = load(o.path, o.entry)?;
    let entry = program.entry();
    let at = |e: &dyn std::fmt::Display| Failure(format!("{}: {e}", o.path.display()));

    let mut current = entry.term.clone();
    let mut reports = Vec::new();
    let count = steps.len();
    for (k, step) in steps.iter().enumerate() {
        let progress = Reporter::new(if count > 1 {
            format!("step {}/{count}: ", k + 1)
        } else {
            String::new()
        });
        let mut saturation = Saturation::new(step.rules.clone(), o.limits, o.cost).with_progress({
            let progress = progress.clone();
            move |p| progress.iteration(p)
        });
        if let Some(sketch) = &step.sketch {
            let goal = sketch.clone();
            saturation = saturation.with_goal(move |egraph, root| satisfied(egraph, root, &goal));
        }
        let last = k + 1 == count;
        if o.explain && last {
            saturation = saturation.with_explanations();
        }
        let grown = saturation.grow(&current);
        progress.finish(grown.as_ref().ok().map(|g| &g.report));
        let mut grown = grown.map_err(|e| at(&e))?;
        let best = match &step.sketch {
            None => grown.extract(o.cost),
            Some(sketch) => {
                let found = grown
                    .extract_sketch(sketch, o.cost)
                    .map_err(|e| at(&format!("the sketch `{sketch}`: {e}")))?;
                let Some(body) = found else {
                    let r = &grown.report;
                    return Err(at(&format!(
                        "no program satisfies the sketch `{sketch}` (step {} of {count}; the \
                         saturation stopped: {}, after {} iterations, {} e-nodes)",
                        k + 1,
                        r.stop_reason,
                        r.iterations,
                        r.enodes
                    )));
                };
                body
            }
        };
        if last {
            if let Some(file) = o.dot {
                write_dot(&grown.egraph, file)?;
            }
        }
        current = grown.program(&best);
        if o.explain && last {
            print_explanation(&grown.explain(&best).map_err(|e| at(&e))?);
        }
        let mut report = grown.report.to_json();
        report["cost"] = ((grown.report.cost * 1000.0).round() / 1000.0).into();
        report["cost_model"] = o.cost.name().into();
        report["rules"] = step.rules.text().into();
        if let Some(sketch) = &step.sketch {
            report["sketch"] = sketch.to_string().into();
            report["step"] = (k + 1).into();
        }
        reports.push(report);
    }
    let typed = infer(&current.erase_types()).map_err(|e| {
        at(&format!(
            "the extracted program does not type-check (a bug): {e}\n{}",
            print_definition(&entry.name, &current)
        ))
    })?;
    if typed.ty() != entry.term.ty() {
        return Err(at(&format!(
            "the extracted program's type {} is not the input's {} (a bug)",
            typed.ty().map(ToString::to_string).unwrap_or_default(),
            entry.term.ty().map(ToString::to_string).unwrap_or_default(),
        )));
    }
    output::print(&print_definition(&entry.name, &typed))?;
    for report in reports {
        output::println(&report.to_string())?;
    }
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
fn print_explanation(steps: &[elevate_rise::egraph::ExplanationStep]) {
    output::eprintln(&format!(
        "explanation: {} rewrite(s) from the input to the extracted program",
        steps.len().saturating_sub(1)
    ));
    for step in steps {
        output::eprintln(&format!(
            "  {}: {}",
            step.rule.as_deref().unwrap_or("input"),
            step.program
        ));
    }
}

/// Progress on standard error: a spinner line on a terminal, one plain line per
/// iteration otherwise (logs and tests see every iteration).
#[derive(Clone)]
struct Reporter(Option<ProgressBar>, String);

impl Reporter {
    /// A reporter whose lines start with `prefix` (the step of a guided search).
    fn new(prefix: String) -> Reporter {
        if !std::io::stderr().is_terminal() {
            return Reporter(None, prefix);
        }
        let bar = ProgressBar::new_spinner();
        bar.set_message(format!("saturating: {prefix}building the e-graph"));
        bar.enable_steady_tick(Duration::from_millis(100));
        Reporter(Some(bar), prefix)
    }

    fn iteration(&self, p: &Progress) {
        let top = match &p.top_rule {
            Some((rule, n)) => format!("{rule} x{n}"),
            None => "no rule".into(),
        };
        let line = format!(
            "{}iteration {}: {} e-nodes, {} e-classes, {:.0} MB, most applied {top}, {:.2} s",
            self.1,
            p.iteration,
            p.enodes,
            p.eclasses,
            p.memory_mb,
            p.elapsed.as_secs_f64()
        );
        match &self.0 {
            Some(bar) => bar.set_message(line),
            None => output::eprintln(&format!("saturate: {line}")),
        }
    }

    /// The last line: why the saturation stopped, and the e-graph's final size.
    fn finish(&self, report: Option<&Report>) {
        let line = report.map(|r| {
            format!(
                "{}stopped ({}) after {} iteration(s): {} e-nodes, {} e-classes, peak {:.0} MB, {:.2} s",
                self.1,
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
            (None, Some(line)) => output::eprintln(&format!("saturate: {line}")),
            (None, None) => {}
        }
    }
}
