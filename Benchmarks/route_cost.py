#!/usr/bin/env python3
"""The latency of the plugin's routes next to Orthanc's /system, and Orthanc's resident memory with
the plugin minus without: at start, after --instances instances with every label table of the
plugin full (more calling AETs, client addresses and label sets than MaxLabelValues, MaxPeers and
MaxStreams hold), and after --requests requests of each of the plugin's GET routes (in two halves:
flat or not), on a host whose TCP table holds --other-sockets other sockets.

  .venv/bin/python Benchmarks/route_cost.py [--plugin PATH] [--orthanc 1.10.1|1.12.7]
      [--instances 10000] [--other-sockets 10000] [--requests 1000] [--rounds 200] [--json FILE]

As root it runs in a network namespace of its own (unshare -n), like Benchmarks/process_cpu.py.
Targets (issue 22): /perf/stats and /perf/diagnosis within 2 ms p50 of /system, /perf/metrics
within 5 ms.
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
from ingest_perf.harness import process_cpu, route_cost  # noqa: E402
from ingest_perf.orthanc_process import HOST_ORTHANC, default_plugin_path  # noqa: E402


def log(message):
    print(message, file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", default=default_plugin_path())
    parser.add_argument("--orthanc", default=HOST_ORTHANC)
    parser.add_argument("--instances", type=int, default=10000)
    parser.add_argument("--other-sockets", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=1000, help="requests of each route, for the memory")
    parser.add_argument("--rounds", type=int, default=200, help="timed requests of each route")
    parser.add_argument("--aets", type=int, default=300, help="calling AETs (one association each)")
    parser.add_argument("--addresses", type=int, default=40, help="HTTP client addresses")
    parser.add_argument("--malloc-arena-max", type=int,
                        help="MALLOC_ARENA_MAX for both Orthancs (glibc's per-thread heaps keep what they grew to)")
    parser.add_argument("--series", help="a folder of the instances written by an earlier run (kept), to reuse")
    parser.add_argument("--json")
    args = parser.parse_args()
    process_cpu.reexecute_in_own_network_namespace([os.path.abspath(__file__)] + sys.argv[1:])
    namespace = ("a network namespace of its own (unshare -n)" if process_cpu.in_own_network_namespace()
                 else "the host's network namespace")
    root = tempfile.mkdtemp(prefix="route-cost-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    started = time.monotonic()
    if args.series:
        files = sorted(os.path.join(args.series, name) for name in os.listdir(args.series))[:args.instances]
    else:
        files = write_series(os.path.join(root, "series"), args.instances, rows=64, columns=64)
    log("%d files written in %.0f s" % (len(files), time.monotonic() - started))
    with process_cpu.OtherSockets(args.other_sockets), contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, root, True)  # the Orthancs' folders (and the series written here)
        sockets = process_cpu.socket_counts()
        log("%d sockets in use, %d TIME_WAIT in %s" % (sockets["inuse"], sockets["tw"], namespace))
        result = route_cost.run(os.path.abspath(args.plugin), args.orthanc, root, files, args.aets, args.addresses,
                                args.requests, args.rounds, log,
                                env={"MALLOC_ARENA_MAX": str(args.malloc_arena_max)} if args.malloc_arena_max else None)
    result.update({"orthanc": args.orthanc, "namespace": namespace, "sockets": sockets,
                   "otherSockets": args.other_sockets, "seconds": time.monotonic() - started,
                   "command": "Benchmarks/route_cost.py " + " ".join(sys.argv[1:])})
    if args.json:
        with open(args.json, "w") as stream:
            json.dump(result, stream, indent=1)
    print(route_cost.render(result))
    print("")
    print("Orthanc %s, %s instances, label tables: %s; %s; %d sockets in use, %d TIME_WAIT" % (
        args.orthanc, result["instances"], json.dumps(result["labels"]), namespace, sockets["inuse"], sockets["tw"]))
    print("command: %s" % result["command"])


if __name__ == "__main__":
    main()
