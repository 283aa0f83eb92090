"""The effect of each configuration fix that GET /perf/diagnosis recommends, measured on the
bottleneck scenario of its own rule (ingest_perf/bottleneck_scenarios.py): the scenario as it is
(before), with the fix (after), and for the thread pools also with Orthanc's default, side by side in
one run. Each round runs every side of a fix once, each on a fresh Orthanc, in an order that rotates
from round to round; a figure is the median over the rounds, with the lowest and highest beside it.

  .venv/bin/python -m ingest_perf.benchmarks.diagnosis_effects --rounds 5 --markdown
  .venv/bin/python -m ingest_perf.benchmarks.diagnosis_effects --only http-threads-saturated --orthanc 1.12.7 --rounds 3

The fixes measured (--only takes a fix's name or its rule's id):
  dicom-workers-saturated  8 storescu associations x 60 instances (TCP_NODELAY both sides),
                           DicomThreadsCount 1 / 8 / Orthanc's default 4
  http-threads-saturated   8 keep-alive HTTP clients x 60 instances, HttpThreadsCount 2 / 16 /
                           Orthanc's default 50
  compressed-answers       200 instances by HTTP accepting gzip, HttpCompressionEnabled true (1.10.1's
  compressed-answers-x4    default) / false, one keep-alive client, then 4 (Orthanc 1.10.1 only:
                           1.12.2 and later never compress these answers)
  storage-compression      storage-bound's StorageCompression fix: 30 slices of 1024x1024 by HTTP,
                           TimedStorage on, StorageCompression true / false
  transcoding-bound        60 instances by HTTP, IngestTranscoding JPEG lossless / none
Not measured: slow-change-consumer (no configuration fix: the consumer is someone's code), and the
rules whose fix is outside Orthanc's configuration: index-bound (the database server), slow-filters
(the Lua or plugin filters), slow-uploads and slow-sender (the client or the network).

Client figures are as the clients see them: instances/s is the instances stored over the wall time
of the whole ingest (clients started to last one done), request times are each upload's. A ratio is
taken within each round (the two sides ran seconds apart, under the same load), then its median and
range over the rounds: the figure to read when other work shares the machine. The
plugin's figures are GET /perf/stats right after the ingest (throughput over its activeSeconds).
"Orthanc CPU" is the Orthanc process's user+system time from its start to the end of the ingest, per
instance (/proc). The machine's 1-minute load average is printed with the figures: clients and
Orthanc share its cores.
"""
import argparse
import json
import os
import shutil
import statistics
import tempfile
import time


from ingest_perf import bottleneck_scenarios as scenarios
from ingest_perf.benchmarks.report import percentile
from ingest_perf.generate_series import SeriesCache
from ingest_perf.orthanc_process import ALL_ORTHANCS, HOST_ORTHANC, OrthancFactory


# --- what is measured -------------------------------------------------------------------------------

def phase(name, key="p50"):
    def read(run):
        value = run["stats"]["transports"][run["transport"]]["phases"].get(name) or {}
        return value.get(key) if value.get("observable", True) and value.get("count") else None
    return read


def stored(run):
    return run["stats"]["transports"][run["transport"]]["instances"]["stored"]


def client_rate(run):
    return stored(run) / run["scenario"]["clientSeconds"]


def plugin_rate(run):
    return run["stats"]["transports"][run["transport"]]["throughput"]["instancesPerSecond"]


def wall_seconds(run):
    return run["scenario"]["clientSeconds"]


def request(q):
    def read(run):
        return percentile(run["scenario"]["requestMs"], q / 100)
    return read


def request_mean(run):
    return statistics.mean(run["scenario"]["requestMs"])


def cpu_per_instance(run):
    seconds = run["scenario"].get("orthancCpuSeconds")
    return seconds * 1000 / stored(run) if seconds is not None else None


def gzip_answers(run):
    return run["scenario"]["answerEncodings"].get("gzip", 0)


