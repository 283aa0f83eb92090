"""A real, throw-away PostgreSQL server for integration tests (no pytest dependency).

    from ingest_perf.postgresql_server import PostgreSQLServer
    with PostgreSQLServer() as server:
        database = server.create_database("orthanc1")
        config = {"PostgreSQL": dict(server.orthanc_parameters(database), EnableIndex=True)}

The cluster lives in a new folder under the system temporary folder (pytest's tmp_path is not
reachable by the `postgres` user: its parents are private to root). initdb and the server run as
the `postgres` system user, since PostgreSQL refuses to run as root. The server listens on a free
loopback TCP port (trust authentication, no password needed) and on a unix socket in the same
folder, never on the system's default socket. `stop()` (also called by the context manager and by
an atexit handler) stops the server and removes the folder; the server is also killed by the
kernel if the Python thread that started it dies (PR_SET_PDEATHSIG).

Durability is switched off (fsync, synchronous_commit, full_page_writes): the data is thrown away.
"""
import atexit
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from ingest_perf.orthanc_process import die_with_parent, free_tcp_port


def _default_bin_dir():
    """$POSTGRESQL_BIN, else the newest /usr/lib/postgresql/<major>/bin (Debian 12: 15)."""
    if os.environ.get("POSTGRESQL_BIN"):
        return os.environ["POSTGRESQL_BIN"]
    root = "/usr/lib/postgresql"
    majors = sorted((int(v) for v in (os.listdir(root) if os.path.isdir(root) else []) if v.isdigit()), reverse=True)
    for major in majors:
        folder = os.path.join(root, str(major), "bin")
        if os.path.isfile(os.path.join(folder, "postgres")):
            return folder
    return os.path.join(root, "15", "bin")


POSTGRESQL_BIN = _default_bin_dir()
SYSTEM_USER = "postgres"
SUPERUSER = "postgres"
_LOG_TAIL_LINES = 30


class PostgreSQLServerError(Exception):
    """initdb, the server start, or a database creation failed."""


_live_servers = set()
_live_lock = threading.Lock()


def _stop_leftovers():
    with _live_lock:
        servers = list(_live_servers)
    for server in servers:
        try:
            server.stop()
        except Exception:  # noqa: BLE001 - best effort at interpreter exit
            pass


atexit.register(_stop_leftovers)


