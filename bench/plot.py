#!/usr/bin/python3
"""Plots bench/ncio sweeps: MPICH's time over flowio's as heat maps over
region size and count, and along region count, size or spacing.

Reads the benchmarks' key=value lines from the files named on the command
line (or stdin) and skips everything else (tables, notes, other
benchmarks). For each op, rank count and sync setting it finds:

- a grid sweep (--sweep=grid or study) gives one PNG with a heat map per
  case: region size by region count, each cell coloured and annotated with
  MPICH's median time over flowio's, the colours diverging from white at
  1.0 on a log scale, the same scale for the four cases; grey cells were
  not run (data per rank above --max_rank_mib);
- a line sweep (regions, size or spacing) gives one PNG with the ratio
  per case (a bar from the lowest to the highest repetition's ratio) and,
  beside it, flowio's and MPICH's bandwidth.

Usage: bench/plot.py [--out DIR] [FILE ...]
Writes DIR/ncio_<sweep>_<op>_<ranks>ranks_sync<sync>.png (DIR: .), sweep
being grid, regions, size or spacing, and prints the paths.
"""
import collections
import math
import sys

import matplotlib.colors
import matplotlib.ticker

from plotting import arguments, plt, records, save

SWEPT_KEY = {"regions": "regions", "size": "region_size", "spacing": "spacing"}
AXIS_LABEL = {
    "regions": "regions per rank",
    "size": "region size (bytes)",
    "spacing": "region spacing (bytes)",
}
CASES = ["c-c", "nc-c", "c-nc", "nc-nc"]
CASE_COLOURS = {"c-c": "#555555", "nc-c": "#1f77b4", "c-nc": "#d62728", "nc-nc": "#2ca02c"}
IMPL_STYLES = {"flowio": "-", "mpich": "--"}
# Blue where flowio is faster, red where MPICH is.
HEAT_COLOURS = "RdBu"


def short(number):
    """8, 512, 4K, 256K, 1M: powers of two in the units a reader counts in."""
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if number >= size and number % size == 0:
            return f"{number // size}{unit}"
    return str(number)


def collect(lines):
    """Grid cells and line points of every figure: (sweep, op, ranks,
    sync) -> case -> point -> {"ratio": (median, min, max), "flowio" /
    "mpich": MiB/s} or {"skipped": True}. A point is (region_size,
    regions) in a grid, the swept value in a line; a later line for the
    same point replaces an earlier one."""
    figures = collections.defaultdict(
        lambda: collections.defaultdict(lambda: collections.defaultdict(dict)))
    for record in records(lines, "ncio"):
        sweep = record.get("sweep")
        if sweep == "grid":
            point = (int(record["region_size"]), int(record["regions"]))
        elif sweep in SWEPT_KEY:
            point = int(record[SWEPT_KEY[sweep]])
        else:
            continue
        key = (sweep, record.get("op", "-"), int(record["ranks"]), record["sync"])
        if "skipped" in record:
            for op in ("write", "read"):
                figures[(sweep, op, key[2], key[3])][record["case"]][point] = {"skipped": True}
            continue
        cell = figures[key][record["case"]][point]
        if "ratio" in record:
            median = float(record["ratio"])
            cell["ratio"] = (median, float(record.get("ratio_min", median)),
                             float(record.get("ratio_max", median)))
        elif "impl" in record:
            cell[record["impl"]] = float(record["MiBps"])
    return figures


def figure_title(key, what):
    sweep, op, ranks, sync = key
    synced = ", synced after each write" if sync == "1" else ""
    return f"ncio {op}, {ranks} ranks{synced}: {what}"


