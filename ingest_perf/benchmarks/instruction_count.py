"""Instructions Orthanc executes per stored instance, without and with the plugin, counted by
Valgrind's callgrind: an overhead figure that scheduling noise cannot blur (the throughput A/B of
docs/measurements/benchmarks.md resolves about 2.5%; this count resolves about 0.05%, see the null configuration).

  .venv/bin/python -m ingest_perf.benchmarks.instruction_count [--plugin PATH] [--orthanc 1.10.1,1.12.7,1.13.0]
      [--configurations default,every-opt-in,...] [--transports http,dicom] [--instances 40]
      [--repeat 3] [--markdown] [--json FILE]

Every run starts one fresh Orthanc under `valgrind --tool=callgrind --instr-atstart=no` (start-up
runs uninstrumented: it counts nothing), then, per transport (HTTP POST /instances on one
keep-alive connection; C-STORE by DCMTK's storescu, one association), with a series of its own:

  1. warm-up: the first --warmup instances are stored uninstrumented (the first instance of a
     series creates its patient, study and series; DCMTK, SQLite and the plugin initialise lazily);
  2. --quiet-seconds of waiting (uninstrumented) until the plugin's thread sleeps again (it ticks
     for 4 s after ingest; with the plugin, its /perf/stats says when it slept), then
     `callgrind_control --instr=on` and an idle window of --idle-seconds, dumped: what Orthanc's
     own threads execute per second while nothing is ingested (the timed waits of the job engine,
     the change thread, the HTTP and DICOM servers); the plugin's thread sleeps through it;
  3. the next --instances instances, then --quiet-seconds, so that the plugin's thread has ticked
     its last tick after ingest inside the window, dumped; `callgrind_control --instr=off`.

Ir per instance = (Ir of window 3 - idle rate x duration of window 3) / instances, every thread of
the process counted, the plugin's own thread included: nothing is subtracted but Orthanc's idle
rate, measured while the plugin's thread sleeps. The idle correction removes what the wall clock
would otherwise leak into the count (callgrind runs 50-100 times slower than native: ~130k idle
Ir/s are ~0.2% of a window). Callgrind counts each thread apart (--separate-threads=yes): the
plugin's thread (the one that runs IngestWatcher) is reported apart too, with its ticks in the
window. Its cost is per second of ingest, not per instance; under callgrind an instance takes 50-100
times longer than natively, so the whole-process figure counts 50-100 times more ticks per instance
than a native run would: an upper bound, and the one figure here that depends on the machine's
speed and load. The plugin's instructions on Orthanc's threads (its hooks) per instance do not:
that is the figure the test asserts. Both sides store byte-identical
series into a fresh Orthanc whose folder path has the same length, with glibc's malloc thresholds
fixed (ORTHANC_ENVIRONMENT); what still differs between identical runs (network reads split
differently, SQLite checkpoints, thread interleaving) is up to about 0.1% per instance, so each side
runs --repeat times, alternating, and the figures are the medians. The `null` configuration
compares the Orthanc without the plugin with itself: how far it strays from 0% is the resolution.

The plugin's share is the self cost of the instructions whose code lies in the plugin's ELF object
(its hooks, its statically linked jsoncpp, the timed storage's file writes) on Orthanc's threads; what it makes other
objects execute (Orthanc's SDK entry points and hook dispatch, libstdc++, libc, the dynamic
linker's TLS lookups) is only in the difference between the two sides, listed per object after
the table.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# Shared test code, imported the way the other benchmarks do (kept here, in one place).

from ingest_perf.generate_series import write_series
from ingest_perf.benchmarks.report import table as markdown_table
from ingest_perf.orthanc_process import (ALL_ORTHANCS, HOST_ORTHANC, OrthancProcess, default_plugin_path,
                                         orthanc_available, unavailable_reason)

JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"
LARGE_TABLES = {"MaxStreams": 1024, "MaxLabelValues": 253, "MaxThreads": 4096, "MaxPeers": 4096,
                "ChangeTableSize": 1048576}

# name -> (description, Orthanc options, IngestPerf section or None). The run without the plugin
# gets the same Orthanc options (and no plugin), so e.g. both sides transcode.
CONFIGURATIONS = collections.OrderedDict([
    ("null", ("no plugin on either side: the method's resolution", {}, None)),
    ("default", ("the plugin's default configuration (no IngestPerf section)", {}, None)),
    ("timed-storage", ("TimedStorage: the plugin's storage area writes the files in Orthanc's place",
                       {}, {"TimedStorage": True})),
    ("transcoding", ("Orthanc's IngestTranscoding to JPEG lossless, TranscodeTiming FallThrough",
                     {"IngestTranscoding": JPEG_LOSSLESS}, {"TranscodeTiming": "FallThrough"})),
    ("transcoding-delegate", ("IngestTranscoding to JPEG lossless, TranscodeTiming Delegate",
                              {"IngestTranscoding": JPEG_LOSSLESS}, {"TranscodeTiming": "Delegate"})),
    ("large-tables", ("MaxStreams 1024, MaxLabelValues 253, MaxThreads 4096, MaxPeers 4096, ChangeTableSize 1048576",
                      {}, dict(LARGE_TABLES))),
    ("every-opt-in", ("all of the above at once: TimedStorage, IngestTranscoding with Delegate, large tables",
                      {"IngestTranscoding": JPEG_LOSSLESS},
                      dict(LARGE_TABLES, TimedStorage=True, TranscodeTiming="Delegate"))),
])
DEFAULT_CONFIGURATIONS = list(CONFIGURATIONS)
TRANSPORTS = ("http", "dicom")
TRANSPORT_NAMES = {"http": "HTTP POST /instances", "dicom": "C-STORE (storescu)"}
SERIES_SEEDS = {"http": 1001, "dicom": 1002}
# Stable* changes come StableAge seconds after a series' last instance; under Valgrind a run lasts
# minutes, so with the default 60 s one would fall into some window and not into others.
BASE_ORTHANC_OPTIONS = {"StableAge": 3600}
# TCP_NODELAY: DCMTK in Orthanc makes no 40 ms Nagle waits, so less idle time in the windows.
# GLIBC_TUNABLES: a fixed mmap threshold (128 KiB, glibc's initial value) instead of the one glibc
# adapts to the history of frees, and no trimming of the threads' heaps: otherwise where a 0.5 MB
# buffer comes from, and when a heap shrinks and grows again, depend on how the threads happened to
# interleave, which moved identical runs by up to 0.4% per instance. With both fixed, most identical
# runs agree within 0.1%; about one run in ten still comes out ~0.3% lower (less work in glibc's
# arena.c code; MALLOC_ARENA_MAX=1 does not remove it), which the median of 3 runs per side absorbs.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=4294967295"
ORTHANC_ENVIRONMENT = {"TCP_NODELAY": "1", "GLIBC_TUNABLES": MALLOC_TUNABLES}
TARGET_PERCENT = 0.15  # at most 0.15% more instructions per instance with the default configuration (issue 22)

# The plugin's own thread: the callgrind file of the thread that runs these functions of its object.
# Whole names: TickIfDue, RequestCheck and the like run on Orthanc's threads.
PLUGIN_THREAD_FUNCTIONS = re.compile(r"IngestWatcher::(Run|Tick|Account|ReadSockets|Add)\(|IngestWatcher::Start\(\)::")


def log(message):
    print(message, file=sys.stderr, flush=True)


# --- Valgrind ----------------------------------------------------------------------------------

def valgrind_launcher():
    """The valgrind executable itself (Debian's /usr/bin/valgrind is a shell wrapper around
    valgrind.bin that also sets LD_LIBRARY_PATH and GLIBCXX_FORCE_NEW; both Orthancs are started
    the same way, by the ELF launcher, so that they run with the same environment)."""
    path = shutil.which("valgrind")
    if path is None:
        raise SystemExit("valgrind not found: apt-get install valgrind (Resources/install-dependencies.sh does)")
    with open(path, "rb") as f:
        elf = f.read(4) == b"\x7fELF"
    return path if elf or not os.path.isfile(path + ".bin") else path + ".bin"


def valgrind_tool_folder():
    """The folder of callgrind-amd64-linux and vgpreload_core-amd64-linux.so."""
    candidates = [os.environ.get("VALGRIND_LIB", ""), "/usr/libexec/valgrind", "/usr/lib/valgrind",
                  "/usr/lib/x86_64-linux-gnu/valgrind"]
    for folder in candidates:
        if folder and os.path.isfile(os.path.join(folder, "callgrind-amd64-linux")):
            return folder
    raise SystemExit("callgrind-amd64-linux not found in %s" % ", ".join(c for c in candidates if c))


def valgrind_options(out_file):
    return ["--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes", "--callgrind-out-file=" + out_file]


def orthanc_under_callgrind(work_dir, version):
    """(command_prefix, env) for OrthancProcess: Orthanc started by callgrind. Orthanc 1.12.7 runs in
    the Debian 13 root, where the host's valgrind is not: a copy of its launcher and of the three
    files callgrind needs goes into the Orthanc's own folder (visible in the root at the same path)
    and Resources/debian-orthanc.sh puts it before Orthanc's command inside the root."""
    out_file = os.path.join(work_dir, "callgrind.out.%p")
    if version == HOST_ORTHANC:
        return [valgrind_launcher()] + valgrind_options(out_file), {}
    copy = os.path.join(work_dir, "valgrind")
    os.makedirs(copy, exist_ok=True)
    # The same file name as the launcher: callgrind_control recognises callgrind processes by it.
    launcher = os.path.join(copy, os.path.basename(valgrind_launcher()))
    shutil.copy2(valgrind_launcher(), launcher)
    tools = valgrind_tool_folder()
    for name in ("callgrind-amd64-linux", "vgpreload_core-amd64-linux.so", "default.supp"):
        if os.path.isfile(os.path.join(tools, name)):
            shutil.copy2(os.path.join(tools, name), os.path.join(copy, name))
    wrapper = [launcher] + valgrind_options(out_file)
    if any(" " in word for word in wrapper):
        raise SystemExit("a path with a space cannot go through INGEST_PERF_ORTHANC_WRAPPER: %s" % work_dir)
    return [], {"VALGRIND_LIB": copy, "INGEST_PERF_ORTHANC_WRAPPER": " ".join(wrapper)}


