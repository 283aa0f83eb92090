"""Scenarios that each create one ingest bottleneck on a real Orthanc with the plugin, so that the rules
of GET /perf/diagnosis can be validated (and their thresholds calibrated) on real figures.

Calling a scenario
------------------
Every scenario is a function

    orthanc = scenario(orthanc_factory, series_factory, **options)

taking an OrthancFactory (ingest_perf.orthanc_process) and a SeriesCache (ingest_perf.generate_series):
the tests' fixtures of the same names are those. It starts an Orthanc configured for the scenario
(free loopback ports, the factory's Orthanc version), ingests through real clients
(ingest_perf.clients: DCMTK's /usr/bin/storescu, pynetdicom, gdcmscu, python-requests, a second
Orthanc) and returns that Orthanc, still running, with nothing reset: its GET /perf/stats since
start is the scenario. The factory stops it (the fixture's teardown, or OrthancFactory.close()).
In a test:

    from ingest_perf.bottleneck_scenarios import nagle_stall
    def test_nagle_rule(orthanc_factory, series_factory):
        orthanc = nagle_stall(orthanc_factory, series_factory)
        assert orthanc.stats(transport="dicom")["transports"]["dicom"]["phases"]["associationGap"]["p50"] > 30

The returned process carries `orthanc.scenario`, a dict: `name`, `variant`, `expected` (what should
stand out in /perf/stats, in words), `sent` (instances or requests per client kind), `clientSeconds`
(wall time of the ingest), and for the two scenarios that can be read during their load
(`dicom_pool_saturated`, `http_threads_saturated`, option `during=callable(orthanc)`) `during`
(what the callable returned, called once while the load runs), `duringStartedAfter` and
`duringSeconds` (when it was called after the load started, and how long it took: the time an
operator's request waits), `orthancCpuSeconds` (Orthanc's CPU time from its start to the end of the
ingest), and for the HTTP scenarios that measure their fix `requestMs` (each upload's time as its
client saw it).

Measuring a fix: the scenarios whose finding recommends a configuration change take it as an option,
with the bottleneck as the default: `dicom_pool_saturated(threads=8)`,
`http_threads_saturated(threads=16)`, `compressed_answers(compression=False, clients=4)` (None for
these three: Orthanc's own default), and `config=` on those and on `transcoding_bound` and
`storage_bound`: orthanc.json keys applied over the scenario's own, None leaving a key out
(`transcoding_bound(config={"IngestTranscoding": None})`, `storage_bound(variant="compression",
config={"StorageCompression": False})`); `configOverrides` says which. ingest_perf/benchmarks/diagnosis_effects.py
measures each fix against its bottleneck.

The ingest-perf plugin is the one of conftest's `plugin_path`; the test
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
Every run's full answers: ingest_perf/benchmarks/diagnosis_scenarios.py.

nagle_stall            default Orthanc, one storescu association of 60 instances, TCP_NODELAY=0 on
                       both sides. dicom associationGap p50 45 ms (p99 90), serverTotal 3.5. 4 s.
slow_sender            one pynetdicom association of 40 instances, 150 ms pause before each;
                       Orthanc with TCP_NODELAY=1. dicom associationGap p50 156 ms, serverTotal 3.8. 7 s.
dicom_pool_saturated   DicomThreadsCount 1, 8 simultaneous storescu associations (calling AETs SCU00
                       to SCU07) of 40 instances, TCP_NODELAY both sides. During the load: 8
                       openConnections, 8 AETs inProgress; associationGap p50 22 ms (each
                       association waits for the 7 others' instances), serverTotal 2.5; once done,
                       0 open. threads=8 (the fix): gap 4.5, and 1.6 times the instances/s (60 per
                       association, docs/measurements/benchmarks.md); threads=None: Orthanc's 4. during=. 2 s.
http_threads_saturated HttpThreadsCount 1 (Orthanc's minimum; 0 is refused), 8 keep-alive HTTP clients
                       of 40 instances. Orthanc's HTTP server keeps a worker for a keep-alive
                       connection until it closes, so the clients are served one after the other and
                       a request read during the load waits for the last of them (duringSeconds
                       0.85 of 1.1). In /perf/stats nothing moves: serverTotal 2.6,
                       openRecords.threadsTracked 1. From threads=2 to 16 (the fix; 60 per client):
                       a request's p99 falls from 420 to 44 ms as the clients see it (requestMs), its
                       p50 rises from 6 to 20, the instances/s 1.2 times (docs/measurements/benchmarks.md);
                       threads=None: Orthanc's 50. during=. 2 s.
transcoding_bound      IngestTranscoding JPEG lossless (1.2.840.10008.1.2.4.70, not JPEG-LS: it
                       crashes 1.10.1), 40 instances by HTTP; timing="Off" (default): rest preStore
                       10.4, transcode unobservable, outcome transcodedWithoutHook 40; "FallThrough":
                       preStore 10.6 and transcode 10.6. config={"IngestTranscoding": None} (the fix):
                       serverTotal 14 -> 3.3, 3.7 times the instances/s. 1 s.
storage_bound          40 instances by HTTP into a slow storage; variant (STORAGE_VARIANTS)
                       "slow-disk" (default): a preloaded library (libTestSlowDisk.so) makes each
                       flush of a storage file wait 30 ms, plugin's TimedStorage on: storageWrite
                       32, persist 34; "slow-disk-untimed": the same disk, TimedStorage off: persist
                       33, the split unobservable; "storage-plugin": another plugin owns the storage
                       and waits 30 ms per create, as an object store would; TimedStorage asked for
                       but not in effect (notInEffect, storage.reason): persist 33;
                       "compression": TimedStorage and StorageCompression, 30 slices of 1024x1024:
                       storagePrepare 75 of persist 84; config={"StorageCompression": False} (the
                       fix): storagePrepare 3, serverTotal 13, 6 times the instances/s. 2-3 s.
index_bound            40 instances by HTTP, TimedStorage on, SyncStorageArea false; database
                       (INDEX_DATABASES) "sqlite": indexUpdate 0.5; "postgresql": orthanc-postgresql
                       on a local server (fsync off): indexUpdate 1.5-3, not clearly slower;
                       "postgresql-slow" (default): the same with an audit trigger that costs 20 ms
                       per instance row of Orthanc's Resources table (SLOW_TRIGGER_SQL): indexUpdate
                       23 of persist 26. PostgreSQL databases need postgresql=, a started
                       ingest_perf.postgresql_server.PostgreSQLServer (one database per call). 1 s.
slow_change_consumer   the SlowChangeConsumer test plugin sleeps 100 ms per NewInstance change, and
                       holds the change thread until the ingest is over; 40 instances by HTTP. Right after: changes.newInstanceBacklog 39,
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
                       phase moves. 1.12.7: 0 compressed, no answer gzip. compression=False (the
                       fix), with 1 or 4 clients: none compressed, and no change in the clients'
                       times or instances/s beyond the run-to-run spread. 0.5 s.
duplicates_and_rejects one series of 30 instances sent twice by HTTP, then 10 bodies that are not
                       DICOM (400). Outcomes stored 30, alreadyStored 30, notDicom 10. 0.5 s.
cpu_starved            Orthanc's threads and 3 processes that only burn CPU on one core, same priority;
                       15 instances by HTTP from the other core. rest serverTotal 3-4 times its
                       healthy figure, 60-75% of it waiting for a CPU. 2 s.
slow_http_client       one keep-alive HTTP client waiting 7 ms after each answer; 30 instances. rest
                       requestGap 9-11 ms, 90% of it blocked (the client), serverTotal 3-5. 1 s.
                       pause=0: the client's own turnaround, requestGap 1-4 ms.
site_code              the site's own code, 30 instances by HTTP then 30 by storescu (TCP_NODELAY):
                       an orthanc-python OnStoredInstance sleeping 30 ms, listed after this plugin
                       (otherOnStored p50 30.3 on both) or before it (onStoredWait 30.5, persist
                       35.4); a C-STORE filter sleeping 30 ms (dicom persist 35.4, rest 4.4), or
                       refusing every instance (failed, afterFilters); a Lua OnStoredInstance
                       burning 30 ms (rest receive 28.7, C-STORE untouched). 2-3 s each.
healthy                60 instances by HTTP (identity), then another 60 by storescu, TCP_NODELAY on
                       both sides. serverTotal 2.7 on both, associationGap 0.9. 1 s.
"""
import collections
import itertools
import os
import subprocess
import threading
import time

