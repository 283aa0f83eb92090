"""Start and drive a real Orthanc process: the one way the tests, the benchmarks, the scenarios, the
main job and the comparison with Orthanc's own suite start an Orthanc (1.10.1, 1.12.7 or 1.13.0).

No pytest dependency.

    from ingest_perf.orthanc_process import OrthancFactory, OrthancProcess
    with OrthancProcess(folder, ingest_perf={"MaxThreads": 64}) as orthanc:
        orthanc.storescu(paths)
        print(orthanc.stats(transport="dicom"))
    with OrthancFactory(root, orthanc_version="1.12.7") as factory:  # several, all stopped at the end
        orthanc = factory(extra_config={"DicomThreadsCount": 1})

Every Orthanc gets its own folder (configuration, storage, index, log) and its own free loopback
ports (or the ports it is given), so several can run side by side. Processes are stopped by `stop()`, by the context
manager, by an atexit handler if the caller forgot (or a test failed half-way), and on Linux
they also receive SIGKILL if the Python thread that started them dies (PR_SET_PDEATHSIG), so a
crashed or killed test run never leaves an Orthanc behind.
"""
import atexit
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import requests

from ingest_perf import clients

ORTHANC_BINARY = "/usr/sbin/Orthanc"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST_ORTHANC = "1.10.1"  # Debian 12's, on the host
DEBIAN13_ORTHANC = "1.12.7"  # Debian 13's, in the root made by Resources/make-debian-root.sh trixie
DEBIAN_SID_ORTHANC = "1.13.0"  # Debian unstable's, in the root made by Resources/make-debian-root.sh sid
ALL_ORTHANCS = [HOST_ORTHANC, DEBIAN13_ORTHANC, DEBIAN_SID_ORTHANC]
# The Orthancs run in a Debian root: the release Resources/make-debian-root.sh takes, the variable
# that names another root and the root's folder in build-roots/ by default (as Resources/debian-roots.sh
# says), and the script that is that Orthanc (Resources/debian-orthanc.sh with the release).
_DEBIAN_ROOTS = {
    DEBIAN13_ORTHANC: ("trixie", "INGEST_PERF_DEBIAN13_ROOT", "debian13", "debian13-orthanc.sh"),
    DEBIAN_SID_ORTHANC: ("sid", "INGEST_PERF_DEBIAN_SID_ROOT", "debian-sid", "debian-sid-orthanc.sh"),
}
BUILD_COMMAND = "cmake -S %s -B %s/build -G Ninja && ninja -C %s/build" % (REPO_ROOT, REPO_ROOT, REPO_ROOT)

_LOG_TAIL_LINES = 40


def _known(version):
    if version != HOST_ORTHANC and version not in _DEBIAN_ROOTS:
        raise ValueError("unknown Orthanc %r (known: %s)" % (version, ", ".join(ALL_ORTHANCS)))


def orthanc_root(version):
    """The folder that Orthanc runs in: "" for the host's 1.10.1; for 1.12.7 and 1.13.0 their Debian
    root ($INGEST_PERF_DEBIAN13_ROOT or <repo>/build-roots/debian13, $INGEST_PERF_DEBIAN_SID_ROOT or
    <repo>/build-roots/debian-sid)."""
    _known(version)
    if version == HOST_ORTHANC:
        return ""
    _release, variable, folder, _script = _DEBIAN_ROOTS[version]
    return os.environ.get(variable) or os.path.join(REPO_ROOT, "build-roots", folder)


def executable(version):
    """The command that runs that Orthanc, one file: the host's /usr/sbin/Orthanc, or
    Resources/debian13-orthanc.sh (1.12.7) or Resources/debian-sid-orthanc.sh (1.13.0), each
    Orthanc in its root with the host's folders it needs visible (INGEST_PERF_BIND)."""
    _known(version)
    if version == HOST_ORTHANC:
        return ORTHANC_BINARY
    return os.path.join(REPO_ROOT, "Resources", _DEBIAN_ROOTS[version][3])


