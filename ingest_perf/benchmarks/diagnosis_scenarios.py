"""Runs the bottleneck scenarios (ingest_perf/bottleneck_scenarios.py) on a real Orthanc and
saves what the plugin says of each, to calibrate the rules of GET /perf/diagnosis on real figures.

  .venv/bin/python -m ingest_perf.benchmarks.diagnosis_scenarios --out DIR                      # every run
  .venv/bin/python -m ingest_perf.benchmarks.diagnosis_scenarios --scenario nagle_stall --scenario healthy \\
      --orthanc 1.12.7 --out DIR
  .venv/bin/python -m ingest_perf.benchmarks.diagnosis_scenarios --table DIR [DIR...]           # saved runs, one table

A run is a scenario with its options; --scenario takes a run's name (storage_bound-slow-disk) or a
scenario's (storage_bound: all its runs). For each run, DIR/NAME.json holds:
  scenario  what the scenario function says of itself (expected, sent, clientSeconds, ...)
  stats     GET /perf/stats right after the ingest (since start: Orthanc was started for the run)
  stats5m   GET /perf/stats?window=5m, read just after
  during    for dicom_pool_saturated and http_threads_saturated: both answers read while the load
            ran (scenario.duringStartedAfter and duringSeconds say when, and how long it took)
  statsDrained  when changes were still queued at the first read: GET /perf/stats once the
            change queue has caught up
and a summary of each is printed. The PostgreSQL runs start one throw-away server for all of them.
"""
import argparse
import json
import os
import tempfile
import time


from ingest_perf import bottleneck_scenarios as scenarios
from ingest_perf.generate_series import SeriesCache
from ingest_perf.orthanc_process import ALL_ORTHANCS, HOST_ORTHANC, OrthancFactory
from ingest_perf.stats_checks import wait_for

# (run name, scenario, options); the PostgreSQL runs also get postgresql=.
RUNS = [
    ("nagle_stall", "nagle_stall", {}),
    ("slow_sender", "slow_sender", {}),
    ("dicom_pool_saturated", "dicom_pool_saturated", {}),
    ("http_threads_saturated", "http_threads_saturated", {}),
    ("transcoding_bound-off", "transcoding_bound", {"timing": "Off"}),
    ("transcoding_bound-fallthrough", "transcoding_bound", {"timing": "FallThrough"}),
] + [("storage_bound-" + v, "storage_bound", {"variant": v}) for v in scenarios.STORAGE_VARIANTS] + [
    ("index_bound-" + d, "index_bound", {"database": d}) for d in scenarios.INDEX_DATABASES] + [
    ("slow_change_consumer", "slow_change_consumer", {}),
    ("slow_filter", "slow_filter", {}),
    ("slow_upload", "slow_upload", {}),
    ("compressed_answers", "compressed_answers", {}),
    ("duplicates_and_rejects", "duplicates_and_rejects", {}),
    ("healthy", "healthy", {}),
] + [("site_code-" + v, "site_code", {"variant": v}) for v in scenarios.SITE_CODE_VARIANTS]
DURING = {"dicom_pool_saturated", "http_threads_saturated"}



def phases_of(stats):
    """The phases in the plugin's order, as a saved /perf/stats answer names them (definitions.order)."""
    return stats["definitions"]["order"]["phases"]


def read_during(orthanc):
    """What an operator reads during the incident: the statistics since start and of the last 5 minutes."""
    return {"stats": orthanc.stats(), "stats5m": orthanc.stats(window="5m")}


def drained(orthanc, timeout=60):
    """The statistics once the change queue has caught up (the lag of the last changes is then known)."""
    return wait_for(orthanc, lambda stats: not stats["changes"]["newInstanceBacklog"], timeout)


def selected_runs(names):
    if not names:
        return RUNS
    chosen = [run for run in RUNS if run[0] in names or run[1] in names]
    unknown = set(names) - {run[0] for run in RUNS} - {run[1] for run in RUNS}
    if unknown:
        raise SystemExit("unknown scenario(s): %s (known: %s)" % (", ".join(sorted(unknown)),
                                                                   ", ".join(run[0] for run in RUNS)))
    return chosen


# --- the summary ----------------------------------------------------------------------------------

def _number(value):
    if value is None:
        return "-"
    return "%.3f" % value if abs(value) < 10 else "%.1f" % value


