"""Ingest the same work into several Orthancs and compare what they stored: the helpers of
test_injected_faults.py and test_stop_under_load.py.

A piece of work is a list of clients, each ("http", name, files) or ("storescu", calling AET,
files); all clients run at once. The outcome of an ingest is what a client can see (each HTTP
status with the ID Orthanc answered, each storescu exit code) and what Orthanc stored (the set
of instance IDs and the MD5 of each stored file), so that an Orthanc with the plugin can be
compared with one without it.
"""
import collections
import hashlib
import os
import subprocess
import threading
import time

import requests

from ingest_perf.clients import Concurrently, http_upload, storescu


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
