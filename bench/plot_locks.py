#!/usr/bin/python3
"""Plots bench/locks' contended loops as the seed paper's figures 7 and 8:
percent overhead against the number of processes, one subplot per work
time, one line per lock (flowio's hybrid, one-sided and MCS locks, and
fcntl, the lock MPICH's MPI-IO takes in atomic mode).

Reads the benchmark's key=value lines ("test=contended") from the files
named on the command line (or stdin) and skips everything else.

Usage: bench/plot_locks.py [--out DIR] [FILE ...]
Writes DIR/locks_contended_overhead.png (DIR: .).
"""
import argparse
import collections
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # the machines have no display
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

STYLES = {"hybrid": "o-", "one_sided": "s--", "mcs": "^-", "fcntl": "x:"}


def records(lines):
    for line in lines:
        if line.startswith("bench=locks") and "test=contended" in line:
            yield dict(pair.split("=", 1) for pair in line.split())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="directory for the PNG")
    parser.add_argument("files", nargs="*", help="benchmark output (default: stdin)")
    options = parser.parse_args()
    lines = []
    if options.files:
        for name in options.files:
            lines.extend(pathlib.Path(name).read_text().splitlines())
    else:
        lines = sys.stdin.read().splitlines()

    # (work_ms, lock) -> {ranks: percent overhead}
    series = collections.defaultdict(dict)
    for record in records(lines):
        key = (float(record["work_ms"]), record["lock"])
        series[key][int(record["ranks"])] = float(record["percent_overhead"])
    works = sorted({work for work, _ in series})
    if not works:
        sys.exit("no test=contended lines found")

    figure, axes = plt.subplots(1, len(works), figsize=(4 * len(works), 3.6), squeeze=False)
    for axis, work in zip(axes[0], works):
        for (line_work, lock), points in sorted(series.items()):
            if line_work != work:
                continue
            ranks = sorted(points)
            axis.plot(ranks, [points[r] for r in ranks], STYLES.get(lock, "o-"), label=lock)
        axis.set_title(f"work {work:g} ms")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("processes")
        axis.set_ylabel("percent overhead")
        axis.grid(True, alpha=0.3)
    axes[0][0].legend()
    figure.suptitle("bench/locks: lock / work / unlock, 100 iterations per process")
    figure.tight_layout()
    out = pathlib.Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    figure.savefig(out / "locks_contended_overhead.png", dpi=100)


if __name__ == "__main__":
    main()
