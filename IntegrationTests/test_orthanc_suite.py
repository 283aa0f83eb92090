"""How Orthanc's own suite is judged (ingest_perf/orthanc_suite.py, used by ingest_perf/compare_orthanc_suite.py),
on sample data: a test failing on both sides with another error line is a difference, what changes from run to
run is not; every run's result is kept per Orthanc version, and the summary shows the latest of each mode; the
modes are described once, the same in --help, docs/reliability.md and the index of the docs."""
import json
import os
import re
import subprocess
import sys
import time

from ingest_perf import orthanc_suite

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMAND = [sys.executable, "-m", "ingest_perf.compare_orthanc_suite"]

# As Python 2.7's unittest formats them (the suite runs under Python 2.7).
TRACE_HTTP_500 = """Traceback (most recent call last):
  File "/suite/Tests/Tests.py", line 4096, in test_lua_deadlock
    a = UploadInstance(_REMOTE, 'DummyCT.dcm')['ID']
  File "/suite/Tests/Toolbox.py", line 131, in DoPost
    raise Exception(resp.status)
Exception: 500
"""
TRACE_HTTP_404 = TRACE_HTTP_500.replace("Exception: 500", "Exception: 404")
TRACE_ASSERT = """Traceback (most recent call last):
  File "/suite/Tests/Tests.py", line 812, in test_modify_instance
    self.assertEqual(j, k)
AssertionError: u'66a662ce-7430e543-bad44d47-0dc5a943-ec7a538d' != u'{id}'
- 66a662ce
+ {id}
"""
TRACE_MISSING_FILE = """Traceback (most recent call last):
  File "/suite/Tests/Tests.py", line 2011, in test_issue_22
    UploadInstance(_REMOTE, 'Issue22.dcm')
  File "/suite/Tests/Toolbox.py", line 187, in UploadInstance
    with open(GetDatabasePath(path), 'rb') as f:
IOError: [Errno 2] No such file or directory: '/suite/Database/Issue22.dcm'
"""


def side(outcomes):
    """A side as the tool parses it: {name: (outcome, traceback)}."""
    return {"selected": list(outcomes),
            "outcomes": {name: orthanc_suite.outcome({"outcome": o, "message": ""}, trace)
                         for name, (o, trace) in outcomes.items()}}


def test_error_line_is_the_exception_line_with_what_changes_masked():
    assert orthanc_suite.error_line(TRACE_HTTP_500) == "Exception: 500"
    assert orthanc_suite.error_line(TRACE_MISSING_FILE) == \
        "IOError: [Errno 2] No such file or directory: '/suite/Database/Issue22.dcm'"
    # The first line of the exception, the Orthanc ID masked (a modified instance gets a new one each run).
    assert orthanc_suite.error_line(TRACE_ASSERT) == "AssertionError: u'<orthanc-id>' != u'{id}'"
    other_id = TRACE_ASSERT.replace("66a662ce-7430e543-bad44d47-0dc5a943-ec7a538d",
                                    "0a1b2c3d-4e5f6a7b-8c9d0e1f-2a3b4c5d-6e7f8a9b")
    assert orthanc_suite.error_line(other_id) == orthanc_suite.error_line(TRACE_ASSERT)
    uid = "Exception: bad 1.2.276.0.7230010.3.1.4.8323329.1234.1700000000.1 at 0x7f3a2c1d8e40 in /tmp/tmpa8_x/f"
    assert orthanc_suite.error_line(uid) == "Exception: bad <uid> at 0x? in /tmp/<path>"
    # A transfer syntax or SOP class UID is the standard's: kept, its difference is real.
    assert orthanc_suite.error_line("AssertionError: '1.2.840.10008.1.2.4.70' != u'1.2.840.10008.1.2.1'") == \
        "AssertionError: '1.2.840.10008.1.2.4.70' != u'1.2.840.10008.1.2.1'"
    assert orthanc_suite.error_line(None) == ""