class PostgreSQLServer:
    """One PostgreSQL cluster and server process in its own temporary folder.

    host, port, superuser   connection parameters (TCP on 127.0.0.1, trust authentication)
    socket_dir              folder of the server's unix socket
    """

    def __init__(self, bin_dir=POSTGRESQL_BIN, system_user=SYSTEM_USER):
        self.bin_dir = bin_dir
        self.system_user = system_user
        self.host = "127.0.0.1"
        self.port = None
        self.superuser = SUPERUSER
        self.folder = None
        self._process = None
        self._databases = []

    # --- paths ---------------------------------------------------------------------------------

    def _bin(self, name):
        return os.path.join(self.bin_dir, name)

    @property
    def data_dir(self):
        return os.path.join(self.folder, "data")

    @property
    def socket_dir(self):
        return self.folder

    @property
    def log_path(self):
        return os.path.join(self.folder, "postgresql.log")

    def log_tail(self, lines=_LOG_TAIL_LINES):
        try:
            with open(self.log_path, "r", encoding="utf-8", errors="replace") as f:
                return "\n".join(f.read().splitlines()[-lines:])
        except (FileNotFoundError, TypeError):
            return ""

    @property
    def pid(self):
        return self._process.pid if self._process is not None else None

    def is_running(self):
        return self._process is not None and self._process.poll() is None

    # --- life cycle ----------------------------------------------------------------------------

    def _as_postgres(self):
        """subprocess keyword arguments that run a command as the postgres system user."""
        if os.geteuid() != 0:
            return {}  # already unprivileged: run as ourselves
        entry = pwd.getpwnam(self.system_user)
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}

    def start(self, timeout=30):
        if not os.path.isfile(self._bin("postgres")):
            raise PostgreSQLServerError("no PostgreSQL server in %s (Debian: apt-get install postgresql)" % self.bin_dir)
        if self.is_running():
            raise PostgreSQLServerError("already running (pid %d)" % self._process.pid)
        self.folder = tempfile.mkdtemp(prefix="ingest-perf-pg-")
        with _live_lock:
            _live_servers.add(self)
        try:
            if os.geteuid() == 0:
                entry = pwd.getpwnam(self.system_user)
                os.chown(self.folder, entry.pw_uid, entry.pw_gid)
            self._initdb()
            for attempt in range(3):
                self.port = free_tcp_port()
                self._launch()
                if self._wait_until_ready(timeout):
                    return self
                # Exited: a port taken between the choice and the bind is retried.
                if "could not bind" not in self.log_tail(200) or attempt == 2:
                    raise PostgreSQLServerError("PostgreSQL exited with code %s during start-up; last lines of %s:\n%s"
                                                % (self._process.returncode, self.log_path, self.log_tail()))
        except BaseException:
            self.stop()
            raise
        return self  # unreachable

    def _initdb(self):
        command = [self._bin("initdb"), "-D", self.data_dir, "-U", self.superuser, "-E", "UTF8",
                   "--locale=C", "--auth-local=trust", "--auth-host=trust", "--no-sync", "--no-instructions"]
        result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                errors="replace", cwd=self.folder, timeout=120, **self._as_postgres())
        if result.returncode != 0:
            raise PostgreSQLServerError("initdb exited with code %d\n--- stdout:\n%s\n--- stderr:\n%s"
                                        % (result.returncode, result.stdout, result.stderr))

    def _launch(self):
        command = [self._bin("postgres"), "-D", self.data_dir, "-p", str(self.port), "-k", self.socket_dir,
                   "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
                   "-c", "full_page_writes=off", "-c", "max_connections=100", "-c", "shared_buffers=32MB"]
        with open(self.log_path, "ab") as log:
            if os.geteuid() == 0:
                os.chown(self.log_path, pwd.getpwnam(self.system_user).pw_uid, -1)
            self._process = subprocess.Popen(
                command, cwd=self.folder, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                # (preexec_fn runs after the switch to the postgres user, which clears a parent-death signal)
                preexec_fn=die_with_parent if threading.current_thread() is threading.main_thread() else None,
                **self._as_postgres())

    def _wait_until_ready(self, timeout):
        """True once pg_isready answers; False if the server exited first."""
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                return False
            result = subprocess.run([self._bin("pg_isready"), "-q", "-h", self.host, "-p", str(self.port),
                                     "-U", self.superuser, "-d", "postgres"], stdin=subprocess.DEVNULL,
                                    capture_output=True, timeout=30)
            if result.returncode == 0:
                return True
            if time.monotonic() > deadline:
                raise PostgreSQLServerError("PostgreSQL did not accept connections within %s s; last lines of %s:\n%s"
                                            % (timeout, self.log_path, self.log_tail()))
            time.sleep(0.05)

    def stop(self, timeout=20):
        """Fast shutdown (SIGINT), SIGKILL after `timeout` s, then remove the folder. Idempotent."""
        process = self._process
        if process is not None and process.poll() is None:
            try:
                process.send_signal(signal.SIGINT)  # "fast" shutdown: disconnects the clients
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        with _live_lock:
            _live_servers.discard(self)
        return process.returncode if process is not None else None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
        return False

    # --- databases -----------------------------------------------------------------------------

    def psql(self, sql, database="postgres"):
        """Runs SQL with psql as the superuser; returns its stdout (unaligned, tuples only)."""
        result = subprocess.run([self._bin("psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                 "-h", self.host, "-p", str(self.port), "-U", self.superuser, "-d", database,
                                 "-c", sql], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                errors="replace", timeout=60)
        if result.returncode != 0:
            raise PostgreSQLServerError("psql exited with code %d on %r:\n%s" % (result.returncode, sql, result.stderr))
        return result.stdout

    def create_database(self, name):
        """Creates an empty UTF-8 database owned by the superuser; returns its name."""
        if not name.replace("_", "").isalnum():
            raise ValueError("database names are letters, digits and '_': %r" % name)
        self.psql('CREATE DATABASE "%s" ENCODING \'UTF8\' TEMPLATE template0' % name)
        self._databases.append(name)
        return name

    def connection_parameters(self, database):
        """libpq parameters for `database` over TCP (trust: any password is accepted)."""
        return {"host": self.host, "port": self.port, "user": self.superuser, "dbname": database}

    def connection_uri(self, database):
        return "postgresql://%s@%s:%d/%s" % (self.superuser, self.host, self.port, database)

    def orthanc_parameters(self, database):
        """The connection part of orthanc-postgresql's "PostgreSQL" section for `database`."""
        return {"Host": self.host, "Port": self.port, "Database": database, "Username": self.superuser,
                "Password": "unused-trust-authentication", "EnableSsl": False,
                "MaximumConnectionRetries": 2, "ConnectionRetryInterval": 1}

    def __repr__(self):
        state = "running pid %d" % self._process.pid if self.is_running() else "stopped"
        return "<PostgreSQLServer %s %s port=%s>" % (self.folder, state, self.port)


if __name__ == "__main__":
    # Smoke test, from the repository root: .venv/bin/python -m ingest_perf.postgresql_server
    with PostgreSQLServer() as server:
        print(server, server.create_database("smoke"))
        print(server.psql("SELECT version()", database="smoke").strip())