# (label, function, decimals)
GAP_P50 = ("associationGap p50 (ms)", phase("associationGap"), 2)
TOTAL_P50 = ("serverTotal p50 (ms)", phase("serverTotal"), 2)
CLIENT_RATE = ("instances/s (client)", client_rate, 1)
PLUGIN_RATE = ("instances/s (plugin)", plugin_rate, 1)
WALL = ("wall time (s)", wall_seconds, 2)
CPU = ("Orthanc CPU per instance (ms)", cpu_per_instance, 2)
REQUEST_P50 = ("request p50 (ms)", request(50), 2)
REQUEST_P99 = ("request p99 (ms)", request(99), 1)
REQUEST_MAX = ("request max (ms)", request(100), 1)
REQUEST_MEAN = ("request mean (ms)", request_mean, 2)


class Fix:
    """A rule's configuration fix: the scenario, its options, the sides (label, options) compared,
    the first being the bottleneck (before) and the second the fix (after)."""

    def __init__(self, name, rule, scenario, transport, options, sides, metrics, orthancs=tuple(ALL_ORTHANCS),
                 description=""):
        self.name = name
        self.rule = rule
        self.scenario = scenario
        self.transport = transport
        self.options = options
        self.sides = sides
        self.metrics = metrics
        self.orthancs = orthancs
        self.description = description


FIXES = [
    Fix("dicom-workers-saturated", "dicom-workers-saturated", "dicom_pool_saturated", "dicom",
        {"associations": 8, "per_association": 60},
        [("DicomThreadsCount 1", {"threads": 1}), ("DicomThreadsCount 8", {"threads": 8}),
         ("default (4)", {"threads": None})],
        [GAP_P50, TOTAL_P50, CLIENT_RATE, PLUGIN_RATE, WALL, CPU],
        description="8 simultaneous storescu associations x 60 instances of 0.53 MB, TCP_NODELAY=1 on both sides"),
    Fix("http-threads-saturated", "http-threads-saturated", "http_threads_saturated", "rest",
        {"clients": 8, "per_client": 60},
        [("HttpThreadsCount 2", {"threads": 2}), ("HttpThreadsCount 16", {"threads": 16}),
         ("default (50)", {"threads": None})],
        [REQUEST_P50, REQUEST_P99, REQUEST_MAX, WALL, CLIENT_RATE, PLUGIN_RATE, TOTAL_P50, CPU],
        description="8 keep-alive python-requests clients x 60 instances of 0.53 MB, POST /instances"),
    Fix("compressed-answers", "compressed-answers", "compressed_answers", "rest",
        {"instances": 200, "clients": 1},
        [("HttpCompressionEnabled true (default)", {"compression": None}),
         ("HttpCompressionEnabled false", {"compression": False})],
        [REQUEST_P50, REQUEST_MEAN, CLIENT_RATE, PLUGIN_RATE, TOTAL_P50, CPU,
         ("gzip answers", gzip_answers, 0)],
        orthancs=(HOST_ORTHANC,),
        description="200 instances of 0.53 MB by one keep-alive client sending Accept-Encoding: gzip, deflate"),
    Fix("compressed-answers-x4", "compressed-answers", "compressed_answers", "rest",
        {"instances": 200, "clients": 4},
        [("HttpCompressionEnabled true (default)", {"compression": None}),
         ("HttpCompressionEnabled false", {"compression": False})],
        [REQUEST_P50, REQUEST_MEAN, CLIENT_RATE, PLUGIN_RATE, TOTAL_P50, CPU,
         ("gzip answers", gzip_answers, 0)],
        orthancs=(HOST_ORTHANC,),
        description="the same 200 instances shared by 4 keep-alive clients"),
    Fix("storage-compression", "storage-bound", "storage_bound", "rest",
        {"variant": "compression", "instances": 30},
        [("StorageCompression true", {}), ("StorageCompression false", {"config": {"StorageCompression": False}})],
        [TOTAL_P50, ("storagePrepare p50 (ms)", phase("storagePrepare"), 2),
         ("storageWrite p50 (ms)", phase("storageWrite"), 2), REQUEST_P50, CLIENT_RATE, PLUGIN_RATE, CPU],
        description="30 slices of 1024x1024 (2.1 MB, incompressible pixels) by one keep-alive client, "
                    "IngestPerf.TimedStorage on"),
    Fix("transcoding-bound", "transcoding-bound", "transcoding_bound", "rest",
        {"instances": 60},
        [("IngestTranscoding JPEG lossless", {}), ("no IngestTranscoding", {"config": {"IngestTranscoding": None}})],
        [TOTAL_P50, ("preStore p50 (ms)", phase("preStore"), 2), REQUEST_P50, CLIENT_RATE, PLUGIN_RATE, CPU],
        description="60 instances of 0.53 MB by one keep-alive client, IngestPerf.TranscodeTiming Off"),
]
SKIPPED = ("slow-change-consumer has no configuration fix; index-bound, slow-filters, slow-uploads and slow-sender "
           "are fixed outside Orthanc's configuration: not measured")


