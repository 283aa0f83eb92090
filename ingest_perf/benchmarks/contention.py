"""Contention (issue 32, point 5): many C-STORE associations at once, and keep-alive HTTP clients at
the same time, into Orthanc without the plugin (A) and with it at its defaults (B), side by side and
alternating, next to a null comparison (A', a second Orthanc without the plugin). The command of
docs/measurements/plugin-cost.md ("Contention: many associations at once"):

  .venv/bin/python -m ingest_perf.benchmarks.contention [--levels 8,32,64] [--rounds 18] [--instances 20]
      [--http-clients 4] [--orthanc 1.10.1|1.12.7|1.13.0] [--plugin PATH] [--size 64] [--quick] [--json FILE]

A level is a number of storescu associations at once (DCMTK's /usr/bin/storescu, one process and one
calling AET each, SCU00, SCU01...), each sending --instances small synthetic CT slices, while
--http-clients keep-alive clients POST /instances as many each. A round feeds A, B and A' (each on
its own free loopback ports, storage in /dev/shm, DicomThreadsCount raised to the highest level)
the same instances level by level, one Orthanc after the other, --pause s apart, in an order that
alternates from round to round (ABA', A'BA, then BA'A, AA'B, ...: over two rounds, each of B and A'
comes before A once and after it once; over six, each side takes each place twice). Every
--restart-every rounds (2) the three are fresh processes (two processes of the same Orthanc differ
by a few percent for as long as they live); within their life each round and level has a series of
its own, so nothing is a duplicate. The clients are processes started once
(ingest_perf.benchmarks.workloads.ClientPool); storescu itself starts inside the measurement, as a
modality's would. The plugin is copied once at the start: a newer build may replace the file.

Per level:
- throughput, client side: instances stored over the wall time of a side's round (from the release
  of every client to the end of the last); with over without, summed over the rounds with a 95%
  interval (rounds resampled), and the rounds' median and range, beside the null's (A' over A);
- B's /perf/stats after each level (reset before it): pluginCost.insideHooksPerInstanceMs (the
  wall time each stored instance spent inside the plugin's callbacks, on Orthanc's threads: p50,
  p99, max), microsecondsPerStoredInstance (CPU: the callbacks, one call in 17 timed and scaled, and
  the plugin's thread) and each callback's share;
- the CPU time of each whole Orthanc process per instance (ingest_perf.benchmarks.process_cpu's
  clock), from the level's start to its end (a few seconds after B's last instance: the plugin's
  thread ticks 4 s after ingest);
- what the machine sustained: associations or HTTP clients that failed (refused, timed out:
  storescu -to 30 -ta 30 -td 60), the peak of connections open at once on the DICOM port and of
  storescu processes, and the kernel's listen-queue overflows.

Targets (issue 32): with / without >= 0.99 at every level ("met" only when the 95% interval is above
0.99); insideHooksPerInstanceMs p50 <= 0.010 ms and p99 <= 0.050 ms ("met" only when every round is).

TCP_NODELAY=1 is set for Orthanc and storescu (--nagle: not), so that each association is not
held at 40 ms per instance by Nagle's algorithm and Orthanc, not the clients' wait, sets the pace.
As root it runs itself again in a network namespace of its own (`unshare -n`), as process_cpu does:
the listen-queue counters are then its own; and at nice -10 (--nice), with the Orthancs and clients
it starts, as the tests that judge how fast Orthanc is do (IntegrationTests/conftest.py,
AHEAD_OF_OTHER_WORK): on 2 cores shared with other work, the sides' rounds are then less at the
mercy of what else runs between them. --quick: 6 rounds of 5 instances per client (2-3 min).
"""
import argparse
import contextlib
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from ingest_perf.benchmarks import workloads
from ingest_perf.benchmarks.process_cpu import (in_own_network_namespace, orthanc_pid, process_cpu_ns,
                                                ratio_with_interval, reexecute_in_own_network_namespace,
                                                start_orthanc)
from ingest_perf.benchmarks.report import table as markdown_table
from ingest_perf.generate_series import SeriesCache
from ingest_perf.orthanc_process import HOST_ORTHANC, REPO_ROOT, default_plugin_path, stop_together

