#!/usr/bin/python3
"""Runs every benchmark side by side with MPICH's MPI-IO and writes the
benchmark page.

Each benchmark of SUITE runs once (its own repetitions interleave flowio
and MPICH inside the run), its output going to bench/results/NAME.txt
after a header line that records the commit, the date, the machine and
how busy other processes kept it meanwhile. Then, from whatever
bench/results holds, the script writes bench/results/summary.png, the
ncio sweep plots (bench/plot.py) and bench/README.md:
bench/README.template.md with the table of the latest run
of every benchmark, the summary plot, and the sweeps' plots and worst cells
in place of its three marker lines.

Usage (bench/run_all.sh builds the programs first and passes its
arguments on):
  bench/run_all.py [--quick] [--only NAME,...] [--page-only]
--quick runs every benchmark with few repetitions and small sizes (a
check that the command works end to end, not figures to publish);
--only runs the named benchmarks and keeps the others' latest results;
--page-only runs nothing and rewrites the page from bench/results.
"""
import argparse
import dataclasses
import datetime
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

from plotting import plt, save

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TEMPLATE = ROOT / "bench" / "README.template.md"
PAGE = ROOT / "bench" / "README.md"
TABLE_MARKER = "<!-- run_all: table -->"
PLOTS_MARKER = "<!-- run_all: plots -->"
SWEEPS_MARKER = "<!-- run_all: ncio sweeps -->"
HEADER = "# run_all:"


@dataclasses.dataclass
class Row:
    """One line of the page's table: `values` picks, from the records of a
    benchmark's output, the figures of its cells: MPICH's time over
    flowio's (above 1: flowio faster). None: the benchmark has no MPICH
    counterpart."""

    label: str
    values: object  # callable(records) -> [float], or None


@dataclasses.dataclass
class Benchmark:
    name: str  # of the results file
    command: list  # from the repository root; "{ranks}" is replaced
    ranks: int
    quick: list  # arguments that make --quick quick (appended)
    rows: list
    about: str  # one line for the table: what was run


def each(name, invert=False, **match):
    """The figure `name` (its inverse with invert) of every record whose
    keys equal `match`."""

    def values(records):
        found = []
        for record in records:
            if name in record and all(record.get(k) == v for k, v in match.items()):
                number = float(record[name])
                if number > 0:
                    found.append(1 / number if invert else number)
        return found

    return values


def overlap_ratio(records):
    """MPICH's t_total over flowio's: a durable write with as much
    computation meanwhile as the write takes alone."""
    totals = {r.get("impl"): float(r["t_total"]) for r in records if "t_total" in r}
    if totals.get("flowio", 0) > 0 and "mpich" in totals:
        return [totals["mpich"] / totals["flowio"]]
    return []


def flowio_realms(records):
    """pfr: every flowio realm policy's ratio to MPICH with default hints."""
    return [float(r["ratio"]) for r in records
            if r.get("impl", "").startswith("flowio") and "ratio" in r]


def program(binary, *arguments):
    return ["mpiexec", "-n", "{ranks}", f"bazel-bin/bench/{binary}", *arguments]


def write_and_read(name, command, ranks, quick, label, about):
    """A benchmark whose records say op=write or op=read: one line each."""
    return Benchmark(name, command, ranks, quick,
                     [Row(label.format(op="write"), each("ratio", op="write")),
                      Row(label.format(op="read"), each("ratio", op="read"))],
                     about)


# The NCIO study's sweeps (bench/ncio --sweep=study): a 2 x 2 grid and two
# spacings when quick, one cell of which is above the cap, so that the
# skipped line and its grey cell are drawn too.
NCIO_SWEEP_QUICK = ["--reps=1", "--sizes=8,4096", "--counts=64,512", "--spacings=0,4096",
                    "--max_rank_mib=1"]