from ingest_perf.benchmarks.process_cpu import cpu_seconds
from ingest_perf.clients import (Concurrently, gdcmscu, http_upload, orthanc_store, pynetdicom_store, read_files,
                                 split, start_storescu, storescu)
from ingest_perf.orthanc_process import HOST_ORTHANC, debian_plugin
from ingest_perf.stats_checks import wait_for

JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"
NODELAY = {"TCP_NODELAY": "1"}
# DCMTK's default keeps Nagle's algorithm (Debian's build), and "0" says so explicitly, whatever the
# caller's environment holds.
NAGLE = {"TCP_NODELAY": "0"}
IDENTITY = "identity"
ORTHANC_DICOM_THREADS = 4  # Orthanc's default DicomThreadsCount
ORTHANC_HTTP_THREADS = 50  # Orthanc's default HttpThreadsCount
GZIP = "gzip, deflate"  # what python-requests sends by default
PARTS_SAMPLING = 1  # IngestPerf.PhasePartsSampling of every scenario's Orthanc (see _start)


# --- shared pieces ------------------------------------------------------------------------------

def _test_library(orthanc, name):
    """A library built beside the ingest-perf plugin of `orthanc` (e.g. "SlowChangeConsumer")."""
    path = os.path.join(os.path.dirname(orthanc.plugin_path), "libTest%s.so" % name)
    if not os.path.isfile(path):
        raise FileNotFoundError("%s is missing: build with the tests on (INGEST_PERF_BUILD_TESTS)" % path)
    return path


def _start(orthanc_factory, prepare=None, config=None, **kwargs):
    """An Orthanc with the ingest-perf plugin; prepare(orthanc), if given, completes its
    configuration (extra_config, env) before it starts. config: orthanc.json keys applied last, over
    the scenario's own (a fix to measure); a key set to None is left out, so Orthanc's default applies.
    Every instance has its phases split (PhasePartsSampling 1, PARTS_SAMPLING): a scenario of 15
    instances then gives the rules the 5 split instances they read, where the default (the first 5 of each thread, then one in 50) needs 5 on one thread."""
    kwargs["ingest_perf"] = dict({"PhasePartsSampling": PARTS_SAMPLING}, **kwargs.get("ingest_perf", {}))
    orthanc = orthanc_factory(start=False, **kwargs)
    if prepare is not None:
        prepare(orthanc)
    for key, value in (config or {}).items():
        if value is None:
            orthanc.extra_config.pop(key, None)
        else:
            orthanc.extra_config[key] = value
    orthanc.config_overrides = dict(config or {})
    orthanc.start(timeout=60)
    orthanc.session.close()  # no idle keep-alive connection left holding an HTTP thread
    orthanc.cpu_at_start = _cpu_seconds(orthanc.pid)
    return orthanc


