"""The main job: one synthetic CT series into a real Orthanc with the plugin, over C-STORE then HTTP.

Run by Resources/run-main-job.sh (which installs the dependencies and builds the plugin first) as
`.venv/bin/python -m ingest_perf.main_job`:
  1. writes a synthetic series (--slices, default $SLICES or 100) under the work folder,
  2. starts Orthanc with the plugin on free loopback ports (ingest_perf/orthanc_process.py),
  3. sends the series with DCMTK storescu in one association, prints the report for transport dicom,
  4. resets the statistics, deletes everything, sends the same series with HTTP POST /instances
     on one keep-alive connection, prints the report for transport rest,
  5. stops Orthanc and compares the two: instances/s, and for C-STORE the mean associationGap
     (time between instances) against the mean serverTotal (time inside Orthanc).
The raw /perf/stats answers are kept as stats-dicom.json and stats-rest.json in the work folder
(`Resources/perf_report.py --json FILE` prints them again).
"""
import argparse
import json
import os
import shutil
import signal
import sys
import time

from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import REPO_ROOT, OrthancProcess, default_plugin_path
from ingest_perf.perf_report import render, render_diagnosis
from ingest_perf.stats_checks import wait_for


def log(message=""):
    print(message, flush=True)


def banner(title):
    log()
    log("=" * 100)
    log(title)
    log("=" * 100)


def settle(orthanc, transport, expected, timeout=15.0):
    """Waits until `expected` instances are counted and their NewInstance changes are paired.

    OnStored runs before the C-STORE-RSP or the HTTP answer is sent, so the counts are final when
    the client returns; only the change thread (changeDispatch) and open records may lag.
    """
    def settled(stats):
        t = stats["transports"][transport]
        counted = sum(t["instances"].get(k, 0) for k in ("stored", "alreadyStored"))
        change = t["phases"].get("changeDispatch", {})
        paired = (change.get("count") or 0) + (change.get("deliveredBeforeOnStored") or 0)
        return counted >= expected and paired >= t["instances"].get("stored", 0) and stats["openRecords"]["count"] == 0

    stats = wait_for(orthanc, settled, timeout, transport=transport)
    return stats, settled(stats)


def check_counts(orthanc, stats, transport, expected_new):
    """Warns when the plugin's outcome counts disagree with what Orthanc itself reports."""
    instances = stats["transports"][transport]["instances"]
    in_orthanc = orthanc.get("/statistics").json().get("CountInstances")
    if instances.get("stored") != expected_new or in_orthanc != expected_new:
        log("WARNING: Orthanc stored %d new instance(s) (it now holds %s) but the plugin counted %d stored and "
            "%d alreadyStored" % (expected_new, in_orthanc, instances.get("stored", 0),
                                  instances.get("alreadyStored", 0)))


def phase_mean(stats, transport, phase):
    value = stats["transports"][transport]["phases"].get(phase, {})
    return value.get("mean") if value.get("observable", True) else None


