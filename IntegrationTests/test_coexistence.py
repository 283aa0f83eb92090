"""Coexistence: loaded beside Debian's plugins that take part in ingest, this plugin changes nothing
of an ingest.

Every case ingests the same three small series, one per path (DCMTK storescu C-STORE, HTTP
POST /instances, STOW-RS through orthanc-dicomweb), on two fresh Orthancs with the same
configuration: one without this plugin, one with it added to "Plugins". Everything a client or an
administrator can see of the ingest must be identical: HTTP statuses and answers, the DIMSE status
of every C-STORE, the stored instances, their metadata and attachments, the MD5 of every stored
file, the change log and /statistics.

The case matrix (CASES): no transcoding; IngestTranscoding to JPEG lossless by DCMTK and by
orthanc-gdcm; IngestPerf.TimedStorage off and on; orthanc-postgresql as index, as storage, and as
both, against a real throw-away PostgreSQL server (postgresql_server.py, one per module, one
database per Orthanc). With PostgreSQL storage and TimedStorage on, this plugin must leave the
storage area to PostgreSQL and say so in GET /perf/stats.

GDCM cases ingest over C-STORE only: orthanc-gdcm writing JPEG lossless on Orthanc's HTTP worker
threads crashes Orthanc, with or without this plugin (1.10.1: gdcm::PixmapWriter::PrepareWrite,
whose frame alone is ~130 KB on a ~100 KiB "civetweb-worker" stack, about one request in eight;
1.12.7: gdcm::ImageWriter::Write, every request). HTTP and STOW-RS with GDCM transcoding cannot
serve as a reference; test_stow_rs_with_gdcm_ingest_transcoding_ends_the_same_with_and_without_the_plugin
checks that this plugin does not change that outcome, and ingest_perf/benchmarks/gdcm_stow_crash.py measures
the crash rates.

Orthanc versions: conftest.py runs every test against 1.10.1, 1.12.7 and 1.13.0 (ORTHANC_VERSIONS), with
every plugin path from debian_plugins(version).
"""
import os
import time

import pytest
import requests

from ingest_comparison import (JPEG_LOSSLESS, debian_plugins, differences, gdcm_section, http_outcome, md5_of,
                               series_with_study_time, storescu_outcome, stored_state, stow_outcome)
from ingest_perf import clients
from ingest_perf.orthanc_process import ALL_ORTHANCS, orthanc_root

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against each

SOURCE_SYNTAX = "1.2.840.10008.1.2.1"  # explicit little endian, what series_factory writes
SERIES_SLICES = 6
SERIES_SIZE = 256
PLUGIN_NAME = "ingest-perf"
TRANSPORT_OF_WORKLOAD = {"storescu": "dicom", "http": "rest", "stow": "plugin"}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """One series per workload (series_with_study_time)."""
    return {name: series_with_study_time(tmp_path_factory.mktemp("coexistence-%s" % name), SERIES_SLICES, seed,
                                         SERIES_SIZE)
            for name, seed in (("storescu", 301), ("http", 302), ("stow", 303))}


# --- the case matrix ------------------------------------------------------------------------------

class Case:
    def __init__(self, name, transcoder=None, timed_storage=False, pg_index=False, pg_storage=False,
                 plugin_first=True):
        self.name = name
        self.transcoder = transcoder  # None, "dcmtk" or "gdcm"
        self.timed_storage = timed_storage
        self.pg_index = pg_index
        self.pg_storage = pg_storage
        self.plugin_first = plugin_first  # where this plugin goes in "Plugins"

    @property
    def workloads(self):
        # See the module docstring: GDCM on an HTTP thread crashes Orthanc 1.10.1 without us.
        return ("storescu",) if self.transcoder == "gdcm" else ("storescu", "http", "stow")

    @property
    def stored_syntax(self):
        return JPEG_LOSSLESS if self.transcoder else SOURCE_SYNTAX

    @property
    def owns_storage(self):
        """Whether this plugin should hold the storage area in the run with it."""
        return self.timed_storage and not self.pg_storage

    def __repr__(self):
        return self.name


CASES = [
    Case("plain"),
    Case("plain-timed", timed_storage=True),
    Case("dcmtk", transcoder="dcmtk"),
    Case("dcmtk-timed-last", transcoder="dcmtk", timed_storage=True, plugin_first=False),
    Case("gdcm", transcoder="gdcm"),
    Case("gdcm-timed-last", transcoder="gdcm", timed_storage=True, plugin_first=False),
    Case("pg-index-timed", timed_storage=True, pg_index=True),
    Case("pg-storage-timed", timed_storage=True, pg_storage=True),
    Case("pg-both-dcmtk-timed", transcoder="dcmtk", timed_storage=True, pg_index=True, pg_storage=True),
]


def host_plugins(case, orthanc_version):
    """The Debian plugins of the host configuration, in load order."""
    paths = debian_plugins(orthanc_version)
    plugins = []
    if case.transcoder == "gdcm":
        plugins.append(paths["gdcm"])
    plugins.append(paths["dicomweb"])
    if case.pg_index:
        plugins.append(paths["postgresql-index"])
    if case.pg_storage:
        plugins.append(paths["postgresql-storage"])
    return plugins


