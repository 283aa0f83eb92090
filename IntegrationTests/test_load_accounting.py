"""Exact accounting under load (issue 11): 16 clients at once, every instance counted once.

A real Orthanc with this plugin and orthanc-dicomweb, on loopback, receives 3,040 small instances
(64x64) from 16 clients at the same time:

- 8 DCMTK storescu processes, one association each (calling AETs LOAD01..LOAD08);
- 4 HTTP clients, each on its own keep-alive session (clients.KeepAliveSession) (POST /instances);
- 4 STOW-RS clients (orthanc-dicomweb's POST /dicom-web/studies, 10 instances per request).

Meanwhile a reader thread GETs /perf/stats every 100 ms (every fifth time with groupBy=remoteAet)
and keeps every answer with its latency. In the second test another thread also POSTs
/perf/reset every 300 ms.

Time stamps instead of live counters. Every client keeps the wall-clock time at which it
started each instance ("attempted": taken before the request or the C-STORE leaves) and at which
the instance was acknowledged (taken after the HTTP answer or the C-STORE response arrived).
storescu's own log gives both for the C-STORE clients ("Sending Store Request" is logged before
the request is sent, "Received Store Response (Success)" after it arrived; the log pattern puts a
UTC time stamp in microseconds on each line): reading its output live would lag behind storescu,
and a lagging "attempted" count would make the bound below wrong. Every read and every reset
keeps its start and end times on the same clock (CLOCK_REALTIME), and the checks run once the
load is over.

Why the bounds hold. The plugin counts an instance as stored in Orthanc's OnStoredInstance
callback, which Orthanc runs synchronously inside its store, before it answers the HTTP request or
sends the C-STORE response (orthanc-dicomweb stores each part through Orthanc's REST API, also
synchronously). So, for each instance:  started < counted < acknowledged.
For a read R of /perf/stats (its snapshot is taken somewhere in [R.start, R.end]), and Z the last
reset that *ended* before R started (none: the count since Orthanc started):

    upper: count(R) <= started(before R.end) - acknowledged(before Z.start)

  Whatever the plugin counts at R was started before R.end. An instance acknowledged before Z
  began was counted before Z began, so Z zeroed it; any later reset only zeroes more. The
  instances in flight across Z (started before it, counted after its zeroing) are NOT subtracted:
  they may rightly be in the count (an instance acknowledged before a reset can never be; one
  merely started before it can). The slack of the bound is therefore the instances in flight at
  Z plus those in flight at R: at most one per client each, 32 here. A reset that does not reset
  (or leaves any series, transport or AET out) keeps everything acknowledged before it: with
  about 100 instances per 300 ms between resets, the count exceeds the bound by far more.

    lower: count(R) >= #{started after Y.end and acknowledged before R.start}

  with Y the last reset that *started* before R.end (the last that may have touched R's
  snapshot): such an instance was counted after every reset that can affect R, and before R.
  Without resets this says that the reader never sees less than what was acknowledged before it
  asked, and a reset that loses later counts breaks it.

Both bounds are checked per transport (dicom, rest, plugin, all) on every plain read and per
calling AET on every groupBy=remoteAet read, with 1 ms of margin for storescu's microsecond time
stamps. Without resets, the counts of successive reads must also never decrease.

Run (prints the figures; docs/reliability.md, "Exact accounting under load"):
  INGEST_PERF_PLUGIN=$PWD/build/libOrthancIngestPerf.so .venv/bin/python -m pytest -q -s \
      IntegrationTests/test_load_accounting.py
"""
import bisect
import calendar
import json
import re
import threading
import time


from ingest_comparison import StatsPoller
from ingest_perf.benchmarks.report import percentile
from ingest_perf.clients import Concurrently, KeepAliveSession, http_upload, storescu
from ingest_perf.orthanc_process import ALL_ORTHANCS, debian_plugin
from ingest_perf.stats_checks import changes_paired, stored, wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs each test against 1.10.1, 1.12.7 and 1.13.0

PER_CLIENT = 190
STORESCU_CLIENTS = 8
HTTP_CLIENTS = 4
STOW_CLIENTS = 4
STOW_BATCH = 10
SIZE = 64
TOTAL = PER_CLIENT * (STORESCU_CLIENTS + HTTP_CLIENTS + STOW_CLIENTS)
READ_PERIOD = 0.1
GROUP_EVERY = 5  # every fifth read is ?groupBy=remoteAet
RESET_PERIOD = 0.3
MARGIN = 0.001  # storescu's log stamps are truncated to the microsecond; our clock is a float
TRANSPORTS = ("dicom", "rest", "plugin")

