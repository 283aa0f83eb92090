"""pytest fixtures for the integration tests: the built plugin, synthetic series, real Orthancs.

Run with: .venv/bin/python -m pytest IntegrationTests -q
The plugin is taken from $INGEST_PERF_PLUGIN or <repo>/build/libOrthancIngestPerf.so.
Under -q, each test file prints one line instead of a dot per test (FileLines, below).
"""
import itertools
import os
import shutil
import tempfile
import threading
import time

import pytest

from ingest_perf.generate_series import SeriesCache
from ingest_perf.orthanc_process import (BUILD_COMMAND, HOST_ORTHANC, OrthancFactory,
                                         default_plugin_path)
from ingest_perf.postgresql_server import PostgreSQLServer

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FileLines:
    """Under -q: one line per test file with its outcome counts and duration, instead of a dot per
    test (a file can take minutes; dots do not say which one runs). Run serially, the file's name is
    written when it starts and the rest of the line when it ends; with pytest-xdist (-n), each
    worker runs whole files (--dist loadfile) and a file's line is written whole when its worker
    moves on. Failures are reported at the end as usual."""

    def __init__(self, reporter, parallel):
        self.reporter = reporter
        self.parallel = parallel
        self.workers = {}  # worker id -> [file, start time, {category: count}]
        self.running = False

    def finish(self, worker):
        state = self.workers.pop(worker, None)
        if state is None:
            return
        file, started, counts = state
        text = ", ".join("%d %s%s" % (n, category, "s" if category == "error" and n > 1 else "")
                         for category, n in counts.items()) or "nothing ran"
        line = "%s in %.0f s\n" % (text, time.monotonic() - started)
        self.reporter.write(("%s: " % file if self.parallel else "") + line, flush=True)

    def start(self, worker, file):
        self.finish(worker)
        self.workers[worker] = [file, time.monotonic(), {}]
        if not self.parallel:
            self.reporter.write("%s: " % file, flush=True)

    def pytest_runtest_logstart(self, nodeid):
        if not self.parallel:  # with xdist the worker is only known from the reports
            file = nodeid.split("::")[0]
            if file != (self.workers.get("main") or [None])[0]:
                self.start("main", file)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report):
        category, letter, word = yield
        if not self.running:  # the final summary
            return category, letter, word
        gateway = getattr(getattr(report, "node", None), "gateway", None)
        worker = gateway.id if gateway is not None else "main"
        file = report.nodeid.split("::")[0]
        if file != (self.workers.get(worker) or [None])[0]:
            self.start(worker, file)
        if not (letter or word):  # a passing setup or teardown
            return category, letter, word
        counts = self.workers[worker][2]
        counts[category] = counts.get(category, 0) + 1
        return category, "", ""  # no dot, no F (nor a progress percentage): the counts are on the file's line

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self):
        self.running = True
        try:
            return (yield)
        finally:
            self.running = False
            for worker in list(self.workers):
                self.finish(worker)


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and config.get_verbosity() < 0:
        parallel = bool(getattr(config.option, "numprocesses", None))
        config.pluginmanager.register(FileLines(reporter, parallel), "ingest-perf-file-lines")


# A test module that sets ORTHANC_VERSIONS = ALL_ORTHANCS (orthanc_process) runs each of its tests
# against Debian 12's Orthanc 1.10.1, Debian 13's 1.12.7 and Debian unstable's 1.13.0 (in the roots of
# Resources/make-debian-root.sh trixie and sid, which the test command makes); other modules run
# against 1.10.1.


def pytest_generate_tests(metafunc):
    chosen = any("orthanc_version" in str(marker.args[0]) for marker in metafunc.definition.iter_markers("parametrize"))
    if "orthanc_version" in metafunc.fixturenames and not chosen:  # a test may name its own versions
        versions = getattr(metafunc.module, "ORTHANC_VERSIONS", [HOST_ORTHANC])
        metafunc.parametrize("orthanc_version", versions, scope="module")


@pytest.fixture(scope="module")
def orthanc_version():
    """The Orthanc the test runs against (parametrized by pytest_generate_tests)."""
    return HOST_ORTHANC


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


@pytest.fixture(scope="session")
def plugin_path():
    path = default_plugin_path()
    if not os.path.isfile(path):
        pytest.fail("plugin not built: %s is missing. Build it with:\n  %s\n(or set INGEST_PERF_PLUGIN)"
                    % (path, BUILD_COMMAND), pytrace=False)
    return path


