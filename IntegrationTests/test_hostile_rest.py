"""Hostile clients on every /perf route while Orthanc ingests (issue 11).

Every route and every parameter of docs/rest-api.md, fuzzed over real HTTP from several threads:
10 KB values and keys, UTF-8 and invalid bytes (percent-encoded: %FF, overlong and surrogate
sequences), NUL (%00), repeated and unknown parameters, empty values, bare keys, every method.
Meanwhile one thread uploads generated instances over HTTP and another sends them with storescu.

For each request the answer must be what the routes promise: 200 (JSON), 400 (JSON with a
reason) or 405 (with Allow), never a 5xx. A 405 has no body: Orthanc's SendMethodNotAllowed sends
none and its SendHttpStatus refuses 405. (Orthanc 1.12.7 adds its own "Content-Type: text/plain"
after the plugin's application/json on a 400: two Content-Type headers, which no SDK call avoids.)
A request whose head exceeds 16 KiB is refused by Orthanc's HTTP server before any route. HEAD, OPTIONS and PATCH never reach a plugin: Orthanc
answers them itself (404, 404 and 400 in 1.10.1 and 1.12.7); they only must not be 5xx. At the
end Orthanc is still up, nothing was lost or counted twice (the plugin's stored count = Orthanc's
CountInstances = the clients' successes) and no hook threw.

The generator is seeded (SEED, and the thread number): a failure names the request, and the same
seed replays the same requests.
"""
import http.client
import io
import json
import os
import random
import re
import socket
import threading
import time
import urllib.parse

import pydicom
import pytest
import requests

from ingest_perf.generate_series import derived_uid
from ingest_perf.orthanc_process import ALL_ORTHANCS
from ingest_perf.stats_checks import wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS

SEED = 11
FUZZ_THREADS = 4
REQUESTS_PER_THREAD = 500  # 2,000 per Orthanc, 4,000 in all

METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
# Orthanc answers these itself, before any plugin route (HttpServer knows GET, POST, PUT, DELETE).
ORTHANC_ONLY_METHODS = {"HEAD", "OPTIONS", "PATCH"}

MAX_LABEL_BYTES = 64


class Names:
    """What the requests are made of, as the plugin's GET /perf/vocabulary names it."""

    def __init__(self, vocabulary):
        self.routes = {route["path"]: route["method"] for route in vocabulary["routes"]}  # path -> its method
        self.transports = [transport["name"] for transport in vocabulary["transports"]] + ["all"]
        self.labels = [label["name"] for label in vocabulary["labels"]]
        self.free_labels = [name for name in self.labels if name != "transport"]  # 1 to 64 bytes, matched or not
        self.parameters = self.labels + ["groupBy", "window"]
        self.decodes_query_first = False  # Orthanc 1.13.0 and later: SPLIT_AFTER_DECODING
        self.windows = vocabulary["windows"]
        (sizes,) = [label["values"] for label in vocabulary["labels"] if label["name"] == "sizeClass"]
        self.size_classes = sizes + ["(none)", "(other)"]

# CivetWeb (Orthanc's HTTP server) refuses a request whose head exceeds 16 KiB with its own
# text/plain 400 "Malformed message", in 1.10.1 and 1.12.7: a 10 KB value reaches the plugin only
# when it percent-encodes to less than that.
SERVER_HEAD_LIMIT = 16384

VALID, INVALID, EITHER = "valid", "invalid", "either"


def encode(raw):
    """Every byte percent-encoded except unreserved characters: what reaches Orthanc is exactly `raw`."""
    return urllib.parse.quote_from_bytes(raw, safe="")


HOSTILE_BYTES = [
    b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\x00",
    b"dicom\x00", b"\x00rest", "\u00e9".encode(), "\u65e5\u672c".encode(), "\U0001f600".encode(),
    b"\r\n", b"\t", b"<script>", b"'\"\\", b"&=?#;", b"+", b"..%2F", b"\x1b[31m",
]


UNRESERVED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"


def random_bytes(rng, size, odd=1.0):
    """`size` random bytes, a fraction `odd` of them any byte but '%' (a double decoder would see
    escapes), the rest unreserved (a 10 KB value then stays under Orthanc's 16 KiB request head)."""
    return bytes(rng.choice(UNRESERVED) if rng.random() >= odd else rng.randrange(256) for _ in range(size)).replace(
        b"%", b"_")