def test_a_test_failing_on_both_sides_with_another_error_line_differs():
    without = side({
        "Orthanc.test_same_failure": ("error", TRACE_MISSING_FILE),
        "Orthanc.test_fails_differently": ("error", TRACE_HTTP_404),
        "Orthanc.test_volatile_id": ("failed", TRACE_ASSERT),
        "Orthanc.test_passes": ("passed", None),
        "Orthanc.test_outcome": ("passed", None),
        "Orthanc.test_skipped": ("skipped", None),
    })
    with_ = side({
        "Orthanc.test_same_failure": ("error", TRACE_MISSING_FILE),
        "Orthanc.test_fails_differently": ("error", TRACE_HTTP_500),
        "Orthanc.test_volatile_id": ("failed", TRACE_ASSERT.replace("66a662ce-7430e543", "99aa00bb-11cc22dd")),
        "Orthanc.test_passes": ("passed", None),
        "Orthanc.test_outcome": ("failed", TRACE_HTTP_500),
        "Orthanc.test_skipped": ("skipped", None),
    })
    rows = orthanc_suite.compare(without, with_)
    summary, differing, failing_both = orthanc_suite.summarise(rows)
    assert differing == ["Orthanc.test_fails_differently", "Orthanc.test_outcome"]
    assert failing_both == ["Orthanc.test_same_failure", "Orthanc.test_volatile_id"]
    assert {k: summary[k] for k in ("run", "judging", "passedInBoth", "failingInBoth", "skippedInBoth",
                                     "differing", "failingDifferently")} == {
        "run": 6, "judging": 3, "passedInBoth": 1, "failingInBoth": 2, "skippedInBoth": 1,
        "differing": 2, "failingDifferently": 1}
    details = {name: (a, b) for name, a, b in rows}
    assert orthanc_suite.differs(*details["Orthanc.test_fails_differently"]) == "error line"
    assert orthanc_suite.differs(*details["Orthanc.test_outcome"]) == "outcome"


def test_a_transcoding_is_a_received_syntax_stored_as_another():
    # As the tool reads them from /perf/stats after the suite (groupBy=receivedSyntax, then
    # storedSyntax): the transcoding mode's run on 1.12.7 saw three, the 1.10.1 run one.
    pairs = [["1.2.840.10008.1.2.1", "1.2.840.10008.1.2.1", 900],
             ["1.2.840.10008.1.2.4.70", "1.2.840.10008.1.2.4.50", 1],
             ["1.2.840.10008.1.2.5", "1.2.840.10008.1.2.4.50", 2],
             ["(none)", "1.2.840.10008.1.2.1", 5],  # no syntax read: not known to be a transcoding
             ["1.2.840.10008.1.2", "(other)", 4]]
    assert orthanc_suite.transcoded(pairs) == 3
    assert orthanc_suite.transcoded(pairs[:1] + pairs[3:]) == 0


def sample_run(version, started_at, modes):
    return {"startedAt": started_at, "orthancVersion": "/usr/sbin/Orthanc " + version, "tests": "all",
            "modes": {mode: {"summary": {"run": 231, "judging": judging, "passedInBoth": judging,
                                         "failingInBoth": 231 - judging, "skippedInBoth": 0, "differing": 0}}
                      for mode, judging in modes.items()}}


def test_every_run_is_kept_per_version_and_the_summary_shows_the_latest_of_each_mode(tmp_path):
    results = str(tmp_path / "orthanc-suite")
    runs = [("1.10.1", "2026-11-24T10:00:00", {"default": 160, "timed-storage": 160}),
            ("1.12.7", "2026-11-24T11:00:00", {"default": 162}),
            ("1.12.7", "2026-11-24T12:00:00", {"default": 212}),  # a later run of one mode
            ("1.12.7", "2026-11-24T12:00:00", {"transcoding": 200})]  # started the same second
    folders = []
    for version, started_at, modes in runs:
        folder = orthanc_suite.new_run_folder(results, version, started_at)
        with open(os.path.join(folder, "result.json"), "w") as f:
            json.dump(sample_run(version, started_at, modes), f)
        folders.append(os.path.relpath(folder, results))
    assert folders == ["1.10.1/2026-11-24T100000", "1.12.7/2026-11-24T110000", "1.12.7/2026-11-24T120000",
                       "1.12.7/2026-11-24T120000-2"]
    assert all(os.path.isfile(os.path.join(results, f, "result.json")) for f in folders)

    table = subprocess.run(COMMAND + ["--summary", results], check=True, stdout=subprocess.PIPE,
                           text=True).stdout
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    assert [(r[0], r[2], r[4]) for r in rows] == [
        ("1.10.1", "default", "160"), ("1.10.1", "timed-storage", "160"),
        ("1.12.7", "default", "212"), ("1.12.7", "transcoding", "200")]


