"""What the plugin does is said first (issue 20, items 1, 7 and 9).

- The plugin never stops Orthanc. Started as Debian's service starts it (`Orthanc /etc/orthanc/`, a
  folder of configuration files, with Debian's own plugins), on Orthanc 1.10.1 and 1.12.7: a misspelt
  key is a warning naming the closest known key, and the plugin runs; a wrong type or an out-of-range
  value leaves Orthanc running and the plugin loaded but inert, saying why in Orthanc's log,
  /perf/stats, /perf/diagnosis and the report.
- A disabled plugin says it is disabled, not that nothing was stored; an idle window says how many
  instances were stored before it, and when the last.
- One row per distinct thing: calling AETs beyond MaxLabelValues are one "(other)" row, with the
  number of AETs it holds, in associations.byRemoteAet, groupBy and /perf/metrics, and the counts
  add up.
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from ingest_perf.debian_configuration import copy_debian_configuration
from ingest_perf.orthanc_process import (ALL_ORTHANCS, HOST_ORTHANC, OrthancFactory, orthanc_available,
                                         unavailable_reason)
from ingest_perf.stats_checks import stored, wait_for

ORTHANC_VERSIONS = ALL_ORTHANCS  # conftest.py runs every test against Orthanc 1.10.1, 1.12.7 and 1.13.0

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT = os.path.join(REPO_ROOT, "Resources", "perf_report.py")


@pytest.fixture(autouse=True)
def available(orthanc_version):
    if not orthanc_available(orthanc_version):
        pytest.skip(unavailable_reason(orthanc_version))


def report(orthanc, *args):
    """Resources/perf_report.py against that Orthanc: its whole output."""
    result = subprocess.run([sys.executable, REPORT, "--url", orthanc.url, "--width", "200"] + list(args),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def debian_service(orthanc_factory, tmp_path, orthanc_version, plugin_path, section):
    """An Orthanc started as Debian's service starts it, from a copy of /etc/orthanc with the plugin in
    Debian's plugin folder and its section in a file of its own (/etc/orthanc/ingest-perf.json)."""
    plugins = str(tmp_path / "usr-share-orthanc-plugins")
    configure = copy_debian_configuration(orthanc_version, str(tmp_path / "etc-orthanc"), plugins,
                                          str(tmp_path / "var"), extra_files={"ingest-perf.json": {"IngestPerf": section}})
    # A copy, not a link: Orthanc 1.12.7 runs in its root, where only a few of the host's folders are
    # visible (OrthancProcess._HOST_FOLDERS), and the checkout may be anywhere else.
    shutil.copy(plugin_path, os.path.join(plugins, os.path.basename(plugin_path)))
    return orthanc_factory(work_dir=str(tmp_path / "var"), plugin_path=None, configuration_writer=configure)


# --- 1. the plugin never stops Orthanc ----------------------------------------------------------------

CONFIGURATIONS = {
    "misspelt": ({"Timedstorage": True}, "running",
                 "IngestPerf: unknown option Timedstorage; did you mean TimedStorage?"),
    "wrong-type": ({"MaxThreads": "many"}, "inert",
                   'IngestPerf.MaxThreads: expected an integer from 1 to 65536, got "many"'),
    "out-of-range": ({"RecentInstances": 15}, "inert",
                     "IngestPerf.RecentInstances: expected an integer from 16 to 262144, got 15"),
}