def hostile_value(rng):
    """Raw bytes of a hostile value: 10 KB, empty, around the 64-byte limit, random, or odd bytes."""
    choice = rng.randrange(8)
    if choice == 0:
        return b"A" * 10240
    if choice == 1:
        return random_bytes(rng, 10240, odd=0.1)
    if choice == 2:
        return b""
    if choice == 3:
        return b"x" * rng.choice([63, 64, 65])
    if choice == 4:
        return random_bytes(rng, rng.randrange(1, 20))
    return rng.choice(HOSTILE_BYTES) + rng.choice([b"", b"CT", "\u00e9".encode()])


def label_value_validity(raw):
    """A label filter takes 1 to 64 bytes, without NUL."""
    return VALID if 0 < len(raw) <= MAX_LABEL_BYTES and b"\x00" not in raw else INVALID


def stats_parameter(rng, names):
    """One (raw query fragment, key, validity) of GET /perf/stats."""
    kind = rng.randrange(10)
    if kind <= 1:  # a valid value
        key = rng.choice(names.parameters)
        if key == "transport":
            value = rng.choice(names.transports)
        elif key == "groupBy":
            value = rng.choice(names.labels)
        elif key == "window":
            value = rng.choice(names.windows)
        elif key == "sizeClass":
            value = rng.choice(names.size_classes)
        else:
            value = rng.choice(["STORESCU", "ORTHANC", "127.0.0.1", "1.2.840.10008.1.2.1", "(none)", "(other)",
                                "1.2.840.10008.5.1.4.1.1.2", "NEVER-SEEN"])
        return "%s=%s" % (key, encode(value.encode())), key, VALID
    if kind <= 6:  # a known key, a hostile value
        key = rng.choice(names.parameters)
        raw = hostile_value(rng)
        if key in ("transport", "groupBy", "window"):
            validity = INVALID  # no hostile value is a transport, a label name or a window ("dicom\0" neither)
        else:
            validity = label_value_validity(raw)
        return "%s=%s" % (key, encode(raw)), key, validity
    if kind == 7:  # an unknown key, or a known one spelt differently
        key = rng.choice(["foo", "Transport", "groupby", "transport[]", "remoteAET", "x" * 10240, "\u00e9", "\x00",
                          "transport\x00", "\xff", "", "limit", "format"])
        raw_key = key.encode("latin-1") if key in ("\xff",) else key.encode()
        value = rng.choice([b"dicom", b"", b"\xff"])
        # "=" alone is an empty fragment, like "&&": ignored
        validity = VALID if raw_key == b"" and value == b"" else INVALID
        return encode(raw_key) + "=" + encode(value), "unknown:%s:%s" % (key, rng.random()), validity
    if kind == 8:  # a bare key (no '='), which Orthanc passes with an empty value
        key = rng.choice(names.parameters)
        return key, key, INVALID
    # A malformed escape, sent as is: '%' without two hex digits. Decoders differ; 200 or 400.
    key = rng.choice(names.parameters)
    return "%s=%s" % (key, rng.choice(["%", "%2", "%zz", "%%", "a%", "%G0", "%0"])), key, EITHER


RECENT_VALUES = {
    "n": ["1", "20", "1000", "0", "1001", "-1", "1e3", "20x"],
    "window": ["1m", "5m", "1h", "90s", "24h", "0s", "25h", "5d", "m", "1.5m"],
    "phase": ["serverTotal", "persist", "associationGap", "changeDispatch", "otherOnStored", "ServerTotal"],
    "seconds": ["1", "60", "3600", "0", "3601", "60s", "-60"],
}


def recent_parameter(rng, route, names):
    """One raw query fragment of GET /perf/slowest (its own parameters and those of /perf/stats) or
    GET /perf/trace (seconds): valid or hostile; only 200 or 400 is expected of either."""
    kind = rng.randrange(4)
    if kind == 0:
        return stats_parameter(rng, names)[0]
    key = rng.choice(["seconds"] if route == "/perf/trace" and kind != 3 else ["n", "window", "phase", "seconds"])
    raw = rng.choice(RECENT_VALUES[key]).encode() if kind == 1 else hostile_value(rng)
    return "%s=%s" % (key, encode(raw))


