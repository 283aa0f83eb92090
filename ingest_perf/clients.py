"""The clients that send instances to an Orthanc, one runner per kind, and one way to run several at once.

    storescu(port, files, ...)          DCMTK's storescu (/usr/bin/storescu): one association per run
    start_storescu(port, files, ...)    the same, not waited for (a subprocess.Popen)
    gdcmscu(port, files, ...)           GDCM's gdcmscu: one association, or one process per file
    pynetdicom_store(port, files, ...)  pynetdicom: one association; a pause before each, TCP_NODELAY
    c_store(association, dataset)       one C-STORE on a pynetdicom association (a race of pynetdicom avoided)
    http_upload(url, bodies, ...)       POST /instances on one keep-alive connection: one Upload per body
    stow_rs(url, files, ...)            DICOMweb STOW-RS (orthanc-dicomweb): one request for the files
    orthanc_store(url, modality, ...)   a second Orthanc's C-STORE job (POST /modalities/{id}/store)
    Concurrently(tasks)                 tasks on threads of their own, released together: their results,
                                        the first error, the wall time from the common start

A server is named by its address (a port, a URL) and AE title, so these send to any Orthanc;
OrthancProcess.storescu, http_upload and stow_rs are these, aimed at that Orthanc. The benchmarks run
the same functions in processes of their own (benchmarks/workloads.py: 16 clients in one Python
interpreter would wait for each other).
"""
import collections
import os
import socket
import subprocess
import threading
import time
import uuid

import requests

# Absolute on purpose: pynetdicom installs a `storescu` script into the venv's bin folder.
STORESCU_BINARY = "/usr/bin/storescu"
GDCMSCU_BINARY = "/usr/bin/gdcmscu"
# Conservative limit for one storescu command line (Linux allows ~2 MB, 128 KB per argument).
_MAX_COMMAND_LINE_BYTES = 100000


class ClientError(Exception):
    """A client failed: a non-zero exit code, a refused association or store, an unexpected HTTP status."""


def environment(changes=None):
    """This process's environment with `changes` applied ({name: value}; None removes the variable)."""
    result = dict(os.environ)
    for name, value in (changes or {}).items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = str(value)
    return result


# --- DICOM ---------------------------------------------------------------------------------------

def storescu_command(port, files, calling_aet="STORESCU", called_aet="ORTHANC", options=(), host="127.0.0.1"):
    """The storescu command line: one process, one association."""
    return ([STORESCU_BINARY] + [str(o) for o in options] + ["-aet", calling_aet, "-aec", called_aet, host, str(port)]
            + [str(f) for f in files])


def storescu(port, files, calling_aet="STORESCU", called_aet="ORTHANC", options=(), env=None, timeout=600,
             check=True):
    """Sends `files` with DCMTK's storescu; returns one subprocess.CompletedProcess (text output) per run.

    One run is one association. A command line that would be too long (> ~100 KB) is split, each
    part its own run, hence its own association (whose first instance has no associationGap). `env`
    changes storescu's environment (e.g. {"TCP_NODELAY": "1"}; None removes a variable). With
    `check`, a non-zero exit code raises ClientError with the output; without, it is returned
    (options=["--no-halt"] sends every file whatever Orthanc answers). Exit code 0 does not mean
    "stored": Orthanc answers Success to instances its filters (Lua, plugins) discarded."""
    files = [str(f) for f in files]
    if not files:
        return []
    base = storescu_command(port, [], calling_aet, called_aet, options)
    base_size = sum(len(a) + 1 for a in base)
    chunks, current, size = [], [], base_size
    for f in files:
        if current and size + len(f) + 1 > _MAX_COMMAND_LINE_BYTES:
            chunks.append(current)
            current, size = [], base_size
        current.append(f)
        size += len(f) + 1
    chunks.append(current)
    results = []
    for chunk in chunks:
        result = subprocess.run(base + chunk, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                errors="replace", env=environment(env), timeout=timeout)
        if check and result.returncode != 0:
            raise ClientError("%s <%d files> exited with code %d\n--- stdout:\n%s\n--- stderr:\n%s"
                              % (" ".join(base), len(chunk), result.returncode, result.stdout, result.stderr))
        results.append(result)
    return results


def start_storescu(port, files, calling_aet="STORESCU", called_aet="ORTHANC", options=(), env=None):
    """storescu started and not waited for: a subprocess.Popen, its output (both streams) in a pipe."""
    return subprocess.Popen(storescu_command(port, files, calling_aet, called_aet, options), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment(env))


