//! `elevate search NET.rise --weights ...`: a network searched layer by layer.

use super::networks::{fixture, folder, text};
use super::{elevate, stderr, stdout};
use serde_json::Value as Json;
use std::path::Path;

/// `tiny_resnet` imported into `dir`: its program and its weights.
fn tiny_resnet(dir: &Path) -> (String, String) {
    let o = elevate(&["import", &fixture("tiny_resnet.onnx"), "-o", &text(dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    (
        text(&dir.join("tiny_resnet.rise")),
        text(&dir.join("tiny_resnet.safetensors")),
    )
}

fn report(o: &std::process::Output) -> Json {
    assert!(o.status.success(), "{}", stderr(o));
    let last = stdout(o).lines().last().unwrap_or_default().to_string();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"))
}

fn lines(path: &Path) -> Vec<Json> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn each_distinct_layer_is_searched_once_and_the_best_assembled_runs_as_the_network() {
    let dir = folder("search-model");
    let (net, weights) = tiny_resnet(&dir);
    let out = dir.join("search");
    let search = |budget: &str, resume: bool| {
        let flag = if resume { "--resume" } else { "--out" };
        elevate(&[
            "search",
            &net,
            "--weights",
            &weights,
            "--space",
            "auto",
            "--cost",
            "model",
            "--budget",
            budget,
            flag,
            &text(&out),
        ])
    };
    let first = report(&search("evals=24", false));
    // Four distinct kernels: the 7x7 convolution, the pooling, the two 3x3
    // convolutions (one task for both), the product.
    assert_eq!(first["tasks"], 4, "{first}");
    let layers = first["layers"].as_array().unwrap();
    let kinds: Vec<&str> = layers.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["conv", "maxpool", "conv", "gemm"]);
    assert_eq!(layers[2]["layers"], serde_json::json!([4, 7]));
    assert_eq!(first["evaluations"], 24);
    // Every task had its first round, its library schedule its baseline.
    for l in layers {
        assert!(l["rounds"].as_u64().unwrap() >= 1, "{l}");
        assert!(l["library_cost"].as_f64().is_some(), "{l}");
        let improved = l["best_cost"].as_f64() < l["library_cost"].as_f64();
        assert_eq!(l["improved"].as_bool(), Some(improved), "{l}");
    }
    // The log: a line per candidate, with its layer, as many as the tasks' own logs.
    let log = lines(&out.join("log.jsonl"));
    assert_eq!(log.len(), 24);
    for l in layers {
        let name = l["layer"].as_str().unwrap();
        let own = lines(&out.join("layers").join(name).join("log.jsonl"));
        let in_log = log.iter().filter(|c| c["layer"] == name).count();
        assert_eq!(own.len(), in_log, "{name}");
        assert_eq!(own.len() as u64, l["evaluations"].as_u64().unwrap());
    }
    // `best.elv` is the network's strategy: a `layer` part for each improved layer.
    let best = std::fs::read_to_string(out.join("best.elv")).unwrap();
    assert_eq!(best.trim(), first["best_strategy"].as_str().unwrap());
    assert!(best.trim().ends_with("network"), "{best}");
    let improved: usize = layers
        .iter()
        .filter(|l| l["improved"] == true)
        .map(|l| l["layers"].as_array().unwrap().len())
        .sum();
    assert_eq!(best.matches("layer(").count(), improved, "{best}");
    let strategy = format!("@{}", text(&out.join("best.elv")));
    let o = elevate(&[
        "run",
        &net,
        "--weights",
        &weights,
        "--random",
        "1",
        "--strategy",
        &strategy,
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("same values as the interpreter"),
        "{}",
        stderr(&o)
    );
    // Resumed to a larger budget: the old log kept, only new candidates added.
    let again = report(&search("evals=32", true));
    assert_eq!(again["evaluations"], 32);
    let log2 = lines(&out.join("log.jsonl"));
    assert_eq!(log2.len(), 32);
    assert_eq!(log2[..24], log[..]);
    // Resuming another search (another space) is an error naming the difference.
    let o = elevate(&[
        "search",
        &net,
        "--weights",
        &weights,
        "--space",
        "parallel",
        "--cost",
        "model",
        "--budget",
        "evals=40",
        "--resume",
        &text(&out),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the space"), "{}", stderr(&o));
}

#[test]
fn a_measured_network_search_times_the_whole_network_against_the_library() {
    let dir = folder("search-measured");
    let (net, weights) = tiny_resnet(&dir);
    // Two points per layer, searched exhaustively: every task's space runs out.
    let o = elevate(&[
        "search",
        &net,
        "--weights",
        &weights,
        "--space",
        "{id, parallel @ outermost(isApplied(isMap))} ; defaultLowering",
        "--driver",
        "exhaustive",
        "--cost",
        "measured",
        "--budget",
        "evals=40",
        "--threads",
        "1",
        "--jobs",
        "1",
    ]);
    let r = report(&o);
    assert_eq!(r["tasks"], 4, "{r}");
    // Each layer's two points, each once: the search ended before its budget.
    assert_eq!(r["evaluations"], 8, "{r}");
    for l in r["layers"].as_array().unwrap() {
        assert!(l["library_cost"].as_f64().is_some_and(|ms| ms > 0.0), "{l}");
    }
    // The whole network, timed both ways, computes the same.
    assert!(
        r["network_library_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{r}"
    );
    assert!(
        r["network_best_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{r}"
    );
    assert!(
        r["max_difference"].as_f64().is_some_and(|d| d < 1e-3),
        "{r}"
    );
}
