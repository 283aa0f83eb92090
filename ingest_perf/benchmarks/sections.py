"""The measured scenarios. Each returns plain dictionaries that report.py turns into tables."""
import os
import shutil
import statistics
import tempfile
import time

from ingest_perf.benchmarks.process_cpu import cpu_seconds, ratio_with_interval
from ingest_perf.benchmarks.report import percentile
from ingest_perf.clients import split
from ingest_perf.orthanc_process import OrthancProcess, stop_together

from . import workloads

DICOMWEB = "/usr/share/orthanc/plugins/libOrthancDicomWeb.so"
JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"
TRANSPORT_OF = {"storescu": "dicom", "pynetdicom": "dicom", "orthanc-store": "dicom", "http": "rest",
                "stow-instance": "plugin", "stow-series": "plugin"}


class Bench:
    """Shared state: where to work, the plugin, and a counter for Orthanc folders."""

    def __init__(self, root, plugin, log):
        self.root = root
        self.plugin = plugin
        self.log = log
        self.serial = 0

    def orthanc(self, with_plugin=True, ingest_perf=None, extra=None, env=None, aet="ORTHANC"):
        self.serial += 1
        plugins = ([self.plugin] if with_plugin else []) + [DICOMWEB]
        config = {"DicomWeb": {"Enable": True, "Root": "/dicom-web/"}, "Plugins": plugins,
                  "ConcurrentJobs": 16, "DicomScpTimeout": 30}
        config.update(extra or {})
        process = OrthancProcess(os.path.join(self.root, "orthanc-%03d" % self.serial), plugin_path=None,
                                 ingest_perf=ingest_perf, extra_config=config, env=env, aet=aet)
        process.start(timeout=60)
        return process


def _client_summary(result):
    summary = {"seconds": result["elapsed"], "instances": result["count"],
               "instancesPerSecond": result["count"] / result["elapsed"]}
    if result["latencies"]:
        latencies = [v * 1000 for v in result["latencies"]]
        summary.update(latencyMean=statistics.mean(latencies), latencyP50=percentile(latencies, 0.5),
                       latencyP99=percentile(latencies, 0.99), latencyMeasured=True)
    else:
        # Only the total time of each client is known: its mean per instance.
        summary.update(latencyMean=statistics.mean(result["clientMeans"]) * 1000, latencyP50=None, latencyP99=None,
                       latencyMeasured=False)
    return summary


def _server_summary(stats, transport):
    t = stats["transports"][transport]
    phases = t["phases"]

    def get(phase, key):
        value = phases.get(phase, {})
        return value.get(key) if value.get("observable", True) else None

    return {"stored": t["instances"]["stored"], "serverInstancesPerSecond": t["throughput"]["instancesPerSecond"],
            "totalMean": get("serverTotal", "mean"), "totalP50": get("serverTotal", "p50"),
            "totalP99": get("serverTotal", "p99"), "receiveP50": get("receive", "p50"),
            "preStoreP50": get("preStore", "p50"), "persistP50": get("persist", "p50"),
            "persistP99": get("persist", "p99"), "gapMean": get("associationGap", "mean"),
            "gapP50": get("associationGap", "p50")}


def ingest(bench, orthanc, kind, files, clients, sender=None, sender_ids=None, env=None):
    """One ingest run into `orthanc` (emptied before), with the server's breakdown."""
    orthanc.delete_all()
    orthanc.reset_stats()
    target = {"aet": orthanc.aet, "port": orthanc.dicom_port, "url": orthanc.url}
    items = files
    if kind == "orthanc-store":
        target["sender"] = sender.url
        items = sender_ids
    result = workloads.run_clients(kind, items, clients, target, env=env)
    stats = orthanc.stats(transport=TRANSPORT_OF[kind])
    row = {"workload": kind, "clients": clients}
    row.update(_client_summary(result))
    row.update(_server_summary(stats, TRANSPORT_OF[kind]))
    row["megabytesPerSecond"] = sum(os.path.getsize(f) for f in files) / 1e6 / result["elapsed"]
    if row["stored"] != len(files):
        raise RuntimeError("%s x%d: %d stored, %d sent" % (kind, clients, row["stored"], len(files)))
    return row


