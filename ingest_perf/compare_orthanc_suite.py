"""Run Orthanc's own integration suite (orthanc-tests) with and without the ingest-perf plugin,
in each mode of the plugin, and report every test whose outcome differs.

    python -m ingest_perf.compare_orthanc_suite --suite ORTHANC_TESTS_CHECKOUT \\
        --plugin build/libOrthancIngestPerf.so --python PY2ENV/bin/python [--orthanc 1.10.1|1.12.7|1.13.0] \\
        [--modes default,timed-storage] [--tests ingest | --tests 'test_store*,test_metadata*'] \\
        [--work-dir DIR] [--json result.json]
    python -m ingest_perf.compare_orthanc_suite --summary build/orthanc-suite

Resources/run-orthanc-suite.sh runs it for each Orthanc whose suite is checked out. --suite is a
checkout of orthanc-tests at the tag of the running Orthanc (Orthanc-1.10.1 for Debian 12's Orthanc,
Orthanc-1.12.7 for Debian 13's, Orthanc-1.13.0 for Debian unstable's); nothing in it is changed.
--orthanc is the Orthanc under test and its peer: Debian 12's 1.10.1 by default, or Debian 13's
1.12.7 or Debian unstable's 1.13.0 in their roots of Resources/make-debian-root.sh trixie and sid
(the folders of the plugin and of the suite are then made visible in the root through
$INGEST_PERF_BIND); the peer of 1.13.0 is Debian 13's 1.12.7 (SUITE_PEERS says why). The Orthanc under test is an OrthancProcess
(ingest_perf.orthanc_process), as in every test. For every mode it is started twice from the
suite's own generated configuration, without the plugin and then with it; the two configurations
differ only in "Plugins" and in the mode's extra configuration. The modes are
listed at the end of --help (their one description: ingest_perf/orthanc_suite.py, shown the same in
docs/reliability.md). A test differs when its outcome differs, or when it fails on both sides with
a different error line (the exception's first line, with addresses, IDs, UIDs and temporary paths
masked). The result of a run goes to WORK_DIR/result.json; --summary RESULTS prints the latest
result of every Orthanc version, test selection and mode kept under RESULTS.

Tests/Run.py starts the second Orthanc the suite needs (its peer, AET ORTHANCTEST) itself; the tool
keeps the peer's log. Outcomes are recorded per test by ingest_perf/suite_runner.py, which the
suite's interpreter runs in Run.py's place and which replaces unittest.main (the tests' output is
not parsed). A run spoiled by something outside the plugin (the peer died,
the Orthanc without the plugin died) is run again (--retries). A difference is run again once on
both sides (--recheck); one that does not come back is reported as flaky, without failing.

GenerateConfigurationForTests.py downloads Orthanc's default configuration from the internet; the
tool runs it through ingest_perf/suite_configuration.py, with that download replaced by the output
of `Orthanc --config=FILE` of the Orthanc under test, so the generator's own edits apply unchanged.

Hard-coded by the suite, hence runs are sequential (a lock file refuses a second run of this tool,
busy ports are refused): HTTP 8042 and DICOM 4242 for the Orthanc under test (the generated
configuration's "self" modality and peers point there), HTTP 5000 and DICOM 5001 for the peer,
/tmp/IntegrationTestsConfiguration.json and /tmp/OrthancStorage for the peer (emptied before every
run), /tmp/DICOMDIR and /tmp/GETSCU in some tests. DCMTK is called as /usr/local/bin/NAME when
that exists, else through PATH: the suite runs with PATH=/usr/bin:/bin:/usr/sbin:/sbin, and a
script (pip's pynetdicom) in /usr/local/bin is refused.

Needs Python 2.7 with httplib2, Pillow, numpy and pydicom 1.4.1 (the last pydicom for Python 2),
for the suites of the three tags: their tests are Python 2 code (str/bytes, iterkeys, map and filter
as lists); Resources/run-orthanc-suite.sh makes that interpreter. And Debian's dcmtk, dicom3tools and
libgdcm-tools, on the host and in the Debian 13 and unstable roots (tests call storescu, findscu,
movescu, getscu, dcm2xml, dciodvfy, dcentvfy, gdcmconv, and make Orthanc call gdcmconv and dcmodify
from Lua).

Exit code: 0 no reproduced difference, 1 a test differs, 2 the comparison could not be made
(plugin not loaded, timed storage not started, nothing transcoded at ingest in a mode with
IngestTranscoding, Orthanc did not start, ports busy...).
"""
import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

from ingest_perf import suite_configuration, suite_runner
from ingest_perf.clients import environment
from ingest_perf.orthanc_process import (ALL_ORTHANCS, DEBIAN13_ORTHANC, DEBIAN_SID_ORTHANC, HOST_ORTHANC, OrthancError,
                                         OrthancProcess, executable, orthanc_available, unavailable_reason)