@pytest.fixture(scope="session")
def series_factory(tmp_path_factory):
    """series_factory(count, seed, size=512) -> list of file paths; each series is written once."""
    return SeriesCache(tmp_path_factory.mktemp("series"))


@pytest.fixture(scope="session")
def series(series_factory):
    """12 slices of 512x512, seed 1."""
    return series_factory(12, 1)


# A test module that sets AHEAD_OF_OTHER_WORK = True judges how fast Orthanc is (the diagnosis): on 2
# cores shared with builds and other tests (load 15), Orthanc's own serverTotal grew from 5 to 70-80
# ms and the disk's flushes made any ingest storage-bound. Its Orthancs keep their files in memory
# (/dev/shm), and the test process, hence the Orthancs and clients it starts, runs at nice -10 (as
# root; as it is, saying so, where not permitted): what is left is the bottleneck the test makes.

@pytest.fixture(scope="module", autouse=True)
def ahead_of_other_work(request):
    before = os.getpriority(os.PRIO_PROCESS, 0)
    if getattr(request.module, "AHEAD_OF_OTHER_WORK", False):
        try:
            os.setpriority(os.PRIO_PROCESS, 0, -10)
        except PermissionError:
            print("not permitted to run ahead of other work: %s shares the machine as it is" % request.module.__name__)
    yield
    os.setpriority(os.PRIO_PROCESS, 0, before)  # a nice value may always go up again


class StoppingOrthancs:
    """The Orthancs of finished tests: told to stop (SIGTERM) at their test's teardown, and waited for
    on a thread of their own while the next test runs. An Orthanc takes 2-3 s to stop (its threads
    wake from their polls one after the other), which every test spent waiting; nothing reads an
    Orthanc once its test is over. Every one has exited before the session ends (wait())."""

    def __init__(self):
        self.threads = []

    def add(self, factory, then=None):
        """Stops the factory's Orthancs (SIGTERM now, to all), waits for them and calls then() in the background."""
        for process in factory.started:
            process.terminate()

        def close():
            factory.close()
            if then is not None:
                then()

        # A daemon: on an interrupted run, the interpreter's exit does not wait for it (the atexit
        # handler of orthanc_process kills what is left).
        thread = threading.Thread(target=close, name="stopping-orthancs", daemon=True)
        thread.start()
        self.threads.append(thread)

    def wait(self):
        """Until every Orthanc told to stop has exited."""
        while self.threads:
            self.threads.pop().join()


STOPPING = StoppingOrthancs()


@pytest.fixture(scope="session", autouse=True)
def stopped_at_the_end():
    yield
    STOPPING.wait()


@pytest.fixture(scope="session")
def wait_until_orthancs_stopped():
    """A callable: returns once the Orthancs of the finished tests, stopping in the background, have
    exited (e.g. before a server they are clients of stops)."""
    return STOPPING.wait


@pytest.fixture
def orthanc_factory(tmp_path, plugin_path, orthanc_version, request):
    """orthanc_factory(**OrthancProcess kwargs) -> a started OrthancProcess; all stopped at teardown,
    waited for in the background (StoppingOrthancs) (an OrthancFactory: work_dir defaults to a new
    folder under tmp_path, or in /dev/shm for a module AHEAD_OF_OTHER_WORK; plugin_path to the built
    plugin, None for an Orthanc without it; orthanc to the module's version, orthanc_version). Pass
    start=False to get the object unstarted (e.g. to call start_expect_failure())."""
    in_memory = getattr(request.module, "AHEAD_OF_OTHER_WORK", False) and os.path.isdir("/dev/shm")
    root = tempfile.mkdtemp(prefix="orthancs-", dir="/dev/shm") if in_memory else tmp_path
    factory = OrthancFactory(root, plugin_path, orthanc_version)
    try:
        yield factory
    finally:
        STOPPING.add(factory, then=(lambda: shutil.rmtree(root, ignore_errors=True)) if in_memory else None)


@pytest.fixture
def orthanc(orthanc_factory):
    """A started Orthanc with the plugin and its default configuration."""
    return orthanc_factory()


@pytest.fixture(scope="module")
def postgresql(wait_until_orthancs_stopped):
    """One throw-away PostgreSQL server for the module (ingest_perf.postgresql_server);
    `new_database()` gives each Orthanc its own database."""
    server = PostgreSQLServer().start()
    counter = itertools.count(1)
    server.new_database = lambda: server.create_database("orthanc%d" % next(counter))
    yield server
    wait_until_orthancs_stopped()  # the last tests' Orthancs, stopping in the background, are its clients
    server.stop()
