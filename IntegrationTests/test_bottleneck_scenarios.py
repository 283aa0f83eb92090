"""The bottleneck scenarios (bottleneck_scenarios.py) create what they promise: each test runs one
and checks the figure its bottleneck should move, with margins for a shared machine. These are the
premises of the /perf/diagnosis rules' tests, checked on their own so that a scenario that stops
creating its bottleneck (a new Orthanc, DCMTK or kernel) fails here, by name, and not as a rule
that seems wrong. Orthanc 1.10.1 only: the runs on 1.12.7 are in Benchmarks/diagnosis_scenarios.py.
"""
import pytest

import bottleneck_scenarios as scenarios
from ingest_perf.postgresql_server import PostgreSQLServer


def phases(orthanc, transport):
    return orthanc.stats(transport=transport)["transports"][transport]["phases"]


def p50(orthanc, transport, phase):
    return phases(orthanc, transport)[phase]["p50"]


@pytest.fixture(scope="module")
def postgresql():
    server = PostgreSQLServer().start()
    yield server
    server.stop()


def test_nagle_stall(orthanc_factory, series_factory):
    orthanc = scenarios.nagle_stall(orthanc_factory, series_factory)
    assert 30 <= p50(orthanc, "dicom", "associationGap") <= 60
    assert p50(orthanc, "dicom", "serverTotal") < 20


def test_slow_sender(orthanc_factory, series_factory):
    orthanc = scenarios.slow_sender(orthanc_factory, series_factory, instances=15)
    assert p50(orthanc, "dicom", "associationGap") >= 150
    assert p50(orthanc, "dicom", "serverTotal") < 30


def test_dicom_pool_saturated_is_read_during_the_load(orthanc_factory, series_factory):
    orthanc = scenarios.dicom_pool_saturated(orthanc_factory, series_factory, during=lambda o: o.stats())
    during = orthanc.scenario["during"]
    assert during["associations"]["openConnections"]["count"] == 8
    assert during["transports"]["dicom"]["instances"]["stored"] < 320
    dicom = phases(orthanc, "dicom")
    assert dicom["associationGap"]["p50"] > 3 * dicom["serverTotal"]["p50"]


def test_http_threads_saturated_makes_a_reader_wait(orthanc_factory, series_factory):
    orthanc = scenarios.http_threads_saturated(orthanc_factory, series_factory, per_client=15,
                                               during=lambda o: o.stats())
    # Started once a quarter of the uploads were answered, served after every keep-alive client.
    assert orthanc.scenario["during"]["transports"]["rest"]["instances"]["stored"] == 8 * 15
    assert orthanc.scenario["during"]["openRecords"]["threadsTracked"] == 1


@pytest.mark.parametrize("timing", ["Off", "FallThrough"])
def test_transcoding_bound(orthanc_factory, series_factory, timing):
    orthanc = scenarios.transcoding_bound(orthanc_factory, series_factory, timing=timing, instances=15)
    rest = phases(orthanc, "rest")
    assert rest["preStore"]["p50"] > 5
    if timing == "Off":
        assert rest["transcode"]["observable"] is False
    else:
        assert rest["transcode"]["p50"] > 5


@pytest.mark.parametrize("variant", scenarios.STORAGE_VARIANTS)
def test_storage_bound(orthanc_factory, series_factory, variant):
    orthanc = scenarios.storage_bound(orthanc_factory, series_factory, variant=variant, instances=15)
    stats = orthanc.stats(transport="rest")
    rest = stats["transports"]["rest"]["phases"]
    if variant == "slow-disk":
        assert rest["storageWrite"]["p50"] >= 30
    elif variant == "compression":
        assert rest["storagePrepare"]["p50"] > 5 * max(rest["storageWrite"]["p50"], rest["indexUpdate"]["p50"])
    else:
        assert rest["persist"]["p50"] >= 30
        assert rest["storageWrite"]["observable"] is False
        assert bool(stats["notInEffect"]) == (variant == "storage-plugin")


@pytest.mark.parametrize("database", ["sqlite", "postgresql-slow"])
def test_index_bound(orthanc_factory, series_factory, postgresql, database):
    orthanc = scenarios.index_bound(orthanc_factory, series_factory, database=database, postgresql=postgresql,
                                    instances=15)
    if database == "sqlite":
        assert p50(orthanc, "rest", "indexUpdate") < 10
    else:
        assert p50(orthanc, "rest", "indexUpdate") >= 20


def test_slow_change_consumer(orthanc_factory, series_factory):
    orthanc = scenarios.slow_change_consumer(orthanc_factory, series_factory)
    assert orthanc.stats()["changes"]["newInstanceBacklog"] >= 20


def test_slow_filter(orthanc_factory, series_factory):
    orthanc = scenarios.slow_filter(orthanc_factory, series_factory, instances=15)
    assert p50(orthanc, "rest", "preStore") >= 25


def test_slow_upload(orthanc_factory, series_factory):
    orthanc = scenarios.slow_upload(orthanc_factory, series_factory, instances=10)
    assert p50(orthanc, "rest", "receive") >= 80


def test_compressed_answers(orthanc_factory, series_factory):
    orthanc = scenarios.compressed_answers(orthanc_factory, series_factory, instances=10)
    answers = orthanc.stats(transport="rest")["transports"]["rest"]["httpAnswers"]
    assert answers["compressedByOrthanc"] == answers["requests"] == 10
    assert orthanc.scenario["answerEncodings"] == {"gzip": 10}


def test_duplicates_and_rejects(orthanc_factory, series_factory):
    orthanc = scenarios.duplicates_and_rejects(orthanc_factory, series_factory, instances=10, rejects=4)
    instances = orthanc.stats(transport="rest")["transports"]["rest"]["instances"]
    assert (instances["stored"], instances["alreadyStored"], instances["notDicom"]) == (10, 10, 4)


def test_healthy(orthanc_factory, series_factory):
    orthanc = scenarios.healthy(orthanc_factory, series_factory, instances=20)
    assert p50(orthanc, "dicom", "associationGap") < 20
    assert p50(orthanc, "rest", "serverTotal") < 30