def selected_fixes(names, orthanc):
    known = {f.name for f in FIXES} | {f.rule for f in FIXES}
    unknown = set(names) - known
    if unknown:
        raise SystemExit("unknown fix(es): %s (known: %s)" % (", ".join(sorted(unknown)),
                                                             ", ".join(f.name for f in FIXES)))
    chosen = [f for f in FIXES if not names or f.name in names or f.rule in names]
    for fix in chosen:
        if orthanc not in fix.orthancs:
            print("%s: not on Orthanc %s (only %s)" % (fix.name, orthanc, ", ".join(fix.orthancs)), flush=True)
    return [f for f in chosen if orthanc in f.orthancs]


# --- running ------------------------------------------------------------------------------------------

def run_side(fix, options, work, series, orthanc_version):
    """One side of a fix on a fresh Orthanc: {"scenario", "stats", "transport", "load"}."""
    factory = OrthancFactory(work, orthanc_version=orthanc_version)
    load = os.getloadavg()[0]
    try:
        orthanc = scenarios.SCENARIOS[fix.scenario](factory, series,
                                                    **dict(fix.options, **options))
        stats = orthanc.stats()
        described = dict(orthanc.scenario)
    finally:
        factory.close()
        shutil.rmtree(work, ignore_errors=True)
    run = {"scenario": described, "stats": stats, "transport": fix.transport,
           "load": [round(load, 2), round(os.getloadavg()[0], 2)]}
    sent = described["sent"].get("http", described["sent"].get("storescu"))
    if stored(run) != sent:
        raise RuntimeError("%s: %d instances stored of %d sent" % (fix.name, stored(run), sent))
    return run


def measure(fixes, rounds, work, orthanc_version):
    """{fix name: [[run of each round] per side]}, the sides of a fix interleaved round by round."""
    series = SeriesCache(os.path.join(work, "series"))
    runs = {fix.name: [[] for _ in fix.sides] for fix in fixes}
    count = 0
    for round_index in range(rounds):
        for fix in fixes:
            order = list(range(len(fix.sides)))
            shift = round_index % len(order)
            for side in order[shift:] + order[:shift]:
                label, options = fix.sides[side]
                count += 1
                begin = time.monotonic()
                run = run_side(fix, options, os.path.join(work, "run%03d" % count), series, orthanc_version)
                runs[fix.name][side].append(run)
                print("round %d  %-24s %-40s %s  (%.1f s, load %.2f-%.2f)" % (
                    round_index + 1, fix.name, label, brief(fix, run), time.monotonic() - begin, *run["load"]),
                    flush=True)
    return runs


def brief(fix, run):
    return ", ".join("%s %s" % (label.split(" (")[0], _number(function(run), decimals))
                     for label, function, decimals in fix.metrics[:3])