from ingest_perf.orthanc_suite import (DEFAULT_MODES, MODES, compare, differs, mode_configuration, mode_environment,
                                       modes_text, new_run_folder, outcome, short_message, summarise, summary_table,
                                       transcoded)

DB_STORAGE_SECTIONS = ("PostgreSQL", "MySQL", "Odbc")
# The tests that exercise ingest, its metadata and what is stored: every upload path (REST, ZIP,
# C-STORE in and out, peers, WebDAV, Lua, modification and anonymization that store new instances),
# attachments, compression, transcoding and the statistics. test_bitbucket_issue_140 modifies a
# series, and its Issue140.dcm (JPEG lossless, 8 bits) is the one instance of both suites that the
# transcoding mode transcodes at ingest outside the tests it makes fail.
INGEST_TESTS = ",".join([
    "test_upload*", "test_store*", "test_*storescu*", "test_metadata*", "test_custom_attachment",
    "test_revisions_*", "test_changes*", "test_incoming_*", "test_modify*", "test_anonymize*", "test_split*",
    "test_merge*", "test_bulk_modify", "test_*transcod*", "test_lua*", "test_autorouting", "test_webdav",
    "test_peer*", "test_reconstruct*", "test_statistics", "test_system", "test_dicom_disk_size",
    "test_compression", "test_archive", "test_media_archive", "test_dicomweb*", "test_pixel_data_offset",
    "test_transfer_syntax_no_metaheader", "test_getscu", "test_rest_movescu", "test_bitbucket_issue_140",
])
PEER_HTTP_PORT, PEER_DICOM_PORT = 5000, 5001
# The Orthanc that Run.py starts as its peer, when not the one under test. Run.py edits the peer's
# configuration as `Orthanc --config` writes it (ExecuteLuaEnabled, HttpCompressionEnabled,
# DicomAssociationCloseDelay...); since 1.13.0 that file no longer holds those options (they moved to
# AdvancedConfiguration.json), so a 1.13.0 peer keeps Lua off and every test errors in its setUp. The
# suite's README runs its peer from an earlier release (0.8.6, 1.12.11): the 1.13.0 suite's peer is
# Debian 13's 1.12.7, the same on both sides.
SUITE_PEERS = {DEBIAN_SID_ORTHANC: DEBIAN13_ORTHANC}
PEER_TMP_PATHS = ["/tmp/OrthancStorage", "/tmp/IntegrationTestsConfiguration.json"]
SUITE_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
LOCK_FILE = "/tmp/compare-orthanc-suite.lock"


class CompareError(Exception):
    """The comparison cannot be made (exit code 2)."""


def log(message):
    print(message, flush=True)


# The environment of the suite and of the Orthancs: the suite's PATH, no Python of ours.
SUITE_ENVIRONMENT = {"PATH": SUITE_PATH, "PYTHONUNBUFFERED": "1", "PYTHONPATH": None, "PYTHONHOME": None,
                     "VIRTUAL_ENV": None, "PYENV_VERSION": None}


def clean_env(extra=None):
    return environment(dict(SUITE_ENVIRONMENT, **(extra or {})))


