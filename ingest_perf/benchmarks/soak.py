"""Attached for hours, in minutes: issue 34's 83-minute run at a smaller scale. Four Orthancs side by
side receive the same work, event by event, in rotating order: A without the plugin, B with it at its
defaults, C without it (the null comparison), and H with a plugin that registers the same hooks as
the plugin and returns from each at once (libTestHooksOnly.so, built beside the plugin): what Orthanc
itself spends on calling them, before the plugin does any work. The work is a site's churn: C-STORE
associations long and short from calling AETs that keep changing, keep-alive and closing HTTP
clients, duplicates, a cut upload now and then, every resource deleted every few minutes, one POST
/perf/reset on B half way, and every route of B read every 30 s. The script keeps the ground truth of
every instance (stored, alreadyStored or failed) and checks B's counts against it; the CPU time of
each whole Orthanc process is counted with the route reads and the deletions left out (the meters
stop around them):

  .venv/bin/python -m ingest_perf.benchmarks.soak [--plugin PATH] [--orthanc 1.10.1|1.12.7|1.13.0]
      [--minutes 12] [--rate 3.75] [--new-aets-per-minute 20] [--other-sockets 2000] [--seed 1]
      [--max-label-values N] [--hooks-only PATH|''] [--json FILE]

What it prints: B/A, H/A and C/A over the run and per tenth of it; the plugin's own figure (pluginCost);
memory (resident B - A and C - A at start, at the reset and at the end; B's threads and descriptors);
B's counts against the truth before the reset and at the end; the share of the calling AETs of the
last minute that B names. As root it runs in a network namespace of its own, like process_cpu.
"""
import argparse
import collections
import contextlib
import json
import os
import random
import shutil
import sys
import tempfile
import time

from ingest_perf.benchmarks.process_cpu import (CpuMeter, OtherSockets, in_own_network_namespace, orthanc_pid,
                                                reexecute_in_own_network_namespace, rss_kib, start_orthanc)
from ingest_perf.clients import KeepAliveSession, http_upload, read_files, storescu
from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import HOST_ORTHANC, default_plugin_path, stop_together

ROUTES = ("/perf/stats", "/perf/metrics", "/perf/diagnosis", "/perf/slowest")
TARGET_RATIO = 1.02
SERIES_SIZE = 50
HOOKS_ONLY = "libTestHooksOnly.so"


def log(message):
    print(message, file=sys.stderr, flush=True)


class Truth:
    """What each instance sent became, as Orthanc decides it: stored the first time, alreadyStored while
    it is there, a cut file failed; the deletions empty it. Counted since the last reset."""

    def __init__(self):
        self.present = set()
        self.counts = {}

    def reset(self):
        self.counts = {}

    def sent(self, transport, index):
        outcome = "alreadyStored" if index in self.present else "stored"
        self.present.add(index)
        self.count(transport, outcome)

    def count(self, transport, outcome):
        key = (transport, outcome)
        self.counts[key] = self.counts.get(key, 0) + 1

    def get(self, transport, outcome):
        return self.counts.get((transport, outcome), 0)


def plan(minutes, rate, new_aets_per_minute, count, seed):
    """The events, each (time offset in s, kind, file indices, calling AET): C-STORE associations of
    1 to 10 instances (an instance every 1/rate s), HTTP instances on a keep-alive client or a client
    of their own, duplicates by both, a cut upload now and then."""
    rng = random.Random(seed)
    events, aets, next_file, t, new_aets = [], ["SOAK00000"], 0, 0.0, 1
    end = minutes * 60.0
    while t < end:
        draw = rng.random()
        if rng.random() < new_aets_per_minute / 60.0 / rate * 2:  # a new calling AET now and then
            aets.append("SOAK%05d" % new_aets)
            new_aets += 1
        aet = rng.choice(aets[-8:])
        if draw < 0.06 and next_file > 0:
            kind = rng.choice(["dicom", "http"])
            events.append((t, kind + "-duplicate", [rng.randrange(next_file)], aet))
            t += 1 / rate
            continue
        if draw < 0.07:
            events.append((t, "http-cut", [rng.randrange(max(1, next_file))], aet))
            t += 1 / rate
            continue
        if draw < 0.55:
            size = rng.choice([1, 1, 2, 5, 10])
            kind = "dicom"
        else:
            size = 1
            kind = "http-keepalive" if rng.random() < 0.7 else "http-closing"
        files = list(range(next_file, min(count, next_file + size)))
        next_file += len(files)
        if not files:
            break
        events.append((t, kind, files, aet))
        t += len(files) / rate
    return events, new_aets


