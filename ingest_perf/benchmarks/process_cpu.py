"""What the plugin costs Orthanc as a whole: the CPU time of the whole Orthanc process (every thread,
the plugin's own included, nothing subtracted, no window) per stored instance, with the plugin
against without, side by side and alternating, next to a null comparison (without against without),
on a host whose TCP table holds --other-sockets other sockets. The command of docs/measurements/plugin-cost.md,
and a library of the benchmark run (route_cost, sections):

  .venv/bin/python -m ingest_perf.benchmarks.process_cpu [--plugin PATH] [--orthanc 1.10.1|1.12.7|1.13.0]
      [--cases trickle,churn,storescu-1,storescu-4,http-4] [--other-sockets 10000] [--pairs 3]
      [--instances 100] [--trickle-instances 40] [--size 512] [--json FILE] [--markdown]

The CPU time is the process's CPU clock (clock_gettime on the clock of the process id: the kernel's
sum over every thread, those that ended included, in ns), the counter /proc/<pid>/stat prints in
clock ticks as utime + stime; both are read, the ticks as a check.

As root it runs itself again in a network namespace of its own (`unshare -n`): the other sockets
(loopback connections held open, a third of them TIME_WAIT topped up every 5 s), the Orthancs and
their clients are alone there, whatever the host holds. Otherwise it runs in the host's namespace
and says so.

Per case and pair, a fresh A (no plugin) and B (the plugin; for the null comparison, no plugin
either) receive the same instances, chunk by chunk in ABBA order (the trickle: file by file, each to
both, at 2 instances/s to each); the CPU time of each whole process is counted from the first
instance to --settle seconds after the last. Load on the machine slows both alike: the figure is a
ratio measured side by side. Cases (CASES): trickle, churn (the trickle by C-STORE, each instance on
an association of its own from a calling AET never seen before), storescu-1 (one association per chunk),
storescu-4 (4 associations at once), http-4 (4 keep-alive HTTP clients).
"""
import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


from ingest_perf.benchmarks import workloads
from ingest_perf.clients import KeepAliveSession, http_upload, read_files, storescu
from ingest_perf.benchmarks.report import table as markdown_table
from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import HOST_ORTHANC, OrthancProcess, default_plugin_path, stop_together

NAMESPACE_MARK = "INGEST_PERF_OWN_NETWORK_NAMESPACE"
TICKS = os.sysconf("SC_CLK_TCK")

# name -> (description, client kind, clients, instances per chunk and client)
CASES = {
    "trickle": ("a trickle: 2 HTTP instances/s, one keep-alive client", "trickle", 1, 0),
    "churn": ("a trickle with label churn: 2 C-STORE instances/s, one association each, every one from a calling "
              "AET never seen before (beyond MaxLabelValues, MaxStreams and MaxPeers)", "churn", 1, 0),
    "storescu-1": ("one storescu association per chunk", "storescu", 1, 25),
    "storescu-4": ("4 storescu associations at once", "storescu", 4, 10),
    "http-4": ("4 keep-alive HTTP clients", "http", 4, 10),
}
TARGET_RATIO = 1.01


# --- the process's CPU time ------------------------------------------------------------------------

def orthanc_pid(orthanc):
    """The pid of the Orthanc executable itself (1.12.7 starts through a wrapper script in its root)."""
    pid = orthanc.pid
    for _ in range(3):
        if _comm(pid) == "Orthanc":
            return pid
        children = [p for p in _all_pids() if _parent(p) == pid]
        if not children:
            break
        pid = children[0]
    if _comm(pid) != "Orthanc":
        raise RuntimeError("no Orthanc process under pid %d" % orthanc.pid)
    return pid


def _all_pids():
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as stream:
            return stream.read().strip()
    except OSError:
        return None