def gdcmscu(port, files, calling_aet="GDCMSCU", called_aet="ORTHANC", process_per_file=False, timeout=600):
    """GDCM's gdcmscu sending `files`: one association, or one process (one association) per file as a
    script would. Debian 12's gdcmscu (GDCM 3.0.21) stores, then aborts on its way out (SIGABRT): its
    exit status says nothing, and none is returned; judge by what the server stored."""
    def run(paths):
        command = [GDCMSCU_BINARY, "--store", "--call", called_aet, "--aetitle", calling_aet]
        for path in paths:
            command += ["-i", str(path)]
        subprocess.run(command + ["127.0.0.1", str(port)], stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout, env=environment({"TCP_NODELAY": None}))

    for part in ([[f] for f in files] if process_per_file else [files]):
        run(part)


def pynetdicom_store(port, files, calling_aet="PYNETDICOM", called_aet="ORTHANC", pause=0.0, nodelay=False):
    """One pynetdicom association sending `files` (paths, or pydicom datasets already read), waiting
    `pause` seconds before each but the first; TCP_NODELAY on its socket once associated when
    `nodelay` (pynetdicom 2.1 has no option). Returns each C-STORE's seconds; raises ClientError on a
    refused association or a status other than Success."""
    import pydicom
    from pynetdicom import AE

    datasets = [f if isinstance(f, pydicom.Dataset) else pydicom.dcmread(f) for f in files]
    ae = AE(ae_title=calling_aet)
    ae.add_requested_context(datasets[0].SOPClassUID, datasets[0].file_meta.TransferSyntaxUID)
    association = ae.associate("127.0.0.1", port, ae_title=called_aet)
    if not association.is_established:
        raise ClientError("pynetdicom: association refused")
    if nodelay:
        association.dul.socket.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    seconds = []
    try:
        for index, dataset in enumerate(datasets):
            if index and pause:
                time.sleep(pause)
            begin = time.perf_counter()
            status = c_store(association, dataset)
            seconds.append(time.perf_counter() - begin)
            if not status or status.Status != 0:
                raise ClientError("pynetdicom: C-STORE status %r" % (status.Status if status else None))
    finally:
        association.release()
    return seconds


def c_store(association, dataset):
    """association.send_c_store(dataset) once pynetdicom's reactor thread has woken from the pause of
    the previous send: pynetdicom 2.1 pauses it by clearing an event, then checks a flag the reactor
    sets just before waiting on it; a reactor preempted between that wait's return and the flag's
    reset (a loaded machine) looks paused, takes the C-STORE-RSP off the queue ("Received unexpected
    C-STORE service message") and send_c_store waits for it until the DIMSE timeout."""
    deadline = time.monotonic() + 10
    while association._is_paused and association.is_established and time.monotonic() < deadline:
        time.sleep(0.0001)
    return association.send_c_store(dataset)


# --- HTTP ----------------------------------------------------------------------------------------

# One upload as the client saw it: the HTTP status (None: the connection failed), the JSON answer
# (None if not JSON), its seconds, when it started (time.time(): the wall clock other logs use) and the
# answer's Content-Encoding ("identity" for none).
Upload = collections.namedtuple("Upload", "status answer seconds started encoding")


def read_body(body):
    """A body to send: bytes as they are, a path's content, anything else (an iterable with a
    length, sent piece by piece) as it is."""
    if isinstance(body, (str, os.PathLike)):
        with open(body, "rb") as stream:
            return stream.read()
    return body


def read_files(paths):
    """The bytes of each file, in order: bodies read before a measured upload."""
    return [read_body(str(path)) for path in paths]


class KeepAliveSession(requests.Session):
    """A requests.Session that does not reuse a keep-alive connection idle for more than IDLE_SECONDS.
    Orthanc's HTTP server (civetweb) closes a connection idle for its keep-alive timeout (1 s, fixed in
    Orthanc 1.10.1; KeepAliveTimeout since 1.11.3), and a request sent on it at that very moment is
    lost: "Remote end closed connection without response", which requests does not retry for a POST.
    On a loaded machine a client's pause between two requests reaches that second now and then (a
    STOW-RS client of test_load_accounting did, Orthanc's log clean). Idle longer than half of it, the
    next request opens a new connection, as a browser or curl would; the server never saw the lost
    request, but a test that counts every instance must not have to guess."""

    IDLE_SECONDS = 0.5

    def __init__(self):
        super().__init__()
        self._last_answer = None

    def request(self, *args, **kwargs):
        if self._last_answer is not None and time.monotonic() - self._last_answer > self.IDLE_SECONDS:
            for adapter in self.adapters.values():
                adapter.close()  # its pooled connections; the next request connects anew
        try:
            return super().request(*args, **kwargs)
        finally:
            self._last_answer = time.monotonic()


