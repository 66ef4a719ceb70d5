"""What bench/'s plotting scripts share: matplotlib without a display, the
command line (an output folder and the benchmark output to read), the
benchmarks' key=value records and saving a figure."""
import argparse
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # the machines have no display
import matplotlib.pyplot as plt  # noqa: E402,F401  (after the backend is chosen; for the scripts)


def arguments(description):
    """--out DIR (made if missing) and FILE ...: the files' lines, or
    stdin's when no file is named."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=".", type=pathlib.Path, help="folder for the PNG files")
    parser.add_argument("files", nargs="*", help="benchmark output (default: stdin)")
    parsed = parser.parse_args()
    lines = []
    for name in parsed.files:
        lines += pathlib.Path(name).read_text().splitlines()
    if not parsed.files:
        lines = sys.stdin.read().splitlines()
    parsed.out.mkdir(parents=True, exist_ok=True)
    return parsed.out, lines


def records(lines, bench):
    """The key=value records of benchmark `bench` ("bench=NAME ..."
    lines); everything else (tables, notes) is skipped."""
    for line in lines:
        if line.startswith(f"bench={bench} "):
            yield dict(pair.split("=", 1) for pair in line.split() if "=" in pair)


def save(figure, path):
    """Lays the figure out, writes it as a PNG at `path` and returns the path."""
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
