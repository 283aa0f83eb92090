"""Hostile ingest: each case runs against an Orthanc with the plugin and the same Orthanc without
it; the answers and what Orthanc stored must be the same, the plugin's outcome counts must say what
happened, and the next good instance on the same Orthanc thread must get a clean record."""
import io
import random
import socket
import threading
import time

import pydicom
import pytest
import requests
from pydicom.filebase import DicomBytesIO
from pydicom.filewriter import write_dataset
from pynetdicom import AE, debug_logger  # noqa: F401  (debug_logger: handy when a case fails)
from pynetdicom.dimse_primitives import C_STORE
from pynetdicom.dimse_messages import C_STORE_RQ
from pynetdicom.pdu import P_DATA_TF
from pynetdicom.sop_class import CTImageStorage

from ingest_perf.clients import Concurrently, c_store, split
from ingest_perf.orthanc_process import ALL_ORTHANCS, DEBIAN_SID_ORTHANC, debian_plugin
from ingest_perf.stats_checks import stored, wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

OUTCOMES = ("stored", "alreadyStored", "notDicom", "rejected", "failed", "requestWithoutInstance")


def stored_state(orthanc):
    """What Orthanc holds: {instance id: MD5 of its DICOM file}."""
    return {i: orthanc.get("/instances/%s/attachments/dicom/md5" % i).text
            for i in orthanc.get("/instances").json()}


def outcomes(stats, transport):
    instances = stats["transports"][transport]["instances"]
    return {name: instances[name] for name in OUTCOMES if instances[name]}


def without_meta_header(path):
    """The dataset of a Part 10 file, without preamble, 'DICM' and group 0002."""
    dataset = pydicom.dcmread(path)
    buffer = DicomBytesIO()
    buffer.is_little_endian, buffer.is_implicit_VR = True, False
    write_dataset(buffer, dataset)
    return buffer.getvalue()


