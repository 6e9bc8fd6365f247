//! `elevate saturate`, and `saturate(...)` in strategy text.

use crate::{assert_fails_with, elevate, example, stderr, stdout, temp};
use std::process::Output;

/// The program (every line but the last) and the JSON report (the last line).
fn program_and_report(o: &Output) -> (String, serde_json::Value) {
    assert!(o.status.success(), "{}", stderr(o));
    let out = stdout(o);
    let (program, report) = out
        .trim_end()
        .rsplit_once('\n')
        .unwrap_or_else(|| panic!("a program, then a JSON line:\n{out}"));
    let report = serde_json::from_str(report).unwrap_or_else(|e| panic!("{e}: {report}"));
    (format!("{program}\n"), report)
}

/// Asserts that `program` (written to the temporary file `name`) checks with the
/// type of `original` printed as a program (with its nat parameters explicit).
fn checks_like(name: &str, program: &str, original: &str) {
    let printed = stdout(&elevate(&["rewrite", original, "--strategy", "id"]));
    let expected = stdout(&elevate(&["check", &temp(&format!("id-{name}"), &printed)]));
    let again = temp(name, program);
    let o = elevate(&["check", &again]);
    assert!(o.status.success(), "{}\n{program}", stderr(&o));
    assert_eq!(stdout(&o), expected, "{program}");
}

#[test]
fn saturate_prints_a_program_that_checks_again_then_a_json_report() {
    let dot = example("dot.rise");
    let o = elevate(&[
        "saturate",
        &dot,
        "--rules",
        "default",
        "--limits",
        "iterations=5",
    ]);
    let (program, report) = program_and_report(&o);
    assert!(
        program.starts_with("def dot<n>(a: n.f32, b: n.f32) ="),
        "{program}"
    );
    assert!(program.contains("reduceSeq"), "{program}");
    checks_like("dot-saturated.rise", &program, &dot);
    for field in ["enodes", "eclasses", "ms", "peak_mb", "cost"] {
        assert!(report[field].is_number(), "{field}: {report}");
    }
    assert_eq!(report["stop_reason"], "iterations", "{report}");
    assert_eq!(report["iterations"], 5, "{report}");
    assert_eq!(report["cost_model"], "lowered", "{report}");
    assert_eq!(report["rules"], "default", "{report}");
    let applied = report["applied"].as_array().expect("applied");
    assert!(
        applied.iter().any(|a| a[0] == "reduceSeq" && a[1] == 1),
        "{report}"
    );
    // Progress, one line per iteration when standard error is not a terminal.
    let err = stderr(&o);
    assert!(err.contains("saturate: iteration 1: "), "{err}");
    assert!(
        err.contains("e-nodes") && err.contains("most applied"),
        "{err}"
    );
    assert!(
        err.contains("saturate: stopped (iterations) after 5 iteration(s)"),
        "{err}"
    );
}

#[test]
fn saturate_extracts_by_the_cost_model_asked_for() {
    let scal = example("scal.rise");
    let args = ["saturate", &scal, "--rules", "mapSeq,mapPar"];
    let (lowered, report) = program_and_report(&elevate(&args));
    assert!(lowered.contains("mapSeq"), "{lowered}");
    assert_eq!(report["stop_reason"], "saturated", "{report}");
    let (small, report) = program_and_report(&elevate(&[&args[..], &["--cost", "size"]].concat()));
    assert_eq!(report["cost_model"], "size", "{report}");
    checks_like("scal-small.rise", &small, &scal);
}

#[test]
fn saturate_takes_the_entry_point_asked_for() {
    let conv = example("conv2d.rise");
    let o = elevate(&[
        "saturate", &conv, "--entry", "slide2d", "--rules", "lowering",
    ]);
    let (program, _) = program_and_report(&o);
    assert!(
        program.starts_with("def slide2d<n, m>(img: n.m.f32) ="),
        "{program}"
    );
    let o = elevate(&["saturate", &conv, "--entry", "nope", "--rules", "lowering"]);
    assert_fails_with(&o, "no definition named `nope`");
}

#[test]
fn saturate_writes_the_egraph_for_graphviz_and_explains() {
    let dot = temp("scal.dot", "");
    let o = elevate(&[
        "saturate",
        &example("scal.rise"),
        "--rules",
        "mapSeq",
        "--dot",
        &dot,
        "--explain",
    ]);
    program_and_report(&o);
    let graph = std::fs::read_to_string(&dot).unwrap();
    assert!(graph.starts_with("digraph"), "{graph}");
    assert!(graph.contains("mapSeq"), "{graph}");
    let err = stderr(&o);
    assert!(
        err.contains("explanation: 1 rewrite(s)")
            && err.contains("  input: depFun(n => fun(alpha: f32, x: n.f32 => x |> map(")
            && err.contains("  mapSeq: depFun(n => fun(alpha: f32, x: n.f32 => x |> mapSeq("),
        "{err}"
    );
    // Large e-graphs are refused.
    let o = elevate(&[
        "saturate",
        &example("dot.rise"),
        "--rules",
        "default",
        "--limits",
        "iterations=8",
        "--dot",
        &dot,
    ]);
    assert_fails_with(&o, "too large to draw (at most 2000)");
}

