"""The opt-in timed storage area: persist split into storage write and index update, storage
MB/s, Orthanc's own folder and layout (switching the option on and off loses and moves no file),
and stepping aside when another plugin owns the storage."""
import os
import subprocess
import sys

from ingest_perf.stats_checks import check_phase_invariants, wait_for
from ingest_perf.orthanc_process import ALL_ORTHANCS, REPO_ROOT

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

TIMED = {"TimedStorage": True}


def storage_files(orthanc):
    root = os.path.join(orthanc.work_dir, "storage")
    found = set()
    for folder, _, names in os.walk(root):
        found.update(os.path.join(folder, name) for name in names)
    return found


def read_back(orthanc, expected):
    """Every instance's file, compared with what was sent over HTTP (keyed by SOP instance UID)."""
    ids = orthanc.get("/instances").json()
    assert len(ids) == len(expected)
    for instance in ids:
        uid = orthanc.get("/instances/%s/metadata/SopInstanceUid" % instance)
        tags = orthanc.get("/instances/%s/simplified-tags" % instance).json()
        body = orthanc.get("/instances/%s/file" % instance)
        assert body.status_code == 200, uid.text
        assert body.content == expected[tags["SOPInstanceUID"]]


def sent(files):
    import pydicom

    return {str(pydicom.dcmread(path, stop_before_pixels=True).SOPInstanceUID): open(path, "rb").read()
            for path in files}


def test_storage_write_and_index_update_split_persist(orthanc_factory, plugin_path, series_factory):
    orthanc = orthanc_factory(ingest_perf=TIMED)
    files = series_factory(8, 51, size=256)
    orthanc.storescu(files[:4])
    orthanc.http_upload(files[4:])
    assert orthanc.get("/system").json()["StorageAreaPlugin"] == os.path.realpath(plugin_path)

    stats = orthanc.stats()
    assert stats["storage"]["timed"] is True
    assert stats["storage"]["root"] == os.path.join(orthanc.work_dir, "storage")
    for name in ("dicom", "rest"):
        transport = stats["transports"][name]
        check_phase_invariants(transport, name)
        phases = transport["phases"]
        for phase in ("storagePrepare", "storageWrite", "indexUpdate"):
            assert phases[phase]["count"] == 4, (name, phase)
        assert phases["storageWrite"]["min"] > 0
        parts = phases["storagePrepare"]["sum"] + phases["storageWrite"]["sum"] + phases["indexUpdate"]["sum"]
        assert parts <= phases["persist"]["sum"] + 0.001
        assert parts >= 0.9 * phases["persist"]["sum"]  # nothing but the creates' own gaps is left out

    create = stats["storage"]["operations"]["create"]
    assert create["count"] == 8
    assert create["bytes"] == stats["transports"]["all"]["bytesPerInstance"]["stored"]["sum"]
    assert create["megabytesPerSecond"] > 0
    assert len(storage_files(orthanc)) == 8

    # A duplicate: up to 1.12, Orthanc writes the file, the index refuses it, Orthanc removes the file;
    # 1.13 finds it in the index before writing anything (counted once its record has ended).
    again = orthanc.post("/instances", data=open(files[4], "rb").read())
    assert again.json()["Status"] == "AlreadyStored"
    rest = wait_for(orthanc, lambda s: s["transports"]["rest"]["instances"]["alreadyStored"] == 1, transport="rest")
    assert rest["transports"]["rest"]["instances"]["alreadyStored"] == 1
    early = tuple(int(n) for n in orthanc.version.split(".")[:2]) >= (1, 13)
    assert rest["storage"]["operations"]["remove"]["count"] == (0 if early else 1)
    assert len(storage_files(orthanc)) == 8


def test_switching_the_option_on_and_off_moves_no_file(orthanc_factory, series_factory):
    first, second = series_factory(4, 52, size=128), series_factory(4, 53, size=128)
    common = {"extra_config": {"MaximumStorageCacheSize": 0}}

    off = orthanc_factory(**common)
    off.http_upload(first)
    before = storage_files(off)
    off.stop()

    on = orthanc_factory(work_dir=off.work_dir, ingest_perf=TIMED, **common)
    read_back(on, sent(first))
    on.http_upload(second)
    # Orthanc 1.13.0 reads a whole file as the range from 0 to its size (its StorageAccessor).
    operations = on.stats()["storage"]["operations"]
    assert operations["readWhole"]["count"] + operations["readRange"]["count"] >= 4, operations
    assert before < storage_files(on)  # the same files, plus the new ones, in the same folders
    on.stop()

    off_again = orthanc_factory(work_dir=off.work_dir, **common)
    read_back(off_again, dict(sent(first), **sent(second)))
    assert len(storage_files(off_again)) == 8
    # Deleting with the option off removes what was written with it on.
    off_again.delete_all()
    assert storage_files(off_again) == set()


def test_another_plugin_owning_the_storage(orthanc_factory, plugin_path, series):
    owner = os.path.join(os.path.dirname(plugin_path), "libTestStorageOwner.so")
    orthanc = orthanc_factory(ingest_perf=TIMED, extra_config={"Plugins": [owner, plugin_path]})
    orthanc.http_upload(series[:2])
    stats = orthanc.stats(transport="rest")
    assert stats["storage"]["timed"] is False
    assert "loaded earlier" in stats["storage"]["reason"]
    # Impossible to miss: first in /perf/stats, and first in the report.
    assert stats["notInEffect"] == [{"option": "IngestPerf.TimedStorage", "reason": stats["storage"]["reason"]}]
    report = subprocess.run([sys.executable, os.path.join(REPO_ROOT, "Resources", "perf_report.py"), "--url",
                             orthanc.url], capture_output=True, text=True, check=True).stdout.splitlines()
    header = next(i for i, line in enumerate(report) if line.startswith("ingest-perf "))  # after the diagnosis
    # Right after the header (wrapped to 80 columns: its continuation lines are indented).
    after = next(line for line in report[header + 1:] if not line.startswith("  "))
    assert after.startswith("NOT IN EFFECT: IngestPerf.TimedStorage: "), report[header:header + 4]
    assert "timed storage not started" in orthanc.log_text()
    rest = stats["transports"]["rest"]
    assert rest["instances"]["stored"] == 2  # the rest keeps working
    assert rest["phases"]["storageWrite"]["observable"] is False
    assert rest["phases"]["persist"]["count"] == 2
    assert len(os.listdir(os.path.join(orthanc.work_dir, "owner-storage"))) == 2


def test_a_configured_storage_plugin_keeps_the_option_off(orthanc_factory, series):
    orthanc = orthanc_factory(ingest_perf=TIMED, extra_config={"AwsS3Storage": {"BucketName": "unused"}})
    orthanc.http_upload(series[:1])
    storage = orthanc.stats()["storage"]
    assert storage["timed"] is False
    assert "AwsS3Storage" in storage["reason"]
    assert "StorageAreaPlugin" not in orthanc.get("/system").json() or \
        orthanc.get("/system").json()["StorageAreaPlugin"] is None
