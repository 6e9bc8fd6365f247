"""Plots `examples/ops_bench.rs`'s JSON lines (on stdin, or from a file) as a grouped
bar chart of the fraction of each operator's roof: one group per operator, a bar for
each of our versions on one thread (defaultLowering, library, auto) and each peer
(openblas, tvm, onnxruntime, pytorch) whose line has "of_roof". Writes `ops_roofs.png` and `ops_roofs.svg`
into `--out` (default: the repository's `target/ops_bench/`).

    cargo run --release --example ops_bench | benches/peers/.venv/bin/python benches/peers/plot_ops.py
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OURS = ["defaultLowering", "library", "auto"]
PEERS = ["openblas", "tvm", "onnxruntime", "pytorch"]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_lines(stream):
    """The JSON objects of `stream`, one a line (other lines skipped)."""
    records = []
    for line in stream:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def series_of(record):
    """The bar a line gives, on one thread only: our version or the peer, else None."""
    if record.get("threads", 1) != 1:
        return None
    if record.get("peer") in PEERS:
        return record["peer"]
    if "peer" not in record and record.get("version") in OURS:
        return record["version"]
    return None


def fractions(records):
    """The operators in their order, the series that have a bar, and each
    `(operator, series)`'s fraction of the roof."""
    ops, values = [], {}
    for record in records:
        series, op, roof = series_of(record), record.get("op"), record.get("of_roof")
        if series is None or op is None or not isinstance(roof, (int, float)):
            continue
        if op not in ops:
            ops.append(op)
        values[(op, series)] = float(roof)
    present = [s for s in OURS + PEERS if any(key[1] == s for key in values)]
    return ops, present, values


def cpu_name(records):
    """The machine's CPU, from the roofs line, if it names one."""
    for record in records:
        if record.get("bench") == "roofs" and record.get("cpu"):
            return str(record["cpu"])
    return None


def plot(records, out_dir):
    """Draws the chart (each group's bars side by side, without gaps for missing ones)
    and writes it as PNG and SVG into `out_dir`; returns the paths."""
    ops, series, values = fractions(records)
    if not ops:
        raise SystemExit("plot_ops: no line with an \"of_roof\" to plot")
    width = 0.8 / len(series)
    colors = {name: f"C{i}" for i, name in enumerate(OURS + PEERS)}
    fig, ax = plt.subplots(figsize=(max(10.0, 0.9 * len(ops) + 2), 5.5))
    labelled = set()
    for g, op in enumerate(ops):
        here = [name for name in series if (op, name) in values]
        for i, name in enumerate(here):
            x = g + (i - (len(here) - 1) / 2) * width
            label = None if name in labelled else name
            labelled.add(name)
            ax.bar(x, values[(op, name)], width, color=colors[name], label=label)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="roof")
    ax.set_xticks(range(len(ops)))
    ax.set_xticklabels(ops, rotation=30, ha="right")
    ax.set_xlabel("operator")
    ax.set_ylabel("fraction of the roof (FMA peak or copy bandwidth, one core)")
    title = "Operator suite against the roofs, one thread"
    cpu = cpu_name(records)
    ax.set_title(f"{title} ({cpu})" if cpu else title)
    top = max(values.values())
    ax.set_ylim(0, 1.2 * max(1.0, top))
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: (OURS + PEERS + ["roof"]).index(labels[i]))
    ax.legend([handles[i] for i in order], [labels[i] for i in order],
              ncol=len(labels), fontsize="small", loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"ops_roofs.{ext}") for ext in ("png", "svg")]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths


def main():
    """Reads the lines (the file given, else stdin) and writes the chart."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="ops_bench's output (default: stdin)")
    parser.add_argument("--out", default=os.path.join(REPO, "target", "ops_bench"),
                        help="the folder for ops_roofs.png and .svg")
    args = parser.parse_args()
    if args.file:
        with open(args.file, encoding="utf-8") as stream:
            records = read_lines(stream)
    else:
        records = read_lines(sys.stdin)
    for path in plot(records, args.out):
        print(path)


if __name__ == "__main__":
    main()
