"""Orthanc started with TCP_NODELAY=1: what it changes for ONE DICOM association, side by side in one run.

Cases, each a fresh Orthanc (with the plugin) per round, in rounds that alternate the cases (the
order reversed every other round):

  storescu x1 -> Orthanc          default | Orthanc with TCP_NODELAY=1 (Orthanc's side fixed)
                                  | and storescu with TCP_NODELAY=1 too (both sides fixed)
  Orthanc -> Orthanc              POST /modalities/{id}/store of the whole series in one association
                                  (one job), both Orthancs with the plugin: TCP_NODELAY=1 in the
                                  environment of neither, of the receiver only, of the sender only, of both

Neither Orthanc nor storescu inherits TCP_NODELAY from this shell: each is given it, or not, by
its case. The figure is the client's:
instances over the wall clock of the storescu run or of the synchronous store request; beside it
the receiver's associationGap (p50 and mean) and serverTotal p50 from /perf/stats, and each
Orthanc's dicomTcpNoDelay status is checked against what the case asks for.

  .venv/bin/python -m ingest_perf.benchmarks.tcp_nodelay [--slices 200] [--size 256] [--rounds 3] [--orthanc 1.10.1]
"""
import argparse
import os
import statistics
import tempfile
import time


from ingest_perf.clients import orthanc_store
from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import ALL_ORTHANCS, OrthancProcess, default_plugin_path

# (name, TCP_NODELAY=1 for the receiver, for the sender or None for storescu, storescu's TCP_NODELAY)
CASES = [
    ("storescu -> Orthanc, default", False, None, None),
    ("storescu -> Orthanc, TCP_NODELAY=1", True, None, None),
    ("storescu TCP_NODELAY=1 -> Orthanc, TCP_NODELAY=1", True, None, "1"),
    ("Orthanc -> Orthanc, default", False, False, None),
    ("Orthanc -> Orthanc, TCP_NODELAY=1 on the receiver", True, False, None),
    ("Orthanc -> Orthanc, TCP_NODELAY=1 on the sender", False, True, None),
    ("Orthanc -> Orthanc, TCP_NODELAY=1 on both", True, True, None),
]


def start(work, name, nodelay, plugin, version, aet="ORTHANC"):
    """An Orthanc with TCP_NODELAY=1 in its environment when `nodelay`, without it otherwise: the
    operator's remedy, which DCMTK reads and the plugin only reports."""
    orthanc = OrthancProcess(os.path.join(work, name), plugin_path=plugin, orthanc=version, aet=aet,
                             env={"TCP_NODELAY": "1" if nodelay else None}).start()
    status = orthanc.stats()["dicomTcpNoDelay"]
    if status["inEffect"] != nodelay:
        orthanc.stop()
        raise SystemExit("%s: dicomTcpNoDelay %r, expected inEffect %r" % (name, status, nodelay))
    return orthanc


def run_case(work, case, files, plugin, version):
    """(instances/s by the client's wall clock, the receiver's dicom phases)."""
    name, receiver_nodelay, sender_nodelay, storescu_nodelay = case
    receiver = start(work, "receiver", receiver_nodelay, plugin, version)
    sender = None
    try:
        if sender_nodelay is None:
            begin = time.perf_counter()
            receiver.storescu(files, env={"TCP_NODELAY": storescu_nodelay})
            elapsed = time.perf_counter() - begin
        else:
            sender = start(work, "sender", sender_nodelay, plugin, version, aet="SENDER")
            sender.http_upload(files)
            sender.add_modality("receiver", receiver)
            elapsed = orthanc_store(sender.url, "receiver", sender.get("/series").json())
        dicom = receiver.stats(transport="dicom")["transports"]["dicom"]
        if dicom["instances"]["stored"] != len(files):
            raise SystemExit("%s: %d instances stored of %d" % (name, dicom["instances"]["stored"], len(files)))
        return len(files) / elapsed, dicom["phases"]
    finally:
        if sender is not None:
            sender.terminate()  # at once with the receiver: each takes 2-3 s to stop
        receiver.stop()
        if sender is not None:
            sender.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slices", type=int, default=200)
    parser.add_argument("--size", type=int, default=256, help="rows and columns of each slice (16-bit)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--orthanc", action="append", choices=ALL_ORTHANCS,
                        help="repeatable; default: 1.10.1, 1.12.7 and 1.13.0")
    parser.add_argument("--plugin", default=default_plugin_path())
    args = parser.parse_args()
    versions = args.orthanc or ALL_ORTHANCS
    plugin = os.path.abspath(args.plugin)

    root = tempfile.mkdtemp(prefix="tcp-nodelay-")
    files = write_series(os.path.join(root, "series"), args.slices, seed=41, rows=args.size, columns=args.size)
    megabytes = sum(os.path.getsize(f) for f in files) / 1e6
    results = {}
    for round_index in range(args.rounds):
        order = [(v, c) for v in versions for c in CASES]
        for version, case in order if round_index % 2 == 0 else reversed(order):
            work = os.path.join(root, "round%d" % round_index, version, str(CASES.index(case)))
            rate, phases = run_case(work, case, files, plugin, version)
            results.setdefault((version, case[0]), []).append((rate, phases))
            print("round %d  Orthanc %s  %-52s %6.1f instances/s  associationGap p50 %7.3f ms" % (
                round_index + 1, version, case[0], rate, phases["associationGap"]["p50"]), flush=True)

    print()
    print("One association of %d slices of %dx%d (%.1f MB), loopback, %d rounds alternating the cases; "
          "median of the rounds (every round in parentheses)" % (args.slices, args.size, args.size, megabytes,
                                                                   args.rounds))
    print()
    print("| Orthanc | case | instances/s | rounds | associationGap p50 (ms) | associationGap mean (ms) "
          "| serverTotal p50 (ms) |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: |")
    for version in versions:
        for case in CASES:
            runs = results[(version, case[0])]
            rates = [r for r, _ in runs]

            def median(phase, statistic):
                return statistics.median(p[phase][statistic] for _, p in runs)

            print("| %s | %s | %.1f | %s | %.2f | %.2f | %.2f |" % (
                version, case[0], statistics.median(rates), " ".join("%.1f" % r for r in rates),
                median("associationGap", "p50"), median("associationGap", "mean"), median("serverTotal", "p50")))


if __name__ == "__main__":
    main()