def preload_sender(bench, files):
    sender = bench.orthanc(with_plugin=False, aet="SENDER")
    workloads.run_clients("http", files, 4, {"url": sender.url})
    ids = sender.get("/instances").json()
    return sender, ids


def ingest_matrix(bench, files, kinds, client_counts):
    """Every workload at every client count, into one Orthanc with the plugin."""
    rows = []
    orthanc = bench.orthanc()
    sender = None
    try:
        for kind in kinds:
            ids = None
            if kind == "orthanc-store":
                sender, ids = preload_sender(bench, files)
                sender.add_modality("receiver", orthanc)
            for clients in client_counts:
                row = ingest(bench, orthanc, kind, files, clients, sender=sender, sender_ids=ids)
                bench.log("  %-14s x%-2d %7.1f instances/s  %7.1f MB/s" % (kind, clients, row["instancesPerSecond"],
                                                                          row["megabytesPerSecond"]))
                rows.append(row)
    finally:
        if sender is not None:
            sender.terminate()  # at once with the receiver: each takes 2-3 s to stop
        orthanc.stop()
        if sender is not None:
            sender.stop()
    return rows


def variants(bench, files):
    """DicomThreadsCount, IngestTranscoding and TCP_NODELAY, each on and off, side by side."""
    rows = []
    for threads in (1, 4, 16):
        orthanc = bench.orthanc(extra={"DicomThreadsCount": threads})
        try:
            row = ingest(bench, orthanc, "storescu", files, 4)
            row["variant"] = "DicomThreadsCount %d (storescu x4)" % threads
            rows.append(row)
        finally:
            orthanc.stop()
    for transcoding in (False, True):
        orthanc = bench.orthanc(extra={"IngestTranscoding": JPEG_LOSSLESS} if transcoding else {})
        try:
            row = ingest(bench, orthanc, "http", files, 4)
            row["variant"] = "IngestTranscoding %s (HTTP x4)" % ("JPEG lossless" if transcoding else "off")
            rows.append(row)
        finally:
            orthanc.stop()
    for nodelay in (False, True):
        env = {"TCP_NODELAY": "1"} if nodelay else {}
        orthanc = bench.orthanc(env=env)
        try:
            row = ingest(bench, orthanc, "storescu", files, 1, env=env)
            row["variant"] = "TCP_NODELAY %s on Orthanc and storescu (storescu x1)" % ("1" if nodelay else "unset")
            rows.append(row)
        finally:
            orthanc.stop()
    for row in rows:
        bench.log("  %-60s %7.1f instances/s" % (row["variant"], row["instancesPerSecond"]))
    return rows