TARGET_RATIO = 0.99
TARGET_P50_MS = 0.010
TARGET_P99_MS = 0.050
STORESCU_OPTIONS = ("-to", "30", "-ta", "30", "-td", "60")
# One order per round and level: over rounds 2k and 2k+1 of a level, B and A' each come once before
# and once after A; over six, each side takes each place twice. "N" is A', the null comparison.
ORDERS = ("ABN", "NBA", "BNA", "ANB", "NAB", "BAN")
NAMES = {"A": "A (without)", "B": "B (with the plugin)", "N": "A' (without, null)"}


def log(message):
    print(message, file=sys.stderr, flush=True)


# --- what the machine sustains ---------------------------------------------------------------------

def listen_counters():
    """{"ListenOverflows", "ListenDrops"} of this network namespace (/proc/net/netstat, TcpExt)."""
    counters = {"ListenOverflows": 0, "ListenDrops": 0}
    try:
        with open("/proc/net/netstat") as stream:
            lines = stream.read().splitlines()
    except OSError:
        return counters
    for head, values in zip(lines[::2], lines[1::2]):
        if head.startswith("TcpExt:"):
            named = dict(zip(head.split()[1:], values.split()[1:]))
            for key in counters:
                counters[key] = int(named.get(key, 0))
    return counters


def established_on_port(port):
    """Connections ESTABLISHED whose local port is `port` (the server's ends), IPv4 and IPv6; each
    counted once (a reading of /proc/net/tcp may list a socket twice while the table changes)."""
    suffix = ":%04X" % port
    connections = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as stream:
                next(stream)
                for line in stream:
                    fields = line.split(None, 4)
                    if fields[3] == "01" and fields[1].endswith(suffix):
                        connections.add((fields[1], fields[2]))
        except (OSError, StopIteration):
            pass
    return len(connections)


def children_running(pids):
    """How many of the processes `pids` have a child right now (a pooled storescu client: its storescu)."""
    count = 0
    for pid in pids:
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as stream:
                count += bool(stream.read().strip())
        except OSError:
            pass
    return count


class Sampler:
    """While a side's round runs, every `interval` s: the connections open on its DICOM port and the
    storescu processes running (the peak of each)."""

    def __init__(self, port, client_pids, interval=0.2):
        self.port = port
        self.client_pids = client_pids
        self.interval = interval
        self.peak_connections = 0
        self.peak_storescu = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.wait(self.interval):
            self.peak_connections = max(self.peak_connections, established_on_port(self.port))
            self.peak_storescu = max(self.peak_storescu, children_running(self.client_pids))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join(timeout=5)


def raise_open_files_limit(wanted):
    """The soft RLIMIT_NOFILE raised to `wanted` if the hard limit allows (Orthanc inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, wanted), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


# --- one side, one level, one round --------------------------------------------------------------------

def instance_count(orthanc):
    return orthanc._check(orthanc.get("/statistics")).json()["CountInstances"]


def send(orthanc, pools, dicom_files, http_files, associations):
    """The level's clients into one Orthanc, released together: {"seconds": from the release to the
    end of the last client, the errors, each client's seconds, the peaks sampled}."""
    target = {"aet": orthanc.aet, "port": orthanc.dicom_port, "url": orthanc.url, "options": STORESCU_OPTIONS}
    before = listen_counters()
    with Sampler(orthanc.dicom_port, pools["dicom"].pids) as sampler:
        begin = time.perf_counter()
        pools["dicom"].start(target, dicom_files, clients=associations)
        if http_files:
            pools["http"].start(target, http_files)
        _, dicom = pools["dicom"].wait()
        http = pools["http"].wait()[1] if http_files else []
        seconds = time.perf_counter() - begin
    after = listen_counters()
    return {"seconds": seconds, "associations": len(dicom), "httpClients": len(http),
            "dicomErrors": [error for _, error, _ in dicom if error],
            "httpErrors": [error for _, error, _ in http if error],
            "associationSeconds": [s for _, _, s in dicom], "httpClientSeconds": [s for _, _, s in http],
            "peakConnections": sampler.peak_connections, "peakStorescu": sampler.peak_storescu,
            "listenOverflows": after["ListenOverflows"] - before["ListenOverflows"],
            "listenDrops": after["ListenDrops"] - before["ListenDrops"]}