def summary(name, document):
    """A compact, one-screen view of a saved run."""
    stats, scenario = document["stats"], document["scenario"]
    lines = ["== %s (Orthanc %s, %s s of ingest): %s" % (name, stats.get("orthancVersion"), scenario["clientSeconds"],
                                                         scenario["expected"])]
    if stats.get("notInEffect"):
        reasons = ["%s: %s" % (n["option"], n["reason"]) for n in stats["notInEffect"]]
        lines.append("   notInEffect: %s" % "; ".join(reasons))
    for transport, figures in sorted(stats["transports"].items()):
        if transport == "all":
            continue
        instances = figures["instances"]
        if not any(instances.values()):
            continue
        others = ", ".join("%s %d" % (k, v) for k, v in instances.items()
                           if v and k != "stored" and isinstance(v, int))
        lines.append("   %s: stored %d%s | %.1f instances/s" % (
            transport, instances["stored"], " (%s)" % others if others else "",
            figures["throughput"]["instancesPerSecond"] or 0))
        lines.append("     %-15s %6s %9s %9s %9s" % ("phase (ms)", "count", "mean", "p50", "p99"))
        for phase in phases_of(stats):
            value = figures["phases"].get(phase)
            if not value or value.get("observable") is False or not value.get("count"):
                continue
            lines.append("     %-15s %6d %9s %9s %9s" % (phase, value["count"], _number(value["mean"]),
                                                          _number(value["p50"]), _number(value["p99"])))
        answers = figures.get("httpAnswers")
        if answers:
            lines.append("     httpAnswers: %d requests, %d accept compression, %d compressed by Orthanc" % (
                answers["requests"], answers["clientAcceptsCompression"], answers["compressedByOrthanc"]))
    changes = stats["changes"]
    per_instance = changes["perInstanceWhileBackloggedMs"]
    lines.append("   associations: %d open now; changes: backlog %d, perInstanceWhileBacklogged p50 %s ms; "
                 "openRecords %d (receiving %s)" % (
                     stats["associations"]["openConnections"]["count"], changes["newInstanceBacklog"],
                     _number(per_instance["p50"]), stats["openRecords"]["count"],
                     stats["openRecords"]["receiving"]["count"]))
    if document.get("statsDrained"):
        later = document["statsDrained"]
        dispatch = later["transports"]["all"]["phases"]["changeDispatch"]
        per_instance = later["changes"]["perInstanceWhileBackloggedMs"]
        lines.append("   once the changes drained: changeDispatch count %d mean %s p50 %s p99 %s ms; "
                     "perInstanceWhileBacklogged p50 %s ms" % (dispatch["count"], _number(dispatch["mean"]),
                                                                _number(dispatch["p50"]), _number(dispatch["p99"]),
                                                                _number(per_instance["p50"])))
    during = document.get("during")
    if during:
        inside = during["stats"]
        transports = {t: f["instances"]["stored"] for t, f in inside["transports"].items() if t != "all"}
        lines.append("   during the load (read %.2f s after the start, answered in %.2f s): stored %s, "
                     "%d associations open, restRequestsInProgress %s" % (
                         document["scenario"]["duringStartedAfter"], document["scenario"]["duringSeconds"],
                         transports, inside["associations"]["openConnections"]["count"],
                         inside["openRecords"]["restRequestsInProgress"]))
    return "\n".join(lines)


# --- the table of saved runs ----------------------------------------------------------------------

# Short column names; a phase not named here is shown by its name.
TABLE_NAMES = {"receive": "recv", "preStore": "preSt", "transcode": "trans", "persist": "pers",
               "storagePrepare": "stPrep", "storageWrite": "stWrite", "indexUpdate": "index",
               "serverTotal": "total", "associationGap": "gap", "changeDispatch": "chgDisp"}
# The quantiles of a phase in the table: p50, but p99 too for serverTotal, and only p99 for the change
# queue's lag (its p50 is 0 whenever the queue keeps up).
TABLE_QUANTILES = {"serverTotal": ["p50", "p99"], "changeDispatch": ["p99"]}


def table_columns(stats):
    """(phase, quantile) of the table: every phase of the plugin's vocabulary."""
    return [(phase, key) for phase in phases_of(stats) for key in TABLE_QUANTILES.get(phase, ["p50"])]


def table_rows(folder):
    """(the phase columns, the rows) of the runs saved in `folder`."""
    rows, columns = [], []
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".json"):
            continue
        with open(os.path.join(folder, file)) as stream:
            document = json.load(stream)
        stats = document["stats"]
        columns = columns or table_columns(stats)
        drained = document.get("statsDrained")
        for transport, figures in sorted(stats["transports"].items()):
            if transport == "all" or not any(figures["instances"].values()):
                continue
            cells = [file[:-5], transport, str(figures["instances"]["stored"])]
            for phase, key in columns:
                value = figures["phases"].get(phase) or {}
                late = phase == "changeDispatch" and drained is not None
                if late:  # its lag is only known once the queue has drained
                    value = drained["transports"][transport]["phases"][phase]
                cells.append(_number(value.get(key)) + ("*" if late else "")
                             if value.get("observable", True) and value.get("count") else "-")
            answers = figures.get("httpAnswers") or {}
            cells.append("%d/%d" % (answers["compressedByOrthanc"], answers["requests"]) if answers else "-")
            during = document.get("during")
            cells.append(str(stats["changes"]["newInstanceBacklog"]))
            opened = stats["associations"]["openConnections"]["count"]
            if during:
                opened = "%d (%d)" % (during["stats"]["associations"]["openConnections"]["count"], opened)
            cells.append(str(opened) if transport == "dicom" else "-")
            others = ", ".join("%s %d" % (k, v) for k, v in figures["instances"].items()
                               if v and k != "stored" and isinstance(v, int))
            cells.append(others or "-")
            rows.append(cells)
    return columns, rows