def _cpu_seconds(pid):
    """Orthanc's CPU time, every thread, or None where /proc cannot tell."""
    try:
        return cpu_seconds(pid)
    except (OSError, IndexError, TypeError):
        return None


def _load_plugins(orthanc, before=(), after=()):
    """Other plugins loaded before or after the ingest-perf plugin."""
    orthanc.extra_config["Plugins"] = list(before) + [orthanc.plugin_path] + list(after)


def _describe(orthanc, name, expected, sent, seconds, variant=None, **more):
    overrides = getattr(orthanc, "config_overrides", None)
    if overrides:
        expected += " [configuration overridden: %s; a fix may have removed this]" % overrides
    begin, now = getattr(orthanc, "cpu_at_start", None), _cpu_seconds(orthanc.pid)
    # A store Orthanc refused is concluded by the plugin within a second or two of its answer: the
    # figures are read (after Orthanc's CPU time) once every store the clients saw answered has its outcome.
    wait_for(orthanc, lambda stats: stats["openRecords"]["count"] == stats["openRecords"]["receiving"]["count"] == 0,
             timeout=10)
    orthanc.scenario = dict({"name": name, "variant": variant, "expected": expected, "sent": sent,
                             "clientSeconds": round(seconds, 3), "orthancVersion": orthanc.orthanc,
                             "configOverrides": overrides or {},
                             # Orthanc's CPU time since it answered, the ingest and any reads during it
                             "orthancCpuSeconds": round(now - begin, 3) if None not in (begin, now) else None},
                            **more)
    return orthanc


def _http_upload(orthanc, bodies, accept_encoding=IDENTITY, expect=(200,), each=None):
    """One keep-alive HTTP client uploading `bodies` (clients.http_upload); its Uploads."""
    return http_upload(orthanc.url, bodies, accept_encoding=accept_encoding, expect=expect, each=each)


def _http_clients(orthanc, parts, accept_encoding=IDENTITY, each=None):
    """One keep-alive HTTP client per part, uploading at the same time (started, not joined)."""
    return Concurrently([lambda part=part: _http_upload(orthanc, part, accept_encoding, each=each)
                         for part in parts]).start()


def _encodings(uploads):
    """How many answers came back with each Content-Encoding, as the clients saw them."""
    return dict(collections.Counter(upload.encoding for upload in uploads))


def _request_ms(uploads):
    return [round(upload.seconds * 1000, 3) for upload in uploads]


def _timed(function, *args, **kwargs):
    begin = time.monotonic()
    result = function(*args, **kwargs)
    return result, time.monotonic() - begin


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
    _, seconds = _timed(orthanc.storescu, files, env=NAGLE)
    return _describe(orthanc, "nagle_stall",
                     "dicom associationGap ~40-45 ms per instance, tightly grouped, while serverTotal is a few ms",
                     {"storescu": instances}, seconds)


def slow_sender(orthanc_factory, series_factory, instances=40, pause=0.150):
    """One pynetdicom association whose sender waits `pause` seconds before each instance."""
    orthanc = _start(orthanc_factory, env=NODELAY)
    files = series_factory(instances, 12)
    _, seconds = _timed(pynetdicom_store, orthanc.dicom_port, files, "SLOWSENDER", orthanc.aet, pause=pause)
    return _describe(orthanc, "slow_sender",
                     "dicom associationGap >= %d ms (the sender's pause) while serverTotal is a few ms"
                     % (pause * 1000),
                     {"pynetdicom": instances}, seconds, pauseMs=pause * 1000)


SENDERS = ("storescu", "gdcmscu", "orthanc", "pynetdicom")


def _orthanc_peer_store(orthanc_factory, orthanc, files, nodelay):
    """A second Orthanc (the host's, no plugin) sends `files` by C-STORE (POST /modalities/{id}/store,
    one store job); TCP_NODELAY=1 in its environment when `nodelay` (DCMTK reads it on connect()).
    Returns the seconds of the store job alone."""
    sender = orthanc_factory(start=False, plugin_path=None, orthanc=HOST_ORTHANC, aet="ORTHANC",
                             env={"TCP_NODELAY": "1" if nodelay else None},
                             extra_config={"DicomModalities": {"target": [orthanc.aet, "127.0.0.1",
                                                                          orthanc.dicom_port]}})
    sender.start(timeout=60)
    try:
        ids = [upload.answer["ID"] for upload in http_upload(sender.url, files)]
        return orthanc_store(sender.url, "target", ids, timeout=600)
    finally:
        sender.stop()


