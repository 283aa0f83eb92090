"""Scenarios that each create one ingest bottleneck on a real Orthanc with the plugin, so that the rules
of GET /perf/diagnosis can be validated (and their thresholds calibrated) on real figures.

Calling a scenario
------------------
Every scenario is a function

    orthanc = scenario(orthanc_factory, series_factory, **options)

taking conftest.py's fixtures (outside pytest: StandaloneFactories below). It starts an Orthanc
configured for the scenario (free loopback ports, the module's Orthanc version), ingests through
real clients (DCMTK's /usr/bin/storescu, pynetdicom, python-requests) and returns that Orthanc,
still running, with nothing reset: its GET /perf/stats since start is the scenario. The factory
stops it (fixture teardown, or StandaloneFactories.close()). In a test:

    from bottleneck_scenarios import nagle_stall
    def test_nagle_rule(orthanc_factory, series_factory):
        orthanc = nagle_stall(orthanc_factory, series_factory)
        assert orthanc.stats(transport="dicom")["transports"]["dicom"]["phases"]["associationGap"]["p50"] > 30

The returned process carries `orthanc.scenario`, a dict: `name`, `variant`, `expected` (what should
stand out in /perf/stats, in words), `sent` (instances or requests per client kind), `clientSeconds`
(wall time of the ingest), and for the two scenarios that can be read during their load
(`dicom_pool_saturated`, `http_threads_saturated`, option `during=callable(orthanc)`) `during`
(what the callable returned, called once while the load runs), `duringStartedAfter` and
`duringSeconds` (when it was called after the load started, and how long it took: the time an
operator's request waits). The ingest-perf plugin is the one of conftest's `plugin_path`; the test
plugins (libTestSlowChangeConsumer.so, libTestStorageOwner.so, libTestSlowDisk.so) are taken from
its folder, so build with the tests on (the default). Instances are synthetic CT slices of 512x512,
16-bit, explicit little endian (0.53 MB), unless said otherwise.

Isolation: only the scenario's own bottleneck should stand out. C-STORE scenarios other than the
stall run storescu and Orthanc with TCP_NODELAY=1 in their environments (DCMTK reads it; it removes
the ~40 ms Nagle/delayed-ACK stall of each C-STORE-RSP); HTTP clients send `Accept-Encoding:
identity` (python-requests asks for gzip by default, and Orthanc 1.10.1 then gzips every answer),
except compressed_answers.

The scenarios
-------------
"p50" figures are from one run on the 2-core development machine, Orthanc 1.10.1 (1.12.7 gives the
same within noise); "s" is the run's duration, Orthanc's start and the series' generation included.
Every run's full answers: Benchmarks/diagnosis_scenarios.py.

nagle_stall            default Orthanc, one storescu association of 60 instances, TCP_NODELAY=0 on
                       both sides. dicom associationGap p50 45 ms (p99 90), serverTotal 3.5. 4 s.
slow_sender            one pynetdicom association of 40 instances, 150 ms pause before each;
                       Orthanc with TCP_NODELAY=1. dicom associationGap p50 156 ms, serverTotal 3.8. 7 s.
dicom_pool_saturated   DicomThreadsCount 1, 8 simultaneous storescu associations (calling AETs SCU00
                       to SCU07) of 40 instances, TCP_NODELAY both sides. During the load: 8
                       openConnections, 8 AETs inProgress; associationGap p50 22 ms (each
                       association waits for the 7 others' instances), serverTotal 2.5; once done,
                       0 open. Throughput as healthy: on 2 cores one DICOM thread keeps up. during=. 2 s.
http_threads_saturated HttpThreadsCount 1 (Orthanc's minimum; 0 is refused), 8 keep-alive HTTP clients
                       of 40 instances. Orthanc's HTTP server keeps a worker for a keep-alive
                       connection until it closes, so the clients are served one after the other and
                       a request read during the load waits for the last of them (duringSeconds
                       0.85 of 1.1). In /perf/stats nothing moves: serverTotal 2.6, instances/s as
                       healthy, openRecords.threadsTracked 1. during=. 2 s.
transcoding_bound      IngestTranscoding JPEG lossless (1.2.840.10008.1.2.4.70, not JPEG-LS: it
                       crashes 1.10.1), 40 instances by HTTP; timing="Off" (default): rest preStore
                       10.4, transcode unobservable, outcome transcodedWithoutHook 40; "FallThrough":
                       preStore 10.6 and transcode 10.6. 1 s.
storage_bound          40 instances by HTTP into a slow storage; variant (STORAGE_VARIANTS)
                       "slow-disk" (default): a preloaded library (libTestSlowDisk.so) makes each
                       flush of a storage file wait 30 ms, plugin's TimedStorage on: storageWrite
                       32, persist 34; "slow-disk-untimed": the same disk, TimedStorage off: persist
                       33, the split unobservable; "storage-plugin": another plugin owns the storage
                       and waits 30 ms per create, as an object store would; TimedStorage asked for
                       but not in effect (notInEffect, storage.reason): persist 33;
                       "compression": TimedStorage and StorageCompression, 30 slices of 1024x1024:
                       storagePrepare 75 of persist 84. 2-3 s.
index_bound            40 instances by HTTP, TimedStorage on, SyncStorageArea false; database
                       (INDEX_DATABASES) "sqlite": indexUpdate 0.5; "postgresql": orthanc-postgresql
                       on a local server (fsync off): indexUpdate 1.5-3, not clearly slower;
                       "postgresql-slow" (default): the same with an audit trigger that costs 20 ms
                       per instance row of Orthanc's Resources table (SLOW_TRIGGER_SQL): indexUpdate
                       23 of persist 26. PostgreSQL databases need postgresql=, a started
                       ingest_perf.postgresql_server.PostgreSQLServer (one database per call). 1 s.
slow_change_consumer   the SlowChangeConsumer test plugin sleeps 100 ms per NewInstance change; 40
                       instances by HTTP in 0.2 s. Right after: changes.newInstanceBacklog 39,
                       changeDispatch 1 sample (100 ms), serverTotal 2.8. Once drained (4 s later):
                       changeDispatch mean 2 s, p99 3.8 s, perInstanceWhileBackloggedMs p50 100. 1 s.
slow_filter            a Lua ReceivedInstanceFilter busy-waiting 30 ms of CPU (os.clock); 40
                       instances by HTTP. rest preStore 30 (Orthanc calls Lua's filter before the
                       plugins'), serverTotal 34. 2 s.
slow_upload            one HTTP client sends each body in 10 pieces 10 ms apart, with its
                       Content-Length; 30 instances. rest receive 92, serverTotal 96. 3 s.
compressed_answers     Orthanc's default HttpCompressionEnabled, 60 instances by HTTP with
                       `Accept-Encoding: gzip, deflate`. 1.10.1: httpAnswers 60 compressed of 60,
                       every answer gzip (scenario["answerEncodings"], as the client saw them); no
                       phase moves. 1.12.7: 0 compressed, no answer gzip. 0.5 s.
duplicates_and_rejects one series of 30 instances sent twice by HTTP, then 10 bodies that are not
                       DICOM (400). Outcomes stored 30, alreadyStored 30, notDicom 10. 0.5 s.
healthy                60 instances by HTTP (identity), then another 60 by storescu, TCP_NODELAY on
                       both sides. serverTotal 2.7 on both, associationGap 0.9. 1 s.
"""
import itertools
import os
import subprocess
import threading
import time