def heat_maps(key, cases, spacing, out):
    """One heat map per case, sizes up and counts across, on one colour
    scale: log2 of the ratio, symmetric about 0 (a ratio of 1)."""
    shown = [case for case in CASES if case in cases]
    sizes = sorted({size for case in shown for size, _ in cases[case]})
    counts = sorted({count for case in shown for _, count in cases[case]})
    ratios = [cell["ratio"][0] for case in shown for cell in cases[case].values()
              if "ratio" in cell]
    reach = max([1.0] + [abs(math.log2(r)) for r in ratios if r > 0])
    norm = matplotlib.colors.Normalize(vmin=-reach, vmax=reach)
    colours = plt.get_cmap(HEAT_COLOURS).copy()
    colours.set_bad("#cccccc")
    columns = 2 if len(shown) > 1 else 1
    rows = (len(shown) + columns - 1) // columns
    figure, axes = plt.subplots(
        rows, columns, squeeze=False, layout="constrained",
        figsize=(1.1 * len(counts) * columns + 2.0, 0.55 * len(sizes) * rows + 1.6))
    for axis in axes.flat[len(shown):]:
        axis.set_visible(False)
    for axis, case in zip(axes.flat, shown):
        grid = [[math.nan] * len(counts) for _ in sizes]
        for (size, count), cell in cases[case].items():
            if "ratio" in cell and cell["ratio"][0] > 0:
                grid[sizes.index(size)][counts.index(count)] = math.log2(cell["ratio"][0])
        image = axis.imshow(grid, cmap=colours, norm=norm, origin="lower", aspect="auto")
        for row, size in enumerate(sizes):
            for column, count in enumerate(counts):
                cell = cases[case].get((size, count), {})
                if "ratio" in cell:
                    ratio = cell["ratio"][0]
                    text = f"{ratio:.2f}" if ratio < 10 else f"{ratio:.0f}"
                    # White on the dark ends of the scale, black elsewhere.
                    strong = abs(math.log2(ratio)) > 0.6 * reach if ratio > 0 else False
                    axis.text(column, row, text, ha="center", va="center", fontsize=8,
                              color="white" if strong else "black")
                elif cell.get("skipped"):
                    axis.text(column, row, "not run", ha="center", va="center", fontsize=6,
                              color="#666666")
        axis.set_xticks(range(len(counts)))
        axis.set_xticklabels([short(c) for c in counts])
        axis.set_yticks(range(len(sizes)))
        axis.set_yticklabels([short(s) for s in sizes])
        if axis.get_subplotspec().is_last_row():
            axis.set_xlabel("regions per rank")
        if axis.get_subplotspec().is_first_col():
            axis.set_ylabel("region size (bytes)")
        axis.set_title(case)
    bar = figure.colorbar(image, ax=axes, shrink=0.9)
    steps = range(-math.floor(reach), math.floor(reach) + 1)
    bar.set_ticks(list(steps))
    bar.set_ticklabels([f"{2.0 ** step:g}" for step in steps])
    bar.set_label("MPICH time / flowio time (blue: flowio faster)")
    figure.suptitle(figure_title(key, f"MPICH time / flowio time (medians), spacing {spacing} B")
                    + "\ngrey: not run (data per rank above --max_rank_mib)", fontsize=10)
    sweep, op, ranks, sync = key
    path = out / f"ncio_{sweep}_{op}_{ranks}ranks_sync{sync}.png"
    figure.savefig(path, dpi=100)  # not save(): the constrained layout places the colour bar
    plt.close(figure)
    return path


def line_plot(key, cases, out):
    """The ratio along the swept parameter, a line per case, and the two
    sides' bandwidth beside it."""
    sweep, op, ranks, sync = key
    figure, (ratio_axis, bandwidth_axis) = plt.subplots(1, 2, figsize=(12, 4.2))
    for case in [c for c in CASES if c in cases]:
        points = sorted((x, cell) for x, cell in cases[case].items() if "ratio" in cell)
        if not points:
            continue
        xs = [x for x, _ in points]
        medians = [cell["ratio"][0] for _, cell in points]
        below = [cell["ratio"][0] - cell["ratio"][1] for _, cell in points]
        above = [cell["ratio"][2] - cell["ratio"][0] for _, cell in points]
        colour = CASE_COLOURS[case]
        ratio_axis.errorbar(xs, medians, yerr=[below, above], fmt="o-", color=colour, capsize=3,
                            label=case)
        for impl, style in IMPL_STYLES.items():
            bandwidth = [(x, cell[impl]) for x, cell in points if impl in cell]
            bandwidth_axis.plot([x for x, _ in bandwidth], [y for _, y in bandwidth], style,
                                color=colour, marker="o", markersize=3, label=f"{case} {impl}")
    ratio_axis.axhline(1, color="black", linewidth=1)
    ratio_axis.set_ylabel("MPICH time / flowio time\n(bar: lowest to highest repetition)")
    bandwidth_axis.set_ylabel("MiB/s (solid: flowio, dashed: MPICH)")
    for axis in (ratio_axis, bandwidth_axis):
        # A spacing of 0 has no logarithm: linear below 8 bytes.
        if sweep == "spacing":
            axis.set_xscale("symlog", base=2, linthresh=8, linscale=0.5)
        else:
            axis.set_xscale("log", base=2)
        xs = sorted({x for case in cases.values() for x in case})
        axis.set_xticks(xs)
        axis.set_xticklabels([short(x) for x in xs])
        axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        axis.set_xlabel(AXIS_LABEL[sweep])
        axis.grid(True, which="both", alpha=0.3)
    bandwidth_axis.set_yscale("log")
    # Ratios span a few powers of 2 rather than of 10: a tick at each.
    ratio_axis.set_yscale("log", base=2)
    ratio_axis.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ratio_axis.legend(fontsize=8)
    bandwidth_axis.legend(fontsize=7, ncol=2)
    figure.suptitle(figure_title(key, f"along the {AXIS_LABEL[sweep].split(' (')[0]}"))
    return save(figure, out / f"ncio_{sweep}_{op}_{ranks}ranks_sync{sync}.png")


def grid_spacing(lines):
    """(ranks, sync) -> the spacing of the grid's cells."""
    spacing = {}
    for record in records(lines, "ncio"):
        if record.get("sweep") == "grid":
            spacing[(int(record["ranks"]), record["sync"])] = record["spacing"]
    return spacing


def main():
    out, lines = arguments(__doc__.splitlines()[0])
    figures = collect(lines)
    if not figures:
        sys.exit("plot.py: no ncio sweep lines (bench=ncio ... sweep=grid|regions|size|spacing) "
                 "found")
    spacing = grid_spacing(lines)
    for key, cases in sorted(figures.items()):
        if not any("ratio" in cell for case in cases.values() for cell in case.values()):
            continue  # only skipped points, or an op that was not timed
        if key[0] == "grid":
            print(heat_maps(key, cases, spacing.get((key[2], key[3]), "?"), out))
        else:
            print(line_plot(key, cases, out))


if __name__ == "__main__":
    main()