# storescu's log (DCMTK's oflog, a log4cplus configuration): a UTC time stamp in microseconds on
# every line, on stderr (stdout gets storescu's "XMIT" progress dots).
STORESCU_LOG_CONFIG = """\
log4cplus.rootLogger = INFO, console
log4cplus.appender.console = log4cplus::ConsoleAppender
log4cplus.appender.console.logToStdErr = true
log4cplus.appender.console.layout = log4cplus::PatternLayout
log4cplus.appender.console.layout.ConversionPattern = %d{%Y-%m-%d %H:%M:%S.%Q} %m%n
"""
STORESCU_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3})\.(\d{3}) "
                           r"(Sending Store Request|Received Store Response \((\w+)\))")


def utc_stamp(text, milliseconds, microseconds):
    return calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M:%S")) + int(milliseconds) / 1e3 + int(microseconds) / 1e6


class Client:
    def __init__(self, name, transport, files, aet=None):
        self.name, self.transport, self.files, self.aet = name, transport, files, aet
        self.attempts = []  # wall-clock time each instance was started (appended before sending)
        self.acks = []  # wall-clock time each instance was acknowledged (appended after the answer)
        self.error = None

    def run(self, orthanc, work_dir):
        try:
            getattr(self, "_run_" + self.transport)(orthanc, work_dir)
        except Exception as error:  # noqa: BLE001 - reported by the test
            self.error = "%s: %r" % (self.name, error)
        finally:
            self.finished = time.time()

    def _run_dicom(self, orthanc, work_dir):
        config = work_dir / "storescu-log.cfg"  # written by run_load, once for every storescu
        log_path = work_dir / ("storescu-%s.log" % self.aet)
        (result,) = storescu(orthanc.dicom_port, self.files, self.aet, orthanc.aet, options=["-lc", config],
                             env={"TCP_NODELAY": "1"}, timeout=300, check=False)  # one process: one association
        log_path.write_text(result.stderr)
        failures = []
        for line in result.stderr.splitlines():
            match = STORESCU_LINE.match(line)
            if not match:
                continue
            stamp = utc_stamp(*match.group(1, 2, 3))
            if match.group(4).startswith("Sending"):
                self.attempts.append(stamp)
            elif match.group(5) == "Success":
                self.acks.append(stamp)
            else:
                failures.append(line.strip())
        if result.returncode != 0 or failures:
            raise RuntimeError("storescu exited with %d, failures %s; see %s" % (result.returncode, failures[:3], log_path))

    def _run_rest(self, orthanc, work_dir):
        def acknowledged(upload):  # started: before the request left; started + seconds: once answered
            self.attempts.append(upload.started)
            if upload.answer.get("Status") != "Success":
                raise RuntimeError("POST /instances answered %s" % upload.answer)
            self.acks.append(upload.started + upload.seconds)

        http_upload(orthanc.url, self.files, each=acknowledged)  # keep-alive: one connection for the whole share

    def _run_plugin(self, orthanc, work_dir):
        with KeepAliveSession() as session:
            for start in range(0, len(self.files), STOW_BATCH):
                batch = self.files[start:start + STOW_BATCH]
                self.attempts.extend([time.time()] * len(batch))
                answer = orthanc.stow_rs(batch, session=session)
                document = answer.json() if answer.status_code == 200 else {}
                stored = document.get("00081199", {}).get("Value", [])
                failed = document.get("00081198", {}).get("Value", [])  # present, without Value, if none failed
                if len(stored) != len(batch) or failed:
                    raise RuntimeError("STOW-RS answered %d: %s" % (answer.status_code, answer.text[:300]))
                self.acks.extend([time.time()] * len(batch))


class Resetter:
    def __init__(self, orthanc):
        self.orthanc = orthanc
        self.resets = []  # (start, end) of each POST /perf/reset
        self.stop = threading.Event()
        self.errors = []

    def run(self):
        with KeepAliveSession() as session:
            while not self.stop.wait(RESET_PERIOD):
                start = time.time()
                answer = session.post(self.orthanc.url + "/perf/reset", timeout=30)
                self.resets.append((start, time.time()))
                if answer.status_code != 200 or answer.json() != {"reset": True}:
                    self.errors.append("%d %s" % (answer.status_code, answer.text[:200]))