@pytest.mark.parametrize("case", sorted(CONFIGURATIONS))
def test_the_plugin_never_stops_orthanc_started_as_debians_service(orthanc_factory, tmp_path, orthanc_version,
                                                                   plugin_path, series, case):
    section, state, message = CONFIGURATIONS[case]
    orthanc = debian_service(orthanc_factory, tmp_path, orthanc_version, plugin_path, section)
    assert orthanc.get("/system").json()["Version"] == orthanc_version
    assert "ingest-perf" in orthanc.get("/plugins").json()
    stats = orthanc.stats()
    assert stats["state"] == state
    assert message in orthanc.log_text()
    orthanc.storescu(series[:2])
    assert orthanc.get("/statistics").json()["CountInstances"] == 2  # Orthanc stores, whatever the plugin
    if state == "running":
        assert stats["reason"] == "" and stats["enabled"] is True
        unknown = [item for item in stats["notInEffect"] if item["option"] == "IngestPerf.Timedstorage"]
        assert unknown and "did you mean TimedStorage?" in unknown[0]["reason"]
        assert stats["configuration"]["TimedStorage"] is False  # never guessed
        assert stored(wait_for(orthanc, lambda s: stored(s, "dicom") == 2), "dicom") == 2
        return
    # Inert: loaded, no hook registered, every route answers and says why first.
    assert message in stats["reason"] and stats["reason"].startswith("invalid configuration: ")
    assert stats["enabled"] is False
    assert all(hook["registered"] is False for hook in stats["hooks"].values())
    assert "the plugin stays loaded but inert" in orthanc.log_text()
    assert stored(orthanc.stats(), "all") == 0
    diagnosis = orthanc.get("/perf/diagnosis").json()
    assert diagnosis["state"] == "inert" and message in diagnosis["reason"]
    assert diagnosis["verdict"].startswith("The plugin is inert: invalid configuration: ")
    assert message in diagnosis["verdict"]
    for route in ("/perf/metrics", "/perf/slowest", "/perf/trace", "/perf/slots", "/perf/ui/"):
        assert orthanc.get(route).status_code == 200, route
    text = report(orthanc)
    assert "The plugin is inert: invalid configuration" in text.splitlines()[1]
    assert "THE PLUGIN IS INERT, nothing is measured and Orthanc runs without it: invalid configuration: " in text


# --- 7. disabled and idle are said as such ------------------------------------------------------------

def test_a_disabled_plugin_says_it_is_disabled_not_that_nothing_was_stored(orthanc_factory, series_factory):
    orthanc = orthanc_factory(ingest_perf={"Enable": False})
    files = series_factory(60, 7, size=64)
    orthanc.http_upload(files)
    assert orthanc.get("/statistics").json()["CountInstances"] == 60
    stats = orthanc.stats()
    assert (stats["state"], stats["reason"], stats["enabled"]) == ("disabled", "IngestPerf.Enable is false", False)
    for window in ("1m", "5m"):
        diagnosis = orthanc.get("/perf/diagnosis", params={"window": window}).json()
        assert diagnosis["state"] == "disabled"
        assert diagnosis["verdict"].startswith("The plugin is disabled (IngestPerf.Enable is false)")
        assert "no instance" not in diagnosis["verdict"].lower()
    text = report(orthanc, "--window", "5m")
    lines = text.splitlines()
    assert lines[1].startswith("  The plugin is disabled (IngestPerf.Enable is false)")
    assert "THE PLUGIN IS DISABLED (IngestPerf.Enable is false): nothing is measured" in text
    assert "No instance" not in text and "no instance" not in text


# --- 9. one row per distinct thing --------------------------------------------------------------------

def prometheus_samples(text):
    """[(name, labels text)] of every sample of a Prometheus text exposition."""
    samples = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
            assert match, line
            samples.append((match.group(1), match.group(2) or ""))
    return samples


def check_one_row_per_thing(orthanc, aets, instances_each):
    stats = orthanc.stats()
    capacity = stats["labels"]["remoteAet"]["capacity"]
    rows = stats["associations"]["byRemoteAet"]
    names = [row["remoteAet"] for row in rows]
    assert len(names) == len(set(names)), names
    named = [row for row in rows if row["remoteAet"] != "(other)"]
    (other,) = [row for row in rows if row["remoteAet"] == "(other)"]
    assert len(named) <= capacity and all(row["distinctAets"] == 1 for row in named)
    assert other["distinctAets"] == len(aets) - len(named)
    assert set(row["remoteAet"] for row in named) <= set(aets)
    # Each storescu run is one association of `instances_each` instances: every one is counted once.
    assert sum(row["distinctAets"] for row in rows) == len(aets)
    assert sum(row["finished"] + row["inProgress"] for row in rows) == len(aets)
    assert sum(row["instancesPerAssociation"]["sum"] for row in rows if row["finished"]) == \
        instances_each * sum(row["finished"] for row in rows)
    # groupBy: one group per value, adding up to the transport.
    grouped = orthanc.stats(transport="dicom", groupBy="remoteAet")
    groups = [group["labels"]["remoteAet"] for group in grouped["groups"]]
    assert len(groups) == len(set(groups)) and "(other)" in groups
    assert sum(group["instances"]["stored"] for group in grouped["groups"]) == len(aets) * instances_each
    # Prometheus: no two samples with one name and the same labels.
    samples = prometheus_samples(orthanc.get("/perf/metrics").text)
    assert len(samples) == len(set(samples)), [s for s in samples if samples.count(s) > 1][:5]
    assert any('remote_aet="(other)"' in labels for _, labels in samples)
    # The report: one table row per row, the "(other)" one with its number of AETs.
    lines = report(orthanc, "--no-diagnosis").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("C-STORE associations by calling AET"))
    header = next(i for i in range(start, len(lines)) if lines[i].split()[:2] == ["calling", "AET"])
    table = lines[header + 1:lines.index("", header)]
    assert len(table) == len(rows) == len(set(table))
    assert any(line.startswith("  (other) (%d AETs) " % other["distinctAets"]) for line in table)
    return stats


