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
import collections
import sys

from plotting import arguments, plt, records, save

STYLES = {"hybrid": "o-", "one_sided": "s--", "mcs": "^-", "fcntl": "x:"}


def main():
    out, lines = arguments(__doc__.splitlines()[0])

    # (work_ms, lock) -> {ranks: percent overhead}
    series = collections.defaultdict(dict)
    for record in records(lines, "locks"):
        if record.get("test") != "contended":
            continue
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
    print(save(figure, out / "locks_contended_overhead.png"))


if __name__ == "__main__":
    main()
