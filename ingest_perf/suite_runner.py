"""Runs Tests/Run.py of Orthanc's own suite (orthanc-tests) with its outcomes recorded per test: run as
a file by the suite's own interpreter (Python 2.7, or 3), never imported by ours, so it is Python 2.7
code and imports nothing of this package. ingest_perf.compare_orthanc_suite starts it:

    PYTHONPATH=SUITE/Tests PY2 suite_runner.py SUITE/Tests/Run.py --force --orthanc ORTHANC --rest PORT

It replaces unittest.main, which Run.py calls after starting its peer Orthanc, by a runner that keeps
the selected tests and writes one JSON line per event to $COMPARE_SUITE_RESULTS, flushed at once
(Run.py ends the process with os._exit when its peer dies). $COMPARE_SUITE_TESTS: comma-separated
fnmatch patterns, "-pattern" excludes; $COMPARE_SUITE_ORTHANC: the Orthanc executable Run.py starts
as its peer, whose log goes to $COMPARE_SUITE_PEER_LOG (Run.py sends it to /dev/null);
$COMPARE_SUITE_PEER_PORT and $COMPARE_SUITE_REMOTE_PORT: the HTTP ports of the peer and of the
Orthanc under test, both checked before each test.
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

PEER = []  # the peer Orthanc's process, once Run.py started it
DOWN = set()


def emit(record):
    with open(os.environ["COMPARE_SUITE_RESULTS"], "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def peer_exit_code():
    return PEER[-1].poll() if PEER else None


def keep_the_peers_log(orthanc, peer_log):
    original = subprocess.Popen

    class Popen(original):
        def __init__(self, args, *more, **options):
            peer = isinstance(args, list) and len(args) > 1 and args[0] == orthanc and not str(args[1]).startswith("-")
            if peer:
                options["stderr"] = open(peer_log, "ab")
            original.__init__(self, args, *more, **options)
            if peer:
                PEER.append(self)

    subprocess.Popen = Popen


def report_the_peers_exit():
    """Run.py's thread that watches the peer ends the process with os._exit(-1) when the peer exits.
    Python 2's subprocess also calls os._exit in a forked child whose exec failed (a tool that is not
    installed): only the suite's own process reports."""
    original, main_pid = os._exit, os.getpid()

    def exit_(code):
        try:
            if os.getpid() == main_pid:
                emit({"event": "peer-exit", "peerExitCode": peer_exit_code()})
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
    """Both Orthancs must accept connections before each test (10 s for a restart to finish)."""
    for name, port in servers:
        deadline = time.time() + 10
        while name not in DOWN and not listening(port):
            if time.time() > deadline:
                DOWN.add(name)
                emit({"event": "down", "server": name, "port": port, "before": test.id(),
                      "peerExitCode": peer_exit_code()})
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
                  "traceback": None if err is None else self._exc_info_to_string(err, test), "reason": reason})

    # Each outcome: unittest's own bookkeeping, then the record.
    for method, outcome in (("addSuccess", "passed"), ("addFailure", "failed"), ("addError", "error"),
                            ("addSkip", "skipped"), ("addExpectedFailure", "expected-failure"),
                            ("addUnexpectedSuccess", "unexpected-success")):
        def add(self, test, detail=None, method=method, outcome=outcome):
            getattr(super(Recorder, self), method)(*((test,) if detail is None else (test, detail)))
            self._end(test, outcome, detail if outcome not in ("skipped", "passed", "unexpected-success") else None,
                      detail if outcome == "skipped" else None)
        setattr(Recorder, method, add)
    return Recorder


def flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            for test in flatten(item):
                yield test
        else:
            yield item


def selected(test, patterns):
    method = getattr(test, "_testMethodName", test.id())
    names = (method, type(test).__name__ + "." + method)
    if any(fnmatch.fnmatchcase(n, p[1:]) for n in names for p in patterns if p.startswith("-")):
        return False
    included = [p for p in patterns if not p.startswith("-")]
    return not included or any(fnmatch.fnmatchcase(n, p) for n in names for p in included)


def main(argv):
    patterns = [p.strip() for p in os.environ.get("COMPARE_SUITE_TESTS", "").split(",") if p.strip()]
    servers = [("peer", int(os.environ["COMPARE_SUITE_PEER_PORT"])),
               ("under-test", int(os.environ["COMPARE_SUITE_REMOTE_PORT"]))]
    keep_the_peers_log(os.environ["COMPARE_SUITE_ORTHANC"], os.environ["COMPARE_SUITE_PEER_LOG"])
    report_the_peers_exit()

    def run_selected(*args, **kwargs):
        tests = [t for t in flatten(unittest.TestLoader().loadTestsFromModule(sys.modules["__main__"]))
                 if selected(t, patterns)]
        emit({"event": "selected", "tests": [t.id() for t in tests]})
        runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=recorder(servers))
        result = runner.run(unittest.TestSuite(tests))
        emit({"event": "finished"})
        sys.exit(0 if result.wasSuccessful() else 1)

    unittest.main = run_selected
    sys.argv = argv  # Run.py's folder, whose modules it imports, is on PYTHONPATH (the caller sets it)
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