def host_configuration(case, orthanc_version, postgresql=None):
    """The production Orthanc's configuration, apart from "Plugins"."""
    config = {}
    if case.transcoder:
        config["IngestTranscoding"] = JPEG_LOSSLESS
        config["BuiltinDecoderTranscoderOrder"] = "After"
    if case.transcoder == "gdcm":
        config.update(gdcm_section())
    if case.pg_index or case.pg_storage:
        section = postgresql.orthanc_parameters(postgresql.new_database())
        section.update({"EnableIndex": case.pg_index, "EnableStorage": case.pg_storage})
        config["PostgreSQL"] = section
    return config


def start_pair_member(orthanc_factory, case, orthanc_version, plugin_path, postgresql, with_plugin):
    plugins = host_plugins(case, orthanc_version)
    if with_plugin:
        plugins = [plugin_path] + plugins if case.plugin_first else plugins + [plugin_path]
    config = host_configuration(case, orthanc_version, postgresql)
    config["Plugins"] = plugins
    orthanc = orthanc_factory(plugin_path=None, extra_config=config,
                              ingest_perf={"TimedStorage": case.timed_storage})
    # Verbose logs tell which transcoder did the work (DCMTK logs each of its transcodes).
    assert orthanc.session.put(orthanc.url + "/tools/log-level", data="verbose").status_code == 200
    return orthanc


# --- workloads ------------------------------------------------------------------------------------

def files_in(folder):
    return sum(len(names) for _, _, names in os.walk(folder))


def ingest(orthanc, case, inputs):
    outcome = {}
    if "storescu" in case.workloads:
        outcome["storescu"] = storescu_outcome(orthanc, inputs["storescu"])
    if "http" in case.workloads:
        outcome["http"] = http_outcome(orthanc, inputs["http"])
    if "stow" in case.workloads:
        outcome["stow"] = stow_outcome(orthanc, inputs["stow"])
    outcome["stored"] = stored_state(orthanc)
    outcome["filesInStorageDirectory"] = files_in(os.path.join(orthanc.work_dir, "storage"))
    outcome["transcodedByDcmtk"] = "DCMTK transcoding from" in orthanc.log_text()
    outcome["alive"] = orthanc.is_running()
    return outcome


# --- checks that each run is a real ingest (so that "identical" cannot mean "both broken") -------

def check_outcome(outcome, case, inputs):
    expected_files = sum(len(inputs[w]) for w in case.workloads)
    stored = outcome["stored"]["instances"]
    assert outcome["alive"]
    assert len(stored) == expected_files
    assert outcome["stored"]["statistics"]["CountInstances"] == expected_files
    for instance, record in stored.items():
        assert record["metadata"]["TransferSyntax"] == case.stored_syntax, instance
        assert record["fileMd5"] == record["attachments"]["dicom"]["UncompressedMD5"], instance
    if "storescu" in outcome:
        assert outcome["storescu"]["exitCodes"] == [0]
        assert [s for _, s in outcome["storescu"]["statuses"]] == ["(Success)"] * len(inputs["storescu"])
    if "http" in outcome:
        answers = outcome["http"]
        assert [s for s, _ in answers] == [200] * (len(inputs["http"]) + 1) + [400]
        assert [a["Status"] for _, a in answers[:-1]] == ["Success"] * len(inputs["http"]) + ["AlreadyStored"]
    if "stow" in outcome:
        assert outcome["stow"]["status"] == 200
        assert outcome["stow"]["answer"].count("1.2.840.10008.5.1.4.1.1.2") == len(inputs["stow"])  # CT SOP class
    if not case.transcoder:  # HTTP and STOW-RS store the bytes sent
        sent = {md5_of(open(f, "rb").read()) for w in ("http", "stow") if w in case.workloads for f in inputs[w]}
        assert sent <= {r["fileMd5"] for r in stored.values()}
    # The stated transcoder did the work: DCMTK logs its transcodes at verbose level, GDCM does not.
    assert outcome["transcodedByDcmtk"] == (case.transcoder == "dcmtk")
    if case.pg_storage:
        assert outcome["filesInStorageDirectory"] == 0  # the files are in PostgreSQL
    else:
        assert outcome["filesInStorageDirectory"] == sum(len(r["attachments"]) for r in stored.values())


