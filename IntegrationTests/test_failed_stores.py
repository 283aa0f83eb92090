"""Every store ends: instances that Orthanc refuses or cannot store, and uploads that end without an
instance, are concluded as such within a few seconds of Orthanc's answer, with their transport,
sender and reason, whatever arrives next (docs/outcomes.md); and openRecords holds only what is
still in progress. The failures are a site's real ones: an instance without SeriesInstanceUID, a
full disk (a small tmpfs), Orthanc's MaximumStorageSize, a client gone mid-upload, a malformed
chunked body; the senders are DCMTK's storescu and plain sockets."""
import os
import socket
import subprocess
import time

import pydicom
import pytest

from ingest_perf import clients
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS

# "A few seconds of Orthanc's answer": the plugin's thread looks once a second at records open for
# half a second or more, and a pool's wait must be seen at two of its looks.
CONCLUDED_WITHIN = 8


def wait_for(predicate, timeout=CONCLUDED_WITHIN, step=0.1):
    """Polls predicate() until it returns a true value; returns the last value."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(step)
        value = predicate()
    return value


def instances(stats, transport):
    return stats["transports"][transport]["instances"]


def without_series_uid(source, target, suffix):
    """A copy of a DICOM file without SeriesInstanceUID: Orthanc cannot index it (C-STORE 0xA700)."""
    dataset = pydicom.dcmread(source)
    del dataset.SeriesInstanceUID
    dataset.SOPInstanceUID = dataset.SOPInstanceUID + "." + suffix
    dataset.file_meta.MediaStorageSOPInstanceUID = dataset.SOPInstanceUID
    dataset.save_as(target)
    return target


def storescu(orthanc, files, aet):
    """storescu, one association, sending every file whatever Orthanc answers (--no-halt; refusals
    make it exit non-zero)."""
    return clients.storescu(orthanc.dicom_port, files, aet, orthanc.aet, options=["--no-halt"], timeout=120,
                            check=False)


def failing_rows(orthanc):
    """(transport, remoteAet, failed) of /perf/stats grouped by calling AET, failed ones only."""
    rows = []
    for transport in ("dicom", "rest"):
        grouped = orthanc.stats(transport=transport, groupBy="remoteAet")
        for group in grouped["groups"]:
            failed = group["instances"]["failed"]
            if failed:
                rows.append((transport, group["labels"]["remoteAet"], failed))
    return sorted(rows)


def test_a_refused_cstore_ends_with_its_sender_and_reason(orthanc_factory, series_factory, tmp_path):
    orthanc = orthanc_factory()
    good = series_factory(4, 201, size=64)
    bad = without_series_uid(good[0], str(tmp_path / "bad.dcm"), "9")
    # A refused instance alone: nothing arrives after it on any thread.
    storescu(orthanc, [bad], "BADMOD")
    stats = wait_for(lambda: (lambda s: s if instances(s, "dicom")["failed"] == 1 else None)(orthanc.stats()))
    assert stats, "the refused C-STORE was not concluded: %s" % orthanc.stats()["openRecords"]
    dicom = instances(stats, "dicom")
    assert (dicom["failed"], dicom["stored"], dicom["failureReasons"]["beforeFilters"]) == (1, 0, 1)
    assert stats["openRecords"]["count"] == 0
    # The same modality's good instances, then another refused one inside the association (long
    # enough, at about 40 ms per instance, for the plugin's thread to read its connection on a busy
    # machine: it asks for a reading when the first instance is stored).
    storescu(orthanc, [good[0], bad, good[1], good[2], good[3]], "BADMOD")
    stats = wait_for(lambda: (lambda s: s if instances(s, "dicom")["failed"] == 2 else None)(orthanc.stats()))
    assert stats and instances(stats, "dicom")["stored"] == 4
    assert stats["openRecords"]["count"] == 0
    # The second is named after its association's calling AET when the plugin's connection table can
    # tell which connection it arrived on (its readings are asked for when an instance is stored, and
    # come later on a busy machine: 1 full test run in 5 here left it "(unknown)", cause not yet
    # established). Never guessed: the first, alone on its association, is never named, and nothing
    # is named after another AET.
    rows = failing_rows(orthanc)
    assert rows in ([("dicom", "(unknown)", 1), ("dicom", "BADMOD", 1)], [("dicom", "(unknown)", 2)]), rows
    assert orthanc.stats()["errors"]["concludedTooEarly"] == 0


def test_a_hung_store_stays_open(orthanc_factory, series_factory, tmp_path):
    """A store blocked in its storage write (a flush that waits 6 s) is still in progress:
    openRecords keeps it, with its age, and nothing is concluded."""
    from ingest_perf.bottleneck_scenarios import _test_library  # the scenarios' preloaded slow disk
    orthanc = orthanc_factory(start=False, extra_config={"SyncStorageArea": True})
    preload = "LD_PRELOAD" if orthanc.orthanc == "1.10.1" else "INGEST_PERF_ORTHANC_PRELOAD"
    orthanc.env.update({"SLOW_DISK_PREFIX": os.path.join(orthanc.work_dir, "storage") + "/", "SLOW_DISK_MS": "6000",
                        preload: _test_library(orthanc, "SlowDisk")})
    orthanc.start()
    files = series_factory(1, 202, size=64)
    import threading
    sender = threading.Thread(target=lambda: storescu(orthanc, files, "SLOWDISK"))
    sender.start()
    try:
        time.sleep(3.5)  # the write waits 6 s: the plugin's thread has looked at it several times
        stats = orthanc.stats()
        assert stats["openRecords"]["count"] == 1, stats["openRecords"]
        assert stats["openRecords"]["oldestAgeMs"] > 2000
        assert instances(stats, "dicom")["failed"] == 0
    finally:
        sender.join()
    stats = wait_for(lambda: (lambda s: s if instances(s, "dicom")["stored"] == 1 else None)(orthanc.stats()))
    assert stats and instances(stats, "dicom")["failed"] == 0
    assert stats["errors"]["concludedTooEarly"] == 0


def test_refused_rest_uploads_and_bodies_that_never_arrive(orthanc_factory, series_factory, tmp_path):
    orthanc = orthanc_factory()
    good = series_factory(2, 203, size=64)
    bad = without_series_uid(good[0], str(tmp_path / "bad.dcm"), "8")
    (answer,) = clients.http_upload(orthanc.url, [bad], expect=None)
    assert answer.status >= 400
    # Uploads cut off by their client, a malformed chunked body, each on its own connection.
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", orthanc.http_port)) as connection:
            connection.sendall(b"POST /instances HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 5000)
            time.sleep(0.2)
    with socket.create_connection(("127.0.0.1", orthanc.http_port)) as connection:
        connection.sendall(b"POST /instances HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nnot a chunk\r\n")
        time.sleep(0.5)

    def settled():
        stats = orthanc.stats()
        rest = instances(stats, "rest")
        done = rest["failed"] == 1 and rest["requestWithoutInstance"] >= 3 and stats["openRecords"]["receiving"]["count"] == 0
        return stats if done else None

    stats = wait_for(settled)
    assert stats, "REST records not concluded: %s %s" % (orthanc.stats()["openRecords"], instances(orthanc.stats(), "rest"))
    assert stats["openRecords"]["count"] == 0
    # An upload still being sent is not concluded, whatever its age.
    with socket.create_connection(("127.0.0.1", orthanc.http_port)) as slow:
        slow.sendall(b"POST /instances HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        for _ in range(30):
            slow.sendall(b"y" * 100)
            time.sleep(0.1)
        assert orthanc.stats()["openRecords"]["receiving"]["count"] == 1
    assert orthanc.stats()["errors"]["concludedTooEarly"] == 0


def test_quota_reached_is_a_failure_with_its_reason(orthanc_factory, series_factory):
    # 1 MiB for Orthanc, instances of 0.5 MB of one patient: the third cannot be stored, and Orthanc
    # cannot recycle the patient it is storing.
    orthanc = orthanc_factory(extra_config={"MaximumStorageSize": 1})
    files = series_factory(12, 204, size=512)
    storescu(orthanc, files, "QUOTA")
    stats = wait_for(lambda: (lambda s: s if instances(s, "dicom")["stored"] + instances(s, "dicom")["failed"] == 12
                              and s["openRecords"]["count"] == 0 else None)(orthanc.stats()))
    assert stats, instances(orthanc.stats(), "dicom")
    dicom = instances(stats, "dicom")
    assert dicom["failed"] >= 9
    # The failures that end before the plugin's thread has seen the quota reached (at most a second's
    # worth) are afterFilters; the others, quota.
    assert dicom["failureReasons"]["quota"] + dicom["failureReasons"]["afterFilters"] == dicom["failed"]
    assert dicom["failureReasons"]["quota"] > dicom["failed"] / 2
    assert ("dicom", "QUOTA", dicom["failed"]) in failing_rows(orthanc)
    diagnosis = orthanc.get("/perf/diagnosis").json()
    assert diagnosis["findings"][0]["id"] == "stores-failing"
    assert "MaximumStorageSize" in diagnosis["findings"][0]["fix"]["action"]


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs for Orthanc's storage: a disk that fills up."""
    folder = tmp_path / "small-disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.fail("cannot mount a tmpfs (the test command runs as root): %s" % mounted.stderr.decode())
    yield str(folder)
    subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def test_a_full_disk_is_diagnosed_as_lost_instances(orthanc_factory, series_factory, small_disk):
    orthanc = orthanc_factory(extra_config={"StorageDirectory": small_disk})
    files = series_factory(14, 205, size=512)  # 7 MB for a 4 MiB disk
    storescu(orthanc, files[:10], "FULLDISK")
    clients.http_upload(orthanc.url, files[10:], expect=None, connection_errors="record")
    stats = wait_for(lambda: (lambda s: s if s["openRecords"]["count"] == 0 and
                              instances(s, "dicom")["stored"] + instances(s, "dicom")["failed"] == 10 else None)(
        orthanc.stats()))
    assert stats, orthanc.stats()["openRecords"]
    dicom, rest = instances(stats, "dicom"), instances(stats, "rest")
    assert dicom["failed"] >= 3 and rest["failed"] == 4
    assert dicom["failureReasons"]["diskFull"] + dicom["failureReasons"]["afterFilters"] == dicom["failed"]
    assert rest["failureReasons"]["diskFull"] == 4
    findings = orthanc.get("/perf/diagnosis").json()["findings"]
    assert findings[0]["id"] == "stores-failing", [f["id"] for f in findings]
    assert findings[0]["instancesLost"] == dicom["failed"] + rest["failed"]
    assert "Free space" in findings[0]["fix"]["action"]
    assert "rejected-or-duplicate" not in [f["id"] for f in findings]