NCIO_SWEEP_ABOUT = ("8 B-1 MiB x 64-256Ki regions, 128 B apart (not above 256 MiB a rank); "
                    "spacing 0-64 KiB; plotted below")

# IOR's shapes (bench/ior) at 1, 2 and 4 ranks: easy at 16 MiB a rank (its
# default of 64 would add time, not another access), hard at its default of
# 2000 segments, the shape IO500 measures.
IOR = program("ior", "--block=16777216")
IOR_QUICK = ["--reps=1", "--block=1048576", "--segments=20"]
IOR_LABEL = "ior {op}: easy and hard, independent and collective, MPI-IO layer"
IOR_ABOUT = "easy: 16 MiB a rank in 1 MiB calls; hard: 2000 calls of 47,008 B a rank"

SUITE = [
    write_and_read("ncio_2ranks", program("ncio"), 2, ["--reps=1", "--regions=1024"],
                   "ncio {op} (c-c, nc-c, c-nc, nc-nc)",
                   "4096 regions of 8 B, 128 B apart, per rank"),
    write_and_read("ncio_4ranks", program("ncio"), 4, ["--reps=1", "--regions=1024"],
                   "ncio {op} (c-c, nc-c, c-nc, nc-nc)",
                   "4096 regions of 8 B, 128 B apart, per rank"),
    write_and_read("ncio_sweep_2ranks", program("ncio", "--sweep=study"), 2, NCIO_SWEEP_QUICK,
                   "ncio sweep {op}: size x count grid, spacing line", NCIO_SWEEP_ABOUT),
    write_and_read("ncio_sweep_4ranks", program("ncio", "--sweep=study"), 4, NCIO_SWEEP_QUICK,
                   "ncio sweep {op}: size x count grid, spacing line", NCIO_SWEEP_ABOUT),
    write_and_read("hpio", program("hpio"), 2, ["--reps=1", "--regions=1024"],
                   "hpio {op} (vector and enumerated types)",
                   "c-nc and nc-nc, compact and enumerated datatypes"),
    write_and_read("checkpoint", program("checkpoint", "--mib=128"), 2,
                   ["--reps=1", "--mib=16"], "checkpoint {op} (3-D blocks, 4 variables)",
                   "128 MiB, MPI_Dims_create's process grid"),
    write_and_read("ior_1rank", IOR, 1, IOR_QUICK, IOR_LABEL, IOR_ABOUT),
    write_and_read("ior_2ranks", IOR, 2, IOR_QUICK, IOR_LABEL, IOR_ABOUT),
    write_and_read("ior_4ranks", IOR, 4, IOR_QUICK, IOR_LABEL, IOR_ABOUT),
    Benchmark(
        "pfr", program("pfr"), 2, ["--reps=1", "--steps=4", "--points=4096"],
        [Row("pfr: each realm policy's time step", flowio_realms)],
        "20 appending time steps, every realm policy"),
    Benchmark(
        "overlap", program("overlap", "--mib=128", "--direct=1"), 2,
        ["--reps=1", "--mib=16", "--idle_seconds=0"],
        [Row("overlap: durable write during computation", overlap_ratio)],
        "128 MiB, O_DIRECT for flowio; t_total compared"),
    Benchmark(
        "inflight", program("inflight"), 2, ["--reps=1", "--ops=4", "--size=262144"],
        [Row("inflight: 8 collective writes in flight", each("ratio_inflight"))],
        "8 writes of 1 MiB per rank, c-c and nc-c"),
    Benchmark(
        "memory", program("memory"), 2, ["--gib=1"],
        [Row("memory: 4 GiB interleaved write (time)", each("ratio"))],
        "peak memory within the hints' bound, checked"),
    Benchmark(
        "latency", program("latency"), 2, ["--reps=1", "--calls=20", "--nc_calls=1"],
        [Row("latency: small calls, C++ API", each("slowdown", invert=True, side="flowio")),
         Row("latency: small calls, MPI-IO layer", each("slowdown", invert=True, side="layer"))],
        "4 KiB calls, open/close, noncontiguous calls"),
    Benchmark(
        "repeat", program("repeat", "--calls=200"), 2, ["--reps=1", "--calls=20"],
        [Row("repeat: the same collective call again", each("ratio_cached"))],
        "200 calls a round, c-c, nc-c, c-nc, 32 KiB and 1 MiB"),
    Benchmark(
        "compress", program("compress", "--total=1", "--zeros=0,50,100"), 4,
        ["--reps=2", "--nodes=1024"],
        [Row("compress: BIPS3D mesh write, compression auto",
             each("ratio", stage="total", impl="flowio", mode="auto"))],
        "mesh of 4096 nodes, 0/50/100% zeros, shared memory"),
    Benchmark(
        "locks", program("locks", "--test=throughput", "--mib=16"), 4,
        ["--reps=1", "--mib=4"],
        [Row("locks: atomic-mode writes (hybrid lock)",
             each("speedup_vs_mpich_atomic", config="flowio_hybrid"))],
        "disjoint atomic-mode writes, against MPICH's fcntl locks"),
    Benchmark(
        "tiles", program("tiles"), 4, ["--reps=1", "--tile_width=480", "--tile_height=412",
                                       "--overlap_x=70", "--overlap_y=37"],
        [Row("tiles: read_all of overlapping tiles",
             each("vs_mpich_read_all", impl="flowio_read_all")),
         Row("tiles: remapped tiles (one read each)",
             each("vs_mpich_read_all", impl="remapped_flowio"))],
        "2 x 2 readers of 1920 x 1650-pixel tiles"),
    Benchmark(
        "hdf5", ["bench/hdf5.sh", "{ranks}"], 2, ["32", "16", "1", "2"],
        [Row("hdf5: parallel HDF5 through the MPI-IO layer", each("ratio", op="total"))],
        "64^3 datasets, contiguous and chunked, unmodified program"),
    Benchmark(
        "preload", ["bench/preload.sh", "{ranks}"], 2, ["64", "1", "2"],
        [Row("preload: unmodified MPI-IO checkpoint", each("ratio"))],
        "256^3 doubles, the layer preloaded"),
    Benchmark(
        "insitu", ["mpiexec", "-n", "{ranks}", "bazel-bin/examples/insitu"], 2,
        ["--mib=8", "--rounds=2", "--steps=2"],
        [Row("main job: simulation with a checkpoint every step", each("mpich_over_flowio"))],
        "examples/insitu defaults: 80 MiB checkpoints, 5 rounds"),
    Benchmark(
        "object_set", program("object_set"), 4, ["--reps=1", "--objects=10000"],
        [Row("object_set: 10^6 objects", None)],
        "build, gather and queries of an object set"),
    Benchmark(
        "sieve", ["bazel-bin/bench/sieve"], 1, ["--reps=1", "--window_mib=2"],
        [Row("sieve: the sieving crossover", None)],
        "calibrates flowio_ds_threshold"),
    Benchmark(
        "flatten", program("flatten"), 1, ["--quick"],
        [Row("flatten: flattened datatypes", None)],
        "memory, iteration and seeking of flattened types"),
]


