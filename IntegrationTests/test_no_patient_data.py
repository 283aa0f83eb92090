"""No patient data out of the plugin, and IngestPerf.HashPeers (issue 11).

A series with distinctive patient and study attributes is ingested over HTTP, C-STORE and STOW-RS;
then every /perf answer (every groupBy, every transport, every label filter, the reset, the
refusals) and Orthanc's log, at the default verbosity and at --verbose, are searched for those
values as raw bytes, case-insensitively, and in the forms a formatter could give them. With
HashPeers, the calling and called AETs and the client address must be gone from the same outputs,
replaced by hashes that stay the same across a restart.
"""
import copy
import json
import os
import re

import pydicom
import pytest
import requests
from pydicom.filebase import DicomBytesIO
from pynetdicom import AE
from pynetdicom.sop_class import CTImageStorage

from ingest_perf.clients import c_store
from ingest_perf.generate_series import write_series
from ingest_perf.hostile_senders import c_store_raw_aets
from ingest_perf.orthanc_process import ALL_ORTHANCS
from ingest_perf.stats_checks import wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS

DICOMWEB_PLUGIN = "/usr/share/orthanc/plugins/libOrthancDicomWeb.so"

PATIENT = {
    "patient": "QXDOEVAN^JOHNATHOR",
    "patient_id": "QXPID48213",
    "birth_date": "19370412",
    "accession_number": "QXACC90517",
    "institution": "QXINSTITUTE OF ZEBRAS",
    "study_description": "QXSTUDY OF LEAKS",
}



def patient_forms():
    """Every value, its components and the forms a formatter could print: DICOM's "FAMILY^GIVEN",
    "FAMILY, GIVEN", "GIVEN FAMILY", dates as 1937-04-12, 04/12/1937, 12/04/1937, 12.04.1937."""
    family, given = PATIENT["patient"].split("^")
    date = PATIENT["birth_date"]
    y, m, d = date[:4], date[4:6], date[6:]
    forms = {PATIENT["patient"], PATIENT["patient"] + "^^^", family, given, "%s %s" % (family, given),
             "%s, %s" % (family, given), "%s %s" % (given, family), date, "%s-%s-%s" % (y, m, d),
             "%s/%s/%s" % (m, d, y), "%s/%s/%s" % (d, m, y), "%s.%s.%s" % (d, m, y)}
    for key in ("patient_id", "accession_number", "institution", "study_description"):
        forms.add(PATIENT[key])
        forms.update(word for word in PATIENT[key].split() if word.startswith("QX"))
    return sorted(forms)


def leaks(haystack, needles):
    """The needles found in bytes `haystack`, case-insensitively."""
    lowered = haystack.lower()
    return [n for n in needles if n.lower().encode() in lowered]


def every_perf_answer(orthanc):
    """[(request, body bytes)]: every route, every transport, every groupBy, every label filter
    with every value the plugin lists, the refusals; POST /perf/reset last."""
    get = orthanc.get
    answers = []
    # The names from the plugin's own vocabulary (itself an answer searched like the others).
    vocabulary = get("/perf/vocabulary").json()
    transports = [transport["name"] for transport in vocabulary["transports"]] + ["all"]
    labels = [label["name"] for label in vocabulary["labels"]]
    routes = [(route["method"], route["path"].replace("{file}", "index.html")) for route in vocabulary["routes"]]
    paths = [path for method, path in routes if method == "GET"]
    paths += ["/perf/stats?transport=%s" % t for t in transports]
    paths += ["/perf/stats?groupBy=%s" % label for label in labels]
    paths += ["/perf/stats?groupBy=%s&transport=%s" % (label, t) for label in labels for t in ("dicom", "rest")]
    default = get("/perf/stats").json()
    for label, entry in default["labels"].items():
        for value in entry.get("values", []) + ["(none)", "(other)"]:
            paths.append("/perf/stats?%s=%s&groupBy=transport" % (label, requests.utils.quote(value, safe="")))
    paths += ["/perf/stats?transport=smtp", "/perf/stats?remoteAet=" + "Q" * 70, "/perf/stats?nope=1"]
    paths += ["/perf/metrics", "/perf/metrics?nope=1"]
    # The recent instances: every instance with its whole timeline, labels and Orthanc ID.
    paths += ["/perf/slowest", "/perf/slowest?n=1000&window=1h", "/perf/slowest?transport=dicom&phase=associationGap",
              "/perf/slowest?transport=rest&phase=receive", "/perf/trace", "/perf/trace?seconds=3600",
              "/perf/slowest?n=0", "/perf/slowest?remoteAet=" + "Q" * 70, "/perf/trace?seconds=0"]
    # The diagnosis: verdicts and evidence, over every window and since the reset.
    paths += ["/perf/diagnosis", "/perf/diagnosis?window=1h", "/perf/diagnosis?transport=dicom",
              "/perf/diagnosis?remoteAet=STORESCU", "/perf/diagnosis?groupBy=remoteAet"]
    # The windows slot by slot.
    paths += ["/perf/slots", "/perf/slots?window=1m", "/perf/slots?transport=dicom",
              "/perf/slots?remoteAet=STORESCU"]
    for path in paths:
        answer = get(path)
        assert answer.status_code in (200, 400), (path, answer.status_code)
        answers.append(("GET " + path, answer.content))
    for method, path in routes:  # every route with the method it refuses
        method = "GET" if method == "POST" else "POST"
        answer = orthanc.session.request(method, orthanc.url + path)
        answers.append(("%s %s" % (method, path), answer.content))
    answers.append(("GET /plugins/ingest-perf", get("/plugins/ingest-perf").content))
    answer = orthanc.post("/perf/reset")
    answers.append(("POST /perf/reset", answer.content))
    return answers