def root_orthanc_version(version):
    """The version of the Orthanc that the root of that version holds, as Resources/make-debian-root.sh
    read it from Orthanc --version (ROOT/.ingest-perf-orthanc-version), or None (no complete root).
    Debian unstable moves: a root made later may hold another Orthanc than the one it is named for."""
    root = orthanc_root(version)
    if not os.path.isfile(os.path.join(root, ".ingest-perf-complete")):
        return None
    try:
        with open(os.path.join(root, ".ingest-perf-orthanc-version")) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def orthanc_available(version):
    """Whether that Orthanc can run here: the host's always, 1.12.7 and 1.13.0 once their root is
    complete and holds that very version."""
    if version == HOST_ORTHANC:
        return os.path.isfile(ORTHANC_BINARY)
    return root_orthanc_version(version) == version


def unavailable_reason(version):
    """Why orthanc_available(version) is false, in words that say what to run."""
    held = root_orthanc_version(version)
    if version == HOST_ORTHANC:
        return "Orthanc %s is not available: %s is missing (apt-get install orthanc)" % (version, ORTHANC_BINARY)
    if held is None:
        release = _DEBIAN_ROOTS[version][0]
        return "Orthanc %s is not available: run Resources/make-debian-root.sh %s" % (version, release)
    return ("Orthanc %s is not available: its root %s holds Orthanc %s (Debian's archive moved on)"
            % (version, orthanc_root(version), held))


def debian_plugin(name, version=HOST_ORTHANC):
    """Path of one of Debian's plugins (e.g. "libOrthancGdcm.so") as that Orthanc sees it: every
    Debian keeps them in /usr/share/orthanc/plugins, in the root for 1.12.7 and 1.13.0."""
    path = os.path.join("/usr/share/orthanc/plugins", name)
    root = orthanc_root(version)
    if not os.path.exists(root + path):
        raise FileNotFoundError("%s not found for Orthanc %s" % (root + path, version))
    return path


class OrthancError(Exception):
    """Base class of the errors raised by this module."""


class OrthancStartError(OrthancError):
    """Orthanc exited during start-up, did not answer in time, or did not exit when expected."""


class OrthancRequestError(OrthancError):
    """An HTTP request to Orthanc answered with an unexpected status."""

    def __init__(self, method, url, status_code, body):
        self.method = method
        self.url = url
        self.status_code = status_code
        self.body = body
        super().__init__("%s %s answered HTTP %d: %s" % (method, url, status_code, body[:2000]))


def default_plugin_path():
    """`$INGEST_PERF_PLUGIN`, or `<repo>/build/libOrthancIngestPerf.so`."""
    return os.environ.get("INGEST_PERF_PLUGIN") or os.path.join(REPO_ROOT, "build", "libOrthancIngestPerf.so")


def free_tcp_port():
    """A TCP port that is free on 127.0.0.1 right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- process bookkeeping: nothing survives the Python process -------------------------------------

_live_processes = set()
_live_lock = threading.Lock()


def _kill_leftovers():
    with _live_lock:
        processes = list(_live_processes)
        _live_processes.clear()
    for process in processes:
        if process.poll() is None:
            try:
                process.kill()
                process.wait(timeout=10)
            except Exception:  # noqa: BLE001 - best effort at interpreter exit
                pass


atexit.register(_kill_leftovers)


try:  # loaded here, not in the forked child: dlopen after fork in a threaded process can deadlock
    _prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
except (OSError, AttributeError):  # not Linux/glibc: the atexit handler still applies
    _prctl = None
_PR_SET_PDEATHSIG = 1


def die_with_parent():
    """preexec_fn: SIGKILL the child when the thread that forked it exits (Linux)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


_DEFAULT = object()