def table(folders):
    lines = []
    for folder in folders:
        columns, rows = table_rows(folder)
        # A phase measured in none of the runs (responseSend, never) takes no column.
        measured = [i for i in range(len(columns)) if any(row[3 + i] != "-" for row in rows)]
        rows = [row[:3] + [row[3 + i] for i in measured] + row[3 + len(columns):] for row in rows]
        columns = [columns[i] for i in measured]
        header = ["run", "transport", "stored"] + ["%s %s" % (TABLE_NAMES.get(p, p), k) for p, k in columns] + \
            ["gzip", "backlog", "open", "other outcomes"]
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        lines.append("Orthanc %s (%s), durations in ms (* once the change queue drained; open: associations "
                     "open at the read during the load, then after it):" % (_version_of(folder), folder))
        for row in [header] + rows:
            lines.append("  ".join(cell.rjust(width) if i > 1 else cell.ljust(width)
                                   for i, (cell, width) in enumerate(zip(row, widths))).rstrip())
        lines.append("")
    return "\n".join(lines)


def _version_of(folder):
    for file in sorted(os.listdir(folder)):
        if file.endswith(".json"):
            with open(os.path.join(folder, file)) as stream:
                return json.load(stream)["stats"].get("orthancVersion")
    return "?"


# --- running --------------------------------------------------------------------------------------

def run(name, scenario, options, factory, series, postgresql_server):
    function = scenarios.SCENARIOS[scenario]
    options = dict(options)
    if scenario in DURING:
        options["during"] = read_during
    if scenario == "index_bound" and options["database"] != "sqlite":
        options["postgresql"] = postgresql_server()
    begin = time.monotonic()
    orthanc = function(factory, series, **options)
    try:
        stats = orthanc.stats()
        stats5m = orthanc.stats(window="5m")
        described = dict(orthanc.scenario)
        during = described.pop("during", None)
        document = {"name": name, "scenario": described, "stats": stats, "stats5m": stats5m}
        if during is not None:
            document["during"] = during
        if stats["changes"]["newInstanceBacklog"]:
            document["statsDrained"] = drained(orthanc)
        document["scenario"]["runSeconds"] = round(time.monotonic() - begin, 3)
        return document
    finally:
        factory.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help="a run or a scenario, repeatable (default: every run)")
    parser.add_argument("--orthanc", choices=ALL_ORTHANCS, default=HOST_ORTHANC)
    parser.add_argument("--out", help="folder of the NAME.json files (made if missing)")
    parser.add_argument("--work", help="folder for the Orthancs and series (default: a new temporary folder)")
    parser.add_argument("--table", nargs="+", metavar="DIR", help="print the table of the runs saved in DIR(s)")
    args = parser.parse_args()
    if args.table:
        print(table(args.table))
        return
    if not args.out:
        parser.error("--out is required (or --table)")
    os.makedirs(args.out, exist_ok=True)
    work = args.work or tempfile.mkdtemp(prefix="diagnosis-scenarios-")
    server = []

    def postgresql_server():
        if not server:
            from ingest_perf.postgresql_server import PostgreSQLServer
            server.append(PostgreSQLServer().start())
        return server[0]

    failures = []
    try:
        for name, scenario, options in selected_runs(args.scenario):
            factory = OrthancFactory(os.path.join(work, name), orthanc_version=args.orthanc)
            series = SeriesCache(os.path.join(work, name))
            try:
                document = run(name, scenario, options, factory, series, postgresql_server)
            except Exception as error:  # noqa: BLE001 - the other runs go on; reported at the end
                failures.append((name, error))
                print("== %s FAILED: %s" % (name, error), flush=True)
                continue
            with open(os.path.join(args.out, name + ".json"), "w") as stream:
                json.dump(document, stream, indent=1, sort_keys=True)
            print(summary(name, document), flush=True)
    finally:
        for s in server:
            s.stop()
    if failures:
        raise SystemExit("%d run(s) failed: %s" % (len(failures), ", ".join(n for n, _ in failures)))


if __name__ == "__main__":
    main()