def records_of(text):
    """The key=value records of a benchmark's output: the lines that start
    with "bench=" or "insitu ", and the "op: key=value" lines of the
    scripts (the word before the colon becoming op=...)."""
    records = []
    for line in text.splitlines():
        words = line.split()
        if not words or line.startswith("#"):
            continue
        record = {}
        if words[0].endswith(":") and "=" not in words[0]:
            record["op"] = words[0][:-1]
            words = words[1:]
        elif words[0] == "insitu":
            words = words[1:]
        pairs = [w.split("=", 1) for w in words if "=" in w]
        if not pairs or len(pairs) != len(words):
            continue
        record.update(pairs)
        records.append(record)
    return records


def header_of(text):
    for line in text.splitlines():
        if line.startswith(HEADER):
            return dict(w.split("=", 1) for w in line[len(HEADER):].split() if "=" in w)
    return {}


def machine():
    cores = os.cpu_count()
    memory = 0
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory = round(int(line.split()[1]) / 1048576)
    release = platform.freedesktop_os_release().get("PRETTY_NAME", "Linux")
    return f"{platform.node()}: {cores} cores, {memory} GiB, {release}"


def commit():
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                          capture_output=True, check=False).stdout.strip() or "unknown"


def with_options(command, extra):
    """`command` followed by `extra`, where an option of `extra`
    (--key=value) replaces the command's own --key=...: the programs
    refuse an option given twice."""
    keys = {word.split("=", 1)[0] for word in extra if word.startswith("--")}
    kept = [word for word in command
            if not (word.startswith("--") and word.split("=", 1)[0] in keys)]
    return kept + extra