def plugin_figures(cost):
    """What B's pluginCost says of one level (reset before it)."""
    stored = cost.get("storedInstances") or 0
    period = cost.get("samplingPeriod") or 17
    inside = cost.get("insideHooksPerInstanceMs")
    callbacks, medians = {}, {}
    for name, histogram in (cost.get("callbacks") or {}).items():
        if histogram.get("count") and stored:  # the timed calls' sum, times the sampling period
            callbacks[name] = histogram["sum"] * period * 1000.0 / stored
            medians[name] = histogram["p50"] * 1000.0
    return {"storedInstances": stored,
            "inside": None if inside is None else {k: inside.get(k) for k in ("count", "mean", "p50", "p90", "p99",
                                                                               "max")},
            "microsecondsPerStoredInstance": cost.get("microsecondsPerStoredInstance"),
            "callbacksMicroseconds": cost.get("callbacksMicrosecondsPerStoredInstance"),
            "threadMicroseconds": cost.get("threadsMicrosecondsPerStoredInstance"),
            "callbackMicrosecondsPerInstance": callbacks, "callbackMedianMicroseconds": medians}


def run_level(orthancs, pids, order, files, associations, instances, pools, settle, pause):
    """One level of one round: each Orthanc in `order` gets the same files, `pause` s apart (the last
    one's tail, its change thread and the clients' exits, out of the next one's round); B's stats
    are reset before and read after; each process's CPU time from the level's start to `settle` s
    after B's round (and at least 1 s after the last round)."""
    dicom_files, http_files = files[:associations * instances], files[associations * instances:]
    before = {side: instance_count(o) for side, o in orthancs.items()}
    if "B" in orthancs:
        orthancs["B"].reset_stats()
    cpu = {side: process_cpu_ns(pid) for side, pid in pids.items()}
    results, ended = {}, {}
    for position, side in enumerate(order):
        if position:
            time.sleep(pause)
        results[side] = send(orthancs[side], pools, dicom_files, http_files, associations)
        ended[side] = time.monotonic()
    until = max(ended[order[-1]] + 1.0, ended.get("B", 0.0) + settle)
    time.sleep(max(0.0, until - time.monotonic()))
    for side, pid in pids.items():
        results[side]["cpuNs"] = process_cpu_ns(pid) - cpu[side]
    for side, o in orthancs.items():
        results[side]["stored"] = instance_count(o) - before[side]
        results[side]["sent"] = len(files)
    if "B" in orthancs:
        results["B"]["plugin"] = plugin_figures(orthancs["B"].stats()["pluginCost"])
    return results