def http_upload(url, bodies, session=None, accept_encoding=None, expect=(200,), connection_errors="raise", each=None,
                timeout=120):
    """POSTs each body (bytes, a file path, or an iterable with a length) to `url`/instances, one after
    the other on one keep-alive connection (`session`, or a new one closed afterwards). Returns one
    Upload per body; each(upload), if given, is called after each.

    accept_encoding: the Accept-Encoding header (None: python-requests' own, which asks for gzip).
    expect: the statuses that are not an error (None: any); another raises ClientError.
    connection_errors: "raise", or "record" (an Upload with status None, and the next body goes on a
    new connection: Orthanc stopping under the client)."""
    own = session is None
    session = KeepAliveSession() if own else session
    headers = {"Content-Type": "application/dicom"}
    if accept_encoding is not None:
        headers["Accept-Encoding"] = accept_encoding
    uploads = []
    try:
        for body in bodies:
            data = read_body(body)
            started, begin = time.time(), time.perf_counter()
            try:
                answer = session.post(url + "/instances", data=data, headers=headers, timeout=timeout)
            except requests.RequestException:
                if connection_errors == "raise":
                    raise
                upload = Upload(None, None, time.perf_counter() - begin, started, None)
            else:
                seconds = time.perf_counter() - begin
                if expect is not None and answer.status_code not in expect:
                    raise ClientError("POST /instances answered %d: %s" % (answer.status_code, answer.text[:300]))
                try:
                    parsed = answer.json()
                except ValueError:
                    parsed = None
                upload = Upload(answer.status_code, parsed, seconds, started,
                                answer.headers.get("Content-Encoding") or "identity")
            uploads.append(upload)
            if each is not None:
                each(upload)
    finally:
        if own:
            session.close()
    return uploads


def stow_body(bodies):
    """(data, headers) of one STOW-RS request carrying `bodies` (bytes or file paths)."""
    boundary = uuid.uuid4().hex.encode()
    parts = [b"--%s\r\nContent-Type: application/dicom\r\n\r\n%s\r\n" % (boundary, read_body(b)) for b in bodies]
    headers = {"Content-Type": 'multipart/related; type="application/dicom"; boundary=%s' % boundary.decode(),
               "Accept": "application/dicom+json"}
    return b"".join(parts) + b"--%s--\r\n" % boundary, headers


def stow_rs(url, bodies, session=None, timeout=120):
    """One STOW-RS request (orthanc-dicomweb's POST /dicom-web/studies) carrying `bodies`; returns the
    requests.Response (no status check)."""
    data, headers = stow_body(bodies)
    return (session or requests).post(url + "/dicom-web/studies", data=data, headers=headers, timeout=timeout)


def orthanc_store(url, modality, resources, session=None, timeout=3600):
    """A second Orthanc (at `url`) sends `resources` (its IDs) to its modality `modality` by C-STORE: one
    synchronous store job, one association. Returns its seconds; raises ClientError unless it answers 200."""
    begin = time.perf_counter()
    answer = (session or requests).post("%s/modalities/%s/store" % (url, modality), timeout=timeout,
                                        json={"Resources": list(resources), "Synchronous": True})
    if answer.status_code != 200:
        raise ClientError("the sending Orthanc answered %d: %s" % (answer.status_code, answer.text[:300]))
    return time.perf_counter() - begin


# --- several at once -----------------------------------------------------------------------------

class Concurrently:
    """Tasks (callables without arguments) run on threads of their own, released together:

        clients = Concurrently([lambda: storescu(port, a), lambda: http_upload(url, b)]).start()
        results = clients.join()  # in the order of the tasks; raises the first task's error
        clients.seconds           # from the common start to the end of the last task

    run() is start() then join(). A task that must not fail the others catches its own errors."""

    def __init__(self, tasks):
        self.tasks = list(tasks)
        self.results = [None] * len(self.tasks)
        self.errors = []
        self.seconds = None
        self._begin = None
        self._barrier = threading.Barrier(len(self.tasks), action=self._released) if self.tasks else None
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(len(self.tasks))]

    def _released(self):
        self._begin = time.monotonic()

    def _run(self, index):
        try:
            self._barrier.wait()
            self.results[index] = self.tasks[index]()
        except Exception as error:  # noqa: BLE001 - raised by join()
            self.errors.append((index, error))

    def start(self):
        self._begin = time.monotonic()
        for thread in self._threads:
            thread.start()
        return self

    def join(self, timeout=600):
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0, deadline - time.monotonic()))
        self.seconds = time.monotonic() - self._begin
        if any(thread.is_alive() for thread in self._threads):
            raise ClientError("%d of %d clients still running after %s s"
                              % (sum(t.is_alive() for t in self._threads), len(self._threads), timeout))
        if self.errors:
            index, error = min(self.errors, key=lambda e: e[0])
            raise ClientError("client %d of %d failed: %r" % (index + 1, len(self.tasks), error)) from error
        return self.results

    def run(self, timeout=600):
        return self.start().join(timeout)


def split(items, parts):
    """`items` dealt into `parts` shares, round robin (the clients' shares of a series)."""
    return [items[i::parts] for i in range(parts)]