def _parent(pid):
    try:
        with open("/proc/%d/stat" % pid) as stream:
            return int(stream.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def process_cpu_ns(pid):
    """The CPU time of every thread of the process so far (ns): its CPU clock, MAKE_PROCESS_CPUCLOCK."""
    return time.clock_gettime_ns((~pid << 3) | 2)


def process_cpu_ticks(pid):
    """utime + stime of /proc/<pid>/stat: the same counter, in clock ticks (every thread)."""
    with open("/proc/%d/stat" % pid) as stream:
        fields = stream.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_seconds(pid):
    """The same counter in seconds."""
    return process_cpu_ticks(pid) / TICKS


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as stream:
        for line in stream:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class CpuMeter:
    """The process's CPU time between start() and stop(), in ns and in clock ticks."""

    def __init__(self, orthanc):
        self.pid = orthanc_pid(orthanc)
        self.ns = 0
        self.ticks = 0
        self._started = None

    def start(self):
        self._started = (process_cpu_ns(self.pid), process_cpu_ticks(self.pid))

    def stop(self):
        self.ns += process_cpu_ns(self.pid) - self._started[0]
        self.ticks += process_cpu_ticks(self.pid) - self._started[1]
        self._started = None


# --- a host with thousands of other sockets --------------------------------------------------------

def in_own_network_namespace():
    return os.environ.get(NAMESPACE_MARK) == "1"


def reexecute_in_own_network_namespace(argv):
    """As root: runs this very command again in a network namespace of its own (`unshare -n`), where
    the benchmark's sockets, Orthanc's and the clients' are alone with the loopback interface up.
    Returns only when that is not possible (not root, no unshare): the caller goes on in the host's
    namespace and says so."""
    if in_own_network_namespace() or os.geteuid() != 0 or shutil.which("unshare") is None:
        return "host"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return "host"
    environment = dict(os.environ, **{NAMESPACE_MARK: "1"})
    if shutil.which("ip") is None:
        return "host"
    script = 'ip link set lo up && exec "$@"'
    os.execvpe("unshare", ["unshare", "-n", "--", "sh", "-c", script, "sh", sys.executable] + argv, environment)


def socket_counts():
    """{"inuse": sockets in use, "tw": TIME_WAIT} of this network namespace (/proc/net/sockstat)."""
    counts = {"inuse": 0, "tw": 0}
    for path in ("/proc/net/sockstat", "/proc/net/sockstat6"):
        try:
            with open(path) as stream:
                for line in stream:
                    if line.startswith(("TCP:", "TCP6:")):
                        words = line.split()[1:]
                        for key, value in zip(words[::2], words[1::2]):
                            if key in counts:
                                counts[key] += int(value)
        except OSError:
            pass
    return counts


class OtherSockets:
    """`count` other sockets in the TCP table: loopback connections held open (both ends) and, for
    a third of them, TIME_WAIT sockets, topped up every 5 s (they last 60 s)."""

    def __init__(self, count):
        self.count = count
        self.time_wait = count // 3
        self.established = count - self.time_wait
        self._open = []
        self._stop = threading.Event()
        self._thread = None
        self._listener = None

    def __enter__(self):
        if self.count <= 0:
            return self
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = self.established + 2000
        if soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(wanted, soft)), hard))
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(4096)
        for _ in range(self.established // 2):
            client = socket.create_connection(self._listener.getsockname())
            server, _ = self._listener.accept()
            self._open += [client, server]
        self._make_time_wait()
        self._thread = threading.Thread(target=self._refresh, daemon=True)
        self._thread.start()
        return self

    def _make_time_wait(self):
        missing = self.time_wait - socket_counts()["tw"]
        for _ in range(max(0, missing)):
            client = socket.create_connection(self._listener.getsockname())
            server, _ = self._listener.accept()
            client.close()  # the side that closes first keeps the TIME_WAIT
            server.close()

    def _refresh(self):
        while not self._stop.wait(5):
            with contextlib.suppress(OSError):
                self._make_time_wait()

    def __exit__(self, *exc_info):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        for s in self._open:
            s.close()
        if self._listener is not None:
            self._listener.close()


# --- the comparison ----------------------------------------------------------------------------------

def start_orthanc(root, name, plugin, version, ingest_perf=None, extra_config=None, env=None):
    work = tempfile.mkdtemp(prefix=name + "-", dir=root)
    orthanc = OrthancProcess(work, plugin_path=plugin, ingest_perf=ingest_perf, orthanc=version, env=env,
                             extra_config=dict({"StableAge": 3600}, **(extra_config or {})))
    orthanc.start(timeout=60)
    return orthanc


def _trickle_round(files, a, b, meters, rate):
    """Each file to A and to B in turn (which first alternates), `rate` files per second to each."""
    sessions = {a: KeepAliveSession(), b: KeepAliveSession()}
    for meter in meters.values():
        meter.start()
    began = time.monotonic()
    try:
        for i, path in enumerate(files):
            body = read_files([path])
            for o in ((a, b) if i % 2 == 0 else (b, a)):
                http_upload(o.url, body, session=sessions[o], timeout=60)
            pause = began + (i + 1) / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
    finally:
        for session in sessions.values():
            session.close()


def _churn_round(files, a, b, meters, rate):
    """Each file to A and to B in turn (which first alternates), `rate` files per second to each, each
    on an association of its own from a calling AET of its own (the same on both sides)."""
    for meter in meters.values():
        meter.start()
    began = time.monotonic()
    for i, path in enumerate(files):
        for o in ((a, b) if i % 2 == 0 else (b, a)):
            storescu(o.dicom_port, [path], calling_aet="CHURN%04d" % i, called_aet=o.aet)
        pause = began + (i + 1) / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)


