#!/usr/bin/python3
"""Plots bench/compress: exchange-stage time with LZO compression off, on
and auto, against the share of zeros (one panel per link) and against the
load (one panel per data type).

Reads the benchmark's key=value lines from the files named on the command
line (or stdin) and skips everything else (tables, notes, other
benchmarks); a later line for the same point replaces an earlier one.
Lines labelled sweep=zeros (the default) make the first kind of figure,
sweep=loads the second.

Usage: bench/compress_plot.py [--out DIR] [FILE ...]
Writes DIR/compress_zeros_<type>_load<load>.png for every type and load
measured at several shares of zeros, and
DIR/compress_loads_<link>_zeros<z>.png for every link and share of zeros
measured at several loads (DIR: .).
"""
import collections
import sys

from plotting import arguments, plt, records, save

MODES = {"off": "s--", "on": "^-", "auto": "o-"}
LINK_ORDER = ["shm", "10gbit", "1gbit", "100mbit"]


def collect(lines, sweep):
    """(link, type, load, zeros, mode) -> exchange seconds, of one sweep."""
    points = {}
    for record in records(lines, "compress"):
        if record.get("stage") != "exchange" or record.get("sweep", "zeros") != sweep:
            continue
        # The sweeps run on 4 ranks; another count is a link of its own.
        link = record["link"]
        if record.get("ranks", "4") != "4":
            link += " (" + record["ranks"] + " ranks)"
        key = (link, record["type"], int(record["load"]), int(record["zeros"]), record["mode"])
        points[key] = float(record["exchange_s"])
    return points


def link_rank(link):
    return LINK_ORDER.index(link) if link in LINK_ORDER else len(LINK_ORDER)


def panels(axes_count):
    columns = min(axes_count, 3)
    rows = (axes_count + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(4.6 * columns, 3.8 * rows), squeeze=False)
    for axis in axes.flat[axes_count:]:
        axis.set_visible(False)
    return figure, list(axes.flat)


def plot_zeros(points, out):
    """One figure per (type, load): a panel per link, time against zeros."""
    paths = []
    groups = collections.defaultdict(set)
    for link, kind, load, zeros, _ in points:
        groups[(kind, load)].add((link, zeros))
    for (kind, load), members in sorted(groups.items()):
        links = sorted({link for link, _ in members}, key=link_rank)
        if len({zeros for _, zeros in members}) < 2:
            continue
        figure, axes = panels(len(links))
        for axis, link in zip(axes, links):
            for mode, style in MODES.items():
                series = sorted((z, s) for (l, k, ld, z, m), s in points.items()
                                if (l, k, ld, m) == (link, kind, load, mode))
                if series:
                    axis.plot([z for z, _ in series], [1000 * s for _, s in series], style,
                              label=mode)
            axis.set_title(f"{link}")
            axis.set_xlabel("zero values (%)")
            axis.set_ylabel("exchange stage (ms)")
            axis.set_ylim(bottom=0)
            axis.grid(True, alpha=0.3)
            axis.legend()
        figure.suptitle(f"bench/compress: exchange of the mesh, {kind} data, load {load}")
        paths.append(save(figure, out / f"compress_zeros_{kind}_load{load}.png"))
    return paths


def plot_loads(points, out):
    """One figure per (link, zeros): a panel per type, time relative to off against load."""
    paths = []
    groups = collections.defaultdict(set)
    for link, kind, load, zeros, _ in points:
        groups[(link, zeros)].add((kind, load))
    for (link, zeros), members in sorted(groups.items(), key=lambda g: (link_rank(g[0][0]), g[0])):
        kinds = sorted({kind for kind, _ in members})
        if len({load for _, load in members}) < 2:
            continue
        figure, axes = panels(len(kinds))
        for axis, kind in zip(axes, kinds):
            for mode, style in MODES.items():
                series = []
                for (l, k, load, z, m), seconds in points.items():
                    off = points.get((l, k, load, z, "off"))
                    if (l, k, z, m) == (link, kind, zeros, mode) and off:
                        series.append((load, seconds / off))
                series.sort()
                if series:
                    axis.plot([x for x, _ in series], [y for _, y in series], style, label=mode)
            axis.axhline(1.0, color="grey", linewidth=0.8)
            axis.set_xscale("log")
            axis.set_title(f"{kind} data")
            axis.set_xlabel("load (words per node)")
            axis.set_ylabel("exchange time / off")
            axis.set_ylim(bottom=0)
            axis.grid(True, which="both", alpha=0.3)
            axis.legend()
        figure.suptitle(f"bench/compress: {link}, {zeros}% zeros")
        paths.append(save(figure, out / f"compress_loads_{link}_zeros{zeros}.png"))
    return paths


def main():
    out, lines = arguments(__doc__.splitlines()[0])
    zeros = collect(lines, "zeros")
    loads = collect(lines, "loads")
    if not zeros and not loads:
        sys.exit("no bench=compress exchange lines found")
    for path in plot_zeros(zeros, out) + plot_loads(loads, out):
        print(path)


if __name__ == "__main__":
    main()
