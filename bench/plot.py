#!/usr/bin/python3
"""Plots bench/ncio sweeps: bandwidth against region count, region size and
region spacing.

Reads the benchmarks' key=value lines from the files named on the command
line (or stdin) and skips everything else (tables, notes, other
benchmarks). For each sweep, op, rank count and sync setting it finds, it
writes one PNG with a subplot per case, flowio and MPICH on the same axes,
x on a log2 scale and bandwidth on a log scale (the two can differ by
orders of magnitude).

Usage: bench/plot.py [--out DIR] [FILE ...]
Writes DIR/ncio_<sweep>_<op>_<ranks>ranks_sync<sync>.png (DIR: .).
"""
import collections
import sys

from plotting import arguments, plt, records, save

SWEPT_KEY = {"regions": "regions", "size": "region_size", "spacing": "spacing"}
AXIS_LABEL = {
    "regions": "regions per rank",
    "size": "region size (bytes)",
    "spacing": "region spacing (bytes)",
}
CASES = ["c-c", "nc-c", "c-nc", "nc-nc"]
STYLES = {"flowio": "o-", "mpich": "s--"}


def collect(lines):
    """(sweep, op, ranks, sync) -> (case, impl) -> {x: MiB/s}; a later line
    for the same point replaces an earlier one."""
    figures = collections.defaultdict(lambda: collections.defaultdict(dict))
    for record in records(lines, "ncio"):
        sweep = record.get("sweep")
        if sweep not in SWEPT_KEY or "impl" not in record:
            continue
        figure = (sweep, record["op"], int(record["ranks"]), record["sync"])
        x = int(record[SWEPT_KEY[sweep]])
        figures[figure][(record["case"], record["impl"])][x] = float(record["MiBps"])
    return figures


def plot(figure_key, series, out):
    sweep, op, ranks, sync = figure_key
    cases = [case for case in CASES if any(key[0] == case for key in series)]
    columns = 2 if len(cases) > 1 else 1
    rows = (len(cases) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.6 * rows), squeeze=False)
    for axis in axes.flat[len(cases):]:
        axis.set_visible(False)
    for axis, case in zip(axes.flat, cases):
        for impl, style in STYLES.items():
            points = sorted(series.get((case, impl), {}).items())
            if points:
                axis.plot([x for x, _ in points], [y for _, y in points], style, label=impl)
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_title(case)
        axis.set_xlabel(AXIS_LABEL[sweep])
        axis.set_ylabel("MiB/s")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend()
    figure.suptitle(f"ncio {op}, {ranks} ranks, sync={sync}")
    return save(figure, out / f"ncio_{sweep}_{op}_{ranks}ranks_sync{sync}.png")


def main():
    out, lines = arguments(__doc__.splitlines()[0])
    figures = collect(lines)
    if not figures:
        sys.exit("plot.py: no ncio sweep lines (bench=ncio ... sweep=regions|size|spacing) found")
    for figure_key, series in sorted(figures.items()):
        print(plot(figure_key, series, out))


if __name__ == "__main__":
    main()