def busy_seconds():
    """CPU seconds the whole machine has spent busy since it booted."""
    fields = [int(f) for f in pathlib.Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_seconds():
    """CPU seconds of this script's finished children and their children
    (mpiexec waits for its ranks, so they count)."""
    times = os.times()
    return times.children_user + times.children_system


def run(benchmark, quick):
    command = [word.replace("{ranks}", str(benchmark.ranks)) for word in benchmark.command]
    if quick:
        command = with_options(command, benchmark.quick)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           text=True, capture_output=True, check=False).stdout.strip()
    header = (f"{HEADER} commit={commit()}{'+changes' if dirty else ''} "
              f"date={datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ} "
              f"quick={int(quick)} command={'_'.join(command)}")
    print(f"== {benchmark.name}: {' '.join(command)}", flush=True)
    began, busy_before, own_before = time.monotonic(), busy_seconds(), own_seconds()
    finished = subprocess.run(command, cwd=ROOT, text=True, capture_output=True, check=False)
    seconds = time.monotonic() - began
    # The cores other processes kept busy, on average, while it ran: what
    # the machine did minus what the benchmark's own processes did.
    others = max(busy_seconds() - busy_before - (own_seconds() - own_before), 0.0) / seconds
    output = RESULTS / f"{benchmark.name}.txt"
    output.write_text(f"{header} seconds={seconds:.0f} others={others:.2f}\n"
                      f"# machine: {machine()}\n" + finished.stdout)
    if finished.returncode != 0:
        sys.stderr.write(finished.stderr[-4000:])
        print(f"   FAILED (exit {finished.returncode}) after {seconds:.0f} s; output in {output}")
        return False
    print(f"   {seconds:.0f} s -> {output.relative_to(ROOT)}", flush=True)
    return True


def summarize(benchmark):
    """(header, [(row, values)]) from the benchmark's latest results, or
    None when it has none."""
    path = RESULTS / f"{benchmark.name}.txt"
    if not path.exists():
        return None
    text = path.read_text()
    records = records_of(text)
    rows = [(row, row.values(records) if row.values else []) for row in benchmark.rows]
    return header_of(text), rows


def spread(values):
    return statistics.median(values), min(values), max(values)