def check_host(orthanc, case, orthanc_version, plugin_path, with_plugin, inputs):
    """The plugins Orthanc reports, who holds the index and the storage, and this plugin's view."""
    paths = debian_plugins(orthanc_version)
    loaded = set(orthanc.get("/plugins").json())
    assert {"dicom-web"} <= loaded
    assert ("gdcm" in loaded) == (case.transcoder == "gdcm")
    assert (PLUGIN_NAME in loaded) == with_plugin
    system = orthanc.get("/system").json()
    root = orthanc_root(orthanc_version)

    def real(path):  # symbolic links resolved as that Orthanc sees them
        return os.path.realpath(root + path) if path.startswith("/usr/") else os.path.realpath(path)

    if case.pg_index:
        assert real(system["DatabaseBackendPlugin"]) == real(paths["postgresql-index"])
    else:
        assert system.get("DatabaseBackendPlugin") is None
    if case.pg_storage:
        assert real(system["StorageAreaPlugin"]) == real(paths["postgresql-storage"])
    elif with_plugin and case.owns_storage:
        assert real(system["StorageAreaPlugin"]) == real(plugin_path)
    else:
        assert system.get("StorageAreaPlugin") is None

    if not with_plugin:
        assert orthanc.get("/perf/stats").status_code == 404
        return
    stats = orthanc.stats()
    assert stats["errors"]["callbackExceptions"] == 0
    for workload in case.workloads:
        transport = stats["transports"][TRANSPORT_OF_WORKLOAD[workload]]
        assert transport["instances"]["stored"] == len(inputs[workload]), workload
    storage = stats["storage"]
    assert storage["timed"] is case.owns_storage
    if case.owns_storage:
        assert storage["operations"]["create"]["count"] >= sum(len(inputs[w]) for w in case.workloads)
    elif case.pg_storage and case.timed_storage:
        assert "PostgreSQL.EnableStorage" in storage["reason"]
        assert "leaves it to that plugin" in storage["reason"]
        assert {"option": "IngestPerf.TimedStorage", "reason": storage["reason"]} in stats["notInEffect"]
    elif not case.timed_storage:
        assert "TimedStorage is false" in storage["reason"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ingest_is_identical_with_and_without_the_plugin(case, orthanc_version, orthanc_factory, plugin_path,
                                                         postgresql, inputs):
    outcomes = {}
    for with_plugin in (False, True):
        orthanc = start_pair_member(orthanc_factory, case, orthanc_version, plugin_path, postgresql, with_plugin)
        outcomes[with_plugin] = ingest(orthanc, case, inputs)
        check_outcome(outcomes[with_plugin], case, inputs)
        check_host(orthanc, case, orthanc_version, plugin_path, with_plugin, inputs)
        orthanc.terminate()  # stopping beside the next one; waited for at teardown
    found = differences(outcomes[False], outcomes[True])
    assert not found, "the plugin changed the ingest:\n" + "\n".join(found[:40])


# --- the crash reproduction from the issue --------------------------------------------------------

def stow_gdcm_outcome(orthanc_factory, orthanc_version, plugin_path, series, with_plugin, requests_count):
    """Orthanc with orthanc-gdcm and orthanc-dicomweb, ingest transcoding to JPEG lossless with GDCM
    first, receiving STOW-RS requests of the 12-slice 512x512 series (the study deleted between
    them): (requests answered, Orthanc's exit code or None while it runs)."""
    paths = debian_plugins(orthanc_version)
    plugins = [paths["gdcm"], paths["dicomweb"]]
    config = {"Plugins": ([plugin_path] if with_plugin else []) + plugins, "IngestTranscoding": JPEG_LOSSLESS,
              "BuiltinDecoderTranscoderOrder": "After"}
    orthanc = orthanc_factory(plugin_path=None, extra_config=config)
    body, headers = clients.stow_body(series)
    for attempt in range(requests_count):
        try:
            answer = requests.post(orthanc.url + "/dicom-web/studies", data=body, headers=headers, timeout=120)
        except requests.ConnectionError:
            for _ in range(100):
                if not orthanc.is_running():
                    break
                time.sleep(0.05)
            return attempt, orthanc._process.poll()
        assert answer.status_code == 200, (attempt, answer.text[:500])
        assert len(answer.json()["00081199"]["Value"]) == len(series)
        for study in orthanc.get("/studies").json():
            assert orthanc.delete("/studies/%s" % study).status_code == 200
    return requests_count, None


@pytest.mark.parametrize("orthanc_version", ["1.12.7"])
def test_stow_rs_with_gdcm_ingest_transcoding_ends_the_same_with_and_without_the_plugin(
        orthanc_version, orthanc_factory, plugin_path, series):
    """The crash of the issue belongs to Debian's packages: orthanc-gdcm writing JPEG lossless on
    Orthanc's HTTP worker threads crashes Orthanc (gdb: SIGSEGV in gdcm::ImageWriter::Write on a
    "civetweb-worker" thread) with or without this plugin. On 1.12.7 at the first request, every
    time; on 1.10.1 at about one request in eight, also without this plugin, which a single test
    run cannot compare: ingest_perf/benchmarks/gdcm_stow_crash.py measures both (docs/coexistence.md). Loaded
    or not, this plugin must not change the outcome."""
    without = stow_gdcm_outcome(orthanc_factory, orthanc_version, plugin_path, series, False, 6)
    with_plugin = stow_gdcm_outcome(orthanc_factory, orthanc_version, plugin_path, series, True, 6)
    assert with_plugin == without, (with_plugin, without)
    print("outcome (requests answered, exit code):", without)