# --- the tables -----------------------------------------------------------------------------------------

def _number(value, decimals):
    if value is None:
        return "-"
    return "%.*f" % (decimals, value)


def _spread(values, decimals):
    """median (lowest-highest), or '-'."""
    if not values:
        return "-"
    median = _number(statistics.median(values), decimals)
    return median if len(values) == 1 else "%s (%s-%s)" % (median, _number(min(values), decimals),
                                                            _number(max(values), decimals))


def _paired_ratios(runs, before_runs, function):
    """side / before within each round (the two ran a few seconds apart, under the same load)."""
    ratios = []
    for run, before in zip(runs, before_runs):
        a, b = function(run), function(before)
        if a is not None and b:
            ratios.append(a / b)
    return ratios


def table(fix, side_runs, orthanc_version, markdown):
    """One row per side, then one per ratio to the first side; a column per figure. The Orthanc's
    version begins each row, so that the tables of two runs (--orthanc) can be put together."""
    labels = [label for label, _ in fix.sides]
    header = ["Orthanc", "configuration"] + [label for label, _, _ in fix.metrics]
    rows = []
    for index, (label, runs) in enumerate(zip(labels, side_runs)):
        name = ("before: " if index == 0 else "after: " if index == 1 else "") + label
        rows.append([orthanc_version, name] + [_spread([v for v in (f(run) for run in runs) if v is not None], d)
                                                for _, f, d in fix.metrics])
    for index, (label, runs) in enumerate(zip(labels[1:], side_runs[1:])):
        name = "after / before" if index == 0 else "%s / before" % label.split(" (")[0]
        rows.append([orthanc_version, name] + [_spread(_paired_ratios(runs, side_runs[0], f), 2)
                                                for _, f, _ in fix.metrics])
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(["---"] * 2 + ["---:"] * len(fix.metrics)) + " |"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    else:
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
                 for r in [header] + rows]
    return "\n".join(lines)


def report(fixes, runs, rounds, orthanc_version, markdown, seconds):
    loads = [value for fix in fixes for side in runs[fix.name] for run in side for value in run["load"]]
    lines = ["", "Orthanc %s, %d rounds (sides alternating), medians (lowest-highest) over the rounds, ratios "
                 "taken within each round; %.0f s in all, 1-minute load average %.2f-%.2f during the runs"
             % (orthanc_version, rounds, seconds, min(loads), max(loads))]
    for fix in fixes:
        lines += ["", ("**%s**" if markdown else "== %s") % fix.name + " (%s): %s" % (fix.rule, fix.description), ""]
        lines.append(table(fix, runs[fix.name], orthanc_version, markdown))
    lines += ["", SKIPPED + "."]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every side (default 3)")
    parser.add_argument("--orthanc", choices=ALL_ORTHANCS, default=HOST_ORTHANC)
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="a fix's name or its rule's id, repeatable (default: every fix)")
    parser.add_argument("--markdown", action="store_true", help="markdown tables")
    parser.add_argument("--json", metavar="FILE", help="save every run's figures (scenario and /perf/stats)")
    parser.add_argument("--work", help="folder for the Orthancs and series (default: a new temporary folder)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    fixes = selected_fixes(args.only, args.orthanc)
    if not fixes:
        raise SystemExit("nothing to measure on Orthanc %s" % args.orthanc)
    work = args.work or tempfile.mkdtemp(prefix="diagnosis-effects-")
    begin = time.monotonic()
    try:
        runs = measure(fixes, args.rounds, work, args.orthanc)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(report(fixes, runs, args.rounds, args.orthanc, args.markdown, time.monotonic() - begin))
    if args.json:
        with open(args.json, "w") as stream:
            json.dump({"orthanc": args.orthanc, "rounds": args.rounds,
                       "runs": {fix.name: {label: runs[fix.name][i] for i, (label, _) in enumerate(fix.sides)}
                                for fix in fixes}}, stream, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