import requests

from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import HOST_ORTHANC, STORESCU_BINARY, OrthancProcess, debian_plugin, \
    default_plugin_path

JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"
NODELAY = {"TCP_NODELAY": "1"}
# DCMTK's default keeps Nagle's algorithm (Debian's build), and "0" says so explicitly, whatever the
# caller's environment holds.
NAGLE = {"TCP_NODELAY": "0"}
IDENTITY = "identity"
GZIP = "gzip, deflate"  # what python-requests sends by default


# --- outside pytest -----------------------------------------------------------------------------

class StandaloneFactories:
    """conftest.py's orthanc_factory and series_factory without pytest (Benchmarks/diagnosis_scenarios.py):

        with StandaloneFactories("/tmp/run", orthanc_version="1.10.1") as f:
            orthanc = nagle_stall(f.orthanc_factory, f.series_factory)
            print(orthanc.stats())
    """

    def __init__(self, root, orthanc_version=HOST_ORTHANC, plugin_path=None):
        self.root = os.path.abspath(root)
        self.orthanc_version = orthanc_version
        self.plugin_path = plugin_path or default_plugin_path()
        self.started = []
        self._series = {}
        os.makedirs(self.root, exist_ok=True)

    def orthanc_factory(self, start=True, **kwargs):
        kwargs.setdefault("work_dir", os.path.join(self.root, "orthanc%d" % len(self.started)))
        kwargs.setdefault("plugin_path", self.plugin_path)
        kwargs.setdefault("orthanc", self.orthanc_version)
        process = OrthancProcess(**kwargs)
        self.started.append(process)
        if start:
            process.start()
        return process

    def series_factory(self, count, seed, size=512):
        key = (count, seed, size)
        if key not in self._series:
            folder = os.path.join(self.root, "series-%d-seed%d-%d" % key)
            self._series[key] = write_series(folder, count, seed=seed, rows=size, columns=size)
        return list(self._series[key])

    def close(self):
        for process in self.started:
            process.stop()
        self.started = []

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