def downloads(bench, name, files, client_counts=(1, 10), python_client=False):
    """The same study read back, split between the clients so that every method moves the study
    once: a ZIP archive of each client's share (POST /tools/create-archive), one file per instance,
    DICOMweb WADO-RS per instance; next to the raw limit for the same bytes (the storage files read
    from disk, and served by a plain static HTTP server). python_client adds the per-instance
    download with Python's requests client, to show a client-side effect."""
    rows = []
    orthanc = bench.orthanc(extra={"MaximumStorageCacheSize": 0})
    server = None
    try:
        workloads.run_clients("http", files, 4, {"url": orthanc.url})
        instances = orthanc.get("/instances?expand").json()
        storage = os.path.join(orthanc.work_dir, "storage")
        stored_files = sorted(os.path.join(d, f) for d, _, names in os.walk(storage) for f in names)
        server, static_url = workloads.static_file_server(storage)
        relative = [os.path.relpath(p, storage) for p in stored_files]
        wado = []
        for instance in instances:
            tags = orthanc.get("/instances/%s/tags?simplify" % instance["ID"]).json()
            wado.append(orthanc.url + "/dicom-web/studies/%s/series/%s/instances/%s" % (
                tags["StudyInstanceUID"], tags["SeriesInstanceUID"], tags["SOPInstanceUID"]))
        ids = [instance["ID"] for instance in instances]
        for clients in client_counts:
            shares = split(ids, clients)
            per_instance = [[orthanc.url + "/instances/%s/file" % i for i in part] for part in shares]
            cases = [
                ("ZIP archive of each client's share", "curl",
                 [[(orthanc.url + "/tools/create-archive", '{"Resources": %s, "Synchronous": true}' %
                    str(part).replace("'", '"'))] for part in shares]),
                ("one file per instance", "curl", per_instance),
                ("DICOMweb WADO-RS, one request per instance", "curl", split(wado, clients)),
                ("raw: storage files read from disk", "files", split(stored_files, clients)),
                ("raw: storage files from a static HTTP server", "curl",
                 [[static_url + "/" + r for r in part] for part in split(relative, clients)]),
            ]
            if python_client:
                cases.insert(2, ("one file per instance, Python requests client", "python", per_instance))
            for label, kind, work in cases:
                result = workloads.run_downloads(kind, work, clients)
                row = {"dataset": name, "clients": clients, "method": label, "seconds": result["elapsed"],
                       "megabytes": result["bytes"] / 1e6, "megabytesPerSecond": result["bytes"] / 1e6 / result["elapsed"]}
                rows.append(row)
                bench.log("  %-8s x%-2d %-46s %8.1f MB/s" % (name, clients, label, row["megabytesPerSecond"]))
    finally:
        if server is not None:
            server.terminate()
        orthanc.stop()
    return rows


def overhead(bench, files, cases, seconds_per_case, per_client=10):
    """The plugin's cost: the same workload on two Orthancs side by side, A without the plugin and
    B with it (or, for the null case, also without: the resolution of the method itself).

    Machine noise on 2 shared cores is large and slow (whole runs differ by 10-20%), so the series
    is cut into chunks of `per_client` instances per client, sent alternately to A and B (ABBA
    order, so that a drift favours neither), by clients that stay up between chunks. Two processes
    of the very same Orthanc also differ by a few percent for as long as they live (seen in the
    null case), so every round starts a fresh pair: a round is one pass of the series through a
    new A and a new B, and rounds repeat until `seconds_per_case` have passed (two at least). The
    ratio is the total time on A over the total time on B (B's relative throughput); its interval
    is the 2.5-97.5 percentile over the rounds resampled (bootstrap), next to the spread of the
    rounds. Both Orthancs keep storage and index in memory (/dev/shm when there is one): the disk
    adds noise, and without it Orthanc's own work is smaller, so the plugin's share can only look
    bigger.

    Next to it, the CPU time of each Orthanc process per instance (from /proc), and what B's plugin
    measures of itself (/perf/stats pluginCost): its callbacks' time per stored instance and as a
    share of serverTotal. cases: dicts with label, kind, clients, plugin (bool), config."""
    rows = []
    memory = "/dev/shm" if os.path.isdir("/dev/shm") else bench.root
    for case in cases:
        folder = tempfile.mkdtemp(prefix="ingest-perf-overhead-", dir=memory)
        saved_root, bench.root = bench.root, folder
        pool = workloads.ClientPool(case["kind"], case["clients"])
        rounds = []
        try:
            deadline = time.monotonic() + seconds_per_case
            while len(rounds) < 2 or time.monotonic() < deadline:
                a = b = None
                try:
                    # Which one starts first alternates too.
                    for which in ("ab" if len(rounds) % 2 == 0 else "ba"):
                        if which == "a":
                            a = bench.orthanc(with_plugin=False)
                        else:
                            b = bench.orthanc(with_plugin=case["plugin"], ingest_perf=case.get("config"))
                    rounds.append(_overhead_round(case, files, pool, a, b, per_client, len(rounds)))
                finally:
                    stop_together((a, b), remove_work_dirs=True)
        finally:
            bench.root = saved_root
            pool.close()
            shutil.rmtree(folder, ignore_errors=True)
        rows.append(_overhead_row(case, rounds, per_client))
        r = rows[-1]
        bench.log("  %-44s ratio %.3f [%.3f..%.3f], rounds %.3f..%.3f (%d rounds, %d chunk pairs; %.1f vs %.1f "
                  "instances/s); CPU %.3f vs %.3f ms/instance%s" % (
                      case["label"], r["ratio"], r["ratioLow"], r["ratioHigh"], r["roundRatioMin"],
                      r["roundRatioMax"], r["rounds"], r["pairs"], r["withPlugin"], r["withoutPlugin"],
                      r["cpuMsWith"], r["cpuMsWithout"],
                      "; plugin's own cost %.1f us/instance (%.2f%% of serverTotal)" % (
                          r["selfMicroseconds"], r["selfPercentOfServerTotal"]) if r.get("selfMicroseconds") else ""))
    return rows