def table(summaries):
    lines = [
        "| benchmark | ranks | MPICH time / flowio time: median [lowest - highest] | cells "
        "| what ran | commit | date (UTC) | others' load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for benchmark, summary in summaries:
        if summary is None:
            lines.append(f"| {benchmark.name} | {benchmark.ranks} | not run yet | | "
                         f"{benchmark.about} | | | |")
            continue
        header, rows = summary
        quick = " (quick)" if header.get("quick") == "1" else ""
        for row, values in rows:
            if values:
                median, low, high = spread(values)
                figure = f"**{median:.2f}** [{low:.2f} - {high:.2f}]"
            else:
                figure = ("no MPICH counterpart" if row.values is None
                          else "no figure: see its results")
            lines.append(
                f"| [{row.label}](results/{benchmark.name}.txt) | {benchmark.ranks} | {figure} "
                f"| {len(values) or ''} | {benchmark.about}{quick} | {header.get('commit', '?')} "
                f"| {header.get('date', '?')} | {header.get('others', '?')} |")
    return "\n".join(lines)


def summary_plot(summaries):
    labels, medians, lows, highs = [], [], [], []
    for benchmark, summary in summaries:
        if summary is None:
            continue
        for row, values in summary[1]:
            if values:
                median, low, high = spread(values)
                labels.append(f"{row.label} ({benchmark.ranks} ranks)")
                medians.append(median)
                lows.append(median - low)
                highs.append(high - median)
    if not labels:
        return None
    figure, axis = plt.subplots(figsize=(10, 0.38 * len(labels) + 1.2))
    positions = range(len(labels))[::-1]
    # Points, not bars: on a log axis a bar's length from the edge means nothing.
    axis.errorbar(medians, list(positions), xerr=[lows, highs], fmt="o", color="#4a7ab5",
                  capsize=3)
    axis.axvline(1, color="black", linewidth=1)
    axis.set_yticks(list(positions))
    axis.set_yticklabels(labels, fontsize=8)
    axis.set_xscale("log")
    axis.set_xlabel("MPICH's time / flowio's time (above 1: flowio faster)\n"
                    "point: median of the cells; line: lowest to highest")
    axis.grid(True, axis="x", which="both", alpha=0.3)
    return save(figure, RESULTS / "summary.png")


def ncio_sweeps():
    """The benchmarks of SUITE that run the NCIO study's sweeps."""
    return [b for b in SUITE if b.name.startswith("ncio_sweep_")]


def sweep_plots():
    """Draws the plots of the ncio sweeps there are results of (bench/plot.py),
    after removing the earlier ones, and returns their paths."""
    for old in RESULTS.glob("ncio_*.png"):
        old.unlink()
    sweeps = [RESULTS / f"{b.name}.txt" for b in ncio_sweeps()]
    sweeps = [str(path) for path in sweeps if path.exists()]
    if not sweeps:
        return []
    made = subprocess.run([sys.executable, str(ROOT / "bench" / "plot.py"), "--out", str(RESULTS),
                           *sweeps], text=True, capture_output=True, check=False)
    if made.returncode != 0:  # a failed sweep leaves no points: the page goes without its plots
        print(f"no sweep plots: {made.stderr.strip()}")
        return []
    return [pathlib.Path(line) for line in made.stdout.split()]


def spread_text(record, name, form, bold=False):
    """The figure `name` of a record and its range, "m [low - high]", each
    number in `form` (the range from `name`_min and `name`_max, which
    output of an earlier commit may lack)."""
    median = float(record[name])
    low = float(record.get(f"{name}_min", median))
    high = float(record.get(f"{name}_max", median))
    mark = "**" if bold else ""
    return f"{mark}{form.format(median)}{mark} [{form.format(low)} - {form.format(high)}]"


def worst_cells(benchmark, records, count=5):
    """Rows of the page's table for the `count` cells of a sweep with the
    lowest ratio (write and read, grid and spacing line together)."""
    seconds = {}
    for record in records:
        if "impl" in record and "seconds" in record:
            cell = (record["sweep"], record["op"], record["case"], record["regions"],
                    record["region_size"], record["spacing"])
            seconds[cell, record["impl"]] = record
    ratios = sorted((r for r in records if "ratio" in r), key=lambda r: float(r["ratio"]))

    def timed(cell, impl):
        record = seconds.get((cell, impl))
        if record is None:
            return "?"
        return spread_text(record, "seconds", "{:.3g}")

    rows = []
    for record in ratios[:count]:
        cell = (record["sweep"], record["op"], record["case"], record["regions"],
                record["region_size"], record["spacing"])
        ratio = spread_text(record, "ratio", "{:.2f}", bold=True)
        rows.append(f"| {benchmark.ranks} | {record['op']} | {record['case']} | {record['sweep']} "
                    f"| {record['region_size']} | {record['regions']} | {record['spacing']} "
                    f"| {ratio} | {timed(cell, 'flowio')} | {timed(cell, 'mpich')} |")
    return rows


def sweep_section(plots):
    """The page's section on the ncio sweeps: per rank count, where and when
    it ran and its plots (heat maps first, write before read), then the
    table of the worst cells."""
    def order(path):  # ncio_<sweep>_<op>_<ranks>ranks_sync<sync>
        sweep, op = path.stem.split("_")[1:3]
        return (sweep != "grid", op != "write", path.name)

    parts = []
    worst = []
    for benchmark in ncio_sweeps():
        path = RESULTS / f"{benchmark.name}.txt"
        if not path.exists():
            parts.append(f"**{benchmark.ranks} ranks**: not run yet.")
            continue
        text = path.read_text()
        header = header_of(text)
        quick = ", a --quick run: not figures to publish" if header.get("quick") == "1" else ""
        parts.append(f"**{benchmark.ranks} ranks** ([results](results/{path.name}): commit "
                     f"{header.get('commit', '?')}, {header.get('date', '?')}, others' load "
                     f"{header.get('others', '?')}, {header.get('seconds', '?')} s{quick})")
        mine = sorted((p for p in plots if f"_{benchmark.ranks}ranks_" in p.name), key=order)
        parts += [f"![{p.stem}](results/{p.name})" for p in mine]
        worst += worst_cells(benchmark, records_of(text))
    if worst:
        parts.append("The five cells of each rank count with the lowest ratio "
                     "(seconds: median [fastest - slowest repetition]; the ratio's range is "
                     "that of the repetitions' own ratios):\n\n"
                     "| ranks | op | case | sweep | region size (B) | regions | spacing (B) "
                     "| MPICH time / flowio time | flowio s | MPICH s |\n"
                     "|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(worst))
    return "\n\n".join(parts)


def write_page(summaries):
    summary = summary_plot(summaries)
    sweeps = sweep_plots()
    template = TEMPLATE.read_text()
    page = template.replace(TABLE_MARKER, f"Machine: {machine()}.\n\n" + table(summaries))
    page = page.replace(PLOTS_MARKER, f"![{summary.stem}](results/{summary.name})" if summary
                        else "(no plots yet: run bench/run_all.sh)")
    page = page.replace(SWEEPS_MARKER, sweep_section(sweeps))
    PAGE.write_text("<!-- Written by bench/run_all.sh from bench/README.template.md and "
                    "bench/results: edit those, not this page. -->\n" + page)
    print(f"wrote {PAGE.relative_to(ROOT)} and {len(sweeps) + bool(summary)} plot(s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions, small sizes")
    parser.add_argument("--only", default="", help="comma-separated names of benchmarks to run")
    parser.add_argument("--page-only", action="store_true", help="run nothing, rewrite the page")
    arguments = parser.parse_args()
    names = {b.name for b in SUITE}
    only = set(filter(None, arguments.only.split(",")))
    if only - names:
        sys.exit(f"run_all.py: no benchmark {', '.join(sorted(only - names))} "
                 f"(there are {', '.join(sorted(names))})")
    RESULTS.mkdir(parents=True, exist_ok=True)
    failed = []
    if not arguments.page_only:
        began = time.monotonic()
        for benchmark in SUITE:
            if (not only or benchmark.name in only) and not run(benchmark, arguments.quick):
                failed.append(benchmark.name)
        print(f"ran in {(time.monotonic() - began) / 60:.1f} min")
    write_page([(b, summarize(b)) for b in SUITE])
    if failed:
        sys.exit(f"run_all.py: failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