# Orthanc 1.13.0 has civetweb decode the query string before it splits it on '&' and '=' (read in its
# sources): a decoded NUL ends the query there, and a decoded '&', '=' or '#' splits a value, so what
# the plugin receives is not what was sent. Such a request may then be answered 200 or 400.
SPLIT_AFTER_DECODING = re.compile(r"%(00|26|3[dD]|23)")


def hostile_request(rng, names):
    method, path, expected = drawn_request(rng, names)
    query = path.partition("?")[2]
    if names.decodes_query_first and expected not in (None, {405}) and SPLIT_AFTER_DECODING.search(query):
        expected = expected | {200, 400}
    return method, path, expected


def drawn_request(rng, names):
    """(method, path, expected statuses or None for "not 5xx")."""
    draw = rng.random()
    if draw >= 0.75:
        route = "/perf/slowest" if draw < 0.87 else "/perf/trace"
        method = rng.choices(METHODS, weights=[60, 20, 5, 5, 4, 3, 3])[0]
        query = "&".join(recent_parameter(rng, route, names) for _ in range(rng.choice([0, 1, 2, 3])))
        path = route + ("?" + query if query else "")
        if method in ORTHANC_ONLY_METHODS:
            return method, path, None
        return method, path, ({200, 400} if method == "GET" else {405})
    # /perf/diagnosis takes the arguments of /perf/stats, groupBy excepted; /perf/slots only transport and window
    route = ("/perf/stats" if draw < 0.48 else "/perf/slots" if draw < 0.55 else "/perf/diagnosis" if draw < 0.65
             else "/perf/reset")
    method = rng.choices(METHODS, weights=[50, 22, 6, 6, 6, 5, 5])[0]
    fragments, keys, validities = [], [], []
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
        fragment, key, validity = stats_parameter(rng, names)
        fragments.append(fragment)
        keys.append(key)
        validities.append(validity)
    i = rng.randrange(len(fragments)) if fragments else None
    if i is not None and rng.random() < 0.15 and fragments[i] != "=":  # the same parameter twice
        fragments.append(fragments[i])
        keys.append(keys[i])
        validities.append(INVALID)
    query = "&".join(fragments)
    odd = rng.random() < 0.05
    if odd:  # empty fragments, a lone '=' or '?', a fragment identifier: how they reach the plugin is Orthanc's
        query = rng.choice(["&", "&&", "=", "?", ""]) + query + rng.choice(["", "&", "#frag"])
    path = route + ("?" + query if query or rng.random() < 0.1 else "")
    if method in ORTHANC_ONLY_METHODS:
        return method, path, None
    if method != names.routes[route]:
        return method, path, {405}
    if route == "/perf/reset":
        return method, path, {200}  # Orthanc gives no GET arguments to a POST: nothing to refuse
    if odd:
        return method, path, {200, 400}
    if len(set(keys)) < len(keys) or any(v == INVALID for v in validities):
        return method, path, {400}
    if route != "/perf/stats" and "window" in keys and any(k in names.free_labels or k == "groupBy" for k in keys):
        return method, path, {400}  # the diagnosis and the slots read windows per transport only
    if route == "/perf/diagnosis" and "groupBy" in keys:
        return method, path, {400}
    if route == "/perf/slots" and any(k not in ("transport", "window") and not k.startswith("unknown::") for k in keys):
        return method, path, {400}  # kept per transport only: a label or groupBy is an unknown parameter there
    if any(v == EITHER for v in validities):
        return method, path, {200, 400}
    return method, path, {200}


