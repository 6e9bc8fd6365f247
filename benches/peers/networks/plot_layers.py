"""Plots where each network's time goes, layer by layer, ours beside ONNX Runtime's:
`examples/networks_bench.rs --profile`'s JSON lines (a file, default
`target/networks_bench/networks_bench.jsonl`) as one panel per (network, threads),
a pair of bars per kernel layer.

The layers are matched by kernel: ONNX Runtime fuses a convolution's BatchNorm, ReLU
and residual `Add` into its node, and runs layout changes (`ReorderInput`,
`ReorderOutput`) as nodes of its own, where ours are units after the kernel. So each
group is one of our kernels (a unit whose first layer is a convolution, product or
pooling) with the units after it up to the next kernel, and ONNX Runtime's nodes are
put in the group holding the ONNX node they are named after (a node's name is the
output it computes, `NODE_output_0` and `_nchwc` for its channel-blocked form: the
last of the nodes it fused); a node named after none (a layout change) joins the
group of the node before it. Each group's two times are like with like.
Writes `layers.png` and `layers.svg` into `--out` (default: the input file's folder),
and prints each group's two times as JSON lines.

    .venv/bin/python benches/peers/networks/plot_layers.py [FILE] [--out DIR]
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_networks import DEFAULT, read_lines  # noqa: E402

OUR_KERNELS = {"conv", "depthwise", "gemm", "matmul", "maxpool", "avgpool",
               "globalavgpool"}
THEIR_KERNELS = {"Conv", "FusedConv", "Gemm", "FusedGemm", "MatMul", "FusedMatMul",
                 "MaxPool", "AveragePool", "GlobalAveragePool"}


def our_groups(units):
    """Our units (`(kind of the first layer, ms, ONNX nodes)`, in order) in groups,
    each a kernel and the units after it: `[kind, ms, {node}]`."""
    groups = []
    for kind, ms, nodes in units:
        if kind in OUR_KERNELS or not groups:
            groups.append([kind, ms, set(nodes)])
        else:
            groups[-1][1] += ms
            groups[-1][2].update(nodes)
    return groups


def onnx_node(name):
    """The ONNX node an ONNX Runtime node is named after: `NODE_output_K[_nchwc]`."""
    for suffix in ("_nchwc",):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    head, sep, tail = name.rpartition("_output_")
    return head if sep and tail.isdigit() else name


def their_groups(nodes, groups):
    """ONNX Runtime's `(node, op, ms)` summed into our groups (see the module): a
    list of `[ops, ms]`, one per group, and the share of time matched by name."""
    where = {n: i for i, g in enumerate(groups) for n in g[2]}
    out = [[[], 0.0] for _ in groups]
    at, matched, total = 0, 0.0, 0.0
    for node, op, ms in nodes:
        total += ms
        if onnx_node(node) in where:
            at = where[onnx_node(node)]
            matched += ms
        if out:
            out[at][0].append(op)
            out[at][1] += ms
    return out, (matched / total if total else 0.0)


def ours_of(records):
    """`(network, threads) -> [(kind, ms, nodes)]`, our units in order."""
    out = {}
    for r in records:
        if "unit" in r and isinstance(r.get("ms"), (int, float)) and r.get("defs"):
            kind = r["defs"][0].split("_")[0]
            out.setdefault((r["network"], r["threads"]), []).append(
                (kind, r["ms"], r.get("nodes", [])))
    return out


def theirs_of(records):
    """`(network, threads) -> [(node, op, ms)]` from ONNX Runtime's profile lines."""
    return {(r["network"], r["threads"]): [(n["node"], n["op"], n["ms"])
                                           for n in r["profile"]]
            for r in records
            if r.get("peer") == "onnxruntime" and isinstance(r.get("profile"), list)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=DEFAULT)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    with open(args.file, encoding="utf-8") as f:
        records = read_lines(f)
    ours, theirs = ours_of(records), theirs_of(records)
    panels = [key for key in ours if key in theirs]
    if not panels:
        print("plot_layers: no network has both our units' times and ONNX Runtime's "
              "profile (run networks_bench with --profile and the peers)", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 3.2 * len(panels)),
                             squeeze=False)
    for ax, (network, threads) in zip(axes[:, 0], panels):
        a = our_groups(ours[(network, threads)])
        b, matched = their_groups(theirs[(network, threads)], a)
        xs = range(len(a))
        ax.bar([x - 0.2 for x in xs], [g[1] for g in a], width=0.4,
               label=f"elevate ({sum(g[1] for g in a):.1f} ms)", color="#1f77b4")
        ax.bar([x + 0.2 for x in xs], [g[1] for g in b], width=0.4,
               label=f"ONNX Runtime ({sum(g[1] for g in b):.1f} ms)", color="#ff7f0e")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([g[0] for g in a], rotation=90, fontsize=6)
        plural = "s" if threads > 1 else ""
        ax.set_title(f"{network}, {threads} thread{plural}: ms per kernel and what follows "
                     f"it ({matched:.0%} of ONNX Runtime's time matched by node)",
                     fontsize=9)
        ax.set_ylabel("ms")
        ax.legend(fontsize=7)
        for i in xs:
            print(json.dumps({"network": network, "threads": threads, "group": i,
                              "ours": a[i][0], "ours_ms": round(a[i][1], 4),
                              "onnxruntime": b[i][0], "onnxruntime_ms": round(b[i][1], 4)}))
    fig.tight_layout()
    out = args.out or os.path.dirname(os.path.abspath(args.file))
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, f"layers.{ext}"), dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