def callgrind_control(pid, *arguments):
    """Runs callgrind_control on the process (through vgdb); returns once the command was executed."""
    result = subprocess.run(["callgrind_control"] + list(arguments) + [str(pid)], capture_output=True, text=True,
                            timeout=300)
    if result.returncode != 0 or "OK." not in result.stdout:
        raise RuntimeError("callgrind_control %s %d failed (%d): %s %s" % (" ".join(arguments), pid, result.returncode,
                                                                          result.stdout, result.stderr))


def timed_dump(pid, name):
    """Dumps (and zeroes) the counters as `name`; returns the moment of the dump (midpoint of the call)."""
    before = time.monotonic()
    callgrind_control(pid, "--dump=" + name)
    return (before + time.monotonic()) / 2


# --- callgrind output --------------------------------------------------------------------------

def parse_callgrind(path, functions_of=None):
    """{"total": Ir, "objects": {ELF object: self Ir}} of one callgrind output file, and with
    functions_of (an object's file name), "functions": {function of that object: self Ir}.

    Self cost per object: every cost line counts for the object of the function it belongs to
    (the last `ob=`); the line after a `calls=` line is the inclusive cost of that call and is
    skipped. The sum over objects is checked against the file's own total."""
    names = {"ob": {}, "fn": {}}
    objects = collections.Counter()
    functions = collections.Counter()
    header = {}
    current = None
    function = None
    positions = 1
    event_index = None
    skip_call_cost = False

    def resolve(kind, spec):  # name compression: "(id) name" defines, "(id)" refers
        spec = spec.strip()
        if spec.startswith("("):
            key, _, name = spec.partition(")")
            name = name.strip()
            if name:
                names[kind][key] = name
            return names[kind][key]
        return spec

    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            first = line[:1]
            if first.isdigit() or first in "+-*":
                if skip_call_cost:
                    skip_call_cost = False
                    continue
                words = line.split()
                if event_index is not None and len(words) > positions + event_index:
                    cost = int(words[positions + event_index])
                    objects[current] += cost
                    if functions_of is not None and current and os.path.basename(current) == functions_of:
                        functions[function] += cost
                continue
            skip_call_cost = False
            if line.startswith("ob="):
                current = resolve("ob", line[3:])
            elif line.startswith("cob="):
                resolve("ob", line[4:])
            elif line.startswith("fn="):
                function = resolve("fn", line[3:])
            elif line.startswith("cfn="):
                resolve("fn", line[4:])
            elif line.startswith("calls="):
                skip_call_cost = True
            elif line.startswith("positions:"):
                positions = len(line.split(":", 1)[1].split())
            elif line.startswith("events:"):
                events = line.split(":", 1)[1].split()
                event_index = events.index("Ir")
            elif ":" in line and "=" not in line.split(":", 1)[0]:
                key, _, value = line.partition(":")
                header.setdefault(key.strip(), value.strip())
    total = int(header.get("totals", header.get("summary", "0")).split()[0])
    if sum(objects.values()) != total:
        raise RuntimeError("%s: the costs per object add up to %d, the file says %d"
                           % (path, sum(objects.values()), total))
    result = {"total": total, "objects": dict(objects)}
    if functions_of is not None:
        result["functions"] = dict(functions)
    return result


