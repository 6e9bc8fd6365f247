"""The peers of the networks benchmark (`examples/networks_bench.rs`): ONNX Runtime and
PyTorch eager, on the models `export_models.py` wrote into `target/models/` (the same
weights in both: PyTorch loads the state dict saved with the ONNX file), on its input,
at each thread count given.

- ONNX Runtime: the CPU provider, `ORT_ENABLE_ALL`, `intra_op_num_threads=T`,
  `inter_op_num_threads=1`, sequential execution.
- PyTorch: `torch.set_num_threads(T)` (one inter-op thread), `torch.inference_mode()`.

Each is run a few times to warm up, then timed (wall clock) `--runs` times, or fewer
where `--seconds` runs out first (at least 3): the median, min and max. One JSON line
per (network, peer, threads):

    {"network", "peer", "threads", "ms", "min_ms", "max_ms", "runs", "gflops",
     "flops", "cpu_per_wall", "threads_in_effect", "correct", "top1",
     "max_rel_err", "peer_version"}

`cpu_per_wall` is the process's CPU time over the wall time of the timed runs: about
1 on one thread, more where the threads took effect (ONNX Runtime's pool spins while
it waits, so it is near T there). `threads_in_effect` is `torch.get_num_threads()`
for PyTorch, the session's `intra_op_num_threads` for ONNX Runtime. `correct`: the
output has the same top-1 class as ONNX Runtime's output saved at export
(`NAME.ort.npy`) and is within 1e-3 of it relative to its largest magnitude
(`max_rel_err` = max|y - ref| / max|ref|), so both peers agree with each other and
with the reference our compiler is checked against.

With `--profile`, also one line per (network, threads) of ONNX Runtime's own
profile (`enable_profiling`, in a session of its own, after the timing): each node's
median kernel time over the runs, in the order the nodes ran,

    {"network", "peer": "onnxruntime", "threads", "profile": [{"node", "op", "ms"}]}

    PY=$(benches/peers/networks/setup)
    $PY benches/peers/networks/export_models.py
    $PY benches/peers/networks/peers.py --threads 1 $(nproc) [--only resnet18] [--runs 20] [--profile]
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import MODELS, REPO, model_from_state, ort_session  # noqa: E402

TOLERANCE = 1e-3


def check(y, ref):
    """(correct, top-1 class, max relative error) of output `y` against `ref`."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    if y.shape != ref.shape or not np.all(np.isfinite(y)):
        return False, None, None
    err = float(np.max(np.abs(y - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
    top1 = int(np.argmax(y))
    return bool(top1 == int(np.argmax(ref)) and err <= TOLERANCE), top1, err


def timed(run, runs, seconds, warmup):
    """`run` warmed up `warmup` times, then timed up to `runs` times (at least 3, no
    more once `seconds` have passed): (times in ms, CPU time over wall time, the
    last output)."""
    out = None
    for _ in range(warmup):
        out = run()
    times = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    while len(times) < max(runs, 1):
        t = time.perf_counter()
        out = run()
        times.append((time.perf_counter() - t) * 1e3)
        if len(times) >= 3 and time.perf_counter() - wall0 > seconds:
            break
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return times, cpu / wall if wall > 0 else None, out


def ort_profile(path, threads, x, runs, warmup):
    """ONNX Runtime's profile of the model at `path` on `x`: each node's median kernel
    time (ms) over `runs` runs after `warmup`, in the order the nodes first ran."""
    import tempfile

    from export_models import ort_session as session_of

    with tempfile.TemporaryDirectory() as scratch:
        session = session_of(path, threads, profile=os.path.join(scratch, "ort"))
        for _ in range(warmup):
            session.run(None, {"input": x})
        # The warm-up's events are in the same file: only the last `runs` of each node
        # count.
        for _ in range(runs):
            session.run(None, {"input": x})
        with open(session.end_profiling(), encoding="utf-8") as f:
            events = json.load(f)
    durations, ops = {}, {}
    for e in events:
        name = e.get("name", "")
        if e.get("cat") != "Node" or not name.endswith("_kernel_time"):
            continue
        node = name[: -len("_kernel_time")]
        durations.setdefault(node, []).append(e["dur"] / 1e3)
        ops[node] = e.get("args", {}).get("op_name", "")
    return [{"node": node, "op": ops[node], "ms": round(statistics.median(d[-runs:]), 4)}
            for node, d in durations.items()]


def line(network, peer, threads, times, ratio, in_effect, flops, y, ref, version):
    """The JSON line of one peer's timing."""
    ms = statistics.median(times)
    correct, top1, err = check(y, ref)
    return {
        "network": network, "peer": peer, "threads": threads,
        "ms": round(ms, 3), "min_ms": round(min(times), 3), "max_ms": round(max(times), 3),
        "runs": len(times), "gflops": round(flops / (ms * 1e6), 3) if flops else None,
        "flops": flops, "cpu_per_wall": round(ratio, 3) if ratio is not None else None,
        "threads_in_effect": in_effect, "correct": correct, "top1": top1,
        "max_rel_err": err, "peer_version": version,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", nargs="+", type=int,
                        default=sorted({1, os.cpu_count() or 1}),
                        help="thread counts (default: 1 and every core)")
    parser.add_argument("--only", nargs="+", choices=MODELS, default=MODELS)
    parser.add_argument("--peers", nargs="+", choices=["onnxruntime", "pytorch"],
                        default=["onnxruntime", "pytorch"])
    parser.add_argument("--runs", type=int, default=20, help="timed runs (at most)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15.0,
                        help="no more timed runs past this (at least 3 are made)")
    parser.add_argument("--profile", action="store_true",
                        help="also ONNX Runtime's per-node profile (a line per network)")
    parser.add_argument("--models", default=os.path.join(REPO, "target", "models"),
                        help="export_models.py's folder (default: target/models)")
    args = parser.parse_args()

    import onnxruntime as ort
    import torch

    # Before any parallel work: once per process.
    torch.set_num_interop_threads(1)
    x = np.load(os.path.join(args.models, "input.npy"))
    failed = False
    for name in args.only:
        base = os.path.join(args.models, name)
        with open(base + ".json", encoding="utf-8") as f:
            flops = json.load(f)["flops"]
        ref = np.load(base + ".ort.npy")
        model = model_from_state(name, base + ".pt") if "pytorch" in args.peers else None
        tx = torch.from_numpy(x)
        for threads in args.threads:
            if "onnxruntime" in args.peers:
                session = ort_session(base + ".onnx", threads)
                in_effect = session.get_session_options().intra_op_num_threads
                times, ratio, (y,) = timed(lambda: session.run(None, {"input": x}),
                                           args.runs, args.seconds, args.warmup)
                record = line(name, "onnxruntime", threads, times, ratio, in_effect,
                              flops, y, ref, ort.__version__)
                failed |= not record["correct"]
                print(json.dumps(record), flush=True)
                del session
                if args.profile:
                    nodes = ort_profile(base + ".onnx", threads, x, min(args.runs, 10),
                                        args.warmup)
                    print(json.dumps({"network": name, "peer": "onnxruntime",
                                      "threads": threads, "profile": nodes}), flush=True)
            if "pytorch" in args.peers:
                torch.set_num_threads(threads)
                in_effect = torch.get_num_threads()

                def run():
                    with torch.inference_mode():
                        return model(tx)

                times, ratio, y = timed(run, args.runs, args.seconds, args.warmup)
                record = line(name, "pytorch", threads, times, ratio, in_effect, flops,
                              y.numpy(), ref, torch.__version__)
                failed |= not record["correct"] or in_effect != threads
                print(json.dumps(record), flush=True)
        del model
    if failed:
        print("peers: a peer's output differs from ONNX Runtime's reference, "
              "or its threads did not take effect", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