def start_orthanc(orthanc_factory, plugin_path, orthanc_version, with_plugin=True):
    plugins = ([plugin_path] if with_plugin else []) + [debian_plugin("libOrthancDicomWeb.so", orthanc_version)]
    return orthanc_factory(plugin_path=plugin_path if with_plugin else None,
                           extra_config={"Plugins": plugins, "DicomWeb": {"Enable": True, "Root": "/dicom-web/"},
                                         "DicomThreadsCount": STORESCU_CLIENTS},  # 8 associations at once
                           env={"TCP_NODELAY": "1"})  # without it, each C-STORE waits ~40 ms for delayed ACKs


def make_clients(series_factory, seed_base):
    clients, seed = [], seed_base
    for index in range(STORESCU_CLIENTS):
        aet = "LOAD%02d" % (index + 1)
        clients.append(Client(aet, "dicom", series_factory(PER_CLIENT, seed, size=SIZE), aet=aet))
        seed += 1
    for kind, count in (("rest", HTTP_CLIENTS), ("plugin", STOW_CLIENTS)):
        for index in range(count):
            clients.append(Client("%s%d" % (kind, index + 1), kind, series_factory(PER_CLIENT, seed, size=SIZE)))
            seed += 1
    return clients


def run_load(orthanc, clients, work_dir, resets=False):
    """Runs every client at once with the reader (and the resetter); returns a summary dict."""
    (work_dir / "storescu-log.cfg").write_text(STORESCU_LOG_CONFIG)
    shapes = [("/perf/stats", {})] * (GROUP_EVERY - 1) + [("/perf/stats", {"groupBy": "remoteAet"})]
    resetter = Resetter(orthanc)
    resetting = threading.Thread(target=resetter.run)
    with StatsPoller(orthanc, shapes, READ_PERIOD) as reader:
        if resets:
            resetting.start()
        started = time.time()
        Concurrently([lambda client=client: client.run(orthanc, work_dir) for client in clients]).run()  # all at once
        finished = max(c.finished for c in clients)
        resetter.stop.set()
        if resets:
            resetting.join()
    return {"reader": reader, "resetter": resetter, "started": started, "finished": finished}


def wait_until_closed(orthanc, timeout=10):
    """openRecords.count == 0 once the last callbacks have returned; polls for up to `timeout` s."""
    deadline = time.time() + timeout
    while True:
        stats = orthanc.stats()
        if stats["openRecords"]["count"] == 0 or time.time() > deadline:
            return stats


def count_before(stamps, limit):
    return bisect.bisect_right(stamps, limit)


class Timeline:
    """The clients' stamps per key (transport, "all", or calling AET), sorted, for the bounds."""

    def __init__(self, clients):
        self.attempts, self.acks, self.pairs = {}, {}, {}
        for client in clients:
            for key in (client.transport, "all") + ((client.aet,) if client.aet else ()):
                self.attempts.setdefault(key, []).extend(client.attempts)
                self.acks.setdefault(key, []).extend(client.acks)
                self.pairs.setdefault(key, []).extend(zip(client.attempts, client.acks))
        for stamps in list(self.attempts.values()) + list(self.acks.values()):
            stamps.sort()

    def upper(self, key, read, last_reset_ended):
        bound = count_before(self.attempts.get(key, []), read["end"] + MARGIN)
        if last_reset_ended is not None:
            bound -= count_before(self.acks.get(key, []), last_reset_ended[0] - MARGIN)
        return bound

    def lower(self, key, read, last_reset_started):
        after = last_reset_started[1] + MARGIN if last_reset_started is not None else float("-inf")
        return sum(1 for attempt, ack in self.pairs.get(key, []) if attempt > after and ack < read["start"] - MARGIN)


def counts_of(read):
    """{key: stored} of one answer: per transport and "all", or per calling AET for a grouped read."""
    stats = read["stats"]
    if read["grouped"]:
        return {g["labels"]["remoteAet"]: g["instances"]["stored"] for g in stats["groups"]
                if g["labels"]["remoteAet"] != "(none)"}
    return {t: stats["transports"][t]["instances"]["stored"] for t in TRANSPORTS + ("all",)}