class Fuzzer(threading.Thread):
    def __init__(self, port, names, number, count, failures, statuses, lock):
        super().__init__(name="fuzz-%d" % number, daemon=True)
        self.port, self.names, self.number, self.count = port, names, number, count
        self.rng = random.Random("%d-%d" % (SEED, number))
        self.failures, self.statuses, self.lock = failures, statuses, lock
        self.connection = None
        self.sent = 0

    def send(self, method, path):
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.connection.request(method, path)
                answer = self.connection.getresponse()
                body = answer.read()
                if answer.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                    self.connection = None
                return answer, body
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # Orthanc closes idle keep-alive connections after 1 s: one retry on a new one.
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise

    def check(self, method, path, expected, answer, body):
        status = answer.status
        problems = []
        head = len(method) + len(path) + 70  # the request line and http.client's headers, about
        category = method if method in ORTHANC_ONLY_METHODS else "plugin routes"
        if head > SERVER_HEAD_LIMIT + 200:
            expected, category = {400}, "head over 16 KiB"  # refused by Orthanc's HTTP server: text/plain 400
        elif head > SERVER_HEAD_LIMIT - 200:
            expected, category = None, "head about 16 KiB"  # either way, but never a server error
        with self.lock:
            self.statuses[(category, status)] = self.statuses.get((category, status), 0) + 1
        if status >= 500:
            problems.append("server error")
        elif expected is not None and status not in expected:
            problems.append("expected %s" % sorted(expected))
        if expected is not None and status in (200, 400) and head <= SERVER_HEAD_LIMIT:
            content_type = answer.getheader("Content-Type", "")
            if "application/json" not in content_type:
                problems.append("Content-Type %r" % content_type)
            try:
                document = json.loads(body)
            except ValueError:
                problems.append("body is not JSON")
                document = None
            if status == 400 and document is not None:
                if not (isinstance(document.get("error"), str) and document["error"]
                        and isinstance(document.get("parameter"), str) and "allowed" in document):
                    problems.append("400 without a reason")
            if status == 200 and document is not None and path.startswith("/perf/stats"):
                if document.get("errors", {}).get("callbackExceptions", 0) != 0:
                    problems.append("callbackExceptions %s" % document["errors"]["callbackExceptions"])
            if status == 200 and path.startswith("/perf/reset") and document != {"reset": True}:
                problems.append("reset answered %r" % document)
        if status == 405 and answer.getheader("Allow") not in self.names.routes.values():
            problems.append("405 with Allow %r" % answer.getheader("Allow"))
        if method == "HEAD" and body:
            problems.append("HEAD answered with a body")
        if problems:
            with self.lock:
                self.failures.append("%s %s -> %d (%s): %s; body %r" % (
                    method, path[:200], status, ", ".join(problems), answer.getheader("Content-Type"), body[:300]))

    def run(self):
        try:
            for _ in range(self.count):
                method, path, expected = hostile_request(self.rng, self.names)
                answer, body = self.send(method, path)
                self.sent += 1
                self.check(method, path, expected, answer, body)
        except Exception as e:  # noqa: BLE001 - a dead connection is a failure to report
            with self.lock:
                self.failures.append("%s: %r after %d requests" % (self.name, e, self.sent))
        finally:
            if self.connection is not None:
                self.connection.close()