# --- shared pieces ------------------------------------------------------------------------------

def _test_library(orthanc, name):
    """A library built beside the ingest-perf plugin of `orthanc` (e.g. "SlowChangeConsumer")."""
    path = os.path.join(os.path.dirname(orthanc.plugin_path), "libTest%s.so" % name)
    if not os.path.isfile(path):
        raise FileNotFoundError("%s is missing: build with the tests on (INGEST_PERF_BUILD_TESTS)" % path)
    return path


def _start(orthanc_factory, prepare=None, **kwargs):
    """An Orthanc with the ingest-perf plugin; prepare(orthanc), if given, completes its
    configuration (extra_config, env) before it starts."""
    orthanc = orthanc_factory(start=False, **kwargs)
    if prepare is not None:
        prepare(orthanc)
    orthanc.start(timeout=60)
    orthanc.session.close()  # no idle keep-alive connection left holding an HTTP thread
    return orthanc


def _load_plugins(orthanc, before=(), after=()):
    """Other plugins loaded before or after the ingest-perf plugin."""
    orthanc.extra_config["Plugins"] = list(before) + [orthanc.plugin_path] + list(after)


def _describe(orthanc, name, expected, sent, seconds, variant=None, **more):
    orthanc.scenario = dict({"name": name, "variant": variant, "expected": expected, "sent": sent,
                             "clientSeconds": round(seconds, 3), "orthancVersion": orthanc.orthanc}, **more)
    return orthanc


def _read(paths):
    bodies = []
    for path in paths:
        with open(path, "rb") as stream:
            bodies.append(stream.read())
    return bodies


def _http_session(accept_encoding=IDENTITY):
    session = requests.Session()
    session.headers["Accept-Encoding"] = accept_encoding
    session.headers["Content-Type"] = "application/dicom"
    return session


def _http_upload(orthanc, bodies, accept_encoding=IDENTITY, expect=(200,), after_each=None):
    """POSTs each body to /instances on one keep-alive connection; returns how many answers came
    back with each Content-Encoding ("identity" for none), as the client saw them."""
    encodings = {}
    with _http_session(accept_encoding) as session:
        for body in bodies:
            answer = session.post(orthanc.url + "/instances", data=body, timeout=120)
            if answer.status_code not in expect:
                raise RuntimeError("POST /instances answered %d: %s" % (answer.status_code, answer.text[:300]))
            encoding = answer.headers.get("Content-Encoding") or "identity"
            encodings[encoding] = encodings.get(encoding, 0) + 1
            if after_each is not None:
                after_each()
    return encodings


