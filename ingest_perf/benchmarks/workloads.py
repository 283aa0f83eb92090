"""The benchmarks' clients, each in a process of its own so that 16 of them are not serialised by one
Python interpreter: the senders of ingest_perf.clients (one runner per kind), run in child processes.
Every client gets its share of the files, loads it into memory first, waits for the common start,
then sends; the caller measures the wall time from the start to the last client.

Each ingest client returns per-instance latencies where the client can tell them (pynetdicom,
HTTP, STOW-RS per instance); storescu and Orthanc's own C-STORE give only their total time, from
which a mean per instance is derived (marked as such in the tables)."""
import functools
import multiprocessing
import os
import subprocess
import time

import requests

from ingest_perf import clients
from ingest_perf.clients import ClientError, read_files, split
from ingest_perf.orthanc_process import free_tcp_port


# --- client bodies (run in child processes) -------------------------------------------------------

def _outcome(paths, begin, error=None, latencies=None):
    return {"error": error, "elapsed": time.perf_counter() - begin, "count": len(paths), "latencies": latencies}


def _client_storescu(paths, target, ready, start, results, env):
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    runs = clients.storescu(target["port"], paths, target["calling"], target["aet"], env=env, check=False)
    failed = [run.stderr[-500:] for run in runs if run.returncode]
    results.put(_outcome(paths, begin, failed[0] if failed else None))


def _client_pynetdicom(paths, target, ready, start, results, env):
    import pydicom

    datasets = [pydicom.dcmread(path) for path in paths]
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    try:
        latencies = clients.pynetdicom_store(target["port"], datasets, target["calling"], target["aet"])
    except ClientError as error:
        results.put(_outcome(paths, begin, str(error), []))
        return
    results.put(_outcome(paths, begin, None, latencies))


def _client_http(paths, target, ready, start, results, env):
    bodies = read_files(paths)
    session = clients.KeepAliveSession()
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    try:
        uploads = clients.http_upload(target["url"], bodies, session=session, timeout=None)
    except ClientError as error:
        results.put(_outcome(paths, begin, str(error), []))
        return
    results.put(_outcome(paths, begin, None, [upload.seconds for upload in uploads]))


def _client_stow(paths, target, ready, start, results, env, per_series):
    bodies = read_files(paths)
    requests_bodies = [clients.stow_body(bodies)] if per_series else [clients.stow_body([b]) for b in bodies]
    session = clients.KeepAliveSession()
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    latencies, error = [], None
    for data, headers in requests_bodies:
        t0 = time.perf_counter()
        answer = session.post(target["url"] + "/dicom-web/studies", data=data, headers=headers)
        latencies.append(time.perf_counter() - t0)
        if answer.status_code != 200:
            error = "HTTP %d %s" % (answer.status_code, answer.text[:200])
            break
    results.put(_outcome(paths, begin, error, None if per_series else latencies))


def _client_orthanc_store(ids, target, ready, start, results, env):
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    try:
        clients.orthanc_store(target["sender"], "receiver", ids)
    except ClientError as error:
        results.put(_outcome(ids, begin, str(error)))
        return
    results.put(_outcome(ids, begin))


CLIENTS = {
    "storescu": _client_storescu,
    "pynetdicom": _client_pynetdicom,
    "http": _client_http,
    "stow-instance": functools.partial(_client_stow, per_series=False),
    "stow-series": functools.partial(_client_stow, per_series=True),
    "orthanc-store": _client_orthanc_store,
}


def _run_together(body, leading_args, trailing_args, what):
    """One process per entry of `leading_args`, each running body(*leading, ready, start, results,
    *trailing): each loads its work, says it is ready, waits for the common start, and puts its
    outcome ({"error": ..., ...}). Returns the wall time from the start to the last outcome, and
    the outcomes; raises on the first error."""
    context = multiprocessing.get_context("fork")
    ready, results, start = context.Queue(), context.Queue(), context.Event()
    processes = [context.Process(target=body, args=tuple(leading) + (ready, start, results) + tuple(trailing_args))
                 for leading in leading_args]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=600)
    begin = time.perf_counter()
    start.set()
    outcomes = [results.get(timeout=3600) for _ in processes]
    elapsed = time.perf_counter() - begin
    for process in processes:
        process.join()
    errors = [o["error"] for o in outcomes if o["error"]]
    if errors:
        raise RuntimeError("%s failed: %s" % (what, errors[0]))
    return elapsed, outcomes