def sender_stall(orthanc_factory, series_factory, sender="storescu", instances=40, sender_nodelay=False, size=512,
                 associations=1, after_each=None):
    """Orthanc's side fixed (started with TCP_NODELAY=1 in its environment), one association
    from `sender` (SENDERS: DCMTK's storescu, GDCM's gdcmscu, a second Orthanc by
    /modalities/{id}/store, pynetdicom), each with its default calling AET. The sender keeps Nagle's
    algorithm; sender_nodelay=True gives it TCP_NODELAY where it can have it (storescu and Orthanc:
    TCP_NODELAY=1 in their environment; pynetdicom: on its socket, set by the application; gdcmscu
    has no way).

    associations > 1 sends the instances again (as new ones) over that many associations one after the
    other; after_each(orthanc), if given, is called after each, and scenario["afterEach"] holds what it
    returned (e.g. the diagnosis, then a reset: one verdict per association)."""
    if sender not in SENDERS:
        raise ValueError("unknown sender %r (known: %s)" % (sender, ", ".join(SENDERS)))
    # SyncStorageArea false: a busy disk's flushes would make a storage finding of their own.
    orthanc = _start(orthanc_factory, env=NODELAY, extra_config={"SyncStorageArea": False})
    seconds, results = 0.0, []
    for association in range(associations):
        files = series_factory(instances, 25 + 100 * association, size=size)
        begin = time.monotonic()
        if sender == "orthanc":  # the store job alone, not the second Orthanc's start
            seconds += _orthanc_peer_store(orthanc_factory, orthanc, files, sender_nodelay)
            begin = time.monotonic()
        elif sender == "storescu":
            orthanc.storescu(files, env=NODELAY if sender_nodelay else NAGLE)
        elif sender == "gdcmscu":
            gdcmscu(orthanc.dicom_port, files, called_aet=orthanc.aet)
        else:
            pynetdicom_store(orthanc.dicom_port, files, called_aet=orthanc.aet, nodelay=sender_nodelay)
        seconds += time.monotonic() - begin
        if after_each is not None:
            results.append(after_each(orthanc))
    fixed = sender_nodelay and sender != "gdcmscu"
    return _describe(orthanc, "sender_stall",
                     "dicom associationGap short for most instances but ~40-45 ms for many (the sender's own "
                     "Nagle stall: bimodal), Orthanc's TCP_NODELAY in effect" if not fixed else
                     "dicom associationGap a few ms: TCP_NODELAY on both sides",
                     {sender: instances * associations}, seconds,
                     variant=sender + ("-nodelay" if sender_nodelay else ""), senderNodelay=sender_nodelay,
                     associations=associations, **({"afterEach": results} if after_each is not None else {}))


def dicom_pool_saturated(orthanc_factory, series_factory, associations=8, per_association=40, during=None,
                         threads=1, config=None):
    """DicomThreadsCount `threads` (None: Orthanc's default, 4) and `associations` storescu
    associations at once (TCP_NODELAY both sides); threads >= associations is the fix.

    during(orthanc), if given, is called once while the associations are open, once a quarter of
    the instances are stored and Orthanc holds all of them (or when they end, if that came first:
    duringStartedAfter says when)."""
    orthanc = _start(orthanc_factory, env=NODELAY, config=config,
                     extra_config={} if threads is None else {"DicomThreadsCount": threads})
    files = series_factory(associations * per_association, 13)
    total = len(files)
    begin = time.monotonic()
    processes = [start_storescu(orthanc.dicom_port, part, "SCU%02d" % i, orthanc.aet, env=NODELAY)
                 for i, part in enumerate(split(files, associations))]
    more = {}
    try:
        if during is not None:
            # Once a quarter is stored and Orthanc holds every association (on a loaded machine the
            # last storescu may connect after the first quarter).
            while any(p.poll() is None for p in processes):
                stats = orthanc.stats()
                stored = stats["transports"].get("dicom", {}).get("instances", {}).get("stored", 0)
                if stored >= total // 4 and stats["associations"]["openConnections"]["count"] >= associations:
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
    named = "%d" % threads if threads is not None else "%d (Orthanc's default)" % ORTHANC_DICOM_THREADS
    if (threads or ORTHANC_DICOM_THREADS) < associations:
        expected = ("%d openConnections during the load with DicomThreadsCount %s; associationGap of each "
                    "association ~ the other associations' serverTotal (queued for the DICOM threads)"
                    % (associations, named))
    else:
        expected = ("%d associations for DicomThreadsCount %s: none waits for a DICOM thread, associationGap a few "
                    "ms" % (associations, named))
    return _describe(orthanc, "dicom_pool_saturated", expected, {"storescu": total, "associations": associations},
                     seconds, dicomThreadsCount=threads, **more)


def http_threads_saturated(orthanc_factory, series_factory, clients=8, per_client=40, threads=1, during=None,
                           config=None):
    """HttpThreadsCount `threads` (1 is Orthanc's minimum: 0 is refused; None: Orthanc's default, 50)
    and `clients` keep-alive HTTP clients uploading at once; threads > clients is the fix.

    during(orthanc), if given, is called from another thread once a quarter of the uploads have
    been answered, as an operator's request would be: Orthanc's HTTP server keeps a worker thread
    for each keep-alive connection, so it waits for a free one (duringSeconds). The scenario's
    requestMs is every upload's time as its client saw it."""
    orthanc = _start(orthanc_factory, config=config,
                     extra_config={} if threads is None else {"HttpThreadsCount": threads})
    bodies = read_files(series_factory(clients * per_client, 14))
    answered = [0]
    lock = threading.Lock()
    quarter = threading.Event()

    def count(upload):
        with lock:
            answered[0] += 1
            if answered[0] >= len(bodies) // 4:
                quarter.set()

    more = {}
    begin = time.monotonic()
    uploads = _http_clients(orthanc, split(bodies, clients), each=count)

    def reader():
        quarter.wait(600)
        more.update(_call_during(during, orthanc, begin))

    reading = threading.Thread(target=reader) if during is not None else None
    if reading is not None:
        reading.start()
    try:
        uploaded = [u for part in uploads.join() for u in part]
    finally:
        if reading is not None:
            reading.join(600)
    named = "%d" % threads if threads is not None else "%d (Orthanc's default)" % ORTHANC_HTTP_THREADS
    if (threads or ORTHANC_HTTP_THREADS) <= clients:
        expected = ("HttpThreadsCount %s with %d keep-alive clients: connections queue for a worker before any "
                    "plugin hook, so no phase moves; a /perf/stats read during the load waits for a worker "
                    "(duringSeconds), and few threads ever ingest (openRecords.threadsTracked)" % (named, clients))
    else:
        expected = "HttpThreadsCount %s for %d keep-alive clients: no connection waits for a worker" % (named, clients)
    return _describe(orthanc, "http_threads_saturated", expected, {"http": len(bodies), "clients": clients},
                     uploads.seconds, httpThreadsCount=threads, requestMs=_request_ms(uploaded), **more)