RAW_REQUESTS = [  # bytes that are not valid in a request line: the HTTP server refuses them first
    b"GET /perf/stats?remoteAet=\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /perf/stats?remoteAet=a b HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /perf/stats?transport=dicom\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /perf/stats?" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /perf/reset HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n\xff\x00\xfe\x00{",
    b"GET /perf/stats HTTP/1.1\r\nHost: x\r\nX-Long: " + b"h" * 10240 + b"\r\n\r\n",
    b"GET /perf/%00stats HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /perf/stats/../reset HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GARBAGE\r\n\r\n",
]


def raw_request(port, data):
    """Sends bytes as they are; returns the status code of the answer, or None if the connection closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        answer = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except OSError:
            pass
    first = answer.split(b"\r\n", 1)[0].split()
    return int(first[1]) if len(first) >= 2 and first[1].isdigit() else None


class Ingest:
    """HTTP uploads and storescu runs of generated instances, until stopped; counts what succeeded."""

    def __init__(self, orthanc, template, folder):
        self.orthanc, self.folder = orthanc, folder
        self.template = pydicom.dcmread(template)
        self.lock = threading.Lock()
        self.next_index = 0
        self.http_ok = self.dicom_ok = 0
        self.errors = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.guard, args=(self.http,), daemon=True),
                        threading.Thread(target=self.guard, args=(self.dicom,), daemon=True)]

    def instance(self):
        with self.lock:
            index = self.next_index
            self.next_index += 1
            uid = derived_uid(SEED, "hostile", index)
            self.template.SOPInstanceUID = uid
            self.template.file_meta.MediaStorageSOPInstanceUID = uid
            self.template.InstanceNumber = index + 1
            buffer = io.BytesIO()
            self.template.save_as(buffer, write_like_original=False)
            return buffer.getvalue()

    def http(self):
        with requests.Session() as session:
            while not self.stop.is_set():
                answer = session.post(self.orthanc.url + "/instances", data=self.instance(),
                                      headers={"Content-Type": "application/dicom"}, timeout=60)
                if answer.status_code != 200 or answer.json().get("Status") != "Success":
                    raise AssertionError("HTTP upload answered %d: %s" % (answer.status_code, answer.text[:300]))
                self.http_ok += 1

    def dicom(self):
        batch = 0
        while not self.stop.is_set():
            paths = []
            for i in range(5):
                path = os.path.join(self.folder, "b%d-%d.dcm" % (batch, i))
                with open(path, "wb") as f:
                    f.write(self.instance())
                paths.append(path)
            self.orthanc.storescu(paths, calling_aet="HOSTILE")  # raises on a non-zero exit
            self.dicom_ok += len(paths)
            batch += 1

    def guard(self, work):
        try:
            work()
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.errors.append(repr(e))

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)


def test_hostile_requests_during_ingest(orthanc, series_factory, tmp_path):
    started = time.monotonic()
    template = series_factory(1, SEED, size=32)[0]
    failures, statuses, lock = [], {}, threading.Lock()
    with Ingest(orthanc, template, str(tmp_path)) as ingest:
        while ingest.http_ok + ingest.dicom_ok < 5 and not ingest.errors:  # the ingest is under way
            time.sleep(0.05)
        names = Names(orthanc.get("/perf/vocabulary").json())
        names.decodes_query_first = tuple(int(n) for n in orthanc.version.split(".")[:2]) >= (1, 13)
        fuzzers = [Fuzzer(orthanc.http_port, names, n, REQUESTS_PER_THREAD, failures, statuses, lock)
                   for n in range(FUZZ_THREADS)]
        for fuzzer in fuzzers:
            fuzzer.start()
        raw = [raw_request(orthanc.http_port, data) for data in RAW_REQUESTS]
        for fuzzer in fuzzers:
            fuzzer.join(timeout=300)
    sent = sum(f.sent for f in fuzzers) + len(raw)

    summary = "%d hostile requests on Orthanc %s in %.1f s; statuses: %s; raw requests: %s; ingested %d by HTTP, " \
              "%d by C-STORE" % (sent, orthanc.version, time.monotonic() - started,
                                 ", ".join("%s %d: %d" % (k[0], k[1], n) for k, n in sorted(statuses.items())),
                                 raw, ingest.http_ok, ingest.dicom_ok)
    print(summary)
    assert not ingest.errors, ingest.errors
    assert not failures, "%d bad answers (%s); first ones:\n%s" % (len(failures), summary, "\n".join(failures[:20]))
    assert all(status is None or status < 500 for status in raw), raw
    assert sent == FUZZ_THREADS * REQUESTS_PER_THREAD + len(RAW_REQUESTS)
    assert ingest.http_ok > 0 and ingest.dicom_ok > 0

    # Orthanc is alive, and nothing was lost or counted twice.
    assert orthanc.is_running()
    assert orthanc.get("/system").status_code == 200
    successes = ingest.http_ok + ingest.dicom_ok
    assert orthanc.get("/statistics").json()["CountInstances"] == successes
    # POST /perf/reset was among the requests: storedInstancesSinceStart is the count it does not zero.
    stats = wait_for(orthanc, lambda s: s["changes"]["storedInstancesSinceStart"] >= successes)
    assert stats["changes"]["storedInstancesSinceStart"] == successes
    assert stats["errors"]["callbackExceptions"] == 0
    orthanc.reset_stats()
    orthanc.http_upload([template])  # after the storm: one more, counted once
    stats = orthanc.stats(transport="all")
    assert stats["transports"]["all"]["instances"]["stored"] == 1
    assert stats["changes"]["storedInstancesSinceStart"] == successes + 1
    assert stats["openRecords"]["count"] == 0
    assert "internal error in the ingest-perf plugin" not in orthanc.log_text()


@pytest.mark.parametrize("method", ["HEAD", "OPTIONS", "PATCH"])
def test_methods_orthanc_answers_itself_are_never_server_errors(orthanc, method):
    for route in Names(orthanc.get("/perf/vocabulary").json()).routes:
        answer = requests.request(method, orthanc.url + route.replace("{file}", "ui.js") + "?transport=%FF%00",
                                  timeout=10)
        assert answer.status_code < 500, (method, route, answer.status_code)
        if method == "HEAD":
            assert answer.content == b""
    assert orthanc.get("/system").status_code == 200