def check_reads(reads, timeline, resets):
    """Every read answered 200 with JSON; its counts within the bounds. Returns the slack of the bounds."""
    failures, upper_slack, lower_slack = [], [], []
    aets = [k for k in timeline.attempts if k.startswith("LOAD")]
    for read in reads:
        if read["status"] != 200 or not isinstance(read["stats"], dict):
            failures.append("read at %.3f answered %r" % (read["start"], read["status"]))
            continue
        ended = [r for r in resets if r[1] < read["start"]]
        begun = [r for r in resets if r[0] < read["end"]]
        counts = counts_of(read)
        for key in (aets if read["grouped"] else TRANSPORTS + ("all",)):
            count = counts.get(key, 0)
            upper = timeline.upper(key, read, ended[-1] if ended else None)
            lower = timeline.lower(key, read, begun[-1] if begun else None)
            upper_slack.append(upper - count)
            lower_slack.append(count - lower)
            if not lower <= count <= upper:
                failures.append("read at %.3f (%s): %s stored %d, expected within [%d, %d]"
                                % (read["start"], "grouped" if read["grouped"] else "plain", key, count, lower, upper))
    return failures, upper_slack, lower_slack


def check_monotonic(reads):
    failures, last = [], {}
    for read in reads:
        if read["status"] != 200:
            continue
        for key, count in counts_of(read).items():
            previous = last.get((read["grouped"], key), 0)
            if count < previous:
                failures.append("read at %.3f: %s went down from %d to %d" % (read["start"], key, previous, count))
            last[(read["grouped"], key)] = count
    return failures


def figures(load, clients, orthanc):
    during = [r for r in load["reader"].reads if r["start"] >= load["started"] and r["end"] <= load["finished"]]
    latencies_ms = [1000 * r["latency"] for r in during]
    duration = load["finished"] - load["started"]
    return {
        "orthanc": orthanc.version,
        "instances": sum(len(c.acks) for c in clients),
        "clients": {"storescu": STORESCU_CLIENTS, "http": HTTP_CLIENTS, "stowRs": STOW_CLIENTS},
        "instanceSize": "%dx%d, 16-bit" % (SIZE, SIZE),
        "durationSeconds": round(duration, 3),
        "instancesPerSecond": round(sum(len(c.acks) for c in clients) / duration, 1),
        "statsReadsDuringLoad": len(during),
        "statsLatencyMs": {"p50": round(percentile(latencies_ms, 0.50), 2),
                           "p99": round(percentile(latencies_ms, 0.99), 2),
                           "max": round(max(latencies_ms), 2)},
    }


def report(name, result, tmp_path):
    path = tmp_path / ("%s.json" % name)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print("\n%s: %s\n  saved in %s" % (name, json.dumps(result), path))


def test_sixteen_clients_every_instance_counted_once(orthanc_factory, plugin_path, orthanc_version, series_factory,
                                                     tmp_path):
    orthanc = start_orthanc(orthanc_factory, plugin_path, orthanc_version)
    clients = make_clients(series_factory, 1100)
    load = run_load(orthanc, clients, tmp_path)
    assert [c.error for c in clients if c.error] == []
    assert all(len(c.acks) == len(c.attempts) == PER_CLIENT for c in clients)

    final = wait_until_closed(orthanc)
    assert final["openRecords"]["count"] == 0, final["openRecords"]
    assert final["errors"]["callbackExceptions"] == 0, final["errors"]
    # Orthanc's change thread lags behind under load: once it caught up, every NewInstance change
    # was paired with its instance, at most once, and every pairing missing is covered by a counted
    # loss: a correlation given up rather than spin on a busy entry (changeCorrelationSkipped) or an
    # entry waiting for its pair taken by another (changeTableEvictions). Seen on 1.12.7 with two
    # test files sharing the 2 cores: 4 pairings missing, 6 evictions counted (an eviction does not
    # always lose its pairing).

    def lost(s):
        return s["errors"]["changeCorrelationSkipped"] + s["errors"]["changeTableEvictions"]

    def all_paired(s):
        return sum(changes_paired(s, t) for t in TRANSPORTS) + lost(s) >= sum(stored(s, t) for t in TRANSPORTS)

    final = wait_for(orthanc, all_paired, timeout=30)
    for transport in TRANSPORTS:
        assert changes_paired(final, transport) <= stored(final, transport), transport
    assert sum(changes_paired(final, t) for t in TRANSPORTS) + lost(final) >= TOTAL, final["errors"]
    assert lost(final) <= TOTAL // 100, final["errors"]  # a rare give-up, not a broken correlation
    sent = {t: sum(len(c.acks) for c in clients if c.transport == t) for t in TRANSPORTS}
    for transport in TRANSPORTS:
        instances = final["transports"][transport]["instances"]
        assert instances["stored"] == sent[transport], (transport, instances)
        others = {k: v for k, v in instances.items() if k not in ("stored", "failureReasons") and v != 0}
        others.update({k: v for k, v in instances["failureReasons"].items() if v})
        assert others == {}, (transport, others)  # no duplicates, no discards, nothing untimed
    assert final["transports"]["all"]["instances"]["stored"] == TOTAL
    assert orthanc.get("/statistics").json()["CountInstances"] == TOTAL  # Orthanc's own count
    by_aet = orthanc.stats(transport="dicom", groupBy="remoteAet")
    assert {g["labels"]["remoteAet"]: g["instances"]["stored"] for g in by_aet["groups"]} == \
        {c.aet: len(c.acks) for c in clients if c.aet}

    reads = load["reader"].reads
    failures, upper_slack, lower_slack = check_reads(reads, Timeline(clients), [])
    assert failures == [], failures[:20]
    assert check_monotonic(reads) == []
    result = figures(load, clients, orthanc)
    result.update({"statsReads": len(reads), "groupedReads": sum(r["grouped"] for r in reads),
                   "upperBoundSlackMax": max(upper_slack), "lowerBoundSlackMax": max(lower_slack),
                   "pairingsGivenUp": lost(final)})
    report("load-accounting-%s" % orthanc_version, result, tmp_path)
    assert result["statsReadsDuringLoad"] >= 10