def read_dumps(work_dir, functions_of=None):
    """{dump name: figures} for the dumps requested by name (the trigger "dump NAME"), the files of
    every thread of one dump added up (--separate-threads=yes writes one per thread). With
    functions_of (the plugin's file name), "pluginThread" holds the Ir of the thread that runs the
    plugin's IngestWatcher (every object) and "pluginThreadPluginIr" the part in the plugin's object."""
    dumps = {}
    for name in sorted(os.listdir(work_dir)):
        if not name.startswith("callgrind.out."):
            continue
        path = os.path.join(work_dir, name)
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            triggers = [line.split(":", 2)[2].strip() for line in f if line.startswith("desc: Trigger:")]
        if not triggers or not triggers[0].startswith("dump "):
            continue
        parsed = parse_callgrind(path, functions_of)
        dump = dumps.setdefault(triggers[0][len("dump "):], {"total": 0, "objects": {}, "threads": 0,
                                                             "pluginThread": 0, "pluginThreadPluginIr": 0})
        if functions_of is not None:
            dump.setdefault("functions", {})
        dump["total"] += parsed["total"]
        dump["threads"] += 1
        for key in ("objects", "functions"):
            for item, ir in parsed.get(key, {}).items():
                dump[key][item] = dump[key].get(item, 0) + ir
        functions = parsed.get("functions", {})
        if any(PLUGIN_THREAD_FUNCTIONS.search(f) and ir > 0 for f, ir in functions.items()):
            dump["pluginThread"] += parsed["total"]
            dump["pluginThreadPluginIr"] += sum(functions.values())
    return dumps