class OrthancProcess:
    """One Orthanc server with its own folder and ports.

    work_dir      folder owned by this object: orthanc.json, orthanc.log, storage/, index/
    plugin_path   the plugin to load; default `$INGEST_PERF_PLUGIN` or <repo>/build/libOrthancIngestPerf.so;
                  None loads no plugin at all (the "A" of an A/B benchmark)
    ingest_perf   dict written as the "IngestPerf" section, or None to omit the section
    extra_config  dict merged into the top level of orthanc.json (overrides the defaults)
    env           extra environment variables for Orthanc, e.g. {"TCP_NODELAY": "1"}; a value of None
                  removes the variable from the environment Orthanc inherits
    aet           Orthanc's own AE title
    orthanc       "1.10.1" (the host's /usr/sbin/Orthanc), "1.12.7" (Debian 13's) or "1.13.0" (Debian
                  unstable's), each run in its root of Resources/make-debian-root.sh with the host's
                  /tmp, the repository, work_dir, the plugin's and the configuration's folders visible
                  at the same paths, so every path in orthanc.json works unchanged; a plugin_path that
                  exists in the root outside those folders, e.g. debian_plugin(name, "1.12.7"), is the
                  root's own file)
    command_prefix  words put before Orthanc's command, e.g. ["prlimit", "--as=..."]
    arguments     words after the configuration path on Orthanc's command line, e.g. ["--verbose"]
    configuration_writer  callable(http_port, dicom_port) -> the configuration path to start Orthanc
                  with, instead of the generated orthanc.json (plugin_path, ingest_perf and
                  extra_config are then ignored)
    http_port, dicom_port  fixed ports instead of free ones (a configuration that names its own, as
                  Orthanc's own suite does; extra_config then names the same)

    Started from the main thread, the process is also killed by the kernel if the Python process
    dies without running atexit handlers (SIGKILL); from another thread only atexit applies.
    """

    def __init__(self, work_dir, plugin_path=_DEFAULT, ingest_perf=None, extra_config=None, env=None,
                 aet="ORTHANC", orthanc=HOST_ORTHANC, command_prefix=(), configuration_writer=None, arguments=(),
                 http_port=None, dicom_port=None):
        if not orthanc_available(orthanc):
            raise OrthancStartError(unavailable_reason(orthanc))
        self.orthanc = orthanc
        self.command_prefix = list(command_prefix)
        self.arguments = [str(a) for a in arguments]
        self.configuration_writer = configuration_writer
        self.work_dir = os.path.abspath(str(work_dir))
        self.plugin_path = default_plugin_path() if plugin_path is _DEFAULT else plugin_path
        if self.plugin_path is not None:
            self.plugin_path = os.path.abspath(str(self.plugin_path))
        self.ingest_perf = ingest_perf
        self.extra_config = dict(extra_config or {})
        self.env = dict(env or {})
        self.aet = aet
        self._fixed_ports = (http_port, dicom_port)
        self.http_port = self.dicom_port = None  # chosen by start(), with the configuration
        self._process = None
        self._terminated = False  # SIGTERM sent to the current process
        self._version = None
        self._session = clients.KeepAliveSession()
        self.config_path = os.path.join(self.work_dir, "orthanc.json")
        self.log_path = os.path.join(self.work_dir, "orthanc.log")

    # --- properties ---------------------------------------------------------------------------

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.http_port

    @property
    def pid(self):
        return self._process.pid if self._process is not None else None

    @property
    def session(self):
        """The keep-alive requests.Session used by get/post/stats."""
        return self._session

    @property
    def version(self):
        """The running Orthanc's version string (e.g. "1.12.7"), from GET /system, asked once per start."""
        if self._version is None:
            self._version = self._check(self.get("/system")).json()["Version"]
        return self._version

    def is_running(self):
        return self._process is not None and self._process.poll() is None

    def log_text(self):
        """The whole orthanc.log so far ('' if there is none yet)."""
        try:
            with open(self.log_path, "r", encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def log_tail(self, lines=_LOG_TAIL_LINES):
        return "\n".join(self.log_text().splitlines()[-lines:])

    # --- configuration ------------------------------------------------------------------------

    def configuration(self):
        """The orthanc.json document that `start()` writes (ports included once chosen)."""
        config = {
            "Name": "ingest-perf-test",
            "StorageDirectory": os.path.join(self.work_dir, "storage"),
            "IndexDirectory": os.path.join(self.work_dir, "index"),
            "RemoteAccessAllowed": False,
            "AuthenticationEnabled": False,
            "HttpPort": self.http_port,
            "DicomPort": self.dicom_port,
            "DicomAet": self.aet,
            "Plugins": [self.plugin_path] if self.plugin_path is not None else [],
            "DicomModalities": {},
            "LogExportedResources": False,
        }
        if self.ingest_perf is not None:
            config["IngestPerf"] = self.ingest_perf
        config.update(self.extra_config)
        return config

    def _prepare(self):
        if self.is_running():
            raise OrthancError("Orthanc is already running (pid %d)" % self._process.pid)
        self._version = None
        if self.plugin_path is not None and not os.path.isfile(self._plugin_file()):
            # Orthanc only logs a warning for a missing plugin path and starts without it.
            raise FileNotFoundError("plugin not found: %s (build it with: %s)" % (self._plugin_file(), BUILD_COMMAND))
        os.makedirs(self.work_dir, exist_ok=True)
        self.http_port, self.dicom_port = self._fixed_ports
        if self.http_port is None:
            self.http_port = free_tcp_port()
        while self.dicom_port is None or self.dicom_port == self.http_port:
            self.dicom_port = free_tcp_port()
        if self.configuration_writer is not None:
            # The caller's own configuration (a file or a folder of them, as Debian's service uses).
            self.config_path = self.configuration_writer(self.http_port, self.dicom_port)
            return
        config = self.configuration()
        with open(self.config_path, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
        users = config.get("RegisteredUsers") or {}
        if config.get("AuthenticationEnabled") and users:
            # get/post/stats/... authenticate as the first registered user.
            self._session.auth = next(iter(users.items()))

    def _launch(self):
        command, extra = self._orthanc_command()
        environment = clients.environment(dict(self.env, **extra))  # extra: INGEST_PERF_BIND, self.env's included
        self._terminated = False
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                self.command_prefix + command, cwd=self.work_dir, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=environment,
                # The kernel signals on the death of the forking *thread*: only tie the process to
                # the main thread, so that an Orthanc started from a worker thread outlives it.
                preexec_fn=die_with_parent if threading.current_thread() is threading.main_thread() else None)
        with _live_lock:
            _live_processes.add(self._process)

    _HOST_FOLDERS = ("/tmp", REPO_ROOT)  # always visible in the roots of Orthanc 1.12.7 and 1.13.0

    def _in_root(self, path):
        """Whether a plugin path names a file of the Orthanc's root (e.g. Debian 13's plugins) rather than
        a host file: binding the host's folder there would hide the root's own (1.10.1's plugins)."""
        if self.orthanc == HOST_ORTHANC or path is None:
            return False
        host = set(self._HOST_FOLDERS) | {self.work_dir}
        if any(path.startswith(folder + "/") for folder in host):
            return False
        return os.path.exists(orthanc_root(self.orthanc) + path)

    def _plugin_file(self):
        """The plugin as a path of this (host) file system."""
        return orthanc_root(self.orthanc) + self.plugin_path if self._in_root(self.plugin_path) else self.plugin_path

    def _orthanc_command(self):
        """(command, extra environment) that starts this Orthanc."""
        if self.orthanc == HOST_ORTHANC:
            return [executable(self.orthanc), self.config_path] + self.arguments, {}
        # Resources/debian-orthanc.sh: Orthanc 1.12.7 or 1.13.0 in its root, with /tmp, the repository, the
        # working directory and INGEST_PERF_BIND visible at the same paths.
        folders = {self.work_dir}
        config = os.path.abspath(self.config_path)
        folders.add(config if os.path.isdir(config) else os.path.dirname(config))
        # The plugins: plugin_path and those that extra_config lists itself (a build outside /tmp and
        # the repository, e.g. another clone, must be bound to be found).
        listed = self.extra_config.get("Plugins") or []
        for path in [self.plugin_path] + [p for p in listed if isinstance(p, str)]:
            if path is not None and not self._in_root(os.path.abspath(path)):
                path = os.path.abspath(path)
                folders.add(path if os.path.isdir(path) else os.path.dirname(path))
        # and those the caller names (INGEST_PERF_BIND of this process or of env=).
        named = self.env.get("INGEST_PERF_BIND", os.environ.get("INGEST_PERF_BIND")) or ""
        folders.update(f for f in named.split(":") if f)
        folders = [f for f in sorted(folders) if not any(f.startswith(h + "/") for h in self._HOST_FOLDERS)]
        return [executable(self.orthanc), self.config_path] + self.arguments, {"INGEST_PERF_BIND": ":".join(folders)}

    def _forget(self):
        with _live_lock:
            _live_processes.discard(self._process)

    # --- life cycle ---------------------------------------------------------------------------

    def start(self, timeout=30):
        """Start Orthanc and wait until GET /system answers 200 (or 401 if authentication is on and
        extra_config has no RegisteredUsers; with RegisteredUsers, the session logs in as the first).

        Raises OrthancStartError (exit code and the end of orthanc.log) if the process exits first
        or does not answer within `timeout` seconds; the process is then stopped. A start that
        failed because a chosen port was taken meanwhile is retried with new ports.
        """
        for attempt in range(3):
            self._prepare()
            self._launch()
            try:
                self._wait_until_ready(timeout)
                return self
            except OrthancStartError:
                # Linux says "address already in use"; Orthanc 1.10.1 logs "The TCP port of the HTTP
                # server is privileged or already in use" (another test took the free port meanwhile).
                port_race = self._process.poll() is not None and "already in use" in self.log_text().lower()
                if not port_race or attempt == 2:
                    raise
        return self  # unreachable

    def _wait_until_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            code = self._process.poll()
            if code is not None:
                self._forget()
                raise OrthancStartError("Orthanc exited with code %d during start-up (%s); last lines of %s:\n%s"
                                        % (code, self.config_path, self.log_path, self.log_tail()))
            try:
                answer = self._session.get(self.url + "/system", timeout=2)
                if answer.status_code in (200, 401) and not self._plugin_waits_for_orthanc_started(answer):
                    return  # 401: up, but credentials are needed
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise OrthancStartError("Orthanc did not answer GET /system within %s s (exit code %s after stop); "
                                        "last lines of %s:\n%s" % (timeout, self._process.returncode,
                                                                    self.log_path, self.log_tail()))
            time.sleep(0.05)

    def _plugin_waits_for_orthanc_started(self, system_answer):
        """True while the plugin has still to take the hooks it takes once Orthanc has started (its
        ReceivedInstanceCallback): instances sent before would have no ReceivedInstance event. Read
        from Orthanc's log, so that starting asks the plugin nothing (a test build may fail answers)."""
        if self.plugin_path is None or system_answer.status_code != 200:
            return False
        log = self.log_text()
        return ("the ReceivedInstanceCallback will be taken once Orthanc has started" in log and
                "holds the ReceivedInstanceCallback" not in log and "another plugin holds it" not in log)

    def start_expect_failure(self, timeout=30):
        """Start Orthanc expecting it to exit by itself (e.g. a bad configuration).

        Returns (exit_code, log_text). If the process is still running after `timeout` seconds,
        it is stopped and OrthancStartError is raised.
        """
        self._prepare()
        self._launch()
        try:
            code = self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise OrthancStartError("Orthanc was expected to exit during start-up but still ran after %s s; "
                                    "last lines of %s:\n%s" % (timeout, self.log_path, self.log_tail()))
        self._forget()
        return code, self.log_text()

    def terminate(self):
        """SIGTERM without waiting: stop() then waits. Orthanc takes 2-3 s to stop (its threads wake
        from their polls one after the other), so several are told at once (OrthancFactory.close)."""
        process = self._process
        if process is not None and process.poll() is None and not self._terminated:
            process.send_signal(signal.SIGTERM)
            self._terminated = True

    def stop(self, timeout=20):
        """SIGTERM, wait up to `timeout` seconds, then SIGKILL. Idempotent. Returns the exit code."""
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            try:
                self.terminate()
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self._forget()
        self._session.close()
        return process.returncode

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
        return False

    # --- HTTP ---------------------------------------------------------------------------------

    def _request(self, method, path, **kw):
        kw.setdefault("timeout", 60)
        return self._session.request(method, self.url + path, **kw)

    def get(self, path, **kw):
        """GET on the keep-alive session; returns the requests.Response (no status check)."""
        return self._request("GET", path, **kw)

    def post(self, path, data=None, **kw):
        """POST on the keep-alive session; returns the requests.Response (no status check)."""
        return self._request("POST", path, data=data, **kw)

    def delete(self, path, **kw):
        return self._request("DELETE", path, **kw)

    @staticmethod
    def _check(answer, expected=200):
        if answer.status_code != expected:
            raise OrthancRequestError(answer.request.method, answer.url, answer.status_code, answer.text)
        return answer

    def stats(self, **params):
        """GET /perf/stats with the given query parameters (e.g. transport="dicom"), parsed."""
        return self._check(self.get("/perf/stats", params=params)).json()

    def reset_stats(self):
        """POST /perf/reset; returns its JSON answer."""
        return self._check(self.post("/perf/reset")).json()

    def delete_all(self):
        """DELETE every patient (hence every resource). Returns the number of patients deleted."""
        patients = self._check(self.get("/patients")).json()
        for patient in patients:
            self._check(self.delete("/patients/%s" % patient))
        return len(patients)

    def add_modality(self, name, target):
        """PUT /modalities/{name}: the Orthanc `target` (an OrthancProcess) as a DICOM modality of this one,
        for its C-STORE jobs (clients.orthanc_store)."""
        self._check(self._session.put(self.url + "/modalities/" + name, timeout=10, json={
            "AET": target.aet, "Host": "127.0.0.1", "Port": target.dicom_port}))

    # --- ingest -------------------------------------------------------------------------------

    def storescu(self, files, calling_aet="STORESCU", extra_args=(), env=None, timeout=600):
        """clients.storescu to this Orthanc: one association per run (a long list of files is split),
        ClientError on a non-zero exit code; the list of subprocess.CompletedProcess."""
        return clients.storescu(self.dicom_port, files, calling_aet, self.aet, options=extra_args, env=env,
                                timeout=timeout)

    def http_upload(self, files, session=None):
        """clients.http_upload to this Orthanc (on `session`, or a connection of its own): the parsed
        JSON answers; ClientError on a status other than 200."""
        return [upload.answer for upload in clients.http_upload(self.url, files, session=session, timeout=60)]

    def stow_rs(self, files, session=None, timeout=120):
        """clients.stow_rs to this Orthanc: one request carrying `files`, the requests.Response."""
        return clients.stow_rs(self.url, files, session=session, timeout=timeout)

    def __repr__(self):
        state = "running pid %d" % self._process.pid if self.is_running() else "stopped"
        return "<OrthancProcess %s %s http=%s dicom=%s>" % (self.work_dir, state, self.http_port, self.dicom_port)


def stop_together(orthancs, remove_work_dirs=False):
    """Stops the Orthancs given (None allowed): SIGTERM to every one at once (each takes 2-3 s to stop,
    its threads waking from their polls one after the other), then waits for each; and removes their
    folders if asked."""
    started = [orthanc for orthanc in orthancs if orthanc is not None]
    for orthanc in started:
        orthanc.terminate()
    for orthanc in started:
        orthanc.stop()
        if remove_work_dirs:
            shutil.rmtree(orthanc.work_dir, ignore_errors=True)


class OrthancFactory:
    """Orthancs started in folders of one root, all stopped by close() (or at the end of a `with`):
    the tests' orthanc_factory fixture, the bottleneck scenarios and the benchmarks.

        factory = OrthancFactory(root, orthanc_version="1.12.7")
        orthanc = factory(extra_config={"DicomThreadsCount": 1})  # started
        sender = factory(start=False, plugin_path=None)          # not yet

    A call takes OrthancProcess's arguments; work_dir defaults to a new folder of the root,
    plugin_path to the factory's (default_plugin_path(); None: no plugin), orthanc to its version."""

    def __init__(self, root, plugin_path=_DEFAULT, orthanc_version=HOST_ORTHANC):
        self.root = os.path.abspath(str(root))
        self.plugin_path = default_plugin_path() if plugin_path is _DEFAULT else plugin_path
        self.orthanc_version = orthanc_version
        self.started = []
        self._lock = threading.Lock()  # a call may come from several threads at once

    def __call__(self, start=True, **kwargs):
        with self._lock:
            kwargs.setdefault("work_dir", os.path.join(self.root, "orthanc%d" % len(self.started)))
            kwargs.setdefault("plugin_path", self.plugin_path)
            kwargs.setdefault("orthanc", self.orthanc_version)
            process = OrthancProcess(**kwargs)
            self.started.append(process)
        if start:
            process.start()
        return process

    def close(self):
        """Stops them all: SIGTERM to every one at once, then waits for each."""
        with self._lock:
            started, self.started = self.started, []
        stop_together(started)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


if __name__ == "__main__":
    # Smoke test, from the repository root: .venv/bin/python -m ingest_perf.orthanc_process [WORK_DIR]
    import tempfile

    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="orthanc-")
    with OrthancProcess(folder) as o:
        print(o, json.dumps(o.get("/system").json())[:200])
        print(json.dumps(o.stats(transport="all"))[:200])