def plugin_log_lines(log):
    """The lines the plugin logged (every one of its messages starts with IngestPerf)."""
    return [line for line in log.splitlines() if "IngestPerf" in line or "ingest-perf" in line]


def ingest_three_ways(orthanc, files, calling_aet="STORESCU"):
    """HTTP, storescu and STOW-RS, a third of `files` each; returns how many each stored."""
    third = len(files) // 3
    orthanc.http_upload(files[:third])
    orthanc.storescu(files[third:2 * third], calling_aet=calling_aet)
    answer = orthanc.stow_rs(files[2 * third:])
    assert answer.status_code == 200, answer.text[:500]
    return third


@pytest.mark.parametrize("verbosity", ["default", "--verbose"])
def test_no_patient_data_in_any_answer_or_log(orthanc_factory, plugin_path, tmp_path, verbosity):
    orthanc = orthanc_factory(
        extra_config={"Plugins": [plugin_path, DICOMWEB_PLUGIN], "DicomWeb": {"Enable": True, "Root": "/dicom-web/"}},
        arguments=[] if verbosity == "default" else [verbosity])
    files = write_series(str(tmp_path / "patient"), 6, seed=41, rows=32, columns=32, **PATIENT)
    each = ingest_three_ways(orthanc, files)
    stats = wait_for(orthanc, lambda s: s["transports"]["all"]["instances"]["stored"] == 3 * each)
    for transport in ("rest", "dicom", "plugin"):
        assert stats["transports"][transport]["instances"]["stored"] == each, transport

    # The control: Orthanc holds the values, so a search that finds none of them means something.
    patients = orthanc.get("/patients?expand").json()
    assert [p["MainDicomTags"]["PatientName"] for p in patients] == [PATIENT["patient"]]
    assert leaks(orthanc.get("/studies?expand").content, patient_forms())

    forms = patient_forms()
    found = {request: leaks(body, forms) for request, body in every_perf_answer(orthanc)}
    assert not {request: f for request, f in found.items() if f}
    log = orthanc.log_text()
    if verbosity == "--verbose":
        assert re.search(r"(?m)^I\d{4} ", log), "no verbose line in the log: was --verbose passed?"
    assert not leaks("\n".join(plugin_log_lines(log)).encode(), forms)
    # Orthanc's own lines are Orthanc's business, but at these verbosities they hold none either:
    # a plugin that logged through Orthanc without "IngestPerf" in the line would show here.
    assert not leaks(log.encode(), forms), [line for line in log.splitlines() if leaks(line.encode(), forms)][:5]


# What a hostile or broken sender puts in the fields the plugin reads labels from (issue 21): a
# patient ID as the SOP class, a birth date and a name as the meta header's transfer syntax, a name
# as the SOP class of a C-STORE (Orthanc's UnknownSopClassAccepted), patient data as study and
# series UIDs and in private tags, Latin-1 AE titles.
HOSTILE_SOP_CLASS, HOSTILE_SYNTAX, HOSTILE_CSTORE_SOP_CLASS = "PIDXQLEAK7", "19450508.LEAKY", "LEAKY.LUCILLE"
HOSTILE_STUDY_UID, HOSTILE_SERIES_UID = "QXPID48213.19370412", "QXDOEVAN.QXACC90517"
LATIN1_CALLING, LATIN1_CALLED = b"CT_SALLE_\xc9", b"PACS_H\xd4PITAL"
HOSTILE_FORMS = ["PIDXQLEAK7", "19450508", "LEAKY", "LUCILLE", "QXPID48213", "QXDOEVAN", "QXACC90517"]