def port_busy(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
            return False
        except OSError:
            return True


def wait_ports_free(ports, seconds=30):
    deadline = time.monotonic() + seconds
    while True:
        busy = [p for p in ports if port_busy(p)]
        if not busy:
            return
        if time.monotonic() > deadline:
            raise CompareError("TCP port(s) %s in use: another Orthanc or suite is running (the suite "
                               "hard-codes 8042/4242 for the Orthanc under test and 5000/5001 for its peer)"
                               % ", ".join(map(str, busy)))
        time.sleep(0.5)


def tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def peer_orthanc(version):
    """The version of the Orthanc that Run.py starts as its peer when version is under test."""
    return SUITE_PEERS.get(version, version)


class Tools:
    def __init__(self, args):
        self.args = args
        self.work = args.work_dir
        self.suite = args.suite
        self.orthanc = args.orthanc  # the version; its command:
        self.executable = executable(args.orthanc)
        self.peer = executable(peer_orthanc(args.orthanc))  # the one Run.py starts

    # ---- configuration ---------------------------------------------------------------------
    def generate_configuration(self):
        default = os.path.join(self.work, "orthanc-default-configuration.json")
        subprocess.run([self.executable, "--config=%s" % default], check=True, env=clean_env(),
                       stdout=subprocess.DEVNULL)
        target = os.path.join(self.work, "suite-configuration.json")
        result = subprocess.run(
            [self.args.python, suite_configuration.__file__, os.path.join(self.suite, "GenerateConfigurationForTests.py"),
             "--force", "--target", target],
            cwd=self.suite, env=clean_env({"COMPARE_SUITE_DEFAULT_CONFIGURATION": default}),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0 or not os.path.exists(target):
            raise CompareError("GenerateConfigurationForTests.py failed:\n" + result.stdout)
        with open(target) as f:
            return json.load(f)

    def side_configuration(self, base, mode, with_plugin, folder):
        config = json.loads(json.dumps(base))
        storage = os.path.join(folder, "storage")
        config["StorageDirectory"] = storage
        config["IndexDirectory"] = storage
        config["Plugins"] = [os.path.abspath(self.args.plugin)] if with_plugin else []
        for key, value in mode_configuration(mode).items():
            config[key] = value
        notes = []
        if mode.startswith("timed-storage") and not self.args.keep_db_storage_sections:
            for section in DB_STORAGE_SECTIONS:
                if isinstance(config.get(section), dict) and config[section].get("EnableStorage"):
                    config[section]["EnableStorage"] = False
                    notes.append("%s.EnableStorage set to false (no such plugin is loaded)" % section)
        return config, notes

    # ---- processes -------------------------------------------------------------------------
    def start_orthanc(self, config, folder, mode):
        """The Orthanc under test, an OrthancProcess on the configuration's own ports (the suite's),
        with the mode's environment (TCP_NODELAY=1 in tcp-nodelay) on both sides."""
        orthanc = OrthancProcess(folder, plugin_path=None, extra_config=config, orthanc=self.orthanc,
                                 env=dict(SUITE_ENVIRONMENT, **mode_environment(mode)),
                                 http_port=int(config.get("HttpPort", 8042)),
                                 dicom_port=int(config.get("DicomPort", 4242)))
        try:
            return orthanc.start(timeout=90)
        except OrthancError as error:
            raise CompareError("the Orthanc under test did not start: %s" % error)

    def run_suite(self, folder, tests, http_port):
        """Runs Tests/Run.py against the Orthanc under test; returns the parsed records."""
        for path in PEER_TMP_PATHS:
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)
        results = os.path.join(folder, "results.jsonl")
        if os.path.exists(results):
            os.remove(results)
        log_path = os.path.join(folder, "suite.log")
        tests_folder = os.path.join(self.suite, "Tests")
        command = [self.args.python, suite_runner.__file__, os.path.join(tests_folder, "Run.py"), "--force",
                   "--orthanc", self.peer, "--rest", str(http_port)]
        peer_log = os.path.join(folder, "peer-orthanc.log")
        # PYTHONPATH: Run.py imports the modules of its folder, as when it runs as the script itself.
        env = clean_env({"PYTHONPATH": tests_folder, "COMPARE_SUITE_RESULTS": results,
                         "COMPARE_SUITE_TESTS": ",".join(tests),
                         "COMPARE_SUITE_ORTHANC": self.peer, "COMPARE_SUITE_PEER_LOG": peer_log,
                         "COMPARE_SUITE_PEER_PORT": str(PEER_HTTP_PORT),
                         "COMPARE_SUITE_REMOTE_PORT": str(http_port)})
        with open(log_path, "wb") as logfile:
            process = subprocess.Popen(command, cwd=self.suite, env=env, stdout=logfile, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
            timed_out = False
            try:
                process.wait(self.args.run_timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            # Run.py stops its peer itself; kill whatever is left of the group (the peer after a
            # timeout or an os._exit).
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        return parse_results(results, timed_out, log_path, process.returncode)

    # ---- plugin checks ---------------------------------------------------------------------
    @staticmethod
    def plugin_stats(orthanc):
        """(status, /perf/stats parsed or None) of the Orthanc under test; status None when unreachable."""
        try:
            answer = orthanc.get("/perf/stats", timeout=10)
        except OSError:
            return None, None
        try:
            return answer.status_code, answer.json() if answer.status_code == 200 else None
        except ValueError:
            return answer.status_code, None

    def check_plugin(self, mode, orthanc, when):
        status, stats = self.plugin_stats(orthanc)
        if stats is None or stats.get("plugin") != "ingest-perf":
            raise CompareError("%s: the plugin is not answering GET /perf/stats (HTTP %s) %s the suite"
                               % (mode, status, when))
        problems = []
        if not stats.get("enabled", False):
            problems.append("the plugin is not enabled: %s" % (stats.get("reason") or stats.get("notStarted", "?")))
        storage = stats.get("storage") or {}
        if mode.startswith("timed-storage") and storage.get("timed") is not True:
            problems.append("TimedStorage did not start: storage.timed is %s, storage.reason: %s"
                            % (json.dumps(storage.get("timed")), storage.get("reason", "?")))
        ingest_transcoding = mode_configuration(mode).get("IngestTranscoding")
        if ingest_transcoding and (stats.get("orthancOptions") or {}).get("IngestTranscoding") != ingest_transcoding:
            problems.append("the plugin does not see IngestTranscoding")
        no_delay = stats.get("dicomTcpNoDelay") or {}
        if mode == "tcp-nodelay" and (no_delay.get("inEffect"), no_delay.get("source")) != (True, "environment"):
            problems.append("TCP_NODELAY is not in effect from Orthanc's environment: dicomTcpNoDelay is %s"
                            % json.dumps(no_delay))
        if problems:
            raise CompareError("%s, %s the suite: %s" % (mode, when, "; ".join(problems)))
        return stats

    @staticmethod
    def syntaxes(orthanc):
        """[received syntax, stored syntax, instances stored] for every pair the plugin saw (its
        receivedSyntax and storedSyntax labels)."""
        def stats(**query):
            answer = orthanc.get("/perf/stats", params=query, timeout=10)
            if answer.status_code != 200:
                raise CompareError("GET /perf/stats?%s: HTTP %d" % (
                    "&".join("%s=%s" % kv for kv in sorted(query.items())), answer.status_code))
            return answer.json()
        pairs = []
        for received in stats(groupBy="receivedSyntax").get("groups") or []:
            syntax = received["labels"]["receivedSyntax"]
            for stored in stats(receivedSyntax=syntax, groupBy="storedSyntax").get("groups") or []:
                if stored["instances"]["stored"]:
                    pairs.append([syntax, stored["labels"]["storedSyntax"], stored["instances"]["stored"]])
        return pairs

    def check_transcoded(self, mode, orthanc):
        """In a mode with IngestTranscoding: the pairs of syntaxes (syntaxes()); the run fails unless
        the plugin saw at least one instance stored in another transfer syntax than the one received,
        that is, unless Orthanc really transcoded at ingest."""
        pairs = self.syntaxes(orthanc)
        if not transcoded(pairs):
            raise CompareError("%s, after the suite: the plugin saw no instance stored in another transfer syntax "
                               "than the one received (Orthanc transcoded nothing at ingest): %s"
                               % (mode, json.dumps(pairs)))
        return pairs


def parse_results(path, timed_out, log_path, exit_code):
    selected, outcomes, order, running, finished, down, last = None, {}, [], None, False, [], "the first test"
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                event = record.get("event")
                if event == "selected":
                    selected = [short_id(t) for t in record["tests"]]
                elif event == "start":
                    running = last = short_id(record["test"])
                elif event == "end":
                    name = short_id(record["test"])
                    if name not in outcomes:
                        order.append(name)
                    previous = outcomes.get(name)
                    # Keep the worst outcome when a test reports twice (tearDown error after a pass).
                    if previous is None or previous["outcome"] in ("passed", "skipped"):
                        outcomes[name] = outcome({"outcome": record["outcome"], "seconds": record.get("seconds"),
                                                  "message": short_message(record.get("traceback")) or
                                                  (record.get("reason") or ""),
                                                  "traceback": record.get("traceback")}, record.get("traceback"))
                    running = None
                elif event == "finished":
                    finished = True
                elif event == "peer-exit":
                    down.append({"server": "peer", "port": PEER_HTTP_PORT, "before": last,
                                 "peerExitCode": record.get("peerExitCode"), "exited": True})
                elif event == "down":
                    down.append({"server": record["server"], "port": record["port"],
                                 "before": short_id(record["before"]), "peerExitCode": record.get("peerExitCode")})
    if selected is None:
        raise CompareError("Tests/Run.py selected no test (exit code %s):\n%s" % (exit_code, tail(log_path)))
    if not selected:
        raise CompareError("no test of the suite matches --tests")
    why = "timed out" if timed_out else "the suite process ended (exit code %s) before finishing" % exit_code
    if running is not None and running not in outcomes:
        outcomes[running] = {"outcome": "aborted", "seconds": None, "message": "running when " + why,
                             "traceback": None, "error": "running when " + why}
    for name in selected:
        if name not in outcomes:
            outcomes[name] = {"outcome": "not-run", "seconds": None, "message": why, "traceback": None, "error": why}
    return {"selected": selected, "outcomes": outcomes, "finished": finished and not timed_out,
            "exitCode": exit_code, "timedOut": timed_out, "serversDown": down}


def short_id(test_id):
    # "Tests.Orthanc.test_x" or "__main__.Orthanc.test_x" -> "Orthanc.test_x"
    parts = test_id.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else test_id


def run_side(tools, base, mode, with_plugin, folder, tests):
    """Starts the Orthanc under test, runs the suite, stops it. Returns the side's record."""
    os.makedirs(folder, exist_ok=True)
    storage = os.path.join(folder, "storage")
    if os.path.isdir(storage):
        shutil.rmtree(storage)
    config, notes = tools.side_configuration(base, mode, with_plugin, folder)
    http_port = int(config.get("HttpPort", 8042))
    dicom_port = int(config.get("DicomPort", 4242))
    wait_ports_free([http_port, dicom_port, PEER_HTTP_PORT, PEER_DICOM_PORT])
    started = time.monotonic()
    orthanc = tools.start_orthanc(config, folder, mode)
    side = {"plugin": with_plugin, "configuration": orthanc.config_path, "orthancLog": orthanc.log_path,
            "suiteLog": os.path.join(folder, "suite.log"), "peerLog": os.path.join(folder, "peer-orthanc.log"),
            "notes": notes}
    try:
        if with_plugin:
            stats = tools.check_plugin(mode, orthanc, "before")
            side["pluginBefore"] = {"storage": stats.get("storage"), "configuration": stats.get("configuration"),
                                    "notInEffect": stats.get("notInEffect", [])}
        else:
            status, _ = tools.plugin_stats(orthanc)
            if status == 200:
                raise CompareError("%s: /perf/stats answers without the plugin: is it loaded from another "
                                   "folder?" % mode)
        result = tools.run_suite(folder, tests, http_port)
        crashed = not orthanc.is_running()
        side["orthancCrashed"] = crashed
        if crashed:
            side["orthancExitCode"] = orthanc.stop()
            side["orthancLogTail"] = orthanc.log_tail(30)
        elif with_plugin:
            stats = tools.check_plugin(mode, orthanc, "after")
            with open(os.path.join(folder, "perf-stats-after.json"), "w") as f:
                json.dump(stats, f, indent=1)
            timed = stats.get("storage") or {}  # (not `storage`: the folder removed below)
            side["pluginAfter"] = {"storage": {k: v for k, v in timed.items() if k != "operations"},
                                   "storageOperations": {k: v.get("count") for k, v in
                                                         (timed.get("operations") or {}).items()},
                                   "hooks": stats.get("hooks")}
            if mode_configuration(mode).get("IngestTranscoding"):
                side["pluginAfter"]["syntaxes"] = tools.check_transcoded(mode, orthanc)
        side.update(result)
    finally:
        orthanc.stop(timeout=60)
    # The stored instances are not a result (the logs and outcomes are): kept runs stay small.
    shutil.rmtree(storage, ignore_errors=True)
    side["seconds"] = round(time.monotonic() - started, 1)
    return side


def environment_failure(side):
    """Why a run says nothing about the plugin (the peer, or the Orthanc without the plugin, went
    away), or None."""
    for event in side.get("serversDown", []):
        if event["server"] == "peer" or not side["plugin"]:
            code = event["peerExitCode"]
            if isinstance(code, int) and code < 0:
                code = "%d (%s)" % (code, signal.Signals(-code).name)
            return ("the %s Orthanc (port %d) %s %s (peer exit code %s)"
                    % (event["server"], event["port"], "exited during" if event.get("exited") else
                       "stopped answering before", event["before"], code))
    if side.get("orthancCrashed"):
        if not side["plugin"]:
            return "the Orthanc under test, without the plugin, died (exit code %s)" % side.get("orthancExitCode")
        return None  # a result: the Orthanc with the plugin died
    if not side.get("finished") and not side.get("timedOut"):
        return "the suite process ended (exit code %s) before its last test" % side.get("exitCode")
    if side.get("timedOut") and not side["plugin"]:
        return "the suite timed out without the plugin"
    return None


def run_side_retrying(tools, base, mode, with_plugin, folder, tests):
    attempts = []
    for attempt in range(tools.args.retries + 1):
        side = run_side(tools, base, mode, with_plugin, folder + ("" if attempt == 0 else "-retry%d" % attempt), tests)
        failure = environment_failure(side)
        for event in side.get("serversDown", []):
            if event["server"] == "under-test" and with_plugin:
                log("    THE ORTHANC UNDER TEST, WITH THE PLUGIN, stopped answering before %s" % event["before"])
        if failure is None:
            side["environmentFailures"] = attempts
            return side
        log("    run not usable: %s; peer log: %s" % (failure, side["peerLog"]))
        attempts.append({"folder": folder, "failure": failure})
    raise CompareError("%s: %d run(s) failed for reasons outside the plugin: %s"
                       % (mode, len(attempts), "; ".join(a["failure"] for a in attempts)))


def method_names(names):
    return [n.split(".")[-1] for n in names]


def run_mode(tools, base, mode, tests):
    log("\n=== mode %s" % mode)
    started = time.monotonic()
    folder = os.path.join(tools.work, mode)
    record = {"extra": mode_configuration(mode), "environment": mode_environment(mode)}
    sides = {}
    for label, with_plugin in (("without", False), ("with", True)):
        log("  %s the plugin: running the suite..." % label)
        sides[label] = run_side_retrying(tools, base, mode, with_plugin, os.path.join(folder, label + "-plugin"), tests)
        side = sides[label]
        counts = {}
        for value in side["outcomes"].values():
            counts[value["outcome"]] = counts.get(value["outcome"], 0) + 1
        log("    %.0f s, %s%s" % (side["seconds"], ", ".join("%s %d" % kv for kv in sorted(counts.items())),
                                 "" if side["finished"] else " (suite did not finish)"))
        for item in (side.get("pluginBefore") or {}).get("notInEffect") or []:
            if isinstance(item, dict):
                log("    the plugin says %s is not in effect: %s" % (item.get("option"), item.get("reason")))
        operations = (side.get("pluginAfter") or {}).get("storageOperations")
        if operations:
            log("    timed storage operations seen by the plugin: %s"
                % ", ".join("%s %s" % kv for kv in sorted(operations.items())))
        pairs = (side.get("pluginAfter") or {}).get("syntaxes")
        if pairs:
            log("    instances stored in another transfer syntax than received, seen by the plugin: %d (%s)"
                % (transcoded(pairs), ", ".join("%s -> %s: %d" % tuple(p) for p in pairs if transcoded([p]))))
        if label == "without":  # the same on both sides
            for note in side["notes"]:
                log("    note: " + note)
            if side["outcomes"] and "passed" not in counts:
                # A suite that passes nothing without the plugin judges nothing (1.13.0's with a 1.13.0
                # peer: every setUp refused): not "0 differing".
                raise CompareError("%s: no test passed without the plugin (%s): the suite cannot run here, so it "
                                   "judges nothing; its log: %s" % (mode, ", ".join(
                                       "%s %d" % kv for kv in sorted(counts.items())), side.get("suiteLog", folder)))
        if side.get("orthancCrashed"):
            log("    THE ORTHANC UNDER TEST DIED during the suite (exit code %s); end of its log:\n%s"
                % (side["orthancExitCode"], textwrap.indent(side["orthancLogTail"], "      ")))
    rows = compare(sides["without"], sides["with"])
    summary, differing, failing_both = summarise(rows)
    details = {name: {"without": a, "with": b} for name, a, b in rows}

    # Run the differences again, once per side, to tell a real difference from a flaky test.
    rechecks = []
    for attempt in range(tools.args.recheck):
        if not differing:
            break
        log("  recheck %d of %d test(s) that differ..." % (attempt + 1, len(differing)))
        again = {}
        for label, with_plugin in (("without", False), ("with", True)):
            again[label] = run_side_retrying(tools, base, mode, with_plugin,
                                    os.path.join(folder, "recheck%d-%s-plugin" % (attempt + 1, label)),
                                    method_names(differing))
        still = []
        for name in differing:
            a = again["without"]["outcomes"].get(name, {"outcome": "not-run", "error": "not run"})
            b = again["with"]["outcomes"].get(name, {"outcome": "not-run", "error": "not run"})
            details[name].setdefault("rechecks", []).append({"without": a, "with": b})
            if differs(a, b):
                still.append(name)
        rechecks.append({"tests": differing, "stillDiffering": still})
        differing = still
    flaky = [n for n in details if "rechecks" in details[n] and n not in differing]

    summary["differing"] = len(differing)
    summary["failingDifferently"] = sum(differs(details[n]["without"], details[n]["with"]) == "error line"
                                        for n in differing)
    summary["flaky"] = len(flaky)
    record.update({
        "seconds": round(time.monotonic() - started, 1),
        "summary": summary,
        "differing": [dict(test=n, **details[n]) for n in differing],
        "flaky": [dict(test=n, **details[n]) for n in flaky],
        "failingInBoth": [{"test": n, "without": details[n]["without"]["message"],
                           "with": details[n]["with"]["message"]} for n in failing_both],
        "sides": {k: {x: y for x, y in v.items() if x != "outcomes"} for k, v in sides.items()},
        "outcomes": {n: {side: {k: details[n][side].get(k) for k in ("outcome", "error")}
                         for side in ("without", "with")} for n in details},
    })
    log("  %s: %d run, %d judging the plugin, %d passed in both, %d failing in both, %d skipped in both, "
        "%d differ%s%s (%.0f s)"
        % (mode, summary["run"], summary["judging"], summary["passedInBoth"], summary["failingInBoth"],
           summary["skippedInBoth"], summary["differing"],
           " (%d failing differently)" % summary["failingDifferently"] if summary["failingDifferently"] else "",
           ", %d flaky" % summary["flaky"] if flaky else "", record["seconds"]))
    for name in differing:
        show_difference(name, details[name])
    for name in flaky:
        log("    flaky (differed once, not on recheck): %s" % name)
        show_difference(name, details[name], indent="      ")
    return record


def show_difference(name, detail, indent="    "):
    log("%sDIFFERS %s" % (indent, name))
    for label in ("without", "with"):
        entry = detail[label]
        message = entry.get("message") or ""
        log("%s  %-7s plugin: %-8s %s" % (indent, label, entry["outcome"], message))
        if entry.get("error"):
            log("%s  %-7s         error line: %s" % (indent, "", entry["error"]))


def suite_imports(suite, candidates):
    """The modules among candidates that the suite's Tests/*.py import."""
    found = set()
    folder = os.path.join(suite, "Tests")
    for name in os.listdir(folder):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), errors="replace") as f:
                text = f.read()
            found.update(m for m in candidates if re.search(r"^\s*(import|from)\s+%s\b" % m, text, re.M))
    return sorted(found)


def preflight(args):
    for path in ("Tests/Run.py", "Tests/Tests.py", "GenerateConfigurationForTests.py"):
        if not os.path.isfile(os.path.join(args.suite, path)):
            raise CompareError("%s is not a checkout of orthanc-tests (no %s)" % (args.suite, path))
    if not os.path.isfile(args.plugin):
        raise CompareError("no plugin at %s" % args.plugin)
    for orthanc in sorted({args.orthanc, peer_orthanc(args.orthanc)}):
        if not orthanc_available(orthanc):
            raise CompareError(unavailable_reason(orthanc) + ("" if orthanc == args.orthanc else
                                                             " (the peer of the %s suite)" % args.orthanc))
    modules = ["httplib2", "PIL", "numpy"] + suite_imports(args.suite, ["pydicom"])
    probe = subprocess.run([args.python, "-c", "import sys, %s; print(sys.version.split()[0])" % ", ".join(modules)],
                           env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if probe.returncode != 0:
        raise CompareError("%s cannot import what the suite needs (%s; both tags are Python 2.7 code, with "
                           "pydicom 1.4.1):\n%s" % (args.python, ", ".join(modules), probe.stdout.strip()))
    python_version = probe.stdout.strip()
    missing = [t for t in ("storescu", "findscu", "movescu", "getscu", "dcm2xml", "dciodvfy", "dcentvfy", "gdcmconv")
               if shutil.which(t, path=SUITE_PATH) is None]
    shadows = []
    for tool in ("storescu", "storescp", "findscu", "movescu", "getscu"):
        path = os.path.join("/usr/local/bin", tool)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                head = f.read(200)
            if head.startswith(b"#!"):
                shadows.append(path)
    if shadows:
        raise CompareError("the suite calls /usr/local/bin/NAME before PATH, and these are scripts (pip's pynetdicom?), "
                           "not DCMTK: %s" % ", ".join(shadows))
    version = subprocess.run([executable(args.orthanc), "--version"], stdout=subprocess.PIPE,
                             text=True).stdout.split("\n")[0]
    return python_version, missing, version


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=modes_text() + "\n\n--tests ingest selects the tests most relevant to ingest:\n  "
        + INGEST_TESTS.replace(",", " "))
    parser.add_argument("--suite", help="checkout of orthanc-tests at the tag of the running Orthanc (required)")
    parser.add_argument("--plugin", help="libOrthancIngestPerf.so to test (required)")
    parser.add_argument("--python", "--python2", dest="python",
                        help="interpreter that runs the suite (required): Python 2.7 with httplib2, Pillow, numpy "
                             "and pydicom 1.4.1, for the suites of Orthanc 1.10.1, 1.12.7 and 1.13.0 alike")
    parser.add_argument("--summary", metavar="RESULTS",
                        help="print the latest result of every Orthanc version, test selection and mode kept "
                             "under RESULTS (e.g. build/orthanc-suite) as a markdown table, run nothing")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES), help="comma-separated, among %s" % ", ".join(MODES))
    parser.add_argument("--orthanc", default=HOST_ORTHANC, choices=ALL_ORTHANCS,
                        help="the Orthanc under test and its peer: Debian 12's 1.10.1 (default), Debian 13's 1.12.7 "
                             "or Debian unstable's 1.13.0 (in their roots; the peer of 1.13.0 is 1.12.7)")
    parser.add_argument("--tests", default="",
                        help="comma-separated fnmatch patterns on test names (test_store*,Orthanc.test_x); "
                             "'ingest' stands for the ingest-related subset, a pattern starting with '-' "
                             "excludes (ingest,-test_anonymize_relationships*); default: the whole suite")
    parser.add_argument("--recheck", type=int, default=1,
                        help="run the differing tests again this many times (default 1; 0: any difference fails)")
    parser.add_argument("--keep-db-storage-sections", action="store_true",
                        help="timed-storage: keep the generated PostgreSQL/MySQL/Odbc EnableStorage (the timed "
                             "storage then does not start and the mode fails)")
    parser.add_argument("--retries", type=int, default=1,
                        help="run a side again when the peer Orthanc (or the Orthanc without the plugin) went away "
                             "during the suite (default 1)")
    parser.add_argument("--run-timeout", type=int, default=1200, help="seconds for one run of the suite")
    parser.add_argument("--results", metavar="RESULTS",
                        help="keep this run's logs and result in a new folder RESULTS/<Orthanc version>/<start "
                             "time>/, beside the earlier runs (see --summary)")
    parser.add_argument("--work-dir", help="logs and configurations (default: a new folder under --results, or in /tmp)")
    parser.add_argument("--json", help="result file (default: WORK_DIR/result.json)")
    args = parser.parse_args()
    if args.summary:
        print(summary_table(args.summary))
        return 0
    for option in ("suite", "plugin", "python"):
        if not getattr(args, option):
            parser.error("--%s is required" % option)

    args.suite = os.path.abspath(args.suite)
    args.plugin = os.path.abspath(args.plugin)
    if os.sep in args.python:  # the suite runs in its own folder
        args.python = os.path.abspath(args.python)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        parser.error("unknown mode(s): %s (known: %s)" % (", ".join(unknown), ", ".join(MODES)))
    tests = []
    for pattern in (p.strip() for p in args.tests.split(",")):
        tests += INGEST_TESTS.split(",") if pattern == "ingest" else [pattern] if pattern else []
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S")
    if args.results and not args.work_dir:
        args.work_dir = new_run_folder(args.results, args.orthanc, started_at)
    args.work_dir = os.path.abspath(args.work_dir or tempfile.mkdtemp(prefix="compare-orthanc-suite-"))
    os.makedirs(args.work_dir, exist_ok=True)
    json_path = os.path.abspath(args.json or os.path.join(args.work_dir, "result.json"))
    # Resources/debian-orthanc.sh shows these folders (besides /tmp and the repository) in its root,
    # to the Orthanc under test and to the suite's peer alike.
    os.environ["INGEST_PERF_BIND"] = ":".join(
        [os.path.dirname(args.plugin), args.suite, args.work_dir] +
        [p for p in os.environ.get("INGEST_PERF_BIND", "").split(":") if p])

    lock = open(LOCK_FILE, "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("another comparison with Orthanc's suite is running (lock %s): the suite's ports and /tmp paths are "
              "fixed, runs must be sequential" % LOCK_FILE, file=sys.stderr)
        return 2

    result = {"startedAt": started_at, "suite": args.suite, "plugin": args.plugin, "orthanc": args.orthanc, "python": args.python,
              "tests": args.tests.strip() or "all", "workDir": args.work_dir, "modes": {}}
    exit_code = 0
    started = time.monotonic()
    try:
        python_version, missing, version = preflight(args)
        result.update({"orthancVersion": version, "pythonVersion": python_version,
                       "peerOrthanc": peer_orthanc(args.orthanc)})
        log("%s (its peer: %s); suite %s run by Python %s; plugin %s; work folder %s"
            % (version, peer_orthanc(args.orthanc), args.suite, python_version, args.plugin, args.work_dir))
        if missing:
            log("warning: not found in %s (the tests that call them fail on both sides): %s"
                % (SUITE_PATH, ", ".join(missing)))
        tools = Tools(args)
        base = tools.generate_configuration()
        for mode in modes:
            record = run_mode(tools, base, mode, tests)
            result["modes"][mode] = record
            with open(json_path, "w") as f:  # each finished mode kept, should the run be stopped
                json.dump(result, f, indent=1)
            if record["summary"]["differing"]:
                exit_code = max(exit_code, 1)
    except CompareError as e:
        print("\nERROR: %s" % e, file=sys.stderr, flush=True)
        result["error"] = str(e)
        exit_code = 2
    except KeyboardInterrupt:
        result["error"] = "interrupted"
        exit_code = 2
    result["seconds"] = round(time.monotonic() - started, 1)
    result["exitCode"] = exit_code
    with open(json_path, "w") as f:
        json.dump(result, f, indent=1)

    if result["modes"]:
        log("\n%-22s %5s %8s %7s %14s %8s %7s %6s" % ("mode", "run", "judging", "passed", "failingInBoth", "differ",
                                                      "flaky", "sec"))
        for mode, record in result["modes"].items():
            s = record["summary"]
            log("%-22s %5d %8d %7d %14d %8d %7d %6.0f" % (mode, s["run"], s["judging"], s["passedInBoth"],
                                                            s["failingInBoth"], s["differing"], s["flaky"],
                                                            record["seconds"]))
    log("result: %s" % json_path)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
