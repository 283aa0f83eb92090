"""Ingest the same work into several Orthancs and compare what they stored: the helpers of
test_injected_faults.py, test_stop_under_load.py, test_coexistence.py and the guest matrix
(guest_matrix.py, test_guests_*.py).

A piece of work is a list of clients, each ("http", name, files) or ("storescu", calling AET,
files); all clients run at once. The outcome of an ingest is what a client can see (each HTTP
status with the ID Orthanc answered, each storescu exit code) and what Orthanc stored (the set
of instance IDs and the MD5 of each stored file), so that an Orthanc with the plugin can be
compared with one without it.

The coexistence tests ingest one path at a time and read more of each side (storescu_outcome,
http_outcome, stow_outcome, stored_state), compared by differences(); debian_plugins() names
Debian's plugins that take part in ingest, as each Orthanc sees them.
"""
import collections
import hashlib
import os
import subprocess
import threading
import time

import requests

from ingest_perf import clients
from ingest_perf.clients import Concurrently, http_upload, storescu
from ingest_perf.orthanc_process import debian_plugin

JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"


def run_clients(orthanc, clients, timeout=300):
    """Runs every client at once; returns {"http": {(client, file name): (status, ID)}, "storescu": {AET: exit code}}.

    A connection error of an HTTP client (Orthanc stopping under it) is recorded as status None."""
    results = {"http": {}, "storescu": {}}

    def http_client(name, files):
        # A long timeout: on a loaded machine an answer may take tens of seconds, and none is a difference.
        uploads = http_upload(orthanc.url, files, expect=None, connection_errors="record", timeout=300)
        for path, upload in zip(files, uploads):
            identifier = (upload.answer or {}).get("ID") if upload.status == 200 else None
            results["http"][(name, os.path.basename(path))] = (upload.status, identifier)

    def storescu_client(aet, files):
        try:
            runs = storescu(orthanc.dicom_port, files, aet, orthanc.aet, timeout=timeout, check=False)
            results["storescu"][aet] = next((run.returncode for run in runs if run.returncode), 0)
        except subprocess.TimeoutExpired:
            results["storescu"][aet] = "timeout"

    Concurrently([lambda kind=kind, name=name, files=files: (http_client if kind == "http" else storescu_client)(
        name, files) for kind, name, files in clients]).run(timeout)
    return results


def stored_files(orthanc):
    """{instance ID: MD5 of the stored file}, read back through the REST API."""
    result = {}
    for instance in orthanc.get("/instances").json():
        answer = orthanc.get("/instances/%s/file" % instance)
        assert answer.status_code == 200, (instance, answer.status_code)
        result[instance] = hashlib.md5(answer.content).hexdigest()
    return result


class StatsPoller:
    """Reads /perf/stats in several shapes (or the routes given, as (path, parameters)), one after the
    other every `period` seconds on one keep-alive connection, while the load runs; keeps every read:
    {"start", "end" (wall clock), "latency" (s), "grouped" (groupBy given), "status" (None: no answer),
    "stats" (its JSON, or None)}."""

    SHAPES = [("/perf/stats", shape) for shape in (
        {}, {"groupBy": "remoteAet"}, {"transport": "dicom"}, {"groupBy": "transport"}, {"remoteAet": "(other)"})]

    def __init__(self, orthanc, shapes=SHAPES, period=0.02):
        self.orthanc, self.shapes, self.period = orthanc, shapes, period
        self.reads = []
        self._session = requests.Session()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def read(self, path="/perf/stats", params=None):
        start, clock, status, body = time.time(), time.perf_counter(), None, None
        try:
            answer = self._session.get(self.orthanc.url + path, params=params, timeout=60)
            status = answer.status_code
            body = answer.json()
        except (requests.RequestException, ValueError):
            pass
        self.reads.append({"start": start, "end": time.time(), "latency": time.perf_counter() - clock,
                           "grouped": "groupBy" in (params or {}), "status": status, "stats": body})

    def _run(self):
        index = 0
        while not self._done.is_set():
            began = time.perf_counter()
            self.read(*self.shapes[index % len(self.shapes)])
            index += 1
            self._done.wait(max(0.0, self.period - (time.perf_counter() - began)))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._done.set()
        self._thread.join()
        return False

    def statuses(self):
        return collections.Counter(read["status"] for read in self.reads)

    def malformed(self):
        """Answers that are neither a 200 with JSON nor a 503 with a JSON reason."""
        return [(r["status"], r["stats"]) for r in self.reads
                if not ((r["status"] == 200 and isinstance(r["stats"], dict) and "transports" in r["stats"])
                        or (r["status"] == 503 and isinstance(r["stats"], dict) and "error" in r["stats"]))]


def crash_markers(log_text):
    """Lines of an Orthanc log that say it crashed or that a sanitizer reported something."""
    markers = ("crash", "Segmentation", "segfault", "Sanitizer", "runtime error:", "terminate called", "Aborted",
               "core dumped")
    return [line for line in log_text.splitlines() if any(m in line for m in markers)]