def run_orthancs(first, args, plugin, root, levels, series, warm, pools, sides, config, env):
    """Rounds first .. first + --restart-every - 1 into a fresh A, B (and A'), stopped together after.
    Each round has a series of its own per level: nothing is a duplicate."""
    orders = ["".join(c for c in o if c in sides) for o in ORDERS]
    orthancs = {}
    try:
        for side in orders[(first // args.restart_every) % len(orders)]:  # which one starts first alternates
            orthancs[side] = start_orthanc(root, side.lower(), plugin if side == "B" else None, args.orthanc,
                                           extra_config=config, env=env)
        pids = {side: orthanc_pid(o) for side, o in orthancs.items()}
        for side, o in orthancs.items():  # the first requests of a process are slower (SQLite, caches)
            outcome = send(o, pools, warm["dicom"], warm["http"], min(levels))
            if outcome["dicomErrors"] or outcome["httpErrors"]:
                raise RuntimeError("the warm-up of %s failed: %s" % (
                    NAMES[side], (outcome["dicomErrors"] + outcome["httpErrors"])[0]))
        time.sleep(1.0)
        rounds = []
        for index in range(first, min(first + args.restart_every, args.rounds)):
            result = {}
            for level_index, level in enumerate(levels):
                order = orders[(index + 2 * level_index) % len(orders)]
                result[level] = run_level(orthancs, pids, order, series[(level, index % args.restart_every)],
                                          level, args.instances, pools, args.settle, args.pause)
                result[level]["order"] = order
                log_level(index, level, order, result[level])
            rounds.append(result)
        return rounds
    finally:
        stop_together(list(orthancs.values()), remove_work_dirs=True)


def log_level(index, level, order, result):
    parts = []
    for side in order:
        r = result[side]
        failed = len(r["dicomErrors"]) + len(r["httpErrors"])
        parts.append("%s %.1f/s%s" % (side.replace("N", "A'"), r["stored"] / r["seconds"] if r["seconds"] else 0,
                                      " (%d failed)" % failed if failed else ""))
    text = "round %d, %d associations: %s" % (index + 1, level, ", ".join(parts))
    if "A" in result and "B" in result and result["A"]["stored"] and result["B"]["stored"]:
        ratio = (result["B"]["stored"] / result["B"]["seconds"]) / (result["A"]["stored"] / result["A"]["seconds"])
        text += "; B/A %.3f" % ratio
    plugin = result.get("B", {}).get("plugin")
    if plugin and plugin["inside"]:
        text += "; inside hooks p50 %s p99 %s max %s ms" % (plugin["inside"]["p50"], plugin["inside"]["p99"],
                                                           plugin["inside"]["max"])
    peaks = max(result[s]["peakConnections"] for s in order)
    text += "; peak %d connections, %d storescu" % (peaks, max(result[s]["peakStorescu"] for s in order))
    log(text)


# --- the figures ---------------------------------------------------------------------------------------

def spread(values):
    """(median, min, max) of the values that are not None, or None."""
    values = [v for v in values if v is not None]
    return (statistics.median(values), min(values), max(values)) if values else None


def comparison(levels_results, over, under, key):
    """`key` per instance ("seconds": the throughput's inverse; "cpuNs") of `under` over `over` (for a
    throughput, the ratio of `over` to `under`), or of `over` over `under` for CPU: summed over the
    rounds with its 95% interval (the rounds resampled), and per round."""
    pairs = [(r[over][key] / r[over]["stored"], r[under][key] / r[under]["stored"])
             for r in levels_results if r[over]["stored"] and r[under]["stored"]]
    if not pairs:
        return None
    if key != "seconds":  # CPU: over / under
        pairs = [(u, o) for o, u in pairs]
    ratio, low, high = ratio_with_interval(pairs)
    rounds = [u / o for o, u in pairs]
    return {"ratio": ratio, "low": low, "high": high, "rounds": rounds, "spread": spread(rounds)}


def throughput_verdict(figures, null, sustained):
    """"met" only when the 95% interval is at or above the target and not wholly above 1 (the plugin
    cannot make Orthanc faster: such an interval measures noise, not the plugin); "missed" only when it
    is below the target and below the null's interval too."""
    if figures is None:
        return "no figure"
    if not sustained:
        return "not sustained (clients failed)"
    if figures["low"] > 1:
        return "not resolved (above 1: noise, the plugin cannot speed Orthanc up)"
    if figures["low"] >= TARGET_RATIO:
        return "met"
    if figures["high"] < TARGET_RATIO:
        if null is not None and null["low"] <= figures["high"]:
            return "not resolved (below %.2f, but the null's interval reaches as low)" % TARGET_RATIO
        return "missed"
    return "not resolved (interval spans %.2f)" % TARGET_RATIO


def percentile_verdict(values, target):
    values = [v for v in values if v is not None]
    if not values:
        return "no figure"
    above = sum(v > target for v in values)
    if above == 0:
        return "met"
    if above == len(values):
        return "missed"
    return "missed in %d of %d rounds" % (above, len(values))


def summarize(level, rounds, sides):
    runs = [r[level] for r in rounds]
    row = {"associations": level, "rounds": len(runs)}
    for side in sides:
        stored = sum(r[side]["stored"] for r in runs)
        seconds = sum(r[side]["seconds"] for r in runs)
        row[side] = {"stored": stored, "sent": sum(r[side]["sent"] for r in runs), "seconds": seconds,
                     "instancesPerSecond": stored / seconds if seconds else None,
                     "roundRates": [r[side]["stored"] / r[side]["seconds"] for r in runs],
                     "cpuMsPerInstance": sum(r[side]["cpuNs"] for r in runs) / 1e6 / stored if stored else None,
                     "failedAssociations": sum(len(r[side]["dicomErrors"]) for r in runs),
                     "failedHttpClients": sum(len(r[side]["httpErrors"]) for r in runs),
                     "errors": [e for r in runs for e in r[side]["dicomErrors"] + r[side]["httpErrors"]][:3],
                     "peakConnections": max(r[side]["peakConnections"] for r in runs),
                     "peakStorescu": max(r[side]["peakStorescu"] for r in runs),
                     "listenOverflows": sum(r[side]["listenOverflows"] for r in runs),
                     "associationSeconds": spread([s for r in runs for s in r[side]["associationSeconds"]])}
    row["instancesPerSidePerRound"] = runs[0]["A"]["sent"]
    row["sustained"] = all(row[s]["failedAssociations"] == 0 and row[s]["failedHttpClients"] == 0
                           and row[s]["stored"] == row[s]["sent"] for s in sides)
    row["withWithout"] = comparison(runs, "B", "A", "seconds")
    row["null"] = comparison(runs, "N", "A", "seconds") if "N" in sides else None
    row["throughputVerdict"] = throughput_verdict(row["withWithout"], row["null"], row["sustained"])
    row["cpuWithWithout"] = comparison(runs, "B", "A", "cpuNs")
    row["cpuNull"] = comparison(runs, "N", "A", "cpuNs") if "N" in sides else None
    plugin = [r["B"]["plugin"] for r in runs]
    inside = [p["inside"] for p in plugin if p["inside"]]
    row["plugin"] = {
        "histogramCounts": [i["count"] for i in inside],
        "storedInstances": [p["storedInstances"] for p in plugin],
        "p50": spread([i["p50"] for i in inside]), "p99": spread([i["p99"] for i in inside]),
        "max": spread([i["max"] for i in inside]),
        "p50Verdict": percentile_verdict([i["p50"] for i in inside], TARGET_P50_MS),
        "p99Verdict": percentile_verdict([i["p99"] for i in inside], TARGET_P99_MS),
        "microseconds": spread([p["microsecondsPerStoredInstance"] for p in plugin]),
        "callbacksMicroseconds": spread([p["callbacksMicroseconds"] for p in plugin]),
        "threadMicroseconds": spread([p["threadMicroseconds"] for p in plugin]),
        "callbackMicrosecondsPerInstance": {
            name: statistics.median(p["callbackMicrosecondsPerInstance"].get(name, 0.0) for p in plugin)
            for name in sorted({n for p in plugin for n in p["callbackMicrosecondsPerInstance"]})},
        "callbackMedianMicroseconds": {  # the median over the rounds of each round's p50 of the timed calls
            name: statistics.median(p["callbackMedianMicroseconds"][name] for p in plugin
                                    if name in p.get("callbackMedianMicroseconds", {}))
            for name in sorted({n for p in plugin for n in p.get("callbackMedianMicroseconds", {})})},
    }
    return row


# --- the tables ----------------------------------------------------------------------------------------

def _spread_text(values, digits=3):
    if values is None:
        return "-"
    form = "%." + str(digits) + "f"
    return (form + " (" + form + " .. " + form + ")") % values


def _comparison_text(figures):
    if figures is None:
        return "-", "-"
    return ("%.3f [%.3f .. %.3f]" % (figures["ratio"], figures["low"], figures["high"]),
            _spread_text(figures["spread"]))


def _counts_text(counts, stored):
    """The histogram's count per round, and whether it holds every instance B stored."""
    if not counts:
        return "-"
    text = ("%d in each round" % counts[0]) if len(set(counts)) == 1 else " ".join(str(c) for c in counts)
    return text + ("" if counts == stored else " (B stored %s)" % " ".join(str(s) for s in stored))


def render(result):
    rows = result["rows"]
    http = result["httpClients"]
    level_names = {row["associations"]: "%d + %d HTTP" % (row["associations"], http) if http
                   else str(row["associations"]) for row in rows}
    throughput = []
    for row in rows:
        overall, rounds = _comparison_text(row["withWithout"])
        null_overall, null_rounds = _comparison_text(row["null"])
        failures = sum(row[s]["failedAssociations"] + row[s]["failedHttpClients"] for s in result["sides"])
        throughput.append([
            level_names[row["associations"]], str(row["instancesPerSidePerRound"]), str(row["rounds"]),
            "%.1f / %.1f" % (row["A"]["instancesPerSecond"], row["B"]["instancesPerSecond"]), overall, rounds,
            null_overall, null_rounds,
            "**met**" if row["throughputVerdict"] == "met" else row["throughputVerdict"],
            "%.2f / %.2f" % (row["A"]["cpuMsPerInstance"], row["B"]["cpuMsPerInstance"]),
            _comparison_text(row["cpuWithWithout"])[0], _comparison_text(row["cpuNull"])[0],
            "%d / %d" % (max(row[s]["peakConnections"] for s in result["sides"]),
                         max(row[s]["peakStorescu"] for s in result["sides"])),
            " / ".join(str(row[s]["listenOverflows"]) for s in result["sides"]),
            "%d" % failures])
    plugin = []
    for row in rows:
        p = row["plugin"]
        plugin.append([
            level_names[row["associations"]], _counts_text(p["histogramCounts"], p["storedInstances"]),
            _spread_text(p["p50"], 4), _spread_text(p["p99"], 4), _spread_text(p["max"], 3),
            "**met**" if p["p50Verdict"] == "met" else p["p50Verdict"],
            "**met**" if p["p99Verdict"] == "met" else p["p99Verdict"],
            "%s (%s + %s)" % (_spread_text(p["microseconds"], 1),
                              "-" if p["callbacksMicroseconds"] is None else "%.1f" % p["callbacksMicroseconds"][0],
                              "-" if p["threadMicroseconds"] is None else "%.1f" % p["threadMicroseconds"][0])])
    names = sorted({n for row in rows for n in row["plugin"]["callbackMicrosecondsPerInstance"]})
    callbacks = []
    for row in rows:
        p = row["plugin"]
        callbacks.append([level_names[row["associations"]]] +
                         ["%.2f (%s)" % (p["callbackMicrosecondsPerInstance"].get(n, 0.0),
                                         "%.1f" % p["callbackMedianMicroseconds"][n]
                                         if n in p["callbackMedianMicroseconds"] else "-") for n in names] +
                         ["-" if p["threadMicroseconds"] is None else "%.2f" % p["threadMicroseconds"][0]])
    lines = [markdown_table(
        ["associations + HTTP clients", "instances per side and round", "rounds", "A / B inst/s",
         "throughput with / without: all rounds [95% interval]", "rounds: median (min .. max)",
         "null A' / A [95% interval]", "null rounds: median (min .. max)", "target >= %.2f" % TARGET_RATIO,
         "Orthanc CPU ms/instance A / B", "CPU B / A [95% interval]", "null CPU A' / A",
         "peak connections / storescu at once", "listen-queue overflows %s" % " / ".join(
             {"A": "A", "B": "B", "N": "A'"}[s] for s in result["sides"]), "failed clients"],
        throughput), "",
        markdown_table(
            ["associations + HTTP clients", "instances in the histogram",
             "inside the hooks p50 ms: median (min .. max)", "p99 ms", "max ms",
             "p50 <= %.3f ms" % TARGET_P50_MS, "p99 <= %.3f ms" % TARGET_P99_MS,
             "pluginCost us/instance (callbacks + thread, medians)"], plugin), "",
        markdown_table(["associations + HTTP clients"] + ["%s us (a call's p50)" % n for n in names] + ["thread us"],
                       callbacks),
        ""]
    sustained = [row["associations"] for row in rows if row["sustained"]]
    refused = [row for row in rows if not row["sustained"]]
    lines.append("Highest level sustained (no client failed, every instance stored, in every round and "
                 "Orthanc): %s of %s." % (("%d associations" % max(sustained)) if sustained else "none",
                                          ", ".join(str(r["associations"]) for r in rows)))
    for row in refused:
        for side in result["sides"]:
            s = row[side]
            if s["failedAssociations"] or s["failedHttpClients"] or s["stored"] != s["sent"]:
                lines.append("NOT sustained: %d associations, %s: %d associations and %d HTTP clients failed, %d of %d "
                             "instances stored; first error: %s" % (
                                 row["associations"], NAMES[side], s["failedAssociations"], s["failedHttpClients"],
                                 s["stored"], s["sent"], (s["errors"] or ["-"])[0].strip().replace("\n", " ")[:300]))
    for row in rows:
        a = row["A"]["associationSeconds"]
        lines.append("%d associations: each association's seconds (storescu start to exit, every side) median %.2f, "
                     "range %.2f .. %.2f; listen-queue overflows %d" % (
                         row["associations"], a[0], a[1], a[2],
                         sum(row[s]["listenOverflows"] for s in result["sides"])) if a else "")
    lines.append("")
    build = result["build"]
    lines.append("Orthanc %s; plugin %s (%s, built %s, sha256 %s); A, B%s fed in turn %.1f s apart, fresh every "
                 "%d rounds; DicomThreadsCount %d, HttpThreadsCount %d; %dx%d CT slices (%d bytes), %d per client; "
                 "TCP_NODELAY %s; %s, nice %d; ulimit -n %d (hard %d), ulimit -u %s; %s; %.0f s" % (
                     result["orthanc"], result["plugin"], build["commit"], build["built"], build["sha256"],
                     " and A'" if "N" in result["sides"] else "", result["pause"], result["restartEvery"],
                     result["dicomThreads"], result["httpThreads"], result["size"], result["size"],
                     result["instanceBytes"], result["instances"],
                     "1 on Orthanc and storescu" if result["tcpNoDelay"] else "unset (Nagle's algorithm)",
                     result["namespace"], result["nice"], result["openFiles"][0], result["openFiles"][1],
                     result["processes"],
                     "load average %s at the start, %s at the end" % (result["loadStart"], result["loadEnd"]),
                     result["seconds"]))
    lines.append("command: %s" % result["command"])
    return "\n".join(lines)


# --- the command ---------------------------------------------------------------------------------------

def pinned_plugin(plugin, root):
    """A copy of the plugin taken now, which every Orthanc of the run loads (a newer build may replace
    the file meanwhile), and what it is: (copy, {"commit": the checkout's HEAD, "built": the file's
    time, "sha256": the first 12 digits})."""
    copy = os.path.join(root, "plugin", os.path.basename(plugin))
    os.makedirs(os.path.dirname(copy))
    shutil.copy2(plugin, copy)
    with open(copy, "rb") as stream:
        digest = hashlib.sha256(stream.read()).hexdigest()[:12]
    commit = subprocess.run(["git", "-C", REPO_ROOT, "log", "-1", "--format=%h"], capture_output=True,
                            text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", REPO_ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return copy, {"commit": commit + (" with uncommitted changes" if dirty else ""), "sha256": digest,
                  "built": time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(copy)))}