def test_a_reset_counts_only_what_started_after_it(orthanc_factory, series_factory, tmp_path):
    orthanc = orthanc_factory()
    files = series_factory(4, 206, size=64)
    storescu(orthanc, files, "BEFORE")
    # An upload that is still being sent when the reset comes.
    with socket.create_connection(("127.0.0.1", orthanc.http_port)) as uploading:
        uploading.sendall(b"POST /instances HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 100)
        time.sleep(0.3)
        assert orthanc.post("/perf/reset").status_code == 200
        stats = orthanc.stats()
        assert stats["openRecords"]["receiving"]["count"] == 0
        assert stats["openRecords"]["startedBeforeReset"] == 1
    time.sleep(3)  # the upload was cut off: it ended, but it had started before the reset
    stats = orthanc.stats()
    for transport in ("dicom", "rest"):
        assert all(count == 0 for name, count in instances(stats, transport).items()
                   if isinstance(count, int)), (transport, instances(stats, transport))
    assert stats["associations"]["byRemoteAet"] == []
    assert stats["openRecords"]["count"] == 0 and stats["openRecords"]["receiving"]["count"] == 0


def test_a_cut_upload_now_and_then_is_the_clients_and_rare(orthanc, series_factory):
    """One upload cut in half among 120 whole ones: Orthanc answers HTTP 400 and loses nothing. The
    diagnosis names the client's address and says it is rare, after any finding with a cost, and never
    says Orthanc is losing instances; then a sender whose every third file is cut ranks first."""
    files = series_factory(121, 206, size=64)
    with open(files[-1], "rb") as f:
        whole = f.read()
    uploads = clients.http_upload(orthanc.url, files[:60] + [whole[:len(whole) // 2]] + files[60:120],
                                  expect=(200, 400))
    assert [u.status for u in uploads].count(400) == 1, [u.status for u in uploads]
    stats = wait_for(lambda: (lambda s: s if instances(s, "rest")["failed"] == 1 and
                              s["openRecords"]["count"] == 0 else None)(orthanc.stats()))
    assert stats, instances(orthanc.stats(), "rest")
    assert instances(stats, "rest")["failureReasons"]["beforeFilters"] == 1
    diagnosis = orthanc.get("/perf/diagnosis").json()
    fired = {f["id"]: f for f in diagnosis["findings"]}
    assert "stores-failing" not in fired, diagnosis["findings"]
    cut = fired["unreadable-instances"]
    assert cut.get("instancesLost", 0) == 0 and cut is diagnosis["findings"][-1], diagnosis["findings"]
    assert cut["verdict"].startswith("Clients sent instances Orthanc could not read: 1 of 121 instances received in "
                                     "the last 5 minutes"), cut["verdict"]
    assert ", rare. Since the reset, most came from 127.0.0.1 over rest: 1" in cut["verdict"], cut["verdict"]
    assert "losing" not in diagnosis["verdict"], diagnosis["verdict"]

    cut_files = [whole[:len(whole) // 2]] * 10
    clients.http_upload(orthanc.url, files[:20] + cut_files, expect=(200, 400))
    wait_for(lambda: instances(orthanc.stats(), "rest")["failed"] == 11)
    findings = orthanc.get("/perf/diagnosis").json()["findings"]
    assert findings[0]["id"] == "unreadable-instances" and findings[0].get("instancesLost") == 11, findings[0]