def watcher_of(orthanc):
    """The plugin's thread as /perf/stats shows it (ticks, idle wakes since the start)."""
    return orthanc.stats()["pluginCost"]["threads"]["ingestWatcher"]


def wait_until_quiet(orthanc, plugin, idle_wakes_before, seconds):
    """--quiet-seconds, and with the plugin, until its thread has gone back to sleep (one more idle
    wake than before): uninstrumented, before a window opens."""
    time.sleep(seconds)
    if not plugin:
        return
    deadline = time.monotonic() + 120
    while watcher_of(orthanc)["idleWakes"] <= idle_wakes_before:
        if time.monotonic() > deadline:
            raise RuntimeError("the plugin's thread did not go back to sleep")
        time.sleep(0.5)
    time.sleep(1.0)  # from its idle wake to epoll_wait: a few thousand instructions, slow under callgrind


# --- one Orthanc -------------------------------------------------------------------------------

def send(orthanc, transport, files):
    if transport == "http":
        orthanc.http_upload(files)
    else:
        orthanc.storescu(files, calling_aet="CALLGRIND", env={"TCP_NODELAY": "1"})


def measure(work_dir, version, plugin, configuration, series, args):
    """Starts one Orthanc under callgrind, runs the windows of every transport, returns per
    transport the Ir per instance, per object, and the windows' raw figures."""
    _, orthanc_options, ingest_perf = CONFIGURATIONS[configuration]
    os.makedirs(work_dir)
    prefix, env = orthanc_under_callgrind(work_dir, version)
    env.update(ORTHANC_ENVIRONMENT)
    orthanc = OrthancProcess(work_dir, plugin_path=plugin, ingest_perf=ingest_perf if plugin else None,
                             extra_config=dict(BASE_ORTHANC_OPTIONS, **orthanc_options), env=env, orthanc=version,
                             command_prefix=prefix)
    windows = {}
    orthanc.start(timeout=600)
    try:
        pid = orthanc.pid
        running = orthanc.version
        for transport in args.transports:
            files = series[transport]
            before = watcher_of(orthanc) if plugin else None
            send(orthanc, transport, files[:args.warmup])
            wait_until_quiet(orthanc, plugin, before["idleWakes"] if plugin else 0, args.quiet_seconds)
            before = watcher_of(orthanc) if plugin else None
            callgrind_control(pid, "--instr=on")
            start = timed_dump(pid, "start-" + transport)
            time.sleep(args.idle_seconds)
            idle_end = timed_dump(pid, "idle-" + transport)
            send(orthanc, transport, files[args.warmup:args.warmup + args.instances])
            # The plugin's thread's last ticks after ingest are in the window (no GET in it: a
            # request would be counted too); checked afterwards.
            time.sleep(args.quiet_seconds)
            ingest_end = timed_dump(pid, "ingest-" + transport)
            callgrind_control(pid, "--instr=off")
            windows[transport] = {"idleSeconds": idle_end - start, "ingestSeconds": ingest_end - idle_end}
            if plugin:
                after = watcher_of(orthanc)
                windows[transport]["pluginThreadTicks"] = after["ticks"] - before["ticks"]
                # Slept by the end of the window: its idle wake came, and no tick after it.
                time.sleep(1.5)
                windows[transport]["pluginThreadSleptInWindow"] = (
                    after["idleWakes"] > before["idleWakes"] and watcher_of(orthanc)["ticks"] == after["ticks"])
        stored = orthanc.get("/statistics").json()["CountInstances"]
        expected = len(args.transports) * (args.warmup + args.instances)
        if stored != expected:
            raise RuntimeError("%s: %d instances stored, %d sent (see %s)" % (work_dir, stored, expected,
                                                                              orthanc.log_path))
        not_in_effect = orthanc.stats().get("notInEffect", []) if plugin else []
    finally:
        orthanc.stop(timeout=300)
    plugin_object = os.path.basename(plugin) if plugin else None
    dumps = read_dumps(work_dir, plugin_object or "")
    result = {"orthanc": running, "plugin": plugin, "configuration": configuration, "notInEffect": not_in_effect,
              "transports": {}}
    for transport in args.transports:
        idle, ingest = dumps["idle-" + transport], dumps["ingest-" + transport]
        seconds = windows[transport]
        rate = idle["total"] / seconds["idleSeconds"]
        per_object = {}
        for name in set(idle["objects"]) | set(ingest["objects"]):
            idle_part = idle["objects"].get(name, 0) / seconds["idleSeconds"] * seconds["ingestSeconds"]
            per_object[name] = (ingest["objects"].get(name, 0) - idle_part) / args.instances
        plugin_ir = sum(ir for name, ir in ingest["objects"].items()
                        if plugin_object and os.path.basename(name) == plugin_object)
        # The plugin's own thread (IngestWatcher): a cost per second of ingest, counted in the
        # whole process and shown apart; the plugin's instructions on Orthanc's threads are its hooks.
        thread_ir = ingest["pluginThread"]
        hooks_ir = plugin_ir - ingest["pluginThreadPluginIr"]
        idle_correction = rate * seconds["ingestSeconds"]
        result["transports"][transport] = {
            "instances": args.instances,
            "irPerInstance": (ingest["total"] - idle_correction) / args.instances,
            "rawIrPerInstance": ingest["total"] / args.instances,
            "orthancThreadsIrPerInstance": (ingest["total"] - thread_ir - idle_correction) / args.instances,
            "idleIrPerSecond": rate,
            "idleSeconds": seconds["idleSeconds"],
            "ingestSeconds": seconds["ingestSeconds"],
            "idlePercentOfWindow": 100.0 * idle_correction / ingest["total"],
            "pluginObjectIr": plugin_ir,
            "pluginObjectIrPerInstance": plugin_ir / args.instances,
            "hooksIrPerInstance": hooks_ir / args.instances,
            "pluginThreadIr": thread_ir,
            "pluginThreadIrPerInstance": thread_ir / args.instances,
            "pluginThreadIdleIr": idle["pluginThread"],
            "pluginThreadTicks": seconds.get("pluginThreadTicks"),
            "pluginThreadIrPerTick": (thread_ir / seconds["pluginThreadTicks"]
                                      if seconds.get("pluginThreadTicks") else None),
            "pluginThreadSleptInWindow": seconds.get("pluginThreadSleptInWindow"),
            "threadsInWindow": ingest["threads"],
            "pluginFunctionsIrPerInstance": dict(sorted(((name, ir / args.instances) for name, ir in
                                                         ingest["functions"].items()), key=lambda item: -item[1])[:15]),
            "irPerInstanceByObject": per_object,
        }
    for folder in ("storage", "index"):  # the instances are not needed any more; the counts are
        shutil.rmtree(os.path.join(work_dir, folder), ignore_errors=True)
    return result