def _timed(function, *args, **kwargs):
    begin = time.monotonic()
    result = function(*args, **kwargs)
    return result, time.monotonic() - begin


def _split(items, parts):
    return [items[i::parts] for i in range(parts)]


def _storescu_command(orthanc, calling_aet, files):
    return [STORESCU_BINARY, "-aet", calling_aet, "-aec", orthanc.aet, "127.0.0.1", str(orthanc.dicom_port)] + \
        [str(f) for f in files]


def _environment(extra):
    environment = dict(os.environ)
    environment.pop("TCP_NODELAY", None)
    environment.update(extra)
    return environment


def _storescu(orthanc, files, env, calling_aet="STORESCU"):
    """One DCMTK storescu association; raises with its output if it fails."""
    result = subprocess.run(_storescu_command(orthanc, calling_aet, files), stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, errors="replace", env=_environment(env), timeout=600)
    if result.returncode != 0:
        raise RuntimeError("storescu exited with %d: %s" % (result.returncode, result.stderr[-1000:]))


def _call_during(during, orthanc, began):
    """Calls during(orthanc); returns the fields that describe the call."""
    started = time.monotonic()
    value = during(orthanc)
    return {"during": value, "duringStartedAfter": round(started - began, 3),
            "duringSeconds": round(time.monotonic() - started, 3)}


# --- the scenarios ------------------------------------------------------------------------------

def nagle_stall(orthanc_factory, series_factory, instances=60):
    """One DCMTK storescu association, Nagle's algorithm left on at both ends (the ~40 ms stall)."""
    orthanc = _start(orthanc_factory, env=NAGLE)
    files = series_factory(instances, 11)
    _, seconds = _timed(_storescu, orthanc, files, NAGLE)
    return _describe(orthanc, "nagle_stall",
                     "dicom associationGap ~40-45 ms per instance, tightly grouped, while serverTotal is a few ms",
                     {"storescu": instances}, seconds)


def slow_sender(orthanc_factory, series_factory, instances=40, pause=0.150):
    """One pynetdicom association whose sender waits `pause` seconds before each instance."""
    import pydicom
    from pynetdicom import AE

    orthanc = _start(orthanc_factory, env=NODELAY)
    datasets = [pydicom.dcmread(path) for path in series_factory(instances, 12)]
    ae = AE(ae_title="SLOWSENDER")
    ae.add_requested_context(datasets[0].SOPClassUID, datasets[0].file_meta.TransferSyntaxUID)
    begin = time.monotonic()
    association = ae.associate("127.0.0.1", orthanc.dicom_port, ae_title=orthanc.aet)
    if not association.is_established:
        raise RuntimeError("pynetdicom: association refused")
    try:
        for index, dataset in enumerate(datasets):
            if index:
                time.sleep(pause)
            status = association.send_c_store(dataset)
            if not status or status.Status != 0:
                raise RuntimeError("pynetdicom: C-STORE status %r" % (status.Status if status else None))
    finally:
        association.release()
    return _describe(orthanc, "slow_sender",
                     "dicom associationGap >= %d ms (the sender's pause) while serverTotal is a few ms"
                     % (pause * 1000),
                     {"pynetdicom": instances}, time.monotonic() - begin, pauseMs=pause * 1000)