def measure_pair(case, files, plugin, version, root, with_plugin, settle, log, pair_index, rate=2.0):
    """One fresh pair: A without the plugin, B with it (or without, for the null comparison); the
    files through both, chunk by chunk in ABBA order (a trickle: file by file); the CPU time of each
    whole process from the first instance to `settle` s after the last (the plugin's thread ticks
    a few seconds after ingest: part of the cost)."""
    _, kind, clients, per_client = CASES[case]
    a = b = None
    pool = None
    try:
        for which in ("ab" if pair_index % 2 == 0 else "ba"):  # which starts first alternates too
            if which == "a":
                a = start_orthanc(root, "a", None, version)
            else:
                b = start_orthanc(root, "b", plugin if with_plugin else None, version)
        meters = {a: CpuMeter(a), b: CpuMeter(b)}
        target = {o: {"aet": o.aet, "port": o.dicom_port, "url": o.url} for o in (a, b)}
        if kind == "trickle":
            warm = files[:4]
            for o in (a, b):
                o.http_upload(warm)
        elif kind == "churn":
            for o in (a, b):
                storescu(o.dicom_port, files[:4], calling_aet="WARM", called_aet=o.aet)
        else:
            pool = workloads.ClientPool(kind, clients)
            warm = files[:per_client * clients]
            for o in (a, b):
                pool.run(target[o], warm)
        for o in (a, b):
            o.delete_all()
        time.sleep(settle)  # the deletions' changes, the ticks of the warm-up: before the count
        if with_plugin:
            b.reset_stats()
        started = time.monotonic()
        if kind == "trickle":
            _trickle_round(files, a, b, meters, rate)
        elif kind == "churn":
            _churn_round(files, a, b, meters, rate)
        else:
            for meter in meters.values():
                meter.start()
            chunk = per_client * clients
            chunks = [files[i:i + chunk] for i in range(0, len(files), chunk)]
            for k, part in enumerate(chunks):
                for o in ((a, b) if (k + pair_index) % 2 == 0 else (b, a)):
                    pool.run(target[o], part)
        ingest_seconds = time.monotonic() - started
        time.sleep(settle)
        for meter in meters.values():
            meter.stop()
        result = {"instances": len(files), "cpuNsA": meters[a].ns, "cpuNsB": meters[b].ns,
                  "ticksA": meters[a].ticks, "ticksB": meters[b].ticks, "seconds": ingest_seconds + settle}
        for o, side in ((a, "A"), (b, "B")):
            stored = o.stats()["transports"]["all"]["instances"]["stored"] if o is b and with_plugin else None
            count = len(o._check(o.get("/instances")).json())
            if count != len(files):
                raise RuntimeError("%s stored %d instances of %d" % (side, count, len(files)))
            if stored is not None and stored != len(files):
                raise RuntimeError("the plugin counted %d stored instances of %d" % (stored, len(files)))
        if with_plugin:
            cost = b.stats()["pluginCost"]
            result["pluginCost"] = {k: cost.get(k) for k in (
                "microsecondsPerStoredInstance", "callbacksMicrosecondsPerStoredInstance",
                "threadsMicrosecondsPerStoredInstance", "idleCpuMs")}
            # (an older plugin without a thread of its own in pluginCost: its callbacks only)
            result["pluginCost"]["ticks"] = ((cost.get("threads") or {}).get("ingestWatcher") or {}).get("ticks")
        log("    pair %d: A %.3f ms/instance, B %.3f ms/instance, B/A %.4f%s" % (
            pair_index + 1, result["cpuNsA"] / 1e6 / len(files), result["cpuNsB"] / 1e6 / len(files),
            result["cpuNsB"] / result["cpuNsA"],
            "; plugin's own %.1f us/instance" % result["pluginCost"]["microsecondsPerStoredInstance"]
            if with_plugin else ""))
        return result
    finally:
        if pool is not None:
            pool.close()
        stop_together((a, b), remove_work_dirs=True)