def run_clients(kind, items, count, target, env=None):
    """Runs `count` clients of `kind` over `items` (files, or instance ids for orthanc-store); `env`
    changes the clients' environment (storescu reads TCP_NODELAY).

    Returns {"elapsed": wall seconds, "count": n, "latencies": [...] or None}.
    """
    parts = [p for p in split(list(items), count) if p]
    elapsed, outcomes = _run_together(CLIENTS[kind], [(part, dict(target, calling="SCU%02d" % i)) for i, part in
                                                      enumerate(parts)], (env or {},), "%s clients" % kind)
    latencies = None
    if all(o["latencies"] is not None for o in outcomes):
        latencies = [value for o in outcomes for value in o["latencies"]]
    return {"elapsed": elapsed, "count": sum(o["count"] for o in outcomes), "latencies": latencies,
            "clientMeans": [o["elapsed"] / o["count"] for o in outcomes if o["count"]]}


# --- a pool of clients that stay up between runs (the overhead comparison) ------------------------

def _pool_worker(kind, index, inbox, outbox, env):
    """Sends whatever it is given, to whichever Orthanc it is told, until told None. HTTP keeps one
    keep-alive session per Orthanc, as a real client would; storescu opens one association per job
    (with the target's "options", if any). Answers (index, error or None, seconds of the job)."""
    sessions, bodies = {}, {}
    while True:
        job = inbox.get()
        if job is None:
            return
        target, paths = job
        error = None
        begin = time.perf_counter()
        try:
            if kind == "http":
                for path in paths:
                    if path not in bodies:
                        bodies[path] = read_files([path])[0]
                session = sessions.setdefault(target["url"], clients.KeepAliveSession())
                clients.http_upload(target["url"], [bodies[path] for path in paths], session=session, timeout=None)
            elif kind == "storescu":
                runs = clients.storescu(target["port"], paths, target["calling"], target["aet"],
                                        options=target.get("options", ()), env=env, check=False)
                error = next((run.stderr[-500:] or "storescu exited with code %d" % run.returncode
                              for run in runs if run.returncode), None)
            else:
                error = "no pooled client for %s" % kind
        except Exception as failure:  # noqa: BLE001 - reported to the parent
            error = repr(failure)
        outbox.put((index, error, time.perf_counter() - begin))


class ClientPool:
    """`count` client processes of `kind` ("http" or "storescu"), started once. run() splits a
    list of files between them, starts them together and returns the wall time until the last one
    is done: no process start inside the measurement, unlike run_clients(). Client i calls itself
    "SCU%02d" % i (storescu: one calling AET per association).

    start() and wait() are run() in two halves, so that pools of different kinds send at the same
    time (benchmarks/contention.py); start(..., clients=n) uses the first n processes only."""

    def __init__(self, kind, count, env=None):
        context = multiprocessing.get_context("fork")
        self._outbox = context.Queue()
        self._inboxes = [context.Queue() for _ in range(count)]
        self._processes = [context.Process(target=_pool_worker, args=(kind, index, inbox, self._outbox, env or {}))
                           for index, inbox in enumerate(self._inboxes)]
        for process in self._processes:
            process.start()
        self._busy = []
        self._begin = None

    @property
    def pids(self):
        return [process.pid for process in self._processes]

    def run(self, target, files):
        self.start(target, files)
        elapsed, outcomes = self.wait()
        errors = [error for _, error, _ in outcomes if error]
        if errors:
            raise RuntimeError("pooled clients failed: %s" % errors[0])
        return elapsed

    def start(self, target, files, clients=None):
        """Deals `files` to the first `clients` processes (default: all) and lets them send, now."""
        if self._busy:
            raise RuntimeError("the pool is still sending: wait() first")
        parts = split(list(files), clients or len(self._inboxes))
        self._busy = [(i, part) for i, part in enumerate(parts) if part]
        self._begin = time.perf_counter()
        for i, part in self._busy:
            self._inboxes[i].put((dict(target, calling="SCU%02d" % i), part))

    def wait(self, timeout=600):
        """(wall seconds from start() to the last client's end, [(client, error or None, its seconds)])."""
        outcomes = sorted(self._outbox.get(timeout=timeout) for _ in self._busy)
        elapsed = time.perf_counter() - self._begin
        self._busy = []
        return elapsed, outcomes

    def close(self):
        for inbox in self._inboxes:
            inbox.put(None)
        for process in self._processes:
            process.join(timeout=30)