class Side:
    def __init__(self, name, orthanc):
        self.name, self.orthanc, self.meter = name, orthanc, CpuMeter(orthanc)
        self.session = KeepAliveSession()
        self.truth = Truth()

    def send(self, kind, indexes, aet, files, cut_bodies):
        transport = "dicom" if kind.startswith("dicom") else "rest"
        if kind == "http-cut":
            http_upload(self.orthanc.url, [cut_bodies[indexes[0]]], session=self.session, expect=(400,), timeout=60)
            self.truth.count("rest", "failed")
            return
        paths = [files[i] for i in indexes]
        if transport == "dicom":
            storescu(self.orthanc.dicom_port, paths, calling_aet=aet, called_aet=self.orthanc.aet)
        elif kind == "http-closing":
            http_upload(self.orthanc.url, paths, timeout=60)
        else:
            http_upload(self.orthanc.url, paths, session=self.session, timeout=60)
        for i in indexes:
            self.truth.sent(transport, i)


def counts_of(stats):
    result = {}
    for transport in ("rest", "dicom"):
        instances = stats["transports"][transport]["instances"]
        for outcome in ("stored", "alreadyStored", "failed"):
            result[(transport, outcome)] = instances.get(outcome, 0)
    return result


def compare(side, settle=20.0):
    """B's since-reset counts against the truth, once B has recorded everything (within `settle` s)."""
    expected = {key: side.truth.get(*key) for key in counts_of(side.orthanc.stats())}
    deadline = time.monotonic() + settle
    while True:
        got = counts_of(side.orthanc.stats())
        if got == expected or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    result = {"matched": got == expected, "comparisons": len(expected),
              "differences": {"%s.%s" % key: [got[key], expected[key]] for key in expected if got[key] != expected[key]}}
    if got != expected:  # what B said instead, every transport
        stats = side.orthanc.stats()
        result["instances"] = {t: stats["transports"][t]["instances"] for t in stats["transports"]}
        result["hooks"] = stats["hooks"]
    return result


def memory(a, b, c):
    base = rss_kib(orthanc_pid(a.orthanc))
    return {"B-A MiB": round((rss_kib(orthanc_pid(b.orthanc)) - base) / 1024, 1),
            "C-A MiB": round((rss_kib(orthanc_pid(c.orthanc)) - base) / 1024, 1)}


def threads_and_descriptors(side):
    pid = orthanc_pid(side.orthanc)
    return {"threads": len(os.listdir("/proc/%d/task" % pid)), "descriptors": len(os.listdir("/proc/%d/fd" % pid))}


def named_share(b, recent_aets, **window):
    groups = b.orthanc.stats(transport="dicom", groupBy="remoteAet", **window)["groups"]
    named = {g["labels"]["remoteAet"] for g in groups}
    return sum(1 for aet in recent_aets if aet in named) / max(1, len(recent_aets))