# --- one path at a time, everything a client and an administrator see (the coexistence tests) -----

def debian_plugins(orthanc_version):
    """Paths of Debian's ingest-related plugins as the Orthanc of `orthanc_version` sees them."""
    return {
        "gdcm": debian_plugin("libOrthancGdcm.so", orthanc_version),
        "dicomweb": debian_plugin("libOrthancDicomWeb.so", orthanc_version),
        "postgresql-index": debian_plugin("libOrthancPostgreSQLIndex.so", orthanc_version),
        "postgresql-storage": debian_plugin("libOrthancPostgreSQLStorage.so", orthanc_version),
        "python": debian_plugin("libOrthancPython.so", orthanc_version),
    }


def gdcm_section():
    """orthanc-gdcm 1.8 and later default to JPEG 2000 only; name JPEG lossless explicitly so
    that GDCM does the transcode with every version (1.5 handles it either way)."""
    return {"Gdcm": {"Enable": True, "RestrictTransferSyntaxes": [JPEG_LOSSLESS]}}


def series_with_study_time(folder, count, seed, size):
    """write_series with a StudyTime: GDCM's writer fills a missing StudyTime with the current time
    (and empties for other type 2 attributes), which would make two GDCM transcodes of the same
    instance differ whatever else is loaded."""
    import pydicom
    from ingest_perf.generate_series import write_series

    paths = write_series(str(folder), count, seed=seed, rows=size, columns=size)
    for path in paths:
        dataset = pydicom.dcmread(path)
        dataset.StudyTime = "101500"
        dataset.save_as(path, write_like_original=False)
    return paths


def md5_of(data):
    return hashlib.md5(data).hexdigest()


def storescu_outcome(orthanc, files, options=()):
    """Exit code of each association, and the DIMSE status of each file as storescu reports it
    (storescu -v; `options` added, e.g. --no-halt to send every file whatever Orthanc answers)."""
    results = clients.storescu(orthanc.dicom_port, files, "STORESCU", orthanc.aet, options=["-v"] + list(options),
                               check=False)
    statuses, current = [], None
    for result in results:
        for line in result.stderr.splitlines():
            if line.startswith("I: Sending file: "):
                current = os.path.basename(line[len("I: Sending file: "):].strip())
            elif line.startswith("I: Received Store Response"):
                statuses.append((current, line[len("I: Received Store Response"):].strip()))
    return {"exitCodes": [r.returncode for r in results], "statuses": statuses}


def http_outcome(orthanc, files):
    """Status and answer of every POST /instances, plus a duplicate and a body that is not DICOM."""
    uploads = clients.http_upload(orthanc.url, files + [files[0], b"not DICOM at all"], expect=None, timeout=60)
    return [(upload.status, upload.answer) for upload in uploads]


def stow_outcome(orthanc, files):
    answer = orthanc.stow_rs(files)
    # The answer's URLs carry the port, which differs between the two Orthancs.
    return {"status": answer.status_code, "answer": answer.text.replace(orthanc.url, "http://ORTHANC")}


def stored_state(orthanc, tags=()):
    """Everything of the stored result that is not a time stamp or a random storage UUID (and the
    values of the main tags named in `tags`, e.g. those a site's script edits, for readable differences)."""
    state = {}
    for instance in sorted(orthanc.get("/instances").json()):
        metadata = orthanc.get("/instances/%s/metadata?expand" % instance).json()
        metadata.pop("ReceptionDate", None)
        attachments = sorted(orthanc.get("/instances/%s/attachments" % instance).json())
        infos = {}
        for name in attachments:
            info = orthanc.get("/instances/%s/attachments/%s/info" % (instance, name)).json()
            info.pop("Uuid", None)
            infos[name] = info
        file_answer = orthanc.get("/instances/%s/file" % instance)
        assert file_answer.status_code == 200, (instance, file_answer.status_code)
        state[instance] = {"metadata": metadata, "attachments": infos, "fileMd5": md5_of(file_answer.content)}
        if tags:
            simplified = orthanc.get("/instances/%s/simplified-tags" % instance).json()
            state[instance]["tags"] = {tag: simplified.get(tag) for tag in tags}
    changes = orthanc.get("/changes", params={"limit": 10000}).json()["Changes"]
    return {
        "instances": state,
        "changes": [(c["ChangeType"], c["ResourceType"], c["ID"]) for c in changes],
        "statistics": orthanc.get("/statistics").json(),
    }


def differences(a, b, path=""):
    """Paths where two JSON-like values differ, with both values (readable assertion messages)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                found.append("%s/%s: only %s" % (path, key, "without" if key in a else "with"))
            else:
                found += differences(a[key], b[key], "%s/%s" % (path, key))
        return found
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, "%s[%d]" % (path, i))]
    return [] if a == b else ["%s: without %r, with %r" % (path, a, b)]