# --- downloads ------------------------------------------------------------------------------------

def _download_urls(urls, ready, start, results):
    session = clients.KeepAliveSession()
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    size = 0
    for url in urls:
        with session.get(url, stream=True) as answer:
            if answer.status_code != 200:
                results.put({"error": "HTTP %d for %s" % (answer.status_code, url), "bytes": size, "elapsed": 0})
                return
            for chunk in answer.iter_content(1 << 20):
                size += len(chunk)
    results.put({"error": None, "bytes": size, "elapsed": time.perf_counter() - begin})


def _download_curl(urls, ready, start, results):
    """curl, one process, one keep-alive connection, every URL in turn, bodies discarded."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False) as config:
        groups = []
        for url in urls:
            # One group per request ("next" resets the options, not the connection).
            group = 'silent\nfail\nwrite-out = "%{size_download}\\n"\noutput = "/dev/null"\n'
            if isinstance(url, tuple):  # (url, JSON body): a POST
                group += 'url = "%s"\ndata = "%s"\n' % (url[0], url[1].replace('"', '\\"'))
            else:
                group += 'url = "%s"\n' % url
            groups.append(group)
        config.write("next\n".join(groups))
        path = config.name
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    completed = subprocess.run(["curl", "-K", path], capture_output=True, text=True)
    elapsed = time.perf_counter() - begin
    os.unlink(path)
    if completed.returncode != 0:
        results.put({"error": "curl exited with %d" % completed.returncode, "bytes": 0, "elapsed": elapsed})
        return
    size = sum(int(line) for line in completed.stdout.split() if line.strip().isdigit())
    results.put({"error": None, "bytes": size, "elapsed": elapsed})


def _read_files(paths, ready, start, results):
    ready.put(True)
    start.wait()
    begin = time.perf_counter()
    size = 0
    for path in paths:
        with open(path, "rb") as stream:
            while True:
                chunk = stream.read(1 << 20)
                if not chunk:
                    break
                size += len(chunk)
    results.put({"error": None, "bytes": size, "elapsed": time.perf_counter() - begin})


def run_downloads(kind, work, clients):
    """Each client gets work[i]: 'curl' and 'python' download lists of URLs (curl, or Python
    requests on one keep-alive session), 'files' reads paths from disk."""
    body = {"curl": _download_curl, "python": _download_urls, "files": _read_files}[kind]
    # A study with fewer files than clients leaves some clients without work.
    elapsed, outcomes = _run_together(body, [(work[i],) for i in range(clients) if work[i]], (), "downloads")
    return {"elapsed": elapsed, "bytes": sum(o["bytes"] for o in outcomes)}


def static_file_server(root):
    """A plain static file server over `root` on a free loopback port: BusyBox httpd (C, one
    process per connection), the 'raw HTTP' baseline for the same bytes. Returns (process, url)."""
    port = free_tcp_port()
    process = subprocess.Popen(["busybox", "httpd", "-f", "-p", "127.0.0.1:%d" % port, "-h", root],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    for _ in range(100):
        try:
            requests.get(url, timeout=1)
            break
        except requests.ConnectionError:
            time.sleep(0.05)
    return process, url