#[test]
fn saturate_reports_wrong_rules_limits_and_costs() {
    let dot = example("dot.rise");
    let o = elevate(&["saturate", &dot, "--rules", "mapFusion,nope"]);
    assert_fails_with(
        &o,
        "--rules: `nope` is not a rule the e-graph knows (known: betaReduction, etaReduction, fstReduction",
    );
    assert!(stderr(&o).contains("mapFusion, "), "{}", stderr(&o));
    let o = elevate(&["saturate", &dot, "--rules", "splitJoin(x)"]);
    assert_fails_with(&o, "the arguments are whole numbers");
    let o = elevate(&["saturate", &dot, "--rules", "default,splitJoin(0)"]);
    assert_fails_with(
        &o,
        "--rules: `splitJoin(0)`: the size n must be positive, found 0",
    );
    let o = elevate(&[
        "saturate",
        &dot,
        "--rules",
        "default",
        "--limits",
        "iterations=x",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the limit `iterations` needs a whole number"),
        "{}",
        stderr(&o)
    );
    let o = elevate(&[
        "saturate", &dot, "--rules", "default", "--limits", "depth=3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unknown limit `depth`"),
        "{}",
        stderr(&o)
    );
    let o = elevate(&["saturate", &dot, "--rules", "default", "--cost", "cheap"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unknown cost model `cheap`"),
        "{}",
        stderr(&o)
    );
    let bad = temp("bad.rise", "def f(x: 4.f32) = x |> map(fun(y => y + 1))\n");
    let o = elevate(&["saturate", &bad, "--rules", "default"]);
    assert_fails_with(&o, "bad.rise:1:");
}

#[test]
fn saturate_is_a_strategy_in_strategy_text() {
    let dot = example("dot.rise");
    let o = elevate(&[
        "rewrite",
        &dot,
        "--strategy",
        "DFNF ; saturate(\"default\", \"iterations=10\", \"lowered\") ; defaultLowering",
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("reduceSeq") && !out.contains("map("), "{out}");
    checks_like("dot-strategy.rise", &out, &dot);
    let o = elevate(&["rewrite", &dot, "--strategy", "saturate(\"nope\")"]);
    assert_fails_with(&o, "`nope` is not a rule the e-graph knows");
    let o = elevate(&["rewrite", &dot, "--strategy", "saturate(default)"]);
    assert_fails_with(&o, "argument 1 must be a string");
    let o = elevate(&["strategies"]);
    assert!(
        stdout(&o).lines().any(
            |l| l.starts_with("saturate(\"RULES\", \"LIMITS\", \"COST\")  ")
                && l.contains("  equality saturation, then extraction")
        ),
        "{}",
        stdout(&o)
    );
}

/// `matmul` at 64x64, where the sketches below name loop sizes.
const MATMUL_64: &str = "def mm(a: 64.64.f32, b: 64.64.f32) : 64.64.f32 =
  a |> map(fun(arow => transpose(b) |> map(fun(bcol =>
    zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))
";

#[test]
fn sketches_guide_saturation_step_by_step() {
    let mm = temp("mm64.rise", MATMUL_64);
    // Step 1 tiles both loops by 32 and splits the reduction by 4; step 2 moves
    // both reductions outside the two loops within a tile (TVM's blocking).
    let blocks = "map[2, 32, 64]";
    let tiled = format!(
        "contains({blocks}(contains(map[32](contains({blocks}(contains(map[32](contains(reduceSeq[16](?, ?, ?))))))))))"
    );
    let reordered = format!(
        "contains({blocks}(contains({blocks}(contains(reduceSeq[16](contains(reduceSeq[4](contains(map[32](contains(map[32](?)))), ?, ?)), ?, ?))))))"
    );
    let o = elevate(&[
        "saturate",
        &mm,
        "--rules",
        "splitJoin(32),blockedSum(4),reduceSeq",
        "--rules",
        "mapFission,mapMapInterchange,liftReduceSeq,liftReduceSeqInit,addReduce,mapMapEta,betaReduction,etaReduction",
        "--sketch",
        &tiled,
        "--sketch",
        &reordered,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.trim_end().lines().collect();
    let reports: Vec<serde_json::Value> = lines[lines.len() - 2..]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    for (k, report) in reports.iter().enumerate() {
        assert_eq!(report["step"], k + 1, "{report}");
        assert_eq!(report["stop_reason"], "goal", "{report}");
    }
    assert_eq!(reports[1]["sketch"], reordered.as_str());
    let program = lines[..lines.len() - 2].join("\n") + "\n";
    assert!(
        program.contains("split(4)") && program.contains("reduceSeq"),
        "{program}"
    );
    let again = temp("mm64-blocked.rise", &program);
    let check = elevate(&["rewrite", &again, "--strategy", "id", "--check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    let err = stderr(&o);
    assert!(err.contains("step 2/2: stopped (goal)"), "{err}");
}

#[test]
fn sketch_errors_say_where() {
    let dot = example("dot.rise");
    assert_fails_with(
        &elevate(&[
            "saturate",
            &dot,
            "--rules",
            "default",
            "--sketch",
            "contains(map[2(?)",
        ]),
        "--sketch 1",
    );
    // No program of the e-graph has that shape.
    assert_fails_with(
        &elevate(&[
            "saturate",
            &dot,
            "--rules",
            "mapFusion",
            "--sketch",
            "contains(transpose)",
        ]),
        "no program satisfies the sketch `contains(transpose)`",
    );
    assert_fails_with(
        &elevate(&[
            "saturate", &dot, "--rules", "default", "--rules", "default", "--rules", "default",
            "--sketch", "?", "--sketch", "?",
        ]),
        "3 rule sets for 2 sketches",
    );
}

#[test]
fn sketch_guided_search_is_a_strategy_in_text() {
    let mm = temp("mm64-guided.rise", MATMUL_64);
    let strategy = r#"sketchGuided("contains(map[2](map[32](?)))", "splitJoin(32)", "iterations=5", "contains(mapPar[2](?))", "mapPar", "iterations=5", "lowered")"#;
    let o = elevate(&["rewrite", &mm, "--strategy", strategy, "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("split(32) |> mapPar("),
        "{}",
        stdout(&o)
    );
    assert_fails_with(
        &elevate(&[
            "rewrite",
            &mm,
            "--strategy",
            r#"sketchGuided("?", "default")"#,
        ]),
        "expects triples",
    );
}

/// The matmul grows without end under the default rules: the time limit stops it,
/// checked inside every phase (the report's `ms` shows how close to the limit).
#[test]
fn saturate_stops_when_its_time_is_up() {
    let mm = example("matmul.rise");
    let o = elevate(&[
        "saturate",
        &mm,
        "--rules",
        "default",
        "--limits",
        "ms=1000,nodes=100000000,iterations=1000000",
    ]);
    let (program, report) = program_and_report(&o);
    assert_eq!(report["stop_reason"], "time", "{report}");
    for phase in [
        "build_ms",
        "search_ms",
        "apply_ms",
        "rebuild_ms",
        "extract_ms",
    ] {
        assert!(report[phase].is_number(), "{phase}: {report}");
    }
    println!("a time limit of 1000 ms: {} ms", report["ms"]);
    checks_like("matmul-timed.rise", &program, &mm);
}

/// `x + x + ... + x`, 100,000 additions deep, through the e-graph and back.
#[test]
fn saturate_takes_a_program_100000_levels_deep() {
    let source = format!("def f(x: i32) = x{}\n", " + x".repeat(100_000));
    let chain = temp("chain.rise", &source);
    let o = elevate(&[
        "saturate", &chain, "--rules", "default", "--limits", "ms=3000",
    ]);
    let (program, report) = program_and_report(&o);
    assert!(
        program.starts_with("def f(x: i32) =\n  x + x + x"),
        "{report}"
    );
    assert_eq!(program.matches(" + x").count(), 100_000, "{report}");
    assert!(report["enodes"].as_u64().unwrap() >= 100_000, "{report}");
}

/// A rule with an argument it does not take is an error where it is written, with
/// the reason, whether in a strategy, a rule set or a strategy's rule set.
#[test]
fn bad_rule_arguments_are_reported_where_they_are_written() {
    let dot = example("dot.rise");
    let o = elevate(&["rewrite", &dot, "--strategy", "id ; splitJoin(0)"]);
    assert_fails_with(
        &o,
        "strategy:1:16: strategy error: `splitJoin(n)`: the size n must be positive, found 0",
    );
    assert!(
        stderr(&o).contains("id ; splitJoin(0)\n                 ^"),
        "{}",
        stderr(&o)
    );
    for (text, why) in [
        (
            "blockedSum(0)",
            "`blockedSum(n)`: the size n must be positive, found 0",
        ),
        ("blockedReduce(-2)", "the size n must be positive, found -2"),
        (
            "vectorize(1)",
            "the vector width n must be at least 2, found 1",
        ),
        ("mapLocal(3)", "the dimension d must be 0, 1 or 2, found 3"),
        ("slideOverlap(0)", "the size u must be positive, found 0"),
        ("tile(32, 0)", "must be positive, found 0"),
        (
            "reorder([1, 3])",
            "[1, 3] is not a permutation of the loop depths 1 to 2",
        ),
    ] {
        let o = elevate(&["rewrite", &dot, "--strategy", text]);
        assert_fails_with(&o, why);
    }
    let o = elevate(&["rewrite", &dot, "--strategy", "saturate(\"splitJoin(0)\")"]);
    assert_fails_with(&o, "`splitJoin(0)`: the size n must be positive, found 0");
    let o = elevate(&["strategies"]);
    assert!(
        stdout(&o).lines().any(|l| l.starts_with("splitJoin(n)  ")
            && l.contains("map(f)(x) -> join(map(map(f))(split(n)(x)))")
            && l.ends_with("[e-graph]")),
        "{}",
        stdout(&o)
    );
}