def transcoding_bound(orthanc_factory, series_factory, timing="Off", instances=40, config=None):
    """IngestTranscoding to JPEG lossless (not JPEG-LS: Orthanc 1.10.1 crashes), HTTP ingest.
    timing: IngestPerf.TranscodeTiming, "Off" (the default) or "FallThrough". The fix:
    config={"IngestTranscoding": None}."""
    orthanc = _start(orthanc_factory, extra_config={"IngestTranscoding": JPEG_LOSSLESS},
                     ingest_perf={"TranscodeTiming": timing}, config=config)
    bodies = read_files(series_factory(instances, 15))
    uploads, seconds = _timed(_http_upload, orthanc, bodies)
    return _describe(orthanc, "transcoding_bound",
                     "rest preStore ~10-20 ms (DCMTK's JPEG lossless encoder)%s"
                     % (", and the transcode phase inside it" if timing != "Off" else
                        "; transcode unobservable (TranscodeTiming Off)"),
                     {"http": instances}, seconds, variant=timing.lower(), requestMs=_request_ms(uploads))


STORAGE_VARIANTS = ("slow-disk", "slow-disk-untimed", "storage-plugin", "compression")


def storage_bound(orthanc_factory, series_factory, variant="slow-disk", delay_ms=30, instances=40, config=None):
    """A slow storage, HTTP ingest; variant in STORAGE_VARIANTS (see the module's docstring). The fix
    of "compression": config={"StorageCompression": False}."""
    if variant not in STORAGE_VARIANTS:
        raise ValueError("unknown storage_bound variant %r (known: %s)" % (variant, ", ".join(STORAGE_VARIANTS)))
    size = 512
    if variant in ("slow-disk", "slow-disk-untimed"):
        def slow_disk(orthanc):
            preload = "LD_PRELOAD" if orthanc.orthanc == HOST_ORTHANC else "INGEST_PERF_ORTHANC_PRELOAD"
            orthanc.env.update({"SLOW_DISK_PREFIX": os.path.join(orthanc.work_dir, "storage") + "/",
                                "SLOW_DISK_MS": str(delay_ms), preload: _test_library(orthanc, "SlowDisk")})

        orthanc = _start(orthanc_factory, slow_disk, ingest_perf={"TimedStorage": variant == "slow-disk"},
                         config=config)
        expected = ("rest storageWrite ~%d ms per instance (each storage file's flush waits), inside persist"
                    % delay_ms if variant == "slow-disk" else
                    "rest persist ~%d ms more than usual; storageWrite/indexUpdate unobservable (TimedStorage off)"
                    % delay_ms)
    elif variant == "storage-plugin":
        orthanc = _start(orthanc_factory, lambda o: _load_plugins(o, before=[_test_library(o, "StorageOwner")]),
                         ingest_perf={"TimedStorage": True}, env={"STORAGE_OWNER_CREATE_MS": str(delay_ms)},
                         config=config)
        expected = ("rest persist ~%d ms more than usual; TimedStorage not in effect (notInEffect, storage.reason: "
                    "another plugin owns the storage), so storageWrite is unobservable" % delay_ms)
    else:
        size, instances = 1024, min(instances, 30)
        orthanc = _start(orthanc_factory, ingest_perf={"TimedStorage": True},
                         extra_config={"StorageCompression": True}, config=config)
        expected = "rest storagePrepare (MD5 and zlib of 2 MB instances) stands out within persist"
    bodies = read_files(series_factory(instances, 16, size=size))
    uploads, seconds = _timed(_http_upload, orthanc, bodies)
    return _describe(orthanc, "storage_bound", expected, {"http": instances}, seconds, variant=variant,
                     delayMs=delay_ms if variant != "compression" else None, size=size, requestMs=_request_ms(uploads))


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
    bodies = read_files(series_factory(instances, 17))
    _, seconds = _timed(_http_upload, orthanc, bodies)
    expected = {"sqlite": "rest indexUpdate: SQLite's transaction, the reference (a few ms)",
                "postgresql": "rest indexUpdate: orthanc-postgresql's transaction on a local server",
                "postgresql-slow": "rest indexUpdate ~%d ms more than postgresql (a trigger sleeps in each instance's "
                                   "INSERT), storageWrite small" % trigger_ms}[database]
    return _describe(orthanc, "index_bound", expected, {"http": instances}, seconds, variant=database,
                     triggerMs=trigger_ms if database == "postgresql-slow" else None)


