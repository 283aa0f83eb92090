"""Ingest transcoding, timed: Orthanc's built-in DCMTK transcoder and Debian's orthanc-gdcm plugin.

GDCM is exercised over C-STORE only: Debian's orthanc-gdcm 1.5 can overflow the 100 KiB stack of
Orthanc 1.10.1's HTTP worker threads when it writes JPEG lossless (a crash seen without this plugin
too; see docs/measurements/transcoding.md)."""
import pytest

from ingest_perf.stats_checks import check_phase_invariants
from ingest_perf.orthanc_process import ALL_ORTHANCS

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

GDCM_PLUGIN = "/usr/share/orthanc/plugins/libOrthancGdcm.so"
SOURCE = "1.2.840.10008.1.2.1"
JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"


def transcoding_orthanc(orthanc_factory, plugin_path, gdcm=False, gdcm_first=False, timing=None):
    plugins = [plugin_path]
    if gdcm:
        plugins = [GDCM_PLUGIN, plugin_path] if gdcm_first else [plugin_path, GDCM_PLUGIN]
    return orthanc_factory(extra_config={"IngestTranscoding": JPEG_LOSSLESS, "Plugins": plugins},
                           ingest_perf={"TranscodeTiming": timing} if timing else None)


def stored_syntaxes(orthanc):
    return {orthanc.get("/instances/%s/metadata/TransferSyntax" % i).text for i in orthanc.get("/instances").json()}


def check_transcoded(orthanc, transport, count):
    answer = orthanc.stats(transport=transport, groupBy="storedSyntax")
    stats = answer["transports"][transport]
    assert stats["instances"]["stored"] == count
    assert stats["instances"]["transcodeAttempts"] == count
    transcode = stats["phases"]["transcode"]
    assert transcode["count"] == count
    assert transcode["min"] > 0
    check_phase_invariants(stats, transport)
    # labelled with both syntaxes
    (group,) = answer["groups"]
    assert group["labels"]["storedSyntax"] == JPEG_LOSSLESS
    by_received = orthanc.stats(transport=transport, groupBy="receivedSyntax")["groups"]
    assert [g["labels"]["receivedSyntax"] for g in by_received] == [SOURCE]
    assert stored_syntaxes(orthanc) == {JPEG_LOSSLESS}
    return transcode


@pytest.mark.parametrize("timing", ["FallThrough", "Delegate"])
def test_dcmtk_transcoding_over_http_and_cstore(orthanc_factory, plugin_path, series_factory, timing):
    orthanc = transcoding_orthanc(orthanc_factory, plugin_path, timing=timing)
    files = series_factory(6, 21, size=128)
    orthanc.http_upload(files[:3])
    orthanc.storescu(files[3:])
    rest = check_transcoded(orthanc, "rest", 3)
    check_transcoded(orthanc, "dicom", 3)
    assert orthanc.stats()["configuration"]["TranscodeTiming"] == timing
    # The transcode lies inside preStore in both modes.
    pre_store = orthanc.stats(transport="rest")["transports"]["rest"]["phases"]["preStore"]
    assert rest["sum"] <= pre_store["sum"] + 0.001


def test_delegated_transcode_is_not_counted_as_the_plugin_s_own_cost(orthanc_factory, plugin_path, series_factory):
    """In Delegate mode the transcoder callback runs Orthanc's transcode: its time is the transcode
    phase, not the plugin's cost, which stays at microseconds."""
    orthanc = transcoding_orthanc(orthanc_factory, plugin_path, timing="Delegate")
    files = series_factory(64, 24, size=64)
    orthanc.http_upload(files)
    stats = orthanc.stats(transport="rest")
    transcode = stats["transports"]["rest"]["phases"]["transcode"]
    assert transcode["count"] == len(files)
    callback = stats["pluginCost"]["callbacks"]["transcoder"]
    assert callback["count"] >= 1  # about one instance in 17 is timed in this callback
    assert callback["max"] < transcode["min"], (callback, transcode)


@pytest.mark.parametrize("timing", ["FallThrough", "Delegate"])
def test_gdcm_transcoding_over_cstore(orthanc_factory, plugin_path, series_factory, timing):
    orthanc = transcoding_orthanc(orthanc_factory, plugin_path, gdcm=True, timing=timing)
    plugins = orthanc.get("/plugins").json()
    assert "gdcm" in plugins
    orthanc.storescu(series_factory(4, 22, size=128))
    check_transcoded(orthanc, "dicom", 4)


def test_gdcm_loaded_first_transcodes_unseen(orthanc_factory, plugin_path, series_factory):
    """GDCM registered before this plugin answers every transcode itself: the plugin's callback is
    never called, so the phase is not timed, but the instances are counted as transcoded unseen."""
    orthanc = transcoding_orthanc(orthanc_factory, plugin_path, gdcm=True, gdcm_first=True, timing="FallThrough")
    orthanc.storescu(series_factory(3, 23, size=128))
    dicom = orthanc.stats(transport="dicom")["transports"]["dicom"]
    assert dicom["instances"]["stored"] == 3
    assert dicom["instances"]["transcodeAttempts"] == 0
    assert dicom["instances"]["transcodedWithoutHook"] == 3
    assert dicom["phases"]["transcode"]["count"] == 0
    assert stored_syntaxes(orthanc) == {JPEG_LOSSLESS}


def test_no_transcoding_configured_makes_the_phase_unobservable(orthanc, series):
    orthanc.http_upload(series[:1])
    rest = orthanc.stats(transport="rest")["transports"]["rest"]
    assert rest["phases"]["transcode"]["observable"] is False
    assert "IngestTranscoding" in rest["phases"]["transcode"]["reason"]


def test_transcode_timing_off_by_default_registers_no_transcoder(orthanc_factory, plugin_path, series_factory):
    """A registered transcoder changes how Orthanc decodes frames its built-in decoder cannot read
    (it then also tries transcoding them): by default the plugin registers none, says why, and
    still counts the instances Orthanc transcoded."""
    orthanc = transcoding_orthanc(orthanc_factory, plugin_path)
    orthanc.http_upload(series_factory(3, 25, size=64))
    stats = orthanc.stats(transport="rest")
    assert stats["configuration"]["TranscodeTiming"] == "Off"
    assert stats["hooks"]["transcoder"]["registered"] is False
    assert "TranscodeTiming is Off" in stats["hooks"]["transcoder"]["reason"]
    assert stats["notInEffect"] == []
    rest = stats["transports"]["rest"]
    assert rest["instances"]["stored"] == 3
    assert rest["instances"]["transcodeAttempts"] == 0
    assert rest["instances"]["transcodedWithoutHook"] == 3
    assert rest["phases"]["transcode"]["observable"] is False
    assert "TranscodeTiming" in rest["phases"]["transcode"]["reason"]
    assert stored_syntaxes(orthanc) == {JPEG_LOSSLESS}