def dicom_pool_saturated(orthanc_factory, series_factory, associations=8, per_association=40, during=None):
    """DicomThreadsCount 1 and `associations` storescu associations at once (TCP_NODELAY both sides).

    during(orthanc), if given, is called once while the associations are open, once a quarter of
    the instances are stored (or when they end, if that came first: duringStartedAfter says when)."""
    orthanc = _start(orthanc_factory, env=NODELAY, extra_config={"DicomThreadsCount": 1})
    files = series_factory(associations * per_association, 13)
    total = len(files)
    begin = time.monotonic()
    processes = [subprocess.Popen(_storescu_command(orthanc, "SCU%02d" % i, part), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_environment(NODELAY))
                 for i, part in enumerate(_split(files, associations))]
    more = {}
    try:
        if during is not None:
            while any(p.poll() is None for p in processes):
                stored = orthanc.stats(transport="dicom")["transports"].get("dicom", {}).get("instances", {})
                if stored.get("stored", 0) >= total // 4:
                    break
                time.sleep(0.05)
            more = _call_during(during, orthanc, begin)
        outputs = [p.communicate(timeout=600)[0] for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
    seconds = time.monotonic() - begin
    failed = [(p.returncode, out[-500:]) for p, out in zip(processes, outputs) if p.returncode != 0]
    if failed:
        raise RuntimeError("storescu failed: %r" % (failed[0],))
    return _describe(orthanc, "dicom_pool_saturated",
                     "%d openConnections during the load with DicomThreadsCount 1; associationGap of each "
                     "association ~ the other associations' serverTotal (queued for the one DICOM thread)"
                     % associations, {"storescu": total, "associations": associations}, seconds,
                     dicomThreadsCount=1, **more)


def http_threads_saturated(orthanc_factory, series_factory, clients=8, per_client=40, threads=1, during=None):
    """HttpThreadsCount `threads` (1 is Orthanc's minimum: 0 is refused) and `clients` keep-alive HTTP
    clients uploading at once.

    during(orthanc), if given, is called from another thread once a quarter of the uploads have
    been answered, as an operator's request would be: Orthanc's HTTP server keeps a worker thread
    for each keep-alive connection, so it waits for a free one (duringSeconds)."""
    orthanc = _start(orthanc_factory, extra_config={"HttpThreadsCount": threads})
    bodies = _read(series_factory(clients * per_client, 14))
    answered = [0]
    lock = threading.Lock()
    quarter = threading.Event()
    errors = []

    def count():
        with lock:
            answered[0] += 1
            if answered[0] >= len(bodies) // 4:
                quarter.set()

    def client(part):
        try:
            _http_upload(orthanc, part, after_each=count)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    more = {}
    workers = [threading.Thread(target=client, args=(part,)) for part in _split(bodies, clients)]
    begin = time.monotonic()
    for worker in workers:
        worker.start()

    def reader():
        quarter.wait(600)
        more.update(_call_during(during, orthanc, begin))

    reading = threading.Thread(target=reader) if during is not None else None
    if reading is not None:
        reading.start()
    for worker in workers:
        worker.join(600)
    seconds = time.monotonic() - begin
    if reading is not None:
        reading.join(600)
    if errors:
        raise RuntimeError("HTTP client failed: %r" % errors[0])
    return _describe(orthanc, "http_threads_saturated",
                     "HttpThreadsCount %d with %d keep-alive clients: connections queue for a worker before any "
                     "plugin hook, so no phase moves; a /perf/stats read during the load waits for a worker "
                     "(duringSeconds), and few threads ever ingest (openRecords.threadsTracked)"
                     % (threads, clients), {"http": len(bodies), "clients": clients}, seconds,
                     httpThreadsCount=threads, **more)


def transcoding_bound(orthanc_factory, series_factory, timing="Off", instances=40):
    """IngestTranscoding to JPEG lossless (not JPEG-LS: Orthanc 1.10.1 crashes), HTTP ingest.
    timing: IngestPerf.TranscodeTiming, "Off" (the default) or "FallThrough"."""
    orthanc = _start(orthanc_factory, extra_config={"IngestTranscoding": JPEG_LOSSLESS},
                     ingest_perf={"TranscodeTiming": timing})
    bodies = _read(series_factory(instances, 15))
    _, seconds = _timed(_http_upload, orthanc, bodies)
    return _describe(orthanc, "transcoding_bound",
                     "rest preStore ~10-20 ms (DCMTK's JPEG lossless encoder)%s"
                     % (", and the transcode phase inside it" if timing != "Off" else
                        "; transcode unobservable (TranscodeTiming Off)"),
                     {"http": instances}, seconds, variant=timing.lower())


STORAGE_VARIANTS = ("slow-disk", "slow-disk-untimed", "storage-plugin", "compression")


def storage_bound(orthanc_factory, series_factory, variant="slow-disk", delay_ms=30, instances=40):
    """A slow storage, HTTP ingest; variant in STORAGE_VARIANTS (see the module's docstring)."""
    if variant not in STORAGE_VARIANTS:
        raise ValueError("unknown storage_bound variant %r (known: %s)" % (variant, ", ".join(STORAGE_VARIANTS)))
    size = 512
    if variant in ("slow-disk", "slow-disk-untimed"):
        def slow_disk(orthanc):
            preload = "LD_PRELOAD" if orthanc.orthanc == HOST_ORTHANC else "INGEST_PERF_ORTHANC_PRELOAD"
            orthanc.env.update({"SLOW_DISK_PREFIX": os.path.join(orthanc.work_dir, "storage") + "/",
                                "SLOW_DISK_MS": str(delay_ms), preload: _test_library(orthanc, "SlowDisk")})

        orthanc = _start(orthanc_factory, slow_disk, ingest_perf={"TimedStorage": variant == "slow-disk"})
        expected = ("rest storageWrite ~%d ms per instance (each storage file's flush waits), inside persist"
                    % delay_ms if variant == "slow-disk" else
                    "rest persist ~%d ms more than usual; storageWrite/indexUpdate unobservable (TimedStorage off)"
                    % delay_ms)
    elif variant == "storage-plugin":
        orthanc = _start(orthanc_factory, lambda o: _load_plugins(o, before=[_test_library(o, "StorageOwner")]),
                         ingest_perf={"TimedStorage": True}, env={"STORAGE_OWNER_CREATE_MS": str(delay_ms)})
        expected = ("rest persist ~%d ms more than usual; TimedStorage not in effect (notInEffect, storage.reason: "
                    "another plugin owns the storage), so storageWrite is unobservable" % delay_ms)
    else:
        size, instances = 1024, min(instances, 30)
        orthanc = _start(orthanc_factory, ingest_perf={"TimedStorage": True},
                         extra_config={"StorageCompression": True})
        expected = "rest storagePrepare (MD5 and zlib of 2 MB instances) stands out within persist"
    bodies = _read(series_factory(instances, 16, size=size))
    _, seconds = _timed(_http_upload, orthanc, bodies)
    return _describe(orthanc, "storage_bound", expected, {"http": instances}, seconds, variant=variant,
                     delayMs=delay_ms if variant != "compression" else None, size=size)


INDEX_DATABASES = ("sqlite", "postgresql", "postgresql-slow")
_databases = itertools.count(1)

# An audit trigger on Orthanc's Resources table: 20 ms per instance row inserted. Orthanc's schema
# (orthanc-postgresql 4.0 and 5.x alike) names the table "resources", resource type 3 is an instance.
SLOW_TRIGGER_SQL = """
CREATE OR REPLACE FUNCTION ingest_perf_slow_audit() RETURNS trigger AS $$
BEGIN
  PERFORM pg_sleep(%(seconds)s);
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ingest_perf_slow_audit AFTER INSERT ON resources
  FOR EACH ROW WHEN (NEW.resourcetype = 3) EXECUTE FUNCTION ingest_perf_slow_audit();
"""


def index_bound(orthanc_factory, series_factory, database="postgresql-slow", postgresql=None, instances=40,
                trigger_ms=20):
    """HTTP ingest with the plugin's timed storage (SyncStorageArea false: the storage write is
    cheap), on the index `database` (INDEX_DATABASES). The PostgreSQL databases need `postgresql`,
    a started PostgreSQLServer; each call creates a database of its own in it."""
    if database not in INDEX_DATABASES:
        raise ValueError("unknown database %r (known: %s)" % (database, ", ".join(INDEX_DATABASES)))
    name = None
    if database != "sqlite":
        if postgresql is None:
            raise ValueError("index_bound(database=%r) needs postgresql=<a started PostgreSQLServer>" % database)
        name = postgresql.create_database("scenario%d" % next(_databases))

    def index(orthanc):
        orthanc.extra_config["SyncStorageArea"] = False
        if name is not None:
            orthanc.extra_config["PostgreSQL"] = dict(postgresql.orthanc_parameters(name), EnableIndex=True,
                                                      EnableStorage=False)
            _load_plugins(orthanc, after=[debian_plugin("libOrthancPostgreSQLIndex.so", orthanc.orthanc)])

    orthanc = _start(orthanc_factory, index, ingest_perf={"TimedStorage": True})
    if database == "postgresql-slow":
        # Orthanc has created its schema by now; the trigger applies from the first instance on.
        postgresql.psql(SLOW_TRIGGER_SQL % {"seconds": trigger_ms / 1000.0}, database=name)
    bodies = _read(series_factory(instances, 17))
    _, seconds = _timed(_http_upload, orthanc, bodies)
    expected = {"sqlite": "rest indexUpdate: SQLite's transaction, the reference (a few ms)",
                "postgresql": "rest indexUpdate: orthanc-postgresql's transaction on a local server",
                "postgresql-slow": "rest indexUpdate ~%d ms more than postgresql (a trigger sleeps in each instance's "
                                   "INSERT), storageWrite small" % trigger_ms}[database]
    return _describe(orthanc, "index_bound", expected, {"http": instances}, seconds, variant=database,
                     triggerMs=trigger_ms if database == "postgresql-slow" else None)


def slow_change_consumer(orthanc_factory, series_factory, delay_ms=100, instances=40):
    """The SlowChangeConsumer test plugin (loaded before ingest-perf) sleeps in each NewInstance change."""
    orthanc = _start(orthanc_factory, lambda o: _load_plugins(o, before=[_test_library(o, "SlowChangeConsumer")]),
                     env={"SLOW_CHANGE_MS": str(delay_ms)})
    bodies = _read(series_factory(instances, 18))
    _, seconds = _timed(_http_upload, orthanc, bodies)
    return _describe(orthanc, "slow_change_consumer",
                     "changes.newInstanceBacklog right after the ingest, changeDispatch growing by ~%d ms per "
                     "queued instance, perInstanceWhileBackloggedMs ~%d; serverTotal normal" % (delay_ms, delay_ms),
                     {"http": instances}, seconds, delayMs=delay_ms)


LUA_SLOW_FILTER = """-- The slow_filter scenario: a filter that burns %(ms)d ms of CPU per instance.
function ReceivedInstanceFilter(dicom, origin, info)
  local finish = os.clock() + %(seconds)s
  while os.clock() < finish do end
  return true
end
"""


def slow_filter(orthanc_factory, series_factory, busy_ms=30, instances=40):
    """A Lua ReceivedInstanceFilter that busy-waits `busy_ms` of CPU time (os.clock is the process's
    CPU time: with one client and nothing else running, about as much wall time)."""
    def lua(orthanc):
        os.makedirs(orthanc.work_dir, exist_ok=True)
        script = os.path.join(orthanc.work_dir, "slow-filter.lua")
        with open(script, "w") as stream:
            stream.write(LUA_SLOW_FILTER % {"ms": busy_ms, "seconds": busy_ms / 1000.0})
        orthanc.extra_config["LuaScripts"] = [script]

    orthanc = _start(orthanc_factory, lua)
    bodies = _read(series_factory(instances, 19))
    _, seconds = _timed(_http_upload, orthanc, bodies)
    return _describe(orthanc, "slow_filter",
                     "rest preStore ~%d ms (Orthanc runs Lua's filter before the plugins' instance filter), "
                     "no transcoding" % busy_ms, {"http": instances}, seconds, busyMs=busy_ms)


class _SlowBody:
    """A request body sent in `pieces` pieces, `pause` seconds apart, with its Content-Length
    known (requests takes len() and iterates): a slow client or link, not a chunked upload."""

    def __init__(self, body, pieces, pause):
        self.body = body
        self.pieces = pieces
        self.pause = pause

    def __len__(self):
        return len(self.body)

    def __iter__(self):
        step = -(-len(self.body) // self.pieces)
        for index, start in enumerate(range(0, len(self.body), step)):
            if index:
                time.sleep(self.pause)
            yield self.body[start:start + step]


def slow_upload(orthanc_factory, series_factory, instances=30, pieces=10, pause=0.010):
    """One keep-alive HTTP client that sends each body slowly (~pieces x pause per instance)."""
    orthanc = _start(orthanc_factory)
    bodies = _read(series_factory(instances, 20))
    slow = [_SlowBody(body, pieces, pause) for body in bodies]
    _, seconds = _timed(_http_upload, orthanc, slow)
    return _describe(orthanc, "slow_upload",
                     "rest receive ~%d ms (the body arrives slowly after the HTTP filter), the rest normal"
                     % ((pieces - 1) * pause * 1000), {"http": instances}, seconds, pieceCount=pieces,
                     pauseMs=pause * 1000)


def compressed_answers(orthanc_factory, series_factory, instances=60):
    """Orthanc's default HttpCompressionEnabled; the client accepts gzip, as python-requests does."""
    orthanc = _start(orthanc_factory)
    bodies = _read(series_factory(instances, 21))
    encodings, seconds = _timed(_http_upload, orthanc, bodies, accept_encoding=GZIP)
    return _describe(orthanc, "compressed_answers",
                     "httpAnswers.compressedByOrthanc == requests (1.10.1; none from 1.12.2: off by default, "
                     "and answers under 2048 bytes are never compressed); no phase moves",
                     {"http": instances}, seconds, answerEncodings=encodings)


def duplicates_and_rejects(orthanc_factory, series_factory, instances=30, rejects=10):
    """The same series sent twice, then `rejects` bodies that are not DICOM (Orthanc answers 400)."""
    orthanc = _start(orthanc_factory)
    bodies = _read(series_factory(instances, 22))
    junk = [("not DICOM %d " % i).encode() * (50 * (i + 1)) for i in range(rejects)]
    begin = time.monotonic()
    _http_upload(orthanc, bodies)
    _http_upload(orthanc, bodies)
    _http_upload(orthanc, junk, expect=(400,))
    return _describe(orthanc, "duplicates_and_rejects",
                     "outcomes: rest alreadyStored %d, notDicom %d, beside stored %d" % (instances, rejects, instances),
                     {"http": 2 * instances + rejects}, time.monotonic() - begin)


def healthy(orthanc_factory, series_factory, instances=60):
    """Nothing slow: HTTP with identity answers, then C-STORE with TCP_NODELAY at both ends."""
    orthanc = _start(orthanc_factory, env=NODELAY)
    begin = time.monotonic()
    _http_upload(orthanc, _read(series_factory(instances, 23)))
    _storescu(orthanc, series_factory(instances, 24), NODELAY)
    return _describe(orthanc, "healthy", "nothing: serverTotal a few ms on both transports, associationGap a few ms",
                     {"http": instances, "storescu": instances}, time.monotonic() - begin)


SCENARIOS = {function.__name__: function for function in (
    nagle_stall, slow_sender, dicom_pool_saturated, http_threads_saturated, transcoding_bound, storage_bound,
    index_bound, slow_change_consumer, slow_filter, slow_upload, compressed_answers, duplicates_and_rejects, healthy)}
