"""Runs Tests/Run.py of Orthanc's own suite (orthanc-tests) with its outcomes recorded per test: run as
a file by the suite's own interpreter (Python 2.7, or 3), never imported by ours, so it is Python 2.7
code and imports nothing of this package. ingest_perf.compare_orthanc_suite starts it:

    PYTHONPATH=SUITE/Tests PY2 suite_runner.py SUITE/Tests/Run.py --force --orthanc ORTHANC --rest PORT

It replaces unittest.main, which Run.py calls after starting its peer Orthanc, by a runner that keeps
the selected tests and writes one JSON line per event to $COMPARE_SUITE_RESULTS, flushed at once
(Run.py ends the process with os._exit when its peer dies). Environment:

    COMPARE_SUITE_RESULTS      the JSON lines written
    COMPARE_SUITE_TESTS        comma-separated fnmatch patterns; "-pattern" excludes
    COMPARE_SUITE_ORTHANC      the Orthanc executable Run.py starts as its peer
    COMPARE_SUITE_PEER_LOG     where the peer's log goes (Run.py sends it to /dev/null)
    COMPARE_SUITE_PEER_PORT, COMPARE_SUITE_REMOTE_PORT  the HTTP ports of the peer and of the Orthanc
                               under test, checked before each test
"""
import fnmatch
import json
import os
import runpy
import socket
import subprocess
import sys
import time
import unittest


def emit(record):
    with open(os.environ["COMPARE_SUITE_RESULTS"], "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


PEER = []  # the peer Orthanc's process, once Run.py started it
DOWN = set()


def keep_the_peers_log(orthanc, peer_log):
    """Run.py starts its peer Orthanc with its log sent to /dev/null: keep it in a file instead."""
    original = subprocess.Popen

    class Popen(original):
        def __init__(self, args, *more, **options):
            peer = (isinstance(args, list) and len(args) > 1 and args[0] == orthanc
                    and not str(args[1]).startswith("-"))
            if peer:
                options["stderr"] = open(peer_log, "ab")
            original.__init__(self, args, *more, **options)
            if peer:
                PEER.append(self)

    subprocess.Popen = Popen


def report_the_peers_exit():
    """Run.py's thread that watches the peer ends the process with os._exit(-1) when the peer exits.
    Python 2's subprocess also calls os._exit in a forked child whose exec failed (a tool that is
    not installed): only the suite's own process reports."""
    original, main_pid = os._exit, os.getpid()

    def exit_(code):
        try:
            if os.getpid() == main_pid:
                emit({"event": "peer-exit", "peerExitCode": PEER[-1].poll() if PEER else None})
        finally:
            original(code)

    os._exit = exit_


def listening(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        return True
    except Exception:
        return False
    finally:
        s.close()


def check_servers(servers, test):
    """Before each test, both Orthancs must accept connections (10 s for a restart to finish)."""
    for name, port in servers:
        if name in DOWN:
            continue
        deadline = time.time() + 10
        while not listening(port):
            if time.time() > deadline:
                DOWN.add(name)
                emit({"event": "down", "server": name, "port": port, "before": test.id(),
                      "peerExitCode": PEER[-1].poll() if PEER else None})
                break
            time.sleep(0.2)


def recorder(servers):
    class Recorder(unittest.TextTestResult):
        def startTest(self, test):
            check_servers(servers, test)
            self._started = time.time()
            emit({"event": "start", "test": test.id()})
            super(Recorder, self).startTest(test)

        def _end(self, test, outcome, err=None, reason=None):
            started = getattr(self, "_started", None)
            emit({"event": "end", "test": test.id(), "outcome": outcome,
                  "seconds": None if started is None else round(time.time() - started, 3),
                  "traceback": None if err is None else self._exc_info_to_string(err, test),
                  "reason": reason})

        def addSuccess(self, test):
            super(Recorder, self).addSuccess(test)
            self._end(test, "passed")

        def addFailure(self, test, err):
            super(Recorder, self).addFailure(test, err)
            self._end(test, "failed", err)

        def addError(self, test, err):
            super(Recorder, self).addError(test, err)
            self._end(test, "error", err)

        def addSkip(self, test, reason):
            super(Recorder, self).addSkip(test, reason)
            self._end(test, "skipped", reason=reason)

        def addExpectedFailure(self, test, err):
            super(Recorder, self).addExpectedFailure(test, err)
            self._end(test, "expected-failure", err)

        def addUnexpectedSuccess(self, test):
            super(Recorder, self).addUnexpectedSuccess(test)
            self._end(test, "unexpected-success")

    return Recorder


def flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            for test in flatten(item):
                yield test
        else:
            yield item


def selector(patterns):
    include = [p for p in patterns if not p.startswith("-")]
    exclude = [p[1:] for p in patterns if p.startswith("-")]

    def selected(test):
        method = getattr(test, "_testMethodName", test.id())
        names = (method, type(test).__name__ + "." + method)
        if any(fnmatch.fnmatchcase(n, p) for n in names for p in exclude):
            return False
        return not include or any(fnmatch.fnmatchcase(n, p) for n in names for p in include)

    return selected


def main(argv):
    patterns = [p.strip() for p in os.environ.get("COMPARE_SUITE_TESTS", "").split(",") if p.strip()]
    servers = [("peer", int(os.environ["COMPARE_SUITE_PEER_PORT"])),
               ("under-test", int(os.environ["COMPARE_SUITE_REMOTE_PORT"]))]
    keep_the_peers_log(os.environ["COMPARE_SUITE_ORTHANC"], os.environ["COMPARE_SUITE_PEER_LOG"])
    report_the_peers_exit()
    selected = selector(patterns)

    def run_selected(*args, **kwargs):
        module = sys.modules["__main__"]
        tests = [t for t in flatten(unittest.TestLoader().loadTestsFromModule(module)) if selected(t)]
        emit({"event": "selected", "tests": [t.id() for t in tests]})
        runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=recorder(servers))
        result = runner.run(unittest.TestSuite(tests))
        emit({"event": "finished"})
        sys.exit(0 if result.wasSuccessful() else 1)

    unittest.main = run_selected
    run_py = argv[0]  # its folder, whose modules it imports, is on PYTHONPATH (the caller sets it)
    sys.argv = [run_py] + argv[1:]
    runpy.run_path(run_py, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