@pytest.mark.parametrize("orthanc_version", [HOST_ORTHANC])
@pytest.mark.parametrize("count, max_label_values", [(40, None), (80, 4)], ids=["40-aets", "flood"])
def test_calling_aets_beyond_the_label_values_are_one_other_row(orthanc_factory, series_factory, count,
                                                                max_label_values):
    orthanc = orthanc_factory(ingest_perf={"MaxLabelValues": max_label_values} if max_label_values else None)
    aets = ["MODALITY_%02d" % i for i in range(count)]
    files = series_factory(2 * count, 91, size=64)  # each AET its own instances: all stored
    for i, aet in enumerate(aets):
        orthanc.storescu(files[2 * i:2 * i + 2], calling_aet=aet)
    assert stored(wait_for(orthanc, lambda s: stored(s, "dicom") == 2 * count), "dicom") == 2 * count
    stats = check_one_row_per_thing(orthanc, aets, 2)
    assert stats["labels"]["remoteAet"]["capacity"] == (max_label_values or 32)


# --- 7. idle, last: its minute passes while the tests above run ------------------------------------

@pytest.fixture(scope="module", autouse=True)
def stored_when_the_module_started(tmp_path_factory, plugin_path, series):
    """An Orthanc with the plugin that stored 6 instances when this module started, for
    test_an_idle_window_says_how_many_were_stored_before_it (last in the module): the minute it must
    then stay idle passes while the other tests run. Nothing else sends to it. (Orthanc, when it stored.)"""
    with OrthancFactory(tmp_path_factory.mktemp("idle"), plugin_path, HOST_ORTHANC) as factory:
        orthanc = factory()
        orthanc.storescu(series[:6])
        yield orthanc, time.time()


@pytest.mark.parametrize("orthanc_version", [HOST_ORTHANC])
def test_an_idle_window_says_how_many_were_stored_before_it(stored_when_the_module_started):
    orthanc, stored_at = stored_when_the_module_started
    stats = wait_for(orthanc, lambda s: s["sinceReset"]["stored"] == 6)
    history = stats["sinceReset"]
    assert history["stored"] == 6 and history["since"] == stats["since"]
    assert history["since"] <= history["firstStored"] <= history["lastStored"]
    # A minute later (the 1-minute window holds 6 slots of 10 s and the current one): idle.
    deadline = stored_at + 100
    while stored(orthanc.stats(window="1m"), "all") != 0:
        assert time.time() < deadline, "the 1-minute window still holds the instances"
        time.sleep(0.5)
    diagnosis = orthanc.get("/perf/diagnosis", params={"window": "1m"}).json()
    expected = "No instance stored in the last minute; 6 stored since %s, the last at %s" % (
        history["since"], history["lastStored"])
    assert diagnosis["verdict"] == expected
    assert diagnosis["sinceReset"]["stored"] == 6 and diagnosis["sinceReset"]["lastStoredSecondsAgo"] >= 60
    text = report(orthanc, "--window", "1m")
    assert expected in text
    assert "No instance in the last 1m; 6 stored since %s, the last at %s." % (history["since"], history["lastStored"]) \
        in text
    # After a reset, nothing stored since: said as such.
    orthanc.reset_stats()
    stats = orthanc.stats()
    assert stats["sinceReset"]["stored"] == 0 and stats["sinceReset"]["lastStored"] is None
    verdict = orthanc.get("/perf/diagnosis").json()["verdict"]
    assert verdict == "Nothing to diagnose: no instance stored since %s" % stats["sinceReset"]["since"]
