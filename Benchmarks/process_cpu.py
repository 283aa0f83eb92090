#!/usr/bin/env python3
"""Orthanc's CPU time per stored instance with the plugin / without, the whole process (every
thread: the plugin's own thread, Orthanc's, nothing subtracted, no window), side by side, with a
null comparison (without / without), on a host whose TCP table holds --other-sockets other sockets.

  .venv/bin/python Benchmarks/process_cpu.py [--plugin PATH] [--orthanc 1.10.1|1.12.7]
      [--cases trickle,storescu-1,storescu-4,http-4] [--other-sockets 10000] [--pairs 3]
      [--instances 100] [--trickle-instances 40] [--size 512] [--json FILE] [--markdown]

As root it runs itself again in a network namespace of its own (`unshare -n`): the other sockets
(loopback connections held open, a third of them TIME_WAIT topped up every 5 s), the Orthancs and
their clients are alone there, whatever the host holds. Otherwise it runs in the host's namespace
and says so.

Per case and pair, a fresh A (no plugin) and B (the plugin; for the null comparison, no plugin
either) receive the same instances, chunk by chunk in ABBA order (the trickle: file by file, each to
both, at 2 instances/s to each); the CPU time of each whole process is counted from the first
instance to --settle seconds after the last. Load on the machine slows both alike: the figure is a
ratio measured side by side. Cases (ingest_perf/harness/process_cpu.py, CASES): trickle,
storescu-1 (one association per chunk), storescu-4 (4 associations at once), http-4 (4 keep-alive
HTTP clients).
"""
import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Python puts only this script's folder on sys.path; the package is at the repository root.
sys.path.insert(0, REPO)

from ingest_perf.generate_series import write_series  # noqa: E402
from ingest_perf.harness import process_cpu  # noqa: E402
from ingest_perf.harness.report import table as markdown_table  # noqa: E402
from ingest_perf.orthanc_process import HOST_ORTHANC, default_plugin_path  # noqa: E402


def log(message):
    print(message, file=sys.stderr, flush=True)


def render(result, markdown):
    head = ["case", "comparison", "pairs", "instances per side", "CPU ms/instance A", "CPU ms/instance B",
            "B / A", "95% interval", "pairs B / A", "/proc/<pid>/stat ticks B / A", "plugin's own us/instance",
            "verdict"]
    rows = []
    for row in result["rows"]:
        rows.append([row["case"], "null (without / without)" if row["null"] else "with / without",
                     str(row["pairs"]), str(row["instancesPerSide"]), "%.3f" % row["cpuMsPerInstanceA"],
                     "%.3f" % row["cpuMsPerInstanceB"], "%.4f" % row["ratio"],
                     "%.4f .. %.4f" % (row["ratioLow"], row["ratioHigh"]),
                     " ".join("%.3f" % r for r in row["pairRatios"]),
                     "-" if row["ticksRatio"] is None else "%.3f (%d ticks)" % (row["ticksRatio"], row["ticksPerSide"]),
                     "-" if row.get("pluginMicroseconds") is None else "%.1f (callbacks %.1f, thread %.1f)" % (
                         row["pluginMicroseconds"], row["pluginCallbacksMicroseconds"],
                         row["pluginThreadMicroseconds"]),
                     row.get("verdict", "")])
    lines = []
    if markdown:
        lines += markdown_table(head, rows).split("\n")
    else:
        widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in [head] + rows]
    lines.append("")
    lines.append("Orthanc %s; %s; %d other sockets in the TCP table (measured: %d in use, %d TIME_WAIT); "
                 "instances %dx%d; target: B / A <= %.2f" % (
                     result["orthanc"], result["namespace"], result["otherSockets"], result["sockets"]["inuse"],
                     result["sockets"]["tw"], result["size"], result["size"], process_cpu.TARGET_RATIO))
    lines.append("command: %s" % result["command"])
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", default=default_plugin_path())
    parser.add_argument("--orthanc", default=HOST_ORTHANC)
    parser.add_argument("--cases", default=",".join(process_cpu.CASES))
    parser.add_argument("--other-sockets", type=int, default=10000)
    parser.add_argument("--pairs", type=int, default=3, help="fresh pairs of Orthancs per case and comparison")
    parser.add_argument("--instances", type=int, default=100, help="instances per pair and side")
    parser.add_argument("--trickle-instances", type=int, default=40, help="instances per pair and side, trickle")
    parser.add_argument("--size", type=int, default=512, help="rows and columns of the synthetic CT slices")
    parser.add_argument("--settle", type=float, default=6.0,
                        help="seconds counted after the last instance (the plugin's thread ticks 4 s after ingest)")
    parser.add_argument("--no-null", action="store_true", help="skip the null comparison")
    parser.add_argument("--json")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in process_cpu.CASES]
    if unknown:
        parser.error("unknown case(s) %s; known: %s" % (", ".join(unknown), ", ".join(process_cpu.CASES)))
    namespace = process_cpu.reexecute_in_own_network_namespace([os.path.abspath(__file__)] + sys.argv[1:])
    namespace = ("a network namespace of its own (unshare -n)" if process_cpu.in_own_network_namespace()
                 else "the host's network namespace (not root, or no unshare): the host's own sockets too")
    plugin = os.path.abspath(args.plugin)
    root = tempfile.mkdtemp(prefix="process-cpu-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    count = max(args.instances, args.trickle_instances) + 40
    started = time.monotonic()
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, root, True)
        files = write_series(os.path.join(root, "series"), count, rows=args.size, columns=args.size)
        rows, sockets, at_end = run(args, cases, files, plugin, root, namespace)
    result = {"orthanc": args.orthanc, "plugin": plugin, "namespace": namespace, "otherSockets": args.other_sockets,
              "sockets": sockets, "socketsAtEnd": at_end, "size": args.size, "rows": rows, "seconds": time.monotonic() - started,
              "command": "Benchmarks/process_cpu.py " + " ".join(sys.argv[1:])}
    if args.json:
        with open(args.json, "w") as stream:
            json.dump(result, stream, indent=1)
    print(render(result, args.markdown))


def run(args, cases, files, plugin, root, namespace):
    rows = []
    with process_cpu.OtherSockets(args.other_sockets):
        sockets = process_cpu.socket_counts()
        log("%d sockets in use, %d TIME_WAIT in %s" % (sockets["inuse"], sockets["tw"], namespace))
        for case in cases:
            instances = args.trickle_instances if case == "trickle" else args.instances
            chosen = files[:instances]
            by_comparison = {}
            for null in ([False] if args.no_null else [True, False]):
                log("%s, %s:" % (case, "null" if null else "with / without"))
                pairs = []
                for index in range(args.pairs):
                    pairs.append(process_cpu.measure_pair(case, chosen, plugin, args.orthanc, root, not null,
                                                          args.settle, log, index))
                by_comparison[null] = process_cpu.summarize(case, null, pairs)
                by_comparison[null]["pairResults"] = pairs
            if False in by_comparison:
                by_comparison[False]["verdict"] = process_cpu.verdict(by_comparison[False], by_comparison.get(True))
            rows += [by_comparison[n] for n in (True, False) if n in by_comparison]
        at_end = process_cpu.socket_counts()
    return rows, sockets, at_end


if __name__ == "__main__":
    main()