def run(args, files, root):
    events, distinct_aets = plan(args.minutes, args.rate, args.new_aets_per_minute, len(files), args.seed)
    cut_bodies = [body[:len(body) // 2] for body in read_files(files)]
    sides = []
    try:
        tables = {"MaxLabelValues": args.max_label_values} if args.max_label_values else None
        hooks_only = [("H", args.hooks_only)] if args.hooks_only else []
        for name, plugin in [("A", None), ("B", args.plugin), ("C", None)] + hooks_only:
            sides.append(Side(name, start_orthanc(root, name.lower(), plugin, args.orthanc,
                                                  ingest_perf=tables if name == "B" else None)))
        a, b, c = sides[:3]
        result = {"events": len(events), "distinctAets": distinct_aets, "segments": []}
        for side in sides:  # warm-up, then an empty start
            storescu(side.orthanc.dicom_port, files[:2], calling_aet="WARM", called_aet=side.orthanc.aet)
            side.orthanc.delete_all()
        time.sleep(3)
        b.orthanc.reset_stats()
        result["memoryAtStart"] = memory(a, b, c)
        result["bAtStart"] = threads_and_descriptors(b)
        result["aAtStart"] = threads_and_descriptors(a)
        began = time.monotonic()
        next_read, next_delete, reset_done = 30.0, args.delete_every * 60.0, False
        segment, segment_cpu = 0, {s.name: 0 for s in sides}
        last_cpu = {s.name: 0 for s in sides}
        recent_aets, reset_offset = [], 0.0
        for s in sides:
            s.meter.start()
        for number, (offset, kind, indexes, aet) in enumerate(events):
            pause = began + offset - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            order = sides[number % len(sides):] + sides[:number % len(sides)]
            for side in order:
                side.send(kind, indexes, aet, files, cut_bodies)
            if kind.startswith("dicom"):
                recent_aets.append((offset, aet))
            elapsed = time.monotonic() - began
            pauses = []
            if elapsed >= next_read:
                pauses.append("read")
                next_read += 30.0
            if elapsed >= next_delete:
                pauses.append("delete")
                next_delete += args.delete_every * 60.0
            if not reset_done and offset >= args.minutes * 30.0:
                pauses.append("reset")
                reset_done = True
            if pauses:
                for s in sides:
                    s.meter.stop()
                if "reset" in pauses:
                    result["beforeReset"] = compare(b)
                    result["memoryAtReset"] = memory(a, b, c)
                    result["bAtReset"] = threads_and_descriptors(b)
                    b.orthanc.reset_stats()
                    b.truth.reset()
                    result["resetAfterEvent"] = number
                    reset_offset = offset
                if "read" in pauses:
                    for route in ROUTES:
                        b.orthanc._check(b.orthanc.get(route))
                if "delete" in pauses:
                    for s in sides:
                        s.orthanc.delete_all()
                        s.truth.present.clear()
                for s in sides:
                    s.meter.start()
            tenth = min(9, int(offset * 10 / (args.minutes * 60.0)))
            if tenth != segment or number == len(events) - 1:
                for s in sides:
                    s.meter.stop()
                    s.meter.start()
                cpu = {s.name: s.meter.ns - last_cpu[s.name] for s in sides}
                last_cpu = {s.name: s.meter.ns for s in sides}
                result["segments"].append({s.name + "/A": round(cpu[s.name] / cpu["A"], 3) for s in sides[1:]})
                segment = tenth
        time.sleep(args.settle)
        for s in sides:
            s.meter.stop()
        cpu = {s.name: s.meter.ns for s in sides}
        stored = sum(b.truth.get(t, "stored") + b.truth.get(t, "alreadyStored") for t in ("rest", "dicom"))
        per_instance = max(1, stored * 2)
        result["cpu"] = {s.name + "/A": round(cpu[s.name] / cpu["A"], 4) for s in sides[1:]}
        result["cpu"].update({"A ms per instance": round(cpu["A"] / 1e6 / per_instance, 3),
                              "B-A us per instance": round((cpu["B"] - cpu["A"]) / 1e3 / per_instance, 1)})
        if "H" in cpu:
            result["cpu"].update({"H-A us per instance": round((cpu["H"] - cpu["A"]) / 1e3 / per_instance, 1),
                                  "B-H us per instance": round((cpu["B"] - cpu["H"]) / 1e3 / per_instance, 1)})
        result["atEnd"] = compare(b)
        since = max(reset_offset, args.minutes * 60.0 - 60)  # (the groups count since the reset)
        last_minute = {aet for offset, aet in recent_aets if offset > since}
        result["lastMinuteAetsNamed"] = round(named_share(b, last_minute), 3)
        # The same senders in the window of the last 5 minutes (the ring of recent instances): named as
        # when their instances were recorded, whatever aged out since.
        result["lastMinuteAetsNamedInWindow"] = round(named_share(b, last_minute, window="5m"), 3)
        stats = b.orthanc.stats()
        result["pluginCost"] = {k: stats["pluginCost"].get(k) for k in (
            "microsecondsPerStoredInstance", "callbacksMicrosecondsPerStoredInstance",
            "threadsMicrosecondsPerStoredInstance")}
        result["labels"] = {"agedOut": stats["labels"]["agedOut"], "streams": stats["labels"]["streams"]}
        result["associations"] = sum(r["finished"] + r["inProgress"] for r in stats["associations"]["byRemoteAet"])
        result["associationsSent"] = sum(1 for n, (_, kind, _, _) in enumerate(events)
                                         if kind.startswith("dicom") and n > result["resetAfterEvent"])
        if result["associations"] != result["associationsSent"]:
            # Which rows differ from what was sent under their calling AET (all of them for the
            # "(other)" and "(aged out)" rows), for whoever looks into it.
            sent = collections.Counter(aet for n, (_, kind, _, aet) in enumerate(events)
                                       if kind.startswith("dicom") and n > result["resetAfterEvent"])
            result["associationRowsDiffering"] = [
                dict(row, sent=sent.get(row["remoteAet"])) for row in stats["associations"]["byRemoteAet"]
                if row["finished"] + row["inProgress"] != sent.get(row["remoteAet"])]
            for row in result["associationRowsDiffering"]:
                for key in ("instancesPerAssociation", "durationMs", "gap"):
                    row.pop(key, None)
        result["memoryAtEnd"] = memory(a, b, c)
        result["bAtEnd"] = threads_and_descriptors(b)
        result["aAtEnd"] = threads_and_descriptors(a)
        return result
    finally:
        for s in sides:
            s.session.close()
        stop_together([s.orthanc for s in sides], remove_work_dirs=True)


def render(result):
    cpu = result["cpu"]
    ratios = [s["B/A"] for s in result["segments"]]
    nulls = [s["C/A"] for s in result["segments"]]
    lines = [
        "soak: %s minutes, %d events, %d calling AETs, Orthanc %s, %s" % (
            result["minutes"], result["events"], result["distinctAets"], result["orthanc"], result["namespace"]),
        "CPU B/A %.4f (per tenth %.3f-%.3f), null C/A %.4f (%.3f-%.3f); A %.3f ms per instance, B-A %+.1f us" % (
            cpu["B/A"], min(ratios), max(ratios), cpu["C/A"], min(nulls), max(nulls), cpu["A ms per instance"],
            cpu["B-A us per instance"]),
    ]
    if "H/A" in cpu:
        hooks = [s["H/A"] for s in result["segments"]]
        lines.append("the hooks alone H/A %.4f (per tenth %.3f-%.3f), H-A %+.1f us: what Orthanc spends calling them; "
                     "the plugin's own work B-H %+.1f us per instance" % (
                         cpu["H/A"], min(hooks), max(hooks), cpu["H-A us per instance"], cpu["B-H us per instance"]))
    lines += [
        "pluginCost: %s" % result["pluginCost"],
        "memory B-A / C-A MiB: start %s, at reset %s, end %s" % (
            result["memoryAtStart"], result.get("memoryAtReset"), result["memoryAtEnd"]),
        "threads/descriptors: B start %s, at reset %s, end %s; A start %s, end %s" % (
            result["bAtStart"], result.get("bAtReset"), result["bAtEnd"], result["aAtStart"], result["aAtEnd"]),
        "counts against the truth: before the reset %s, at the end %s" % (result.get("beforeReset"), result["atEnd"]),
        "associations since the reset: B %d, sent %d%s" % (
            result["associations"], result["associationsSent"],
            "; rows differing: %s" % result["associationRowsDiffering"] if "associationRowsDiffering" in result else ""),
        "calling AETs of the last minute named: %.0f%% since the reset, %.0f%% in the window of 5 minutes; labels %s" % (
            100 * result["lastMinuteAetsNamed"], 100 * result["lastMinuteAetsNamedInWindow"], result["labels"]),
    ]
    null_off = abs(cpu["C/A"] - 1)
    if null_off > TARGET_RATIO - 1:
        lines.append("target B/A <= %.2f: cannot say (the null comparison is off by %.3f)" % (TARGET_RATIO, null_off))
    else:
        lines.append("target B/A <= %.2f: %s%s" % (TARGET_RATIO, "met" if cpu["B/A"] <= TARGET_RATIO else "NOT met",
                                                  "; the hooks alone: H/A %.3f" % cpu["H/A"] if "H/A" in cpu else ""))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", default=default_plugin_path())
    parser.add_argument("--orthanc", default=HOST_ORTHANC)
    parser.add_argument("--minutes", type=float, default=12.0)
    parser.add_argument("--rate", type=float, default=3.75, help="instances per second to each Orthanc")
    parser.add_argument("--new-aets-per-minute", type=float, default=20.0)
    parser.add_argument("--delete-every", type=float, default=4.0, help="minutes between deletions of everything")
    parser.add_argument("--other-sockets", type=int, default=2000)
    parser.add_argument("--size", type=int, default=64, help="rows and columns of the synthetic slices")
    parser.add_argument("--settle", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-label-values", type=int, help="B's MaxLabelValues (default: the plugin's, 32)")
    parser.add_argument("--hooks-only", help="the plugin of side H (its hooks returning at once; default: %s beside "
                        "the plugin, or in the build folder); '' for no side H" % HOOKS_ONLY)
    parser.add_argument("--json")
    args = parser.parse_args()
    args.plugin = os.path.abspath(args.plugin)
    if args.hooks_only is None:
        beside = [os.path.join(os.path.dirname(path), HOOKS_ONLY) for path in (args.plugin, default_plugin_path())]
        args.hooks_only = next((path for path in beside if os.path.isfile(path)), beside[0])
    if args.hooks_only and not os.path.isfile(args.hooks_only):
        log("no side H: %s is missing (built with the plugin's tests)" % args.hooks_only)
        args.hooks_only = ""
    args.hooks_only = os.path.abspath(args.hooks_only) if args.hooks_only else ""
    reexecute_in_own_network_namespace(["-m", __spec__.name] + sys.argv[1:])
    namespace = "own network namespace" if in_own_network_namespace() else "host's network namespace"
    root = tempfile.mkdtemp(prefix="soak-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    count = int(args.minutes * 60 * args.rate) + 10
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, root, True)
        files = []
        for series in range(0, count, SERIES_SIZE):
            files += write_series(os.path.join(root, "series%d" % series), min(SERIES_SIZE, count - series),
                                  seed=1000 + series, rows=args.size, columns=args.size)
        with OtherSockets(args.other_sockets):
            result = run(args, files, root)
    result.update({"minutes": args.minutes, "orthanc": args.orthanc, "namespace": namespace,
                   "command": "python -m ingest_perf.benchmarks.soak " + " ".join(sys.argv[1:])})
    if args.json:
        with open(args.json, "w") as stream:
            json.dump(result, stream, indent=1)
    print(render(result))


if __name__ == "__main__":
    main()