def _overhead_round(case, files, pool, a, b, per_client, index):
    """One pass of the series through a fresh A and B, chunk by chunk in ABBA order."""
    chunk = per_client * case["clients"]
    chunks = [files[i:i + chunk] for i in range(0, len(files), chunk)]
    target = {a: {"aet": a.aet, "port": a.dicom_port, "url": a.url},
              b: {"aet": b.aet, "port": b.dicom_port, "url": b.url}}
    for warm in (a, b):  # the first requests of a process are slower (SQLite, caches, connections)
        pool.run(target[warm], files[:2 * chunk])
        warm.delete_all()
    time.sleep(0.2)  # the deletions' changes drain before timing
    if case["plugin"]:
        b.reset_stats()
    before = {o: cpu_seconds(o.pid) for o in (a, b)}
    seconds = {a: 0.0, b: 0.0}
    for k, part in enumerate(chunks):
        for o in ((a, b) if (k + index) % 2 == 0 else (b, a)):
            seconds[o] += pool.run(target[o], part)
    time.sleep(0.1)  # the change threads finish their queues: part of the ingest's CPU
    result = {"secondsA": seconds[a], "secondsB": seconds[b], "instances": len(files), "pairs": len(chunks),
              "cpuA": cpu_seconds(a.pid) - before[a], "cpuB": cpu_seconds(b.pid) - before[b]}
    if case["plugin"]:
        cost = b.stats().get("pluginCost") or {}
        result["selfMicroseconds"] = cost.get("microsecondsPerStoredInstance")
        result["selfPercentOfServerTotal"] = cost.get("percentOfServerTotal")
    return result


def _overhead_row(case, rounds, per_client):
    instances = sum(r["instances"] for r in rounds)
    ratio, low, high = ratio_with_interval([(r["secondsB"], r["secondsA"]) for r in rounds])  # A time / B time
    per_round = [r["secondsA"] / r["secondsB"] for r in rounds]
    row = {"case": case["label"], "workload": case["kind"], "clients": case["clients"], "plugin": case["plugin"],
           "config": case.get("config"), "rounds": len(rounds), "pairs": sum(r["pairs"] for r in rounds),
           "instancesPerChunk": per_client * case["clients"],
           "withoutPlugin": instances / sum(r["secondsA"] for r in rounds),
           "withPlugin": instances / sum(r["secondsB"] for r in rounds),
           "ratio": ratio, "ratioLow": low, "ratioHigh": high, "roundRatios": per_round,
           "roundRatioMin": min(per_round), "roundRatioMax": max(per_round),
           "cpuMsWithout": sum(r["cpuA"] for r in rounds) * 1000 / instances,
           "cpuMsWith": sum(r["cpuB"] for r in rounds) * 1000 / instances}
    selfs = [r for r in rounds if r.get("selfMicroseconds") is not None]
    if selfs:
        row["selfMicroseconds"] = statistics.mean(r["selfMicroseconds"] for r in selfs)
        row["selfPercentOfServerTotal"] = statistics.mean(r["selfPercentOfServerTotal"] for r in selfs)
        # None when the run was too short for Orthanc's CPU time (counted in 10 ms ticks) to move.
        row["selfPercentOfCpu"] = (row["selfMicroseconds"] / 10 / row["cpuMsWith"]
                                   if row["cpuMsWith"] > 0 else None)
    return row
