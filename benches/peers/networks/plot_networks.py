"""Plots `examples/networks_bench.rs`'s JSON lines (a file, default
`target/networks_bench/networks_bench.jsonl`, or `-` for stdin) as grouped bar charts
of each network's time per inference (ms, log scale): one panel per thread count, one
group per network, a bar for each of our versions (the lines with "version") beside
the peers' (the lines with "peer": onnxruntime, pytorch). A version whose output was
wrong (`"correct": false`) is hatched and marked. Writes `networks.png` and
`networks.svg` into `--out` (default: the input file's folder).

    .venv/bin/python benches/peers/networks/plot_networks.py [FILE] [--out DIR]
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
DEFAULT = os.path.join(REPO, "target", "networks_bench", "networks_bench.jsonl")
PEERS = ["onnxruntime", "pytorch"]


def read_lines(stream):
    """The JSON objects of `stream`, one a line (other lines skipped)."""
    records = []
    for text in stream:
        text = text.strip()
        if not text.startswith("{"):
            continue
        try:
            records.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return records


def series_of(record):
    """The bar a line gives: the peer's name, or ours ("elevate" or "elevate: VERSION"
    where there are several versions); None for lines without a time."""
    if not isinstance(record.get("ms"), (int, float)) or "network" not in record:
        return None
    if record.get("peer"):
        return str(record["peer"])
    if record.get("version"):
        return f"elevate: {record['version']}"
    return None


def collect(records):
    """The networks in their order, the thread counts, the series in order (ours
    first), and `(threads, network, series) -> (ms, min, max, correct)`."""
    networks, threads, values, ours = [], set(), {}, []
    for record in records:
        series = series_of(record)
        if series is None:
            continue
        network, t = record["network"], int(record.get("threads", 1))
        if network not in networks:
            networks.append(network)
        if not record.get("peer") and series not in ours:
            ours.append(series)
        threads.add(t)
        values[(t, network, series)] = (
            float(record["ms"]), record.get("min_ms"), record.get("max_ms"),
            record.get("correct", True) is not False)
    if len(ours) == 1:
        # One version of ours: simply "elevate".
        values = {(t, n, "elevate" if s == ours[0] else s): v for (t, n, s), v in values.items()}
        ours = ["elevate"]
    peers = [p for p in PEERS if any(k[2] == p for k in values)]
    peers += sorted({k[2] for k in values} - set(ours) - set(peers))
    return networks, sorted(threads), ours + peers, values


def cpu_name(records):
    """The machine's CPU, from a line that names one."""
    for record in records:
        if record.get("cpu"):
            return str(record["cpu"])
    return None


def load_of(records):
    """The machine's load when the run began, and its cores, where a line says."""
    for record in records:
        if isinstance(record.get("load_1min"), (int, float)):
            cores = record.get("cores")
            return f"load {record['load_1min']:g}" + (f" on {cores} cores" if cores else "")
    return None


def plot(records, out_dir):
    """Draws the panels and writes them as PNG and SVG into `out_dir`; the paths."""
    networks, threads, series, values = collect(records)
    if not values:
        raise SystemExit("plot_networks: no line with a network's \"ms\" to plot")
    colors = {name: f"C{i}" for i, name in enumerate(series)}
    width = 0.8 / len(series)
    fig, axes = plt.subplots(1, len(threads), squeeze=False,
                             figsize=(max(6.0, 1.6 * len(networks) + 2) * len(threads), 5.5))
    labelled = set()
    top = max(v[2] if isinstance(v[2], (int, float)) else v[0] for v in values.values())
    bottom = min(v[1] if isinstance(v[1], (int, float)) else v[0] for v in values.values())
    for ax, t in zip(axes[0], threads):
        for g, network in enumerate(networks):
            here = [s for s in series if (t, network, s) in values]
            for i, name in enumerate(here):
                ms, lo, hi, correct = values[(t, network, name)]
                x = g + (i - (len(here) - 1) / 2) * width
                label = None if name in labelled else name
                labelled.add(name)
                err = None
                if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                    err = [[max(ms - lo, 0.0)], [max(hi - ms, 0.0)]]
                ax.bar(x, ms, width, color=colors[name], label=label, yerr=err,
                       capsize=2, ecolor="0.3", hatch=None if correct else "xx",
                       edgecolor="black" if not correct else None)
                text = f"{ms:.3g}" + ("" if correct else " (wrong)")
                tip = hi if isinstance(hi, (int, float)) and hi > ms else ms
                ax.annotate(text, (x, tip), textcoords="offset points", xytext=(0, 2),
                            ha="center", va="bottom", fontsize=7, rotation=90)
        ax.set_yscale("log")
        ax.set_ylim(bottom / 1.5, top * 4)
        ax.set_xticks(range(len(networks)))
        ax.set_xticklabels(networks)
        ax.set_xlabel("network (batch 1, 224x224, f32)")
        ax.set_ylabel("ms per inference (median; bars: min to max)")
        ax.set_title(f"{t} thread" + ("" if t == 1 else "s"))
        ax.grid(axis="y", alpha=0.3, which="both")
    handles, labels = [], []
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    order = sorted(range(len(labels)), key=lambda i: series.index(labels[i]))
    fig.legend([handles[i] for i in order], [labels[i] for i in order],
               ncol=len(labels), loc="upper center", bbox_to_anchor=(0.5, 0.94),
               fontsize="small")
    machine = [m for m in (cpu_name(records), load_of(records)) if m]
    title = "Whole networks: time per inference"
    fig.suptitle(f"{title} ({', '.join(machine)})" if machine else title, y=0.99)
    fig.tight_layout(rect=(0, 0, 1, 0.89))
    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"networks.{ext}") for ext in ("png", "svg")]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=DEFAULT,
                        help="networks_bench's lines (default: %(default)s; - for stdin)")
    parser.add_argument("--out", help="the folder for networks.png and .svg "
                        "(default: the file's folder)")
    args = parser.parse_args()
    if args.file == "-":
        records = read_lines(sys.stdin)
        out = args.out or os.path.dirname(DEFAULT)
    else:
        with open(args.file, encoding="utf-8") as stream:
            records = read_lines(stream)
        out = args.out or os.path.dirname(os.path.abspath(args.file))
    for path in plot(records, out):
        print(path)


if __name__ == "__main__":
    main()