def slow_change_consumer(orthanc_factory, series_factory, delay_ms=100, instances=40):
    """The SlowChangeConsumer test plugin (loaded before ingest-perf) sleeps in each NewInstance change;
    it also holds Orthanc's change thread at a gate until the ingest is over, so that the backlog
    right after it is every instance but one, however fast the machine ingests."""
    def consumer(orthanc):
        _load_plugins(orthanc, before=[_test_library(orthanc, "SlowChangeConsumer")])
        orthanc.env.update({"SLOW_CHANGE_MS": str(delay_ms),
                            "SLOW_CHANGE_GATE": os.path.join(orthanc.work_dir, "change-gate")})

    orthanc = _start(orthanc_factory, consumer)
    bodies = read_files(series_factory(instances, 18))
    _, seconds = _timed(_http_upload, orthanc, bodies)
    open(orthanc.env["SLOW_CHANGE_GATE"], "w").close()
    # Read once the consumer has been seen at work: two changes delivered, one after the other.
    wait_for(orthanc, lambda stats: stats["changes"]["perInstanceWhileBackloggedMs"]["count"] >= 2)
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
    bodies = read_files(series_factory(instances, 19))
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
    bodies = read_files(series_factory(instances, 20))
    slow = [_SlowBody(body, pieces, pause) for body in bodies]
    _, seconds = _timed(_http_upload, orthanc, slow)
    return _describe(orthanc, "slow_upload",
                     "rest receive ~%d ms (the body arrives slowly after the HTTP filter), the rest normal"
                     % ((pieces - 1) * pause * 1000), {"http": instances}, seconds, pieceCount=pieces,
                     pauseMs=pause * 1000)


def compressed_answers(orthanc_factory, series_factory, instances=60, compression=None, clients=1, config=None):
    """HttpCompressionEnabled `compression` (None: Orthanc's default, true before 1.12.2; False is the
    fix); `clients` keep-alive clients accepting gzip, as python-requests does, share the instances."""
    orthanc = _start(orthanc_factory, config=config,
                     extra_config={} if compression is None else {"HttpCompressionEnabled": compression})
    bodies = read_files(series_factory(instances, 21))
    uploads = _http_clients(orthanc, split(bodies, clients), accept_encoding=GZIP)
    uploaded = [u for part in uploads.join() for u in part]
    expected = ("httpAnswers.compressedByOrthanc == requests (1.10.1; none from 1.12.2: off by default, and answers "
                "under 2048 bytes are never compressed); no phase moves" if compression is not False else
                "HttpCompressionEnabled false: no answer compressed, whatever the client accepts")
    return _describe(orthanc, "compressed_answers", expected, {"http": instances, "clients": clients},
                     uploads.seconds, answerEncodings=_encodings(uploaded), httpCompressionEnabled=compression,
                     requestMs=_request_ms(uploaded))


def duplicates_and_rejects(orthanc_factory, series_factory, instances=30, rejects=10):
    """The same series sent twice, then `rejects` bodies that are not DICOM (Orthanc answers 400)."""
    orthanc = _start(orthanc_factory)
    bodies = read_files(series_factory(instances, 22))
    junk = [("not DICOM %d " % i).encode() * (50 * (i + 1)) for i in range(rejects)]
    begin = time.monotonic()
    _http_upload(orthanc, bodies)
    _http_upload(orthanc, bodies)
    _http_upload(orthanc, junk, expect=(400,))
    seconds = time.monotonic() - begin
    # A body refused with 400 is concluded by the plugin's thread, within seconds (docs/outcomes.md).
    wait_for(orthanc, lambda stats: stats["transports"]["rest"]["instances"]["notDicom"] >= rejects)
    return _describe(orthanc, "duplicates_and_rejects",
                     "outcomes: rest alreadyStored %d, notDicom %d, beside stored %d" % (instances, rejects, instances),
                     {"http": 2 * instances + rejects}, seconds)


FAILING_VARIANTS = ("disk-full", "quota", "refused")


def _small_disk(orthanc, megabytes):
    """A tmpfs of `megabytes` as Orthanc's StorageDirectory (mounting needs root, as the test command
    runs), unmounted once that Orthanc is stopped."""
    folder = os.path.join(orthanc.work_dir, "small-disk")
    os.makedirs(folder, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % megabytes, "tmpfs", folder],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        raise RuntimeError("cannot mount a tmpfs for the full disk (needs root): %s" % mounted.stderr.strip())
    orthanc.extra_config["StorageDirectory"] = folder
    stop = orthanc.stop

    def stop_and_unmount(*args, **kwargs):
        try:
            return stop(*args, **kwargs)
        finally:
            subprocess.run(["umount", "-l", folder], capture_output=True)

    orthanc.stop = stop_and_unmount


def _without_series_uid(source, target):
    """A copy of a DICOM file without SeriesInstanceUID, under a new SOPInstanceUID: Orthanc cannot index
    it (C-STORE 0xA700)."""
    import pydicom
    from pydicom.uid import generate_uid

    dataset = pydicom.dcmread(source)
    del dataset.SeriesInstanceUID
    dataset.SOPInstanceUID = generate_uid()
    dataset.file_meta.MediaStorageSOPInstanceUID = dataset.SOPInstanceUID
    dataset.save_as(target)
    return target


def _wait_concluded(orthanc, sent, timeout=15):
    """Waits until every instance sent is concluded (stored, already stored or failed) and no record is
    open: a failed store is concluded within seconds of Orthanc's answer (docs/outcomes.md)."""
    def concluded(stats):
        done = sum(t["instances"]["stored"] + t["instances"]["alreadyStored"] + t["instances"]["failed"]
                   for t in stats["transports"].values())
        return done >= sent and stats["openRecords"]["count"] == 0

    return wait_for(orthanc, concluded, timeout)


