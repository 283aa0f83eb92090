"""Every benchmark of orthanc-ingest-perf, in one run, written to docs/measurements/benchmarks.md.

  Resources/run-benchmarks.sh [--quick]     (installs, builds, then runs this)

1. micro-benchmarks of the hot path (Google Benchmark) and the memory footprint;
2. ingest of a CT series (373 slices of 512x512) by every client at 1, 2, 4, 8, 16 clients:
   DCMTK storescu, pynetdicom, HTTP POST /instances (keep-alive), DICOMweb STOW-RS (one request
   per instance, one per series), Orthanc-to-Orthanc C-STORE; with the plugin's server-side
   breakdown next to the client-side latency;
3. the mammography-, cardiology- and oncology-like studies by HTTP and storescu at 1 and 4 clients;
4. variants: DicomThreadsCount 1/4/16, IngestTranscoding off/on, TCP_NODELAY off/on;
5. downloads of each study with 1 and 10 clients (ZIP, file per instance, WADO-RS) next to the raw
   limit for the same bytes (files read from disk, and served by a plain static HTTP server);
6. the plugin's overhead: Orthanc without and with the plugin side by side, the series sent to each
   alternately chunk by chunk; a null comparison (both without) shows the method's resolution;
   next to it, the plugin's own time as it measures it (/perf/stats pluginCost).

--quick shrinks the datasets and the client counts (a few minutes); the full run takes about
25 minutes on 2 cores (under 30). Datasets are generated offline and deterministically, once, under
work/bench-data.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time


from ingest_perf.benchmarks import datasets, report, sections
from ingest_perf.orthanc_process import REPO_ROOT as REPO


def log(message):
    print(message, flush=True)


def machine():
    model = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal"):
            memory = int(line.split()[1]) // 1024 // 1024
    versions = {}
    for package in ("orthanc", "dcmtk", "orthanc-dicomweb", "orthanc-gdcm"):
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
        versions[package] = out.stdout.strip() or "?"
    return {"cpu": model, "cores": os.cpu_count(), "memoryGiB": memory, "kernel": platform.release(),
            "versions": versions, "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")}


def micro_benchmarks(build):
    out = subprocess.run([os.path.join(build, "MicroBenchmarks"), "--benchmark_format=json",
                          "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true"],
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    results = []
    for entry in data["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            factor = {"ns": 1, "us": 1e3, "ms": 1e6}[entry["time_unit"]]
            results.append((entry["run_name"], entry["real_time"] * factor))
    memory = subprocess.run([os.path.join(build, "MemoryFootprint")], capture_output=True, text=True)
    return results, memory.stdout, memory.returncode


def rewrite(results_path, output):
    from ingest_perf.benchmarks.document import write_document

    with open(results_path) as stream:
        results = json.load(stream)
    quick = results["quick"]
    results["micro"] = [tuple(entry) for entry in results["micro"]]
    clients = sorted({row["clients"] for row in results["ingestCt"]})
    plots = report.plots(os.path.join(output, "benchmarks"), results) if not quick else []
    log("rewritten: %s" % write_document(output, results, plots, quick, clients))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small datasets and fewer clients (a few minutes)")
    parser.add_argument("--build", default=os.path.join(REPO, "build-bench"), help="the benchmark build folder")
    parser.add_argument("--output", default=os.path.join(REPO, "docs", "measurements"), help="where benchmarks.md goes")
    parser.add_argument("--overhead-seconds", type=float,
                        help="time per overhead case, A and B together (default 100, quick 20)")
    parser.add_argument("--from-results", metavar="JSON",
                        help="only rewrite the document (and plots) from a results file of an earlier run")
    args = parser.parse_args()
    if args.from_results:
        return rewrite(args.from_results, args.output)
    quick = args.quick
    started = time.time()

    data = os.path.join(REPO, "work", "bench-data")
    work = tempfile.mkdtemp(prefix="ingest-perf-bench-")
    args.build = os.path.abspath(args.build)
    plugin = os.path.join(args.build, "libOrthancIngestPerf.so")
    bench = sections.Bench(work, plugin, log)
    results = {"machine": machine(), "quick": quick}

    log("== datasets")
    sets = {}
    for name in ("ct", "mammo", "cardio", "onco"):
        count = datasets.QUICK[name] if quick else None
        scale = 0.35 if (quick and name == "mammo") else 1.0
        folder = os.path.join(data, "%s-%s" % (name, "quick" if quick else "full"))
        sets[name] = datasets.write_dataset(folder, name, count=count, scale=scale)
        log("  %-7s %5d files, %7.1f MB" % (name, len(sets[name]), datasets.total_bytes(sets[name]) / 1e6))
    results["datasets"] = {n: {"files": len(p), "megabytes": datasets.total_bytes(p) / 1e6} for n, p in sets.items()}

    log("== micro-benchmarks")
    results["micro"], results["memory"], memory_code = micro_benchmarks(args.build)
    for name, ns in results["micro"]:
        log("  %-40s %12.1f ns" % (name, ns))
    log(results["memory"])

    clients = [1, 4, 16] if quick else [1, 2, 4, 8, 16]
    kinds = ["storescu", "pynetdicom", "http", "stow-instance", "stow-series", "orthanc-store"]
    log("== ingest of the CT series")
    results["ingestCt"] = sections.ingest_matrix(bench, sets["ct"], kinds, clients)

    log("== the other studies")
    results["ingestOthers"] = []
    for name in ("mammo", "cardio", "onco"):
        for row in sections.ingest_matrix(bench, sets[name], ["http", "storescu"], [1] if quick else [1, 4]):
            row["dataset"] = name
            results["ingestOthers"].append(row)

    log("== variants")
    results["variants"] = sections.variants(bench, sets["ct"])

    log("== downloads")
    results["downloads"] = []
    for name in (("ct", "onco") if quick else ("ct", "mammo", "cardio", "onco")):
        results["downloads"] += sections.downloads(bench, name, sets[name], python_client=(name == "ct"))

    log("== overhead (A: Orthanc without the plugin, B: with it, interleaved chunk by chunk)")
    seconds = args.overhead_seconds or (20 if quick else 100)
    # The whole CT series even in quick mode: the rounds cover every slice.
    overhead_files = datasets.write_dataset(os.path.join(data, "ct-full"), "ct")
    every_mode = {"TimedStorage": True}
    cases = [dict(label="HTTP x1, null comparison (B without the plugin too)", kind="http", clients=1, plugin=False),
             dict(label="HTTP x1, default configuration", kind="http", clients=1, plugin=True),
             dict(label="HTTP x4, default configuration", kind="http", clients=4, plugin=True),
             dict(label="storescu x4, default configuration", kind="storescu", clients=4, plugin=True),
             dict(label="HTTP x1, every opt-in mode on", kind="http", clients=1, plugin=True, config=every_mode),
             dict(label="HTTP x4, every opt-in mode on", kind="http", clients=4, plugin=True, config=every_mode),
             dict(label="storescu x4, every opt-in mode on", kind="storescu", clients=4, plugin=True,
                  config=every_mode)]
    if quick:
        cases = cases[:4]
    results["overheadSeconds"] = seconds
    results["overhead"] = sections.overhead(bench, overhead_files, cases, seconds)
    results["seconds"] = time.time() - started

    os.makedirs(os.path.join(args.output, "benchmarks"), exist_ok=True)
    suffix = "-quick" if quick else ""
    with open(os.path.join(args.output, "benchmarks", "results%s.json" % suffix), "w") as stream:
        json.dump(results, stream, indent=1, default=str)
    plots = report.plots(os.path.join(args.output, "benchmarks"), results) if not quick else []
    from ingest_perf.benchmarks.document import write_document

    path = write_document(args.output, results, plots, quick, clients)
    log("== done in %.0f s: %s" % (results["seconds"], path))
    return 0 if memory_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