def test_resets_during_the_load_never_keep_acknowledged_instances(orthanc_factory, plugin_path, orthanc_version,
                                                                  series_factory, tmp_path):
    orthanc = start_orthanc(orthanc_factory, plugin_path, orthanc_version)
    clients = make_clients(series_factory, 1100)  # the first test's instances (written once), to a fresh Orthanc
    load = run_load(orthanc, clients, tmp_path, resets=True)
    assert [c.error for c in clients if c.error] == []
    resetter = load["resetter"]
    assert resetter.errors == []
    assert len(resetter.resets) >= 5, resetter.resets

    final = wait_until_closed(orthanc)
    assert final["openRecords"]["count"] == 0, final["openRecords"]
    assert final["errors"]["callbackExceptions"] == 0, final["errors"]
    assert orthanc.get("/statistics").json()["CountInstances"] == TOTAL

    # The reads after the load, the final one included, are within the bounds of the last reset.
    reader = load["reader"]
    reader.read()
    reader.read(params={"groupBy": "remoteAet"})
    timeline = Timeline(clients)
    failures, upper_slack, lower_slack = check_reads(reader.reads, timeline, resetter.resets)
    assert failures == [], failures[:20]
    # Between two resets the counts never decrease.
    for previous, following in zip([(0, 0)] + resetter.resets, resetter.resets + [(float("inf"),) * 2]):
        epoch = [r for r in reader.reads if r["start"] > previous[1] and r["end"] < following[0]]
        assert check_monotonic(epoch) == []
    # What the tightness buys: a reset that did not reset would have kept everything acknowledged
    # before it. Count the plain reads where that alone would break the upper bound of "all".
    caught, after_a_reset = 0, 0
    for read in reader.reads:
        ended = [r for r in resetter.resets if r[1] < read["start"]]
        if read["grouped"] or not ended:
            continue
        after_a_reset += 1
        slack = timeline.upper("all", read, ended[-1]) - counts_of(read)["all"]
        caught += count_before(timeline.acks["all"], ended[-1][0] - MARGIN) > slack
    kept = [count_before(timeline.acks["all"], start) for start, _ in resetter.resets]
    result = figures(load, clients, orthanc)
    result.update({"resets": len(resetter.resets), "statsReads": len(reader.reads),
                   "upperBoundSlackMax": max(upper_slack), "lowerBoundSlackMax": max(lower_slack),
                   "acknowledgedBeforeTheLastReset": kept[-1], "readsAfterAReset": after_a_reset,
                   "readsThatWouldCatchAResetThatDoesNotReset": caught})
    report("load-accounting-resets-%s" % orthanc_version, result, tmp_path)
    assert caught >= 0.8 * after_a_reset, (caught, after_a_reset)