def stores_failing(orthanc_factory, series_factory, variant="disk-full", instances=30):
    """Orthanc losing instances, TCP_NODELAY on both sides (no latency finding beside it); variant in
    FAILING_VARIANTS: "disk-full", StorageDirectory on an 8 MiB tmpfs, `instances` slices of 0.5 MB by
    storescu and then 4 by HTTP (about half stored, the rest refused: 0xA700 and HTTP 500); "quota",
    MaximumStorageSize 4 (MB) and `instances` slices of one patient by storescu (Orthanc cannot
    recycle the patient it stores: about 7 stored); "refused", `instances` slices by storescu, every
    third without SeriesInstanceUID (0xA700). Returns once every instance is concluded."""
    if variant not in FAILING_VARIANTS:
        raise ValueError("unknown stores_failing variant %r (known: %s)" % (variant, ", ".join(FAILING_VARIANTS)))
    prepare = (lambda o: _small_disk(o, 8)) if variant == "disk-full" else None
    orthanc = _start(orthanc_factory, prepare, env=NODELAY,
                     extra_config={"MaximumStorageSize": 4} if variant == "quota" else {})
    files = series_factory(instances, 26 if variant != "quota" else 27)
    sent = {"storescu": instances}
    begin = time.monotonic()
    if variant == "refused":
        folder = os.path.join(orthanc.work_dir, "refused")
        os.makedirs(folder, exist_ok=True)
        files = [_without_series_uid(path, os.path.join(folder, "%d.dcm" % i)) if i % 3 == 2 else path
                 for i, path in enumerate(files)]
    # --no-halt: every file is sent whatever Orthanc answers (refusals make storescu exit non-zero)
    storescu(orthanc.dicom_port, files, called_aet=orthanc.aet, options=["--no-halt"], env=NODELAY, check=False)
    if variant == "disk-full":
        bodies = read_files(series_factory(4, 28))
        _http_upload(orthanc, bodies, expect=(200, 500))
        sent["http"] = len(bodies)
    seconds = time.monotonic() - begin
    _wait_concluded(orthanc, sum(sent.values()))
    expected = {"disk-full": "dicom and rest outcomes failed with failureReasons diskFull (afterFilters for those "
                             "ended before the plugin's thread saw the disk full), about half the instances",
                "quota": "dicom outcomes failed, failureReasons quota (afterFilters for the first ones), all but "
                         "about 7 instances",
                "refused": "dicom outcomes failed %d, failureReasons beforeFilters" % (instances // 3)}[variant]
    return _describe(orthanc, "stores_failing", expected, sent, seconds, variant=variant)


def _pin(pid, core):
    """Every thread of process `pid` onto one core (the threads it makes later inherit it)."""
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            os.sched_setaffinity(int(task), {core})
        except ProcessLookupError:
            pass  # a thread that ended meanwhile


def cpu_starved(orthanc_factory, series_factory, instances=15, hogs=3):
    """A host that gives Orthanc no CPU: Orthanc's threads and `hogs` processes that only burn CPU,
    all on one core at the same priority (the hogs are started by this process, so with its nice
    value, as Orthanc), one keep-alive HTTP client on the other cores. Orthanc's threads get a share
    of the core: each store waits for it."""
    orthanc = _start(orthanc_factory)
    core = max(os.sched_getaffinity(0))
    _pin(orthanc.pid, core)
    burners = [subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=lambda: os.sched_setaffinity(0, {core}))
               for _ in range(hogs)]
    try:
        bodies = read_files(series_factory(instances, 25))
        _, seconds = _timed(_http_upload, orthanc, bodies)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    return _describe(orthanc, "cpu_starved",
                     "rest serverTotal several times longer, most of it waiting for a CPU (the parts of every "
                     "phase: waitingForCpu), blocked small", {"http": instances}, seconds, hogs=hogs, core=core)


def slow_http_client(orthanc_factory, series_factory, instances=30, pause=0.007):
    """One keep-alive HTTP client that waits `pause` after each answer before its next request (the
    Orthanc team's 7 ms between two uploads); pause=0: a client that sends at once."""
    orthanc = _start(orthanc_factory)
    bodies = read_files(series_factory(instances, 26))
    uploads, seconds = _timed(_http_upload, orthanc, bodies, each=(lambda upload: time.sleep(pause)) if pause else None)
    return _describe(orthanc, "slow_http_client",
                     "rest requestGap ~%.0f ms more than the client's own turnaround (1-4 ms), mostly blocked; "
                     "serverTotal a few ms" % (pause * 1000), {"http": instances}, seconds, pauseMs=pause * 1000,
                     requestMs=_request_ms(uploads))


PYTHON_SITE_CODE = """# The site_code scenario: a site's orthanc-python script whose %(hook)s waits %(ms)d ms per instance
# (a call to a web service, a synchronous forward), as sites' scripts do.
import time

import orthanc


def on_stored(dicom, instance_id):
    time.sleep(%(seconds)f)


def cstore_filter(received):
    time.sleep(%(seconds)f)
    return %(answer)d  # 0: accepted; else the DIMSE status of a refusal


def on_received(received, origin):
    time.sleep(%(seconds)f)
    return orthanc.ReceivedInstanceAction.KEEP_AS_IS, None


def on_change(change_type, level, resource_id):
    time.sleep(%(seconds)f)


if "%(hook)s" == "OnStoredInstance":
    orthanc.RegisterOnStoredInstanceCallback(on_stored)
elif "%(hook)s" == "ReceivedInstanceCallback":
    orthanc.RegisterReceivedInstanceCallback(on_received)
elif "%(hook)s" == "OnChange":
    orthanc.RegisterOnChangeCallback(on_change)
else:
    orthanc.RegisterIncomingCStoreInstanceFilter(cstore_filter)
"""

LUA_SITE_CODE = """-- The site_code scenario: a site's Lua OnStoredInstance that burns %(ms)d ms of CPU per instance.
function OnStoredInstance(instanceId, tags, metadata, origin)
  local start = os.clock()
  while os.clock() - start < %(seconds)f do end
end
"""

# (variant: the site's code, which plugin list)
SITE_CODE_VARIANTS = ("python-onstored-after", "python-onstored-before", "python-cstore-filter",
                      "python-cstore-refusing", "python-received", "python-onchange", "lua-onstored")
SITE_REFUSAL_STATUS = 0xA801


def site_code(orthanc_factory, series_factory, variant="python-onstored-after", delay_ms=30, instances=30):
    """The site's own code slows ingest: an orthanc-python OnStoredInstance that waits `delay_ms`,
    listed after this plugin ("-after": timed in otherOnStored) or before it ("-before": in persist,
    after the index commit: onStoredWait); an orthanc-python C-STORE filter that waits (in persist, no
    hook of this plugin around it) or refuses every instance ("-refusing"); an orthanc-python
    ReceivedInstanceCallback that waits (in receive and associationGap: this plugin leaves it to the
    script); an orthanc-python OnChange that waits (on orthanc-python's own queue: nothing slower); a
    Lua OnStoredInstance that holds Orthanc's Lua lock. One keep-alive HTTP client, then one storescu
    association, TCP_NODELAY on both sides."""
    hook = ("IncomingCStoreInstanceFilter" if variant.startswith("python-cstore") else
            "ReceivedInstanceCallback" if variant == "python-received" else
            "OnChange" if variant == "python-onchange" else "OnStoredInstance")

    def prepare(orthanc):
        os.makedirs(orthanc.work_dir, exist_ok=True)
        values = {"hook": hook, "ms": delay_ms, "seconds": delay_ms / 1000.0,
                  "answer": SITE_REFUSAL_STATUS if variant == "python-cstore-refusing" else 0}
        if variant.startswith("lua"):
            script = os.path.join(orthanc.work_dir, "site-code.lua")
            with open(script, "w") as stream:
                stream.write(LUA_SITE_CODE % values)
            orthanc.extra_config["LuaScripts"] = [script]
            return
        script = os.path.join(orthanc.work_dir, "site_code.py")
        with open(script, "w") as stream:
            stream.write(PYTHON_SITE_CODE % values)
        orthanc.extra_config["PythonScript"] = script
        python = debian_plugin("libOrthancPython.so", orthanc.orthanc)
        if variant.endswith("-before"):
            _load_plugins(orthanc, before=[python])
        else:
            _load_plugins(orthanc, after=[python])

    orthanc = _start(orthanc_factory, prepare, env=NODELAY)
    begin = time.monotonic()
    _http_upload(orthanc, read_files(series_factory(instances, 25)))
    if variant == "python-cstore-refusing":
        # --no-halt: every file is sent whatever Orthanc answers (refusals make storescu exit non-zero)
        storescu(orthanc.dicom_port, series_factory(instances, 26), called_aet=orthanc.aet, options=["--no-halt"],
                 env=NODELAY, check=False)
        _wait_concluded(orthanc, 2 * instances)
    else:
        orthanc.storescu(series_factory(instances, 26), env=NODELAY)
    expected = {
        "python-onstored-after": "otherOnStored ~%d ms on both transports (orthanc-python loaded after this plugin)",
        "python-onstored-before": "persist +%d ms on both transports, onStoredWait ~the same (orthanc-python loaded "
                                  "before this plugin)",
        "python-cstore-filter": "dicom persist +%d ms (a C-STORE filter: no hook of this plugin around it), HTTP "
                                "unchanged",
        "python-cstore-refusing": "every C-STORE instance refused by the site's filter after %d ms: failed, "
                                  "afterFilters (a refusal; a failed write looks the same without TimedStorage)",
        "python-received": "rest receive and dicom associationGap +%d ms (the site's ReceivedInstanceCallback, which "
                           "this plugin leaves to it: no hook around it)",
        "python-onchange": "nothing slower (orthanc-python runs OnChange, %d ms each, on a queue of its own)",
        "lua-onstored": "rest receive up to ~%d ms, blocked (Lua's OnStoredInstance holds the Lua lock that every "
                        "HTTP request's filter waits for); C-STORE unchanged",
    }[variant] % delay_ms
    return _describe(orthanc, "site_code", expected, {"http": instances, "storescu": instances},
                     time.monotonic() - begin, variant=variant, delayMs=delay_ms)


def healthy(orthanc_factory, series_factory, instances=60):
    """Nothing slow: HTTP with identity answers, then C-STORE with TCP_NODELAY at both ends."""
    orthanc = _start(orthanc_factory, env=NODELAY)
    begin = time.monotonic()
    _http_upload(orthanc, read_files(series_factory(instances, 23)))
    orthanc.storescu(series_factory(instances, 24), env=NODELAY)
    return _describe(orthanc, "healthy", "nothing: serverTotal a few ms on both transports, associationGap a few ms",
                     {"http": instances, "storescu": instances}, time.monotonic() - begin)


SCENARIOS = {function.__name__: function for function in (
    nagle_stall, sender_stall, slow_sender, dicom_pool_saturated, http_threads_saturated, transcoding_bound,
    storage_bound, index_bound, slow_change_consumer, slow_filter, slow_upload, compressed_answers,
    duplicates_and_rejects, stores_failing, cpu_starved, slow_http_client, site_code, healthy)}