def ratio_with_interval(pairs, resamples=2000):
    """CPU of B over CPU of A summed over the pairs, and the 2.5-97.5 percentiles of the same ratio
    over the pairs resampled with replacement (seeded)."""
    def ratio(sample):
        return sum(p[1] for p in sample) / sum(p[0] for p in sample)

    generator = random.Random(20261124)
    values = sorted(ratio([pairs[generator.randrange(len(pairs))] for _ in pairs]) for _ in range(resamples))
    return ratio(pairs), values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]


def summarize(case, null, pairs):
    cpu = [(p["cpuNsA"], p["cpuNsB"]) for p in pairs]
    ratio, low, high = ratio_with_interval(cpu)
    instances = sum(p["instances"] for p in pairs)
    row = {"case": case, "description": CASES[case][0], "null": null, "pairs": len(pairs),
           "instancesPerSide": instances, "ratio": ratio, "ratioLow": low, "ratioHigh": high,
           "pairRatios": [b / a for a, b in cpu],
           "cpuMsPerInstanceA": sum(a for a, _ in cpu) / 1e6 / instances,
           "cpuMsPerInstanceB": sum(b for _, b in cpu) / 1e6 / instances,
           "ticksRatio": (sum(p["ticksB"] for p in pairs) / sum(p["ticksA"] for p in pairs)
                          if sum(p["ticksA"] for p in pairs) else None),
           "ticksPerSide": min(sum(p["ticksA"] for p in pairs), sum(p["ticksB"] for p in pairs))}
    costs = [p["pluginCost"] for p in pairs if p.get("pluginCost")]
    if costs:
        row["pluginMicroseconds"] = statistics.median(c["microsecondsPerStoredInstance"] for c in costs)
        row["pluginCallbacksMicroseconds"] = statistics.median(
            c["callbacksMicrosecondsPerStoredInstance"] or c["microsecondsPerStoredInstance"] for c in costs)
        row["pluginThreadMicroseconds"] = statistics.median(c["threadsMicrosecondsPerStoredInstance"] or 0
                                                            for c in costs)
    return row


def verdict(row, null_row):
    """"met" only for a figure that can be true: positive, finite, and not below 1 by more than the
    null comparison strays (the plugin cannot make Orthanc cheaper)."""
    ratio = row["ratio"]
    if not ratio or ratio <= 0 or ratio != ratio:
        return "impossible figure"
    spread = abs(null_row["ratio"] - 1) if null_row else 0.0
    if null_row and ratio < null_row["ratioLow"] - spread:
        return "not resolved (below the null comparison)"
    if ratio <= TARGET_RATIO:
        return "met"
    if null_row and ratio <= TARGET_RATIO + spread:
        return "within the null comparison's spread of the target"
    return "missed"


# --- the command ---------------------------------------------------------------------------------------

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
                     result["sockets"]["tw"], result["size"], result["size"], TARGET_RATIO))
    lines.append("command: %s" % result["command"])
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", default=default_plugin_path())
    parser.add_argument("--orthanc", default=HOST_ORTHANC)
    parser.add_argument("--cases", default=",".join(CASES))
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
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error("unknown case(s) %s; known: %s" % (", ".join(unknown), ", ".join(CASES)))
    reexecute_in_own_network_namespace(["-m", __spec__.name] + sys.argv[1:])
    namespace = ("a network namespace of its own (unshare -n)" if in_own_network_namespace()
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
              "command": "python -m ingest_perf.benchmarks.process_cpu " + " ".join(sys.argv[1:])}
    if args.json:
        with open(args.json, "w") as stream:
            json.dump(result, stream, indent=1)
    print(render(result, args.markdown))


def run(args, cases, files, plugin, root, namespace):
    rows = []
    with OtherSockets(args.other_sockets):
        sockets = socket_counts()
        log("%d sockets in use, %d TIME_WAIT in %s" % (sockets["inuse"], sockets["tw"], namespace))
        for case in cases:
            instances = args.trickle_instances if case in ("trickle", "churn") else args.instances
            chosen = files[:instances]
            by_comparison = {}
            for null in ([False] if args.no_null else [True, False]):
                log("%s, %s:" % (case, "null" if null else "with / without"))
                pairs = []
                for index in range(args.pairs):
                    pairs.append(measure_pair(case, chosen, plugin, args.orthanc, root, not null,
                                                          args.settle, log, index))
                by_comparison[null] = summarize(case, null, pairs)
                by_comparison[null]["pairResults"] = pairs
            if False in by_comparison:
                by_comparison[False]["verdict"] = verdict(by_comparison[False], by_comparison.get(True))
            rows += [by_comparison[n] for n in (True, False) if n in by_comparison]
        at_end = socket_counts()
    return rows, sockets, at_end


if __name__ == "__main__":
    main()