def load_average():
    with open("/proc/loadavg") as stream:
        return " ".join(stream.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", default=default_plugin_path())
    parser.add_argument("--orthanc", default=HOST_ORTHANC,
                        help="1.10.1 (host), 1.12.7 (Debian 13 root) or 1.13.0 (Debian unstable root)")
    parser.add_argument("--levels", default="8,32,64", help="storescu associations at once, comma-separated")
    parser.add_argument("--rounds", type=int, help="rounds per level, each side once per round (default 18; "
                                                   "--quick 6): a multiple of 6 puts each side in each "
                                                   "place equally often")
    parser.add_argument("--restart-every", type=int, default=2,
                        help="rounds per fresh A, B (and A'): 2, a balanced pair of orders")
    parser.add_argument("--instances", type=int, help="instances per association and per HTTP client "
                                                      "(default 20; --quick 5)")
    parser.add_argument("--http-clients", type=int, default=4, help="keep-alive HTTP clients beside the associations")
    parser.add_argument("--size", type=int, default=64, help="rows and columns of the synthetic CT slices")
    parser.add_argument("--dicom-threads", type=int, help="Orthanc's DicomThreadsCount (default: the highest level)")
    parser.add_argument("--http-threads", type=int, help="Orthanc's HttpThreadsCount (default: 50, or more)")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds after B's round before its figures are read (its thread ticks 4 s after ingest)")
    parser.add_argument("--pause", type=float, help="seconds between two Orthancs' rounds (1; --quick 0.5)")
    parser.add_argument("--nagle", action="store_true", help="leave TCP_NODELAY unset (Nagle's algorithm)")
    parser.add_argument("--no-null", action="store_true", help="no A' (null comparison)")
    parser.add_argument("--nice", type=int, default=-10,
                        help="the nice value of this command, its Orthancs and clients (as root; 0: as it is)")
    parser.add_argument("--quick", action="store_true", help="6 rounds of 5 instances per client (2-3 minutes)")
    parser.add_argument("--json")
    parser.add_argument("--render", metavar="JSON",
                        help="print the tables of a result saved by --json, recomputed from its rounds, and exit")
    args = parser.parse_args()
    if args.render:
        with open(args.render) as stream:
            result = json.load(stream)
        rounds = [{int(level): figures for level, figures in r.items()} for r in result["rounds"]]
        result["rows"] = [summarize(level, rounds, result["sides"]) for level in result["levels"]]
        result.setdefault("pause", 1.0)
        print(render(result))
        return
    args.rounds = args.rounds or (6 if args.quick else 18)
    args.instances = args.instances or (5 if args.quick else 20)
    args.pause = args.pause if args.pause is not None else (0.5 if args.quick else 1.0)
    try:
        levels = sorted({int(level) for level in args.levels.split(",") if level})
    except ValueError:
        parser.error("--levels: comma-separated numbers")
    if not levels or levels[0] < 1 or min(args.rounds, args.instances, args.restart_every) < 1 or args.http_clients < 0:
        parser.error("levels, rounds and instances must be positive")
    reexecute_in_own_network_namespace(["-m", __spec__.name] + sys.argv[1:])
    namespace = ("a network namespace of its own (unshare -n)" if in_own_network_namespace()
                 else "the host's network namespace (not root, or no unshare)")
    try:
        os.setpriority(os.PRIO_PROCESS, 0, args.nice)  # before any Orthanc or client starts: they inherit it
    except PermissionError:
        log("not permitted to run at nice %d: sharing the machine as it is" % args.nice)
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    plugin = os.path.abspath(args.plugin)
    sides = "AB" if args.no_null else "ABN"
    dicom_threads = args.dicom_threads or max(levels)
    http_threads = args.http_threads or max(50, 2 * args.http_clients + 10)
    # Each Orthanc holds a descriptor per association and per HTTP connection, plus its files.
    open_files = raise_open_files_limit(max(4096, 8 * (max(levels) + args.http_clients) + 1024))
    started, load_start = time.monotonic(), load_average()
    root = tempfile.mkdtemp(prefix="contention-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    tcp_nodelay = not args.nagle
    env = {"TCP_NODELAY": "1"} if tcp_nodelay else {"TCP_NODELAY": None}
    config = {"DicomThreadsCount": dicom_threads, "HttpThreadsCount": http_threads}
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, root, True)
        loaded, build = pinned_plugin(plugin, root)
        cache = SeriesCache(os.path.join(root, "series"))
        series = {(level, k): cache((level + args.http_clients) * args.instances, 1000 * k + level, args.size)
                  for level in levels for k in range(args.restart_every)}
        warm_files = cache((min(levels) + args.http_clients) * 2, 99, args.size)
        warm = {"dicom": warm_files[:min(levels) * 2], "http": warm_files[min(levels) * 2:]}
        pools = {"dicom": workloads.ClientPool("storescu", max(levels), env=env),
                 "http": workloads.ClientPool("http", args.http_clients) if args.http_clients else None}
        cleanup.callback(lambda: [p.close() for p in pools.values() if p is not None])
        log("%s; levels %s, %d rounds, %d instances per client, %d HTTP clients; ulimit -n %d" % (
            namespace, levels, args.rounds, args.instances, args.http_clients, open_files[0]))
        rounds = []
        for first in range(0, args.rounds, args.restart_every):
            rounds += run_orthancs(first, args, loaded, root, levels, series, warm, pools, sides, config, env)
        instance_bytes = os.path.getsize(series[(levels[0], 0)][0])
    result = {"orthanc": args.orthanc, "plugin": plugin, "build": build, "namespace": namespace,
              "sides": sides, "levels": levels, "restartEvery": args.restart_every, "pause": args.pause,
              "httpClients": args.http_clients, "instances": args.instances,
              "size": args.size, "instanceBytes": instance_bytes, "dicomThreads": dicom_threads,
              "httpThreads": http_threads, "tcpNoDelay": tcp_nodelay, "openFiles": list(open_files),
              "processes": str(resource.getrlimit(resource.RLIMIT_NPROC)[0]).replace("-1", "unlimited"),
              "loadStart": load_start, "loadEnd": load_average(), "seconds": time.monotonic() - started,
              "rows": [summarize(level, rounds, sides) for level in levels],
              "rounds": [{str(level): r[level] for level in levels} for r in rounds],
              "nice": nice, "command": "python -m ingest_perf.benchmarks.contention " + " ".join(sys.argv[1:])}
    if args.json:
        with open(args.json, "w") as stream:
            json.dump(result, stream, indent=1)
    print(render(result))


if __name__ == "__main__":
    main()