# --- the comparison ----------------------------------------------------------------------------

def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def compare(withouts, withs, transport, configuration, version):
    """One row, for one transport: the median of the runs without the plugin against the median of
    the runs with it; the range of the pairs (in the order they ran) shows the spread."""
    a = [run["transports"][transport] for run in withouts]
    b = [run["transports"][transport] for run in withs]
    null = configuration == "null"
    # The whole process, every thread (the plugin's own included), on both sides.
    without = median([r["irPerInstance"] for r in a])
    with_plugin = median([r["irPerInstance"] for r in b])
    plugin_ir = median([r["pluginObjectIrPerInstance"] for r in b])
    hooks_ir = median([r.get("hooksIrPerInstance", r["pluginObjectIrPerInstance"]) for r in b])
    pairs = [100.0 * (y["irPerInstance"] / x["irPerInstance"] - 1) for x, y in zip(a, b)]
    orthanc_threads = median([r.get("orthancThreadsIrPerInstance", r["irPerInstance"]) for r in b])
    row = {"orthanc": version, "transport": transport, "configuration": configuration, "runs": len(pairs),
           "irWithout": without, "irWith": with_plugin, "changePercent": 100.0 * (with_plugin / without - 1),
           "pairChangePercent": pairs,
           # Orthanc's threads only (the plugin's thread left out): what its hooks add per instance
           "changeOnOrthancThreadsPercent": 100.0 * (orthanc_threads / without - 1),
           "pluginObjectIrPerInstance": None if null else plugin_ir,
           "pluginObjectIrWithout": max(r["pluginObjectIr"] for r in a),
           "pluginObjectIrWith": min(r["pluginObjectIr"] for r in b),
           "pluginSharePercent": None if null else 100.0 * hooks_ir / with_plugin,
           "hooksIrPerInstance": None if null else hooks_ir,
           "pluginThreadIrPerInstance": None if null else median([r.get("pluginThreadIrPerInstance", 0) for r in b]),
           "pluginThreadIrPerTick": None if null else median([r.get("pluginThreadIrPerTick") or 0 for r in b]),
           "pluginThreadTicks": None if null else [r.get("pluginThreadTicks") for r in b],
           "pluginThreadIdleIr": max(r.get("pluginThreadIdleIr", 0) for r in b),
           "pluginThreadSleptInWindow": all(r.get("pluginThreadSleptInWindow", True) is not False for r in b),
           "idlePercentOfWindow": max(r["idlePercentOfWindow"] for r in a + b),
           "notInEffect": sorted({item["option"] + ": " + item["reason"] for run in withs
                                  for item in run["notInEffect"]})}
    objects = set()
    for r in a + b:
        objects |= set(r["irPerInstanceByObject"])
    deltas = [(name, median([r["irPerInstanceByObject"].get(name, 0) for r in b]) -
               median([r["irPerInstanceByObject"].get(name, 0) for r in a])) for name in objects]
    deltas.sort(key=lambda item: -abs(item[1]))
    row["deltaByObject"] = [{"object": name, "irPerInstance": delta} for name, delta in deltas[:8]]
    middle = sorted(b, key=lambda r: r["irPerInstance"])[len(b) // 2]  # the median run with the plugin
    row["pluginFunctions"] = middle.get("pluginFunctionsIrPerInstance", {})
    return row


def run(args):
    root = os.path.abspath(args.work or tempfile.mkdtemp(prefix="instruction-count-"))
    os.makedirs(root, exist_ok=True)
    series = {t: write_series(os.path.join(root, "series-" + t), args.warmup + args.instances, seed=SERIES_SEEDS[t],
                              rows=args.size, columns=args.size) for t in args.transports}
    plugin = os.path.abspath(args.plugin)
    if not os.path.isfile(plugin):
        raise SystemExit("plugin not found: %s" % plugin)
    rows, runs = [], []

    def one(version, configuration, with_plugin, label):
        # Folders of the same length for every run: Orthanc's storage paths are built from it, and a
        # path a few characters longer changes the instructions of every string copy and allocation
        # that carries it (about 0.07% per instance for 6 characters).
        folder = os.path.join(root, "run-%03d" % (len(runs) + 1))
        log("Orthanc %s, %s, %s (%s) ..." % (version, configuration, label, folder))
        result = measure(folder, version, plugin if with_plugin else None, configuration, series, args)
        result["label"] = label
        result["folder"] = folder
        runs.append(result)
        return result

    for version in args.orthanc:
        # The runs without the plugin depend only on Orthanc's own options: shared by the
        # configurations that have the same (default, timed-storage, ... share one set).
        baselines = {}
        for configuration in args.configurations:
            key = json.dumps(CONFIGURATIONS[configuration][1], sort_keys=True)
            fresh = key not in baselines
            baselines.setdefault(key, [])
            withouts, withs = baselines[key], []
            for repeat in range(args.repeat):  # without and with alternate
                if fresh:
                    withouts.append(one(version, configuration, False, "without-%d" % (repeat + 1)))
                if configuration == "null":  # the other side is the same Orthanc without the plugin, again
                    withs.append(one(version, configuration, False, "without-again-%d" % (repeat + 1)))
                else:
                    withs.append(one(version, configuration, True, "with-%d" % (repeat + 1)))
            for transport in args.transports:
                rows.append(compare(withouts, withs, transport, configuration, version))
    for transport in args.transports:
        shutil.rmtree(os.path.join(root, "series-" + transport), ignore_errors=True)
    return {"plugin": plugin, "instances": args.instances, "warmup": args.warmup, "size": args.size,
            "repeat": args.repeat, "idleSeconds": args.idle_seconds, "quietSeconds": args.quiet_seconds,
            "work": root, "command": " ".join(["python -m", __spec__.name] + sys.argv[1:]), "rows": rows,
            "runs": runs}


def number(value, digits=0):
    return "-" if value is None else "{:,.{}f}".format(value, digits)


def change(row):
    text = "%+.3f%%" % row["changePercent"]
    if len(row["pairChangePercent"]) > 1:  # the spread of the pairs of runs
        text += " (%+.3f .. %+.3f)" % (min(row["pairChangePercent"]), max(row["pairChangePercent"]))
    return text


def verdict(row, null_spread=None):
    """"met" only for a figure that can be true: the plugin executes instructions, so a change below
    zero by more than the null comparison strays (or below zero without a null) is no measurement."""
    change = row["changePercent"]
    if change != change or row.get("pluginObjectIrWith", 1) <= 0:
        return "impossible figure"
    if change < 0 and (null_spread is None or change < -null_spread):
        return "impossible figure (negative: below the method's resolution)"
    if not row.get("pluginThreadSleptInWindow", True):
        return "not measured (the plugin's thread still ticked at the end of the window)"
    if change <= TARGET_PERCENT:
        return "met"
    return "missed"


def render(result, markdown=False):
    head = ["Orthanc", "transport", "configuration", "Ir/instance without", "Ir/instance with", "change",
            "plugin .so Ir/instance", "plugin .so share"]
    body = []
    for row in result["rows"]:
        body.append([row["orthanc"], TRANSPORT_NAMES[row["transport"]], row["configuration"], number(row["irWithout"]),
                     number(row["irWith"]), change(row),
                     number(row["pluginObjectIrPerInstance"]),
                     "-" if row["pluginSharePercent"] is None else "%.3f%%" % row["pluginSharePercent"]])
    lines = []
    if markdown:
        lines += markdown_table(head, body).split("\n")
    else:
        widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
        for cells in [head] + body:
            lines.append("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    lines.append("")
    lines.append("%d instances per transport and run after %d uninstrumented, %dx%d pixels, %d run(s) of each side "
                 "per configuration; plugin %s" % (result["instances"], result["warmup"], result["size"],
                                                   result["size"], result["repeat"], result["plugin"]))
    worst_idle = max([r["idlePercentOfWindow"] for r in result["rows"]] or [0])
    lines.append("idle correction: at most %.2f%% of a window's instructions" % worst_idle)
    null_changes = [abs(c) for row in result["rows"] if row["configuration"] == "null" for c in row["pairChangePercent"]]
    null_spread = max(null_changes) if null_changes else None
    for row in result["rows"]:
        if row["configuration"] == "default":
            lines.append("target (at most +%.2f%% at the default), Orthanc %s, %s: %+.3f%% whole process (Orthanc's "
                         "threads %+.3f%%), %s" % (TARGET_PERCENT, row["orthanc"], TRANSPORT_NAMES[row["transport"]],
                                                   row["changePercent"], row["changeOnOrthancThreadsPercent"],
                                                   verdict(row, null_spread)))
            if row.get("pluginThreadTicks"):
                lines.append("  the plugin's thread: %s Ir per instance under callgrind, %s ticks in the windows, %s Ir "
                             "per tick; %s Ir while Orthanc was idle" % (
                                 number(row["pluginThreadIrPerInstance"]), row["pluginThreadTicks"],
                                 number(row["pluginThreadIrPerTick"]), number(row["pluginThreadIdleIr"])))
    notes = collections.OrderedDict()
    for row in result["rows"]:
        for note in row["notInEffect"]:
            notes.setdefault("Orthanc %s, %s: not in effect: %s" % (row["orthanc"], row["configuration"], note))
    lines += list(notes)
    return "\n".join(lines)


def render_deltas(result):
    lines = ["", "Where the extra instructions are, per instance (with - without), largest first:"]
    for row in result["rows"]:
        if row["configuration"] == "null":
            continue
        parts = ["%s %s" % (os.path.basename(d["object"] or "?"), number(d["irPerInstance"], 0))
                 for d in row["deltaByObject"][:5]]
        lines.append("  %s %s %s: %s" % (row["orthanc"], row["transport"], row["configuration"], ", ".join(parts)))
    return "\n".join(lines)


def render_functions(result, count=8):
    lines = ["", "The plugin's own instructions per instance by function, default configuration (median run):"]
    for row in result["rows"]:
        if row["configuration"] != "default":
            continue
        parts = ["%s %s" % (name.replace("(anonymous namespace)::", "").split("(")[0].replace("IngestPerf::", ""),
                            number(ir))
                 for name, ir in list(row["pluginFunctions"].items())[:count]]
        lines.append("  %s %s: %s" % (row["orthanc"], row["transport"], ", ".join(parts)))
    return "\n".join(lines) if len(lines) > 2 else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", default=default_plugin_path(), help="the plugin to measure (default %(default)s)")
    parser.add_argument("--orthanc", default=",".join(v for v in ALL_ORTHANCS if orthanc_available(v)),
                        help="comma-separated Orthanc versions: %s (default: those available here)"
                        % ", ".join(ALL_ORTHANCS))
    parser.add_argument("--configurations", default=",".join(DEFAULT_CONFIGURATIONS),
                        help="comma-separated, of: " + ", ".join(CONFIGURATIONS))
    parser.add_argument("--transports", default=",".join(TRANSPORTS), help="comma-separated, of: http, dicom")
    parser.add_argument("--instances", type=int, default=40, help="instances counted per transport and run")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each side (without, with) per configuration, alternating; the figures are "
                             "their medians (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=4, help="instances stored uninstrumented first")
    parser.add_argument("--size", type=int, default=512, help="rows and columns of the synthetic CT slices")
    parser.add_argument("--idle-seconds", type=float, default=3.0, help="length of the idle window")
    parser.add_argument("--quiet-seconds", type=float, default=6.0,
                        help="wait after the last instance (warm-up and window) until the plugin's thread sleeps")
    parser.add_argument("--work", help="folder for the runs (default: a new one in /tmp); callgrind files stay there")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    args = parser.parse_args()
    args.orthanc = [v for v in args.orthanc.split(",") if v]
    args.configurations = [c for c in args.configurations.split(",") if c]
    args.transports = [t for t in args.transports.split(",") if t]
    for name, chosen, known in (("Orthanc", args.orthanc, ALL_ORTHANCS), ("configuration", args.configurations,
                                CONFIGURATIONS), ("transport", args.transports, TRANSPORTS)):
        unknown = [c for c in chosen if c not in known]
        if unknown or not chosen:
            parser.error("unknown or no %s: %s (known: %s)" % (name, ", ".join(unknown), ", ".join(known)))
    for version in args.orthanc:
        if not orthanc_available(version):
            parser.error(unavailable_reason(version))
    if args.instances < 1 or args.warmup < 1 or args.repeat < 1:
        parser.error("--instances, --warmup and --repeat must be at least 1")
    started = time.monotonic()
    result = run(args)
    result["seconds"] = time.monotonic() - started
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    print(render(result, markdown=args.markdown))
    print(render_deltas(result))
    print(render_functions(result))
    log("%.0f s; callgrind files in %s" % (result["seconds"], result["work"]))


if __name__ == "__main__":
    main()