def hostile_instances(folder):
    """[(name, pydicom dataset)]: each a new instance of the patient, with one hostile field more."""
    base = write_series(os.path.join(folder, "base"), 4, seed=47, rows=16, columns=16, **PATIENT)
    made = []
    for index, name in enumerate(("sop class", "transfer syntax", "malformed UIDs", "C-STORE sop class")):
        ds = pydicom.dcmread(base[index])
        ds.add_new(0x00090010, "LO", PATIENT["institution"])  # a private creator, and its element
        ds.add_new(0x00091001, "LO", "%s %s" % (PATIENT["patient_id"], PATIENT["patient"]))
        if name == "sop class":
            ds.SOPClassUID = ds.file_meta.MediaStorageSOPClassUID = HOSTILE_SOP_CLASS
        elif name == "transfer syntax":
            ds.file_meta.TransferSyntaxUID = HOSTILE_SYNTAX
        elif name == "malformed UIDs":
            ds.StudyInstanceUID, ds.SeriesInstanceUID = HOSTILE_STUDY_UID, HOSTILE_SERIES_UID
        else:
            ds.SOPClassUID = ds.file_meta.MediaStorageSOPClassUID = HOSTILE_CSTORE_SOP_CLASS
        made.append((name, ds))
    return made


def part10_bytes(ds, sop_instance_uid):
    """The dataset as a Part 10 file, explicit little endian whatever its meta header says."""
    ds = copy.deepcopy(ds)
    ds.SOPInstanceUID = ds.file_meta.MediaStorageSOPInstanceUID = sop_instance_uid
    ds.is_little_endian, ds.is_implicit_VR = True, False
    buffer = DicomBytesIO()
    pydicom.dcmwrite(buffer, ds, write_like_original=False)
    return buffer.getvalue()


def test_patient_data_in_every_field_the_plugin_reads_reaches_no_answer(orthanc_factory, plugin_path, tmp_path):
    orthanc = orthanc_factory(extra_config={"Plugins": [plugin_path, DICOMWEB_PLUGIN], "UnknownSopClassAccepted": True,
                                            "DicomWeb": {"Enable": True, "Root": "/dicom-web/"}})
    instances = dict(hostile_instances(str(tmp_path)))
    http = [part10_bytes(instances[name], "1.2.826.0.1.3680043.10.1429.47.1.%d" % k)
            for k, name in enumerate(("sop class", "transfer syntax", "malformed UIDs"))]
    for body in http:
        answer = orthanc.session.post(orthanc.url + "/instances", data=body, timeout=60)
        assert answer.status_code == 200, answer.text
    stow = tmp_path / "stow"
    stow.mkdir()
    for k, name in enumerate(("sop class", "malformed UIDs")):
        (stow / ("%d.dcm" % k)).write_bytes(part10_bytes(instances[name], "1.2.826.0.1.3680043.10.1429.47.2.%d" % k))
    answer = orthanc.stow_rs(sorted(str(p) for p in stow.iterdir()))
    assert answer.status_code == 200, answer.text[:500]
    cstore = instances["C-STORE sop class"]
    cstore.SOPInstanceUID = "1.2.826.0.1.3680043.10.1429.47.3.1"
    assert c_store_raw_aets(orthanc.dicom_port, [cstore], LATIN1_CALLING, LATIN1_CALLED) == [0]
    stats = wait_for(orthanc, lambda s: s["transports"]["all"]["instances"]["stored"] == 6)
    assert [stats["transports"][t]["instances"]["stored"] for t in ("rest", "plugin", "dicom")] == [3, 2, 1]

    # The control: Orthanc holds every hostile value, so a search that finds none means something.
    stored_files = b"".join(orthanc.get("/instances/%s/file" % i).content for i in orthanc.get("/instances").json())
    for value in (HOSTILE_SOP_CLASS, HOSTILE_CSTORE_SOP_CLASS, HOSTILE_SYNTAX, HOSTILE_STUDY_UID, HOSTILE_SERIES_UID):
        assert value.encode() in stored_files, value

    # The plugin counted them under stand-ins, and shows the AETs escaped.
    labels = stats["labels"]
    assert set(labels["sopClass"]["values"]) == {"1.2.840.10008.5.1.4.1.1.2", "(not a UID)"}
    assert set(labels["receivedSyntax"]["values"]) == {"1.2.840.10008.1.2.1", "(not a UID)"}
    assert labels["sopClass"]["withheld"] >= 3 and labels["receivedSyntax"]["withheld"] >= 1
    assert labels["remoteAet"]["values"] == ["CT_SALLE_\\xC9"]
    assert labels["calledAet"]["values"] == ["PACS_H\\xD4PITAL"]

    forms = patient_forms() + HOSTILE_FORMS
    answers = every_perf_answer(orthanc)
    found = {request: leaks(body, forms) for request, body in answers}
    assert not {request: f for request, f in found.items() if f}
    for request, body in answers:
        assert all(byte < 0x80 for byte in body), request  # the AETs' Latin-1 bytes included
        # every JSON answer parses (not the text of /perf/metrics, nor the page; 405s have no body)
        if request.startswith("GET /perf/") and not request.startswith(("GET /perf/metrics", "GET /perf/ui")) and body:
            json.loads(body)
    assert not leaks("\n".join(plugin_log_lines(orthanc.log_text())).encode(), forms)


