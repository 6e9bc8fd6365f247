"""Measured search from Python: candidates in worker processes (``python -m
elevate.worker``) under limits, the search's directory written as it goes, and a
search resumed from it."""

import json
import os

import pytest

import elevate

SIZES = {"n": 64, "k": 64, "m": 64}


def test_a_measured_search_runs_its_candidates_in_workers_and_writes_its_directory(matmul, tmp_path):
    out = tmp_path / "search"
    report, log = elevate.search(
        matmul, "{id, blocking, par}", "exhaustive", "measured", {"evals": 3}, nats=SIZES, jobs=1,
        limits="compile=30,run=5", out=out,
    )
    assert report["evaluations"] == 3 and report["statuses"] == {}
    ok = [line for line in log if line["status"] == "ok"]
    assert ok and all(line["median_ms"] == line["ms"] for line in ok)
    # What was returned is what was written, a line per candidate.
    written = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert written == log
    assert json.loads((out / "report.json").read_text())["evaluations"] == 3
    assert (out / "best.elv").read_text().strip() == report["best_strategy"]
    # The best and the baseline were timed again in turns: the speedup is theirs.
    low, high = report["best_spread_ms"]
    assert low <= report["best_ms"] <= high
    assert report["speedup"] == pytest.approx(report["baseline_ms"] / report["best_ms"], rel=1e-3)


def test_a_compilation_past_its_limit_is_a_compile_timeout(matmul):
    slow = (
        "DFNF ; try(fuseReduceMap @ topDown) ; tileNDList([4, 16]) @ outermost(mapNest(2)) ;; "
        "try(reduceMapFission @ outermost(isApplied(isApplied(isApplied(isReduceSeq))))) ;; "
        "splitStrategy(2) @ innermost(isFullyAppliedReduce) ;; unroll @ innermost(isReduceSeq) ;; "
        "vectorize(8) @ innermost(isFullyAppliedMap) ;; function(mapSeqUnroll) @ "
        'innermost(isApplied(isMap) ; argument(isLambda) ; contains("asVector(8)"))'
    )
    report, log = elevate.search(
        matmul, "{" + slow + ", blocking}", "exhaustive", "measured", {"evals": 2},
        nats={"n": 128, "k": 128, "m": 128}, jobs=1, limits="compile=2",
    )
    statuses = {line["strategy"].split(" ;")[0]: line["status"] for line in log}
    assert statuses == {"DFNF": "compile timeout", "blocking": "ok"}, log
    assert "the compile limit of 2.0 s" in log[0]["reason"]
    assert report["statuses"] == {"compile timeout": 1}


def test_a_stopped_search_resumed_logs_what_one_never_stopped_logs(matmul, tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    kwargs = dict(space="auto", driver="anneal", cost="model", seed=5, nats=SIZES)
    elevate.search(matmul, budget={"evals": 60}, out=whole, **kwargs)
    elevate.search(matmul, budget={"evals": 20}, out=parts, **kwargs)
    # Resumed: its driver, seed and cost are the directory's.
    report, log = elevate.search(matmul, "auto", budget={"evals": 60}, nats=SIZES, out=parts, resume=True)
    assert report["driver"] == "anneal" and report["seed"] == 5 and len(log) == 60
    assert (whole / "log.jsonl").read_bytes() == (parts / "log.jsonl").read_bytes()
    # Another search in the same directory is refused, saying why.
    with pytest.raises(elevate.SearchError, match="its search has the seed `5`, not `6`"):
        elevate.search(matmul, "auto", seed=6, budget={"evals": 70}, nats=SIZES, out=parts, resume=True)
    # With resume and a directory that holds no search, one starts.
    fresh = tmp_path / "fresh"
    report, _ = elevate.search(matmul, "auto", budget={"evals": 5}, nats=SIZES, out=fresh, resume=True)
    assert report["evaluations"] == 5 and (fresh / "search.json").is_file()


def test_bad_limits_and_resume_without_a_directory_are_errors(matmul):
    for limits, why in [("memory=1B", "at least 1.0 GiB"), ("compile=0", "more than 0"), ("x=1", "unknown limit")]:
        with pytest.raises(elevate.SearchError, match=why):
            elevate.search(matmul, "auto", cost="measured", budget={"evals": 1}, nats=SIZES, limits=limits)
    with pytest.raises(elevate.SearchError, match="give out=DIR"):
        elevate.search(matmul, "auto", budget={"evals": 1}, nats=SIZES, resume=True)


def test_the_worker_module_serves_the_protocol(tmp_path):
    import subprocess
    import sys

    start = "def f(x: 8.f32) : 8.f32 = x |> map(fun(v => v * 2.0))"
    requests = [
        {"request": "setup", "start": start, "seed": 0, "threads": 1, "memory": 0, "stack": 1 << 24},
        {"request": "compile", "key": "k", "program": start},
        {"request": "run", "key": "k", "program": start, "check": True, "warm_up": True, "runs": 3,
         "best_ms": None, "run_limit_ms": 1000.0},
    ]
    # One request at a time, as a search asks: the end of the input ends the worker at
    # once (its search is gone), whatever it was doing.
    worker = subprocess.Popen(
        [sys.executable, "-m", "elevate.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )
    replies = []
    for request in requests:
        worker.stdin.write(json.dumps(request) + "\n")
        worker.stdin.flush()
        replies.append(json.loads(worker.stdout.readline()))
    worker.stdin.close()
    assert worker.wait(timeout=60) == 0
    assert [r["reply"] for r in replies] == ["ready", "compiled", "measured"], replies
    assert len(replies[2]["times_ms"]) >= 1