def hostile_bodies(good, seed):
    """(name, body) for POST /instances: nothing, not DICOM, cut at random offsets, no meta header."""
    rng = random.Random(seed)
    data = open(good, "rb").read()
    cuts = sorted({rng.randrange(1, 132), rng.randrange(132, 400), rng.randrange(400, len(data) // 2),
                   rng.randrange(len(data) // 2, len(data) - 1)})
    bodies = [("empty", b""), ("not DICOM", b"this is not DICOM at all" * 10),
              ("NUL bytes", b"\0" * 5000), ("DICM alone", b"\0" * 128 + b"DICM")]
    bodies += [("cut at %d of %d" % (cut, len(data)), data[:cut]) for cut in cuts]
    bodies.append(("no meta header", without_meta_header(good)))
    return bodies


def post_all(orthanc, bodies, session):
    return [(name, session.post(orthanc.url + "/instances", data=body, timeout=60).status_code)
            for name, body in bodies]


def test_hostile_http_bodies_change_nothing_and_are_all_accounted_for(orthanc_factory, series_factory):
    good = series_factory(3, 71, size=64)
    bodies = hostile_bodies(good[0], seed=71)
    results = {}
    for plugin in (True, False):
        kwargs = {} if plugin else {"plugin_path": None}
        orthanc = orthanc_factory(**kwargs)
        session = requests.Session()  # one keep-alive connection: one Orthanc thread
        answers = post_all(orthanc, bodies, session)
        if plugin:
            # Read from another connection while the HTTP thread is parked after its last request:
            # every refused upload is concluded within seconds.
            stats = wait_for(orthanc, lambda s: sum(outcomes(s, "rest").values()) == len(bodies))
            assert stats["openRecords"]["count"] == 0
            assert stats["openRecords"]["receiving"]["count"] == 0
            counted = outcomes(stats, "rest")
            # Every request has exactly one outcome.
            assert sum(counted.values()) == len(bodies), counted
            assert counted.get("requestWithoutInstance") == 1  # the empty body
            assert counted.get("stored") == len(stored_state(orthanc))
            assert counted.get("notDicom", 0) >= 3  # not DICOM, NUL bytes, cut before 'DICM'
            assert stats["errors"]["callbackExceptions"] == 0
            # The next good instance on the same thread: a clean record, not one that started at the
            # hostile requests (they were over a second ago).
            time.sleep(1.2)
            orthanc.reset_stats()
            session.post(orthanc.url + "/instances", data=open(good[1], "rb").read()).raise_for_status()
            stats = orthanc.stats()
            rest = stats["transports"]["rest"]
            assert rest["instances"]["stored"] == 1
            assert rest["phases"]["serverTotal"]["count"] == 1
            assert rest["phases"]["serverTotal"]["max"] < 1000.0, rest["phases"]["serverTotal"]
            assert rest["phases"]["receive"]["max"] < 1000.0
        else:
            session.post(orthanc.url + "/instances", data=open(good[1], "rb").read()).raise_for_status()
        results[plugin] = (answers, stored_state(orthanc))
        session.close()
        orthanc.terminate()  # stopping beside the next one; waited for at teardown
    assert results[True] == results[False]


def test_refused_upload_concluded_within_seconds_without_orthanc_metrics(orthanc_factory):
    """With Orthanc's metrics off (no count of REST requests in progress), a refused upload is still
    concluded within seconds, from what its HTTP thread does next: wait on its connection."""
    orthanc = orthanc_factory(extra_config={"MetricsEnabled": False})
    session = requests.Session()
    assert session.post(orthanc.url + "/instances", data=b"not DICOM").status_code == 400
    stats = wait_for(orthanc, lambda s: s["transports"]["rest"]["instances"]["notDicom"] == 1)  # another connection
    assert stats["transports"]["rest"]["instances"]["notDicom"] == 1
    assert stats["openRecords"]["count"] == 0 and stats["openRecords"]["receiving"]["count"] == 0
    stats = session.get(orthanc.url + "/perf/stats").json()  # the same thread: counted once, not twice
    assert stats["transports"]["rest"]["instances"]["notDicom"] == 1
    assert stats["openRecords"]["count"] == 0


def big_upload(orthanc, total, send, close_early):
    """POST /instances announcing `total` bytes of zeros, sending `send` of them; closes the socket
    early (a client gone mid-upload) or reads the answer's status line."""
    connection = socket.create_connection(("127.0.0.1", orthanc.http_port))
    connection.sendall(b"POST /instances HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n" % total)
    chunk = b"\0" * (1 << 20)
    sent = 0
    while sent < send:
        n = min(len(chunk), send - sent)
        connection.sendall(chunk[:n])
        sent += n
    status = None
    if not close_early:
        connection.settimeout(120)
        status = connection.recv(64).split(b" ")[1].decode()
    connection.close()
    return status


def test_a_100_mb_body_and_a_client_gone_mid_upload(orthanc_factory, series_factory):
    """100 MB: Orthanc takes seconds to read and refuse it (about 6 s here), so the plugin's thread
    looks at the upload many times while it is in progress. 500 MB took 30 s per Orthanc, four times
    a run, and proved nothing more: the plugin reads the first bytes of a body only, whatever its size."""
    good = series_factory(2, 72, size=64)
    size = 100 * 1000 * 1000
    results = {}
    for plugin in (True, False):
        orthanc = orthanc_factory(**({} if plugin else {"plugin_path": None}))
        whole = big_upload(orthanc, size, size, close_early=False)
        gone = big_upload(orthanc, size, 50 * 1000 * 1000, close_early=True)
        time.sleep(0.5)
        if plugin:
            # The client gone mid-upload is concluded within seconds, like the refused one.
            stats = wait_for(orthanc, lambda s: s["openRecords"]["receiving"]["count"] == 0)
            assert stats["transports"]["rest"]["instances"]["notDicom"] == 1  # the whole 100 MB of zeros
            assert stats["openRecords"]["count"] == 0
            assert stats["openRecords"]["receiving"]["count"] == 0
            assert stats["transports"]["rest"]["instances"]["requestWithoutInstance"] <= 1
        answer = orthanc.http_upload(good[:1])[0]["Status"]
        results[plugin] = (whole, gone, answer, stored_state(orthanc))
        if plugin:
            stats = orthanc.stats()
            assert stored(stats, "rest") == 1
            assert stats["transports"]["rest"]["phases"]["serverTotal"]["max"] < 5000.0
            assert stats["errors"]["callbackExceptions"] == 0
        orthanc.terminate()
    assert results[True] == results[False]
    assert results[True][0] in ("400", "404")  # 1.10.1 answers 404 to this one


DICOMWEB = {"DicomWeb": {"Enable": True, "Root": "/dicom-web/"}}


def stow(orthanc, body, boundary=b"b0undary", content_type=None):
    headers = {"Content-Type": content_type or 'multipart/related; type="application/dicom"; boundary=%s'
               % boundary.decode(), "Accept": "application/dicom+json"}
    return orthanc.post("/dicom-web/studies", data=body, headers=headers).status_code


def test_broken_stow_rs_multipart(orthanc_factory, plugin_path, orthanc_version, series_factory):
    good = series_factory(2, 73, size=64)
    data = open(good[0], "rb").read()
    part = b"--b0undary\r\nContent-Type: application/dicom\r\n\r\n"
    cases = [
        ("no closing boundary", part + data + b"\r\n"),
        ("wrong boundary", b"--other\r\nContent-Type: application/dicom\r\n\r\n" + data + b"\r\n--other--\r\n"),
        ("part not DICOM", part + b"garbage" * 50 + b"\r\n--b0undary--\r\n"),
        ("part cut", part + data[:len(data) // 2] + b"\r\n--b0undary--\r\n"),
        ("no parts", b"--b0undary--\r\n"),
        ("empty", b""),
    ]
    results = {}
    for plugin in (True, False):
        plugins = [debian_plugin("libOrthancDicomWeb.so", orthanc_version)] + ([plugin_path] if plugin else [])
        orthanc = orthanc_factory(plugin_path=None, extra_config=dict(DICOMWEB, Plugins=plugins))
        statuses = [(name, stow(orthanc, body)) for name, body in cases]
        statuses.append(("not multipart", stow(orthanc, data, content_type="application/dicom")))
        statuses.append(("good", stow(orthanc, part + open(good[1], "rb").read() + b"\r\n--b0undary--\r\n")))
        if plugin:
            stats = orthanc.stats()
            assert stored(stats, "plugin") == len(stored_state(orthanc))
            assert stats["errors"]["callbackExceptions"] == 0
        results[plugin] = (statuses, stored_state(orthanc))
        orthanc.terminate()
    assert results[True] == results[False]
    assert results[True][0][-1] == ("good", 200)


# --- C-STORE: associations aborted in the middle of a dataset, or left open -----------------------

def associate(orthanc, aet):
    ae = AE(ae_title=aet)
    ae.add_requested_context(CTImageStorage, ["1.2.840.10008.1.2.1", "1.2.840.10008.1.2"])
    association = ae.associate("127.0.0.1", orthanc.dicom_port, ae_title=orthanc.aet)
    assert association.is_established
    return association


def send_half_a_dataset(association, path):
    """Writes a C-STORE-RQ whose dataset stops in its middle: the command and the first fragments
    only, as raw P-DATA-TF PDUs on the association's socket."""
    dataset = pydicom.dcmread(path)
    context = association.accepted_contexts[0]
    dataset_bytes = DicomBytesIO()
    dataset_bytes.is_little_endian = True
    dataset_bytes.is_implicit_VR = context.transfer_syntax[0] == "1.2.840.10008.1.2"
    write_dataset(dataset_bytes, dataset)
    request = C_STORE()
    request.MessageID = 1
    request.AffectedSOPClassUID = dataset.SOPClassUID
    request.AffectedSOPInstanceUID = dataset.SOPInstanceUID
    request.Priority = 2
    request.DataSet = io.BytesIO(dataset_bytes.getvalue())
    message = C_STORE_RQ()
    message.primitive_to_message(request)
    pdus = list(message.encode_msg(context.context_id, 1024))
    assert len(pdus) > 4
    for primitive in pdus[:len(pdus) // 2]:
        pdu = P_DATA_TF()
        pdu.from_primitive(primitive)
        association.dul.socket.send(pdu.encode())
    time.sleep(0.2)


def test_cstore_aborted_mid_dataset_and_association_left_open(orthanc_factory, series_factory):
    files = series_factory(4, 74, size=64)
    results = {}
    for plugin in (True, False):
        orthanc = orthanc_factory(extra_config={"DicomScpTimeout": 2}, **({} if plugin else {"plugin_path": None}))
        # A-ABORT in the middle of a dataset.
        association = associate(orthanc, "ABORTER")
        send_half_a_dataset(association, files[0])
        association.abort()
        # A bare TCP close in the middle of a dataset.
        association = associate(orthanc, "CLOSER")
        send_half_a_dataset(association, files[1])
        association.dul.socket.socket.shutdown(socket.SHUT_RDWR)
        association.dul.socket.socket.close()
        # One instance stored, then the client never sends the next one: Orthanc's DicomScpTimeout
        # (2 s here) closes the association.
        idle = associate(orthanc, "IDLER")
        first = c_store(idle, pydicom.dcmread(files[2]))
        time.sleep(3.5)
        idle_released = not idle.is_established
        # The next good instances, through storescu.
        orthanc.storescu(files[2:])
        if plugin:
            # Orthanc 1.13 answers the resend before any filter: counted once its record has ended.
            stats = wait_for(orthanc, lambda s: outcomes(s, "dicom") == {"stored": 2, "alreadyStored": 1})
            dicom = stats["transports"]["dicom"]
            # IDLER's instance and storescu's new one stored, storescu's resend of IDLER's instance
            # already stored; the halves of datasets never reached Orthanc's store: nothing else.
            assert outcomes(stats, "dicom") == {"stored": 2, "alreadyStored": 1}
            assert stats["openRecords"]["count"] == 0
            assert stats["errors"]["callbackExceptions"] == 0
            # Clean records: nothing of the aborted ones leaks into the phases of later instances.
            assert dicom["phases"]["serverTotal"]["max"] < 1000.0, dicom["phases"]["serverTotal"]
        results[plugin] = (first.Status, idle_released, stored_state(orthanc))
        orthanc.terminate()
    assert results[True] == results[False]
    assert results[True][0] == 0 and results[True][1]


def test_duplicates_with_and_without_overwrite(orthanc_factory, series_factory):
    files = series_factory(3, 75, size=64)
    for overwrite in (False, True):
        results = {}
        for plugin in (True, False):
            orthanc = orthanc_factory(extra_config={"OverwriteInstances": overwrite},
                                      **({} if plugin else {"plugin_path": None}))
            session = requests.Session()
            statuses = [session.post(orthanc.url + "/instances", data=open(f, "rb").read()).json()["Status"]
                        for f in files + files[:2]]
            orthanc.storescu(files[:1])
            if plugin:
                # Orthanc 1.13 answers a duplicate before any filter: the plugin's thread counts it once
                # its record has ended, in a second or two.
                stats = wait_for(orthanc, lambda s: sum(
                    s["transports"][t]["instances"][o] for t in ("rest", "dicom")
                    for o in ("stored", "alreadyStored", "failed")) >= 6)
                rest, dicom = stats["transports"]["rest"]["instances"], stats["transports"]["dicom"]["instances"]
                if overwrite:
                    assert (rest["stored"], rest["alreadyStored"], dicom["stored"]) == (5, 0, 1)
                else:
                    assert (rest["stored"], rest["alreadyStored"], dicom["alreadyStored"]) == (3, 2, 1)
            results[plugin] = (statuses, sorted(stored_state(orthanc)))
            orthanc.terminate()
        assert results[True] == results[False]


@pytest.mark.parametrize("orthanc_version", [DEBIAN_SID_ORTHANC])
def test_the_overwrite_modes_of_orthanc_1_13(orthanc_factory, series_factory):
    """1.13.0's OverwriteInstances strings: "Never" and "IfChanged" answer a resend of the same bytes
    AlreadyStored after a lookup in the index, before any filter; "Always" and "IfChanged" with other
    bytes store it again. The plugin reads the mode (it read a string as false before) and counts each
    as Orthanc answered it, by HTTP and by C-STORE."""
    files = series_factory(2, 78, size=64)
    changed = pydicom.dcmread(files[0])
    changed.InstitutionName = "CHANGED"  # same UIDs, other bytes
    changed_bytes = io.BytesIO()
    changed.save_as(changed_bytes, write_like_original=True)
    for mode, expected in (("Never", ["Success", "AlreadyStored", "AlreadyStored"]),
                           ("IfChanged", ["Success", "AlreadyStored", "Success"]),
                           ("Always", ["Success", "Success", "Success"])):
        orthanc = orthanc_factory(extra_config={"OverwriteInstances": mode})
        bodies = [open(files[0], "rb").read()] * 2 + [changed_bytes.getvalue()]
        statuses = [orthanc.post("/instances", data=body).json()["Status"] for body in bodies]
        assert statuses == expected, mode
        orthanc.storescu(files[1:])
        orthanc.storescu(files[1:])  # a resend of the same bytes by C-STORE
        stats = wait_for(orthanc, lambda s: sum(
            s["transports"][t]["instances"][o] for t in ("rest", "dicom")
            for o in ("stored", "alreadyStored", "failed")) >= 5 and s["openRecords"]["count"] == 0)
        rest, dicom = stats["transports"]["rest"]["instances"], stats["transports"]["dicom"]["instances"]
        assert (rest["stored"], rest["alreadyStored"], rest["failed"]) == \
            (expected.count("Success"), expected.count("AlreadyStored"), 0), (mode, rest)
        assert (dicom["stored"], dicom["alreadyStored"], dicom["failed"]) == \
            ((2, 0, 0) if mode == "Always" else (1, 1, 0)), (mode, dicom)
        assert stats["orthancOptions"]["OverwriteInstances"] == mode
        orthanc.terminate()


def test_instance_deleted_while_its_series_arrives(orthanc_factory, series_factory):
    files = series_factory(40, 76, size=64)
    orthanc = orthanc_factory()
    deleted = []

    def delete_first():
        deadline = time.time() + 30
        while time.time() < deadline and not deleted:
            ids = orthanc.get("/instances").json()
            if ids:
                orthanc.delete("/instances/%s" % ids[0])
                deleted.append(ids[0])
            time.sleep(0.01)

    deleter = threading.Thread(target=delete_first)
    deleter.start()
    orthanc.storescu(files)
    deleter.join()
    assert deleted
    # Resent: the deleted instance is stored again, the 39 others are already there.
    orthanc.storescu(files)
    stats = wait_for(orthanc, lambda s: s["openRecords"]["count"] == 0)
    dicom = stats["transports"]["dicom"]["instances"]
    assert (dicom["stored"], dicom["alreadyStored"]) == (41, 39)
    assert len(orthanc.get("/instances").json()) == 40
    assert stats["errors"]["callbackExceptions"] == 0


def post_until_dead(orthanc, body, seconds=2.0):
    """POST /instances with `body`; whether Orthanc died of it (within `seconds` of the answer)."""
    try:
        orthanc.session.post(orthanc.url + "/instances", data=body, timeout=60)
    except requests.RequestException:
        pass  # a crash cuts the connection
    deadline = time.monotonic() + seconds
    while orthanc.is_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not orthanc.is_running()


def crash_is_orthancs_own(orthanc_factory, body, attempts=3):
    """Whether `body`, which killed an Orthanc with the plugin, also kills the same Orthanc without
    it: then the crash is Orthanc's own (docs/reliability.md#orthancs-own-crashes), not the plugin's.
    Up to `attempts` fresh plain Orthancs: a crash on a corrupt file may depend on the heap's layout."""
    for _ in range(attempts):
        plain = orthanc_factory(plugin_path=None)
        died = post_until_dead(plain, body)
        plain.terminate()  # waited for at teardown
        if died:
            return True
    return False


def flipped_bytes(data, seed, flips=20):
    rng = random.Random(seed)
    corrupt = bytearray(data)
    for _ in range(flips):
        corrupt[rng.randrange(len(corrupt))] = rng.randrange(256)
    return bytes(corrupt)


def transfer_syntax_length_ffff(data):
    """The meta header's TransferSyntaxUID (0002,0010) with a length of 0xFFFF: past the file's end."""
    at = data.index(b"\x02\x00\x10\x00UI")
    return data[:at + 6] + b"\xff\xff" + data[at + 8:]


SENDERS = 8  # Orthancs with the plugin at once, each sent its share of the files


def test_a_crash_on_a_corrupt_file_is_orthancs_own(orthanc_factory, series_factory):
    """Part 10 files with 20 random bytes changed (seed 66 of this file kills Orthanc 1.10.1 with or
    without any plugin), and a meta header whose transfer syntax runs past the file: when the
    Orthanc with the plugin dies, the same file is sent to the same Orthanc without it; the test
    fails only for a crash that happens with the plugin alone. Each file is watched for 2 s after
    its answer, on its Orthanc alone: the files are dealt to SENDERS Orthancs with the plugin, which
    receive their shares at once (one after the other, 41 files took 82 s of waiting)."""
    good = open(series_factory(1, 5, size=64)[0], "rb").read()
    bodies = [("TransferSyntaxUID length 0xFFFF", transfer_syntax_length_ffff(good))]
    bodies += [("20 bytes changed, seed %d" % seed, flipped_bytes(good, seed)) for seed in range(60, 100)]
    ours, orthancs, survivors = [], [], []

    def send(share):
        orthanc = orthanc_factory()
        for name, body in share:
            if post_until_dead(orthanc, body):
                (orthancs if crash_is_orthancs_own(orthanc_factory, body) else ours).append(name)
                orthanc = orthanc_factory()
        survivors.append(orthanc)

    Concurrently([lambda share=share: send(share) for share in split(bodies, SENDERS)]).run()
    print("\nOrthanc %s died on %d of %d files, without the plugin too: %s"
          % (survivors[0].version, len(orthancs), len(bodies), sorted(orthancs)))
    assert not ours, "Orthanc died with the plugin only, on: %s" % ours
    assert [orthanc.stats()["errors"]["callbackExceptions"] for orthanc in survivors] == [0] * SENDERS