def fnv1a_64(text):
    value = 1469598103934665603
    for byte in text.encode():
        value = ((value ^ byte) * 1099511628211) % (1 << 64)
    return value


def pseudonym(prefix, text):
    """What the plugin shows for a peer with HashPeers: docs/configuration.md, Hashed peers."""
    return "%s-%08x" % (prefix, fnv1a_64(text) >> 32)


CALLING, CALLED, CLIENT = "QXMODALITY7", "QXCALLED9", "127.0.0.1"


def test_hash_peers_replaces_aets_and_addresses_in_every_output(orthanc_factory, plugin_path, tmp_path):
    orthanc = orthanc_factory(aet=CALLED, ingest_perf={"HashPeers": True},
                              extra_config={"Plugins": [plugin_path, DICOMWEB_PLUGIN],
                                            "DicomWeb": {"Enable": True, "Root": "/dicom-web/"}})
    files = write_series(str(tmp_path / "first"), 6, seed=42, rows=32, columns=32)
    ingest_three_ways(orthanc, files, calling_aet=CALLING)
    stats = wait_for(orthanc, lambda s: s["transports"]["all"]["instances"]["stored"] == 6)
    assert stats["configuration"]["HashPeers"] is True

    hashes = {"remoteAet": pseudonym("aet", CALLING), "calledAet": pseudonym("aet", CALLED),
              "remoteIp": pseudonym("ip", CLIENT)}
    for label, expected in hashes.items():
        assert expected in stats["labels"][label]["values"], (label, stats["labels"][label])
    assert [peer["remoteAet"] for peer in stats["associations"]["byRemoteAet"]] == [hashes["remoteAet"]]
    groups = orthanc.stats(groupBy="remoteAet")["groups"]
    assert {g["labels"]["remoteAet"] for g in groups} == {hashes["remoteAet"], "(none)"}
    # A filter takes the hash a reader sees.
    by_hash = orthanc.stats(remoteAet=hashes["remoteAet"], transport="dicom")
    assert by_hash["transports"]["dicom"]["instances"]["stored"] == 2
    assert by_hash["query"]["filters"]["remoteAet"] == hashes["remoteAet"]

    # The raw values appear in no answer, and not in the plugin's log lines; an association held
    # open meanwhile puts the client's address in associations.openConnections.byRemoteIp.
    raw = [CALLING, CALLED, CLIENT]
    ae = AE(ae_title=CALLING)
    ae.add_requested_context(CTImageStorage, "1.2.840.10008.1.2.1")
    association = ae.associate("127.0.0.1", orthanc.dicom_port, ae_title=CALLED)
    assert association.is_established
    try:
        extra = write_series(str(tmp_path / "held"), 1, seed=44, rows=32, columns=32)
        assert c_store(association, pydicom.dcmread(extra[0])).Status == 0
        held = orthanc.stats()["associations"]
        assert held["openConnections"]["byRemoteIp"] == {hashes["remoteIp"]: 1}
        assert [(p["remoteAet"], p["inProgress"]) for p in held["byRemoteAet"]] == [(hashes["remoteAet"], 1)]
        answers = every_perf_answer(orthanc)
    finally:
        association.release()
    for request, body in answers:
        assert not leaks(body, raw), (request, leaks(body, raw))
    everything = b"\n".join(body for _, body in answers)
    for expected in hashes.values():
        assert expected.encode() in everything
    assert not leaks("\n".join(plugin_log_lines(orthanc.log_text())).encode(), raw)

    # Stable across a restart: the same AET, the same name.
    orthanc.stop()
    orthanc.start()
    orthanc.storescu(write_series(str(tmp_path / "second"), 2, seed=43, rows=32, columns=32), calling_aet=CALLING)
    stats = wait_for(orthanc, lambda s: s["transports"]["dicom"]["instances"]["stored"] == 2, groupBy="remoteAet",
                     transport="dicom")
    assert [g["labels"]["remoteAet"] for g in stats["groups"]] == [hashes["remoteAet"]]
    assert stats["labels"]["calledAet"]["values"] == [hashes["calledAet"]]
    assert not leaks(orthanc.get("/perf/stats").content, raw)


def test_without_hash_peers_the_aets_are_shown(orthanc, series):
    """The default: AETs and addresses by design (docs/rest-api.md, Who may read /perf)."""
    orthanc.storescu(series[:2], calling_aet=CALLING)
    stats = orthanc.stats()
    assert stats["configuration"]["HashPeers"] is False
    assert stats["labels"]["remoteAet"]["values"] == [CALLING]