def test_the_modes_are_described_once():
    help_text = subprocess.run(COMMAND + ["--help"], check=True, stdout=subprocess.PIPE,
                               text=True, env=dict(os.environ, COLUMNS="200")).stdout
    assert orthanc_suite.modes_text() in help_text
    with open(os.path.join(REPO_ROOT, "docs", "reliability.md")) as f:
        reliability = f.read()
    assert orthanc_suite.modes_markdown() in reliability
    with open(os.path.join(REPO_ROOT, "docs", "README.md")) as f:
        index = f.read()
    listed = re.search(r"default modes \(([^)]*)\)", index)
    assert listed, "the index of the docs names the suite's default modes"
    assert re.findall(r"`([a-z-]+)`", listed.group(1)) == orthanc_suite.DEFAULT_MODES


FAKE_SUITE = os.path.join(REPO_ROOT, "IntegrationTests", "FakeOrthancSuite")


def compare_fake_suite(plugin_path, work, tests):
    """The comparison of the stand-in suite in mode default, its tests selected by `tests`; the suite's
    ports are fixed, so a comparison already running on the machine is waited for."""
    command = COMMAND + ["--suite", FAKE_SUITE, "--plugin", plugin_path, "--modes", "default", "--recheck", "0",
                         "--python", os.path.join(FAKE_SUITE, "python-with-stubs"), "--tests=" + tests,
                         "--work-dir", str(work)]
    environment = dict(os.environ, FAKE_SUITE_PYTHON=sys.executable)
    for _ in range(20):
        run = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)
        if "is running (lock" not in run.stderr:
            break
        time.sleep(30)
    return run


def test_the_comparison_runs_a_suite_with_and_without_the_plugin(plugin_path, tmp_path):
    """The whole comparison on a stand-in for orthanc-tests (FakeOrthancSuite/: its generator, a Run.py
    that starts the peer, five tests), Orthanc 1.10.1, mode default: the configuration generated from
    the Orthanc's own defaults, the Orthanc under test an OrthancProcess on the suite's ports, the
    outcomes recorded per test by the runner, one test left out by --tests, the one that sees the
    plugin's route differs (exit code 1), the one that fails alike on both sides does not, and the
    peer's log is kept. The suite's ports are fixed: a second comparison on the machine waits."""
    work = tmp_path / "comparison"
    run = compare_fake_suite(plugin_path, work, "-test_left_out")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "DIFFERS Orthanc.test_no_perf_route" in run.stdout
    with open(work / "result.json") as f:
        record = json.load(f)["modes"]["default"]
    assert record["summary"]["run"] == 4 and record["summary"]["differing"] == 1, record["summary"]
    assert [d["test"] for d in record["differing"]] == ["Orthanc.test_no_perf_route"]
    assert [f["test"] for f in record["failingInBoth"]] == ["Orthanc.test_fails_on_both_sides"]
    assert record["sides"]["with"]["pluginBefore"]["notInEffect"] == []
    with open(record["sides"]["with"]["peerLog"]) as f:
        assert "Orthanc version" in f.read()  # Run.py sends it to /dev/null; the runner keeps it
    assert not os.path.exists(os.path.join(work, "default", "with-plugin", "storage"))


def test_a_suite_that_passes_nothing_without_the_plugin_judges_nothing(plugin_path, tmp_path):
    """The first run of the 1.13.0 suite (its peer a 1.13.0 too) errored in every test on both sides:
    "0 differing", exit code 0, although nothing was judged. A mode where no test passes without the
    plugin is refused (exit code 2), saying why: here the one test selected fails on both sides."""
    run = compare_fake_suite(plugin_path, tmp_path / "nothing", "test_fails_on_both_sides")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no test passed without the plugin" in run.stderr and "judges nothing" in run.stderr, run.stderr