def fmt(value, unit="", digits=1):
    return "n/a" if value is None else ("%.*f%s" % (digits, value, unit))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slices", type=int, default=int(os.environ.get("SLICES", "100")),
                        help="number of slices (default: $SLICES or 100)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", type=int, default=512, help="rows and columns (default: 512)")
    parser.add_argument("--work-dir", default=os.path.join(REPO_ROOT, "work", "main-job"))
    parser.add_argument("--plugin", default=default_plugin_path(), help="the built plugin (default: %(default)s)")
    args = parser.parse_args()
    if args.slices < 1:
        parser.error("--slices must be at least 1")

    # A SIGTERM (CI timeout, kill) unwinds through the `with` block, which stops Orthanc.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    work_dir = os.path.abspath(args.work_dir)
    orthanc_dir = os.path.join(work_dir, "orthanc")
    series_dir = os.path.join(work_dir, "series")
    for folder in (orthanc_dir, series_dir):
        shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(work_dir, exist_ok=True)

    started = time.monotonic()
    files = write_series(series_dir, args.slices, seed=args.seed, rows=args.size, columns=args.size)
    megabytes = sum(os.path.getsize(f) for f in files) / 1e6
    log("Series: %d slices of %dx%d (%.1f MB, %.2f MB each) written to %s in %.1f s"
        % (len(files), args.size, args.size, megabytes, megabytes / len(files), series_dir,
           time.monotonic() - started))
    nodelay = os.environ.get("TCP_NODELAY")
    log("TCP_NODELAY: %s" % ("not set (DCMTK's default for storescu and Orthanc's C-STORE server)" if nodelay is None
                             else "%s in the environment (read by DCMTK in storescu and in Orthanc)" % nodelay))

    results = {}
    with OrthancProcess(orthanc_dir, plugin_path=args.plugin) as orthanc:
        system = orthanc.get("/system").json()
        log("Orthanc %s (pid %d): %s, DICOM %s port %d, log %s"
            % (system.get("Version", "?"), orthanc.pid, orthanc.url, orthanc.aet, orthanc.dicom_port, orthanc.log_path))

        # --- C-STORE -------------------------------------------------------------------------
        t0 = time.monotonic()
        runs = orthanc.storescu(files)
        dicom_wall = time.monotonic() - t0
        stats, settled = settle(orthanc, "dicom", len(files))
        banner("C-STORE: /usr/bin/storescu, %d file(s) in %d association(s), %.2f s wall clock"
               % (len(files), len(runs), dicom_wall))
        diagnoses = {"dicom": orthanc.get("/perf/diagnosis").json()}
        log(render_diagnosis(diagnoses["dicom"], width=100).rstrip())
        log()
        log(render(stats, width=100).rstrip())
        if not settled:
            log("(statistics had not settled after 15 s: some changes or records were still open)")
        check_counts(orthanc, stats, "dicom", len(files))
        results["dicom"] = (stats, dicom_wall)
        associations = len(runs)

        orthanc.reset_stats()
        deleted = orthanc.delete_all()

        # --- HTTP ----------------------------------------------------------------------------
        t0 = time.monotonic()
        answers = orthanc.http_upload(files)
        rest_wall = time.monotonic() - t0
        stats, settled = settle(orthanc, "rest", len(files))
        statuses = {}
        for answer in answers:
            statuses[answer.get("Status", "?")] = statuses.get(answer.get("Status", "?"), 0) + 1
        banner("HTTP: POST /instances on one keep-alive connection, %d file(s), %.2f s wall clock "
               "(after reset and deleting %d patient(s); Orthanc answered %s)"
               % (len(files), rest_wall, deleted, ", ".join("%d %s" % (n, s) for s, n in sorted(statuses.items()))))
        # The associations, the hooks and what no plugin can see were in the C-STORE report above.
        diagnoses["rest"] = orthanc.get("/perf/diagnosis").json()
        log(render_diagnosis(diagnoses["rest"], width=100).rstrip())
        log()
        log(render(stats, width=100, context=False).rstrip())
        if not settled:
            log("(statistics had not settled after 15 s: some changes or records were still open)")
        check_counts(orthanc, stats, "rest", statuses.get("Success", 0))
        results["rest"] = (stats, rest_wall)
    log()
    log("Orthanc stopped (exit code %s)." % orthanc.stop())

    for transport, (stats, _) in results.items():
        with open(os.path.join(work_dir, "stats-%s.json" % transport), "w", encoding="utf-8") as f:
            json.dump(stats, f, indent=2)
        with open(os.path.join(work_dir, "diagnosis-%s.json" % transport), "w", encoding="utf-8") as f:
            json.dump(diagnoses[transport], f, indent=2)

    # --- comparison ------------------------------------------------------------------------------
    dicom_stats, dicom_wall = results["dicom"]
    rest_stats, rest_wall = results["rest"]
    dicom_ips = dicom_stats["transports"]["dicom"]["throughput"]["instancesPerSecond"]
    rest_ips = rest_stats["transports"]["rest"]["throughput"]["instancesPerSecond"]
    banner("Comparison: %d slices of %dx%d" % (len(files), args.size, args.size))
    log("  %-34s %18s %22s" % ("", "server active span*", "client wall clock"))
    log("  %-34s %18s %22s" % ("C-STORE (storescu, %d association%s)" % (associations, "" if associations == 1 else "s"),
                               fmt(dicom_ips, " inst/s"),
                               fmt(len(files) / dicom_wall, " inst/s")))
    log("  %-34s %18s %22s" % ("HTTP POST /instances (keep-alive)", fmt(rest_ips, " inst/s"),
                               fmt(len(files) / rest_wall, " inst/s")))
    log("  * from the first to the last instance seen by the plugin; the wall clock adds process start-up,")
    log("    association set-up and the client's own work.")
    if dicom_ips and rest_ips:
        faster, ratio = ("HTTP", rest_ips / dicom_ips) if rest_ips >= dicom_ips else ("C-STORE", dicom_ips / rest_ips)
        log("  %s ingests %.1fx faster here." % (faster, ratio))

    gap = phase_mean(dicom_stats, "dicom", "associationGap")
    server = phase_mean(dicom_stats, "dicom", "serverTotal")
    rest_server = phase_mean(rest_stats, "rest", "serverTotal")
    log()
    log("  C-STORE, mean per instance: associationGap %s vs serverTotal %s (HTTP serverTotal: %s)"
        % (fmt(gap, " ms", 3), fmt(server, " ms", 3), fmt(rest_server, " ms", 3)))
    if gap is not None and server is not None and gap + server > 0:
        share = 100.0 * gap / (gap + server)
        log("  -> %.0f%% of each C-STORE cycle is spent between instances (receiving the dataset, sending the"
            % share)
        log("     C-STORE-RSP, the client), %.0f%% inside Orthanc's store." % (100 - share))
        if gap > 2 * server and gap >= 30:
            log("     A gap of ~40 ms per instance is the signature of Nagle's algorithm meeting delayed ACKs")
            log("     (the diagnosis above names it): compare with TCP_NODELAY=1 in the environment of Orthanc")
            log("     and of the sender (TCP_NODELAY=1 ./Resources/run-main-job.sh gives it to both).")
    elif gap is None:
        log("  associationGap is not available (only one instance, or no ReceivedInstanceCallback).")
    log()
    log("Raw answers: %s/stats-dicom.json, %s/stats-rest.json (perf_report.py --json FILE)" % (work_dir, work_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
