"""How Orthanc's own integration suite (orthanc-tests) is judged with and without the plugin: the
modes of the plugin it runs in, what makes a test differ, and the results kept per Orthanc version.
Standard library only. ingest_perf/compare_orthanc_suite.py runs the suite; this module decides.

A test differs when its outcome (passed, failed, error, skipped...) differs between the two sides,
or when it fails on both sides with a different error line: the exception's first line, with what
changes from run to run (addresses, Orthanc IDs, UIDs, temporary paths) masked.
"""
import json
import os
import re

# The one description of the modes: the tool's --help, docs/reliability.md and the README are
# made from (or checked against) this table (IntegrationTests/test_orthanc_suite.py).
# name: (extra configuration of both sides, in the default list, what it exercises)
MODES = {
    "default": ({"IngestPerf": {}}, True,
                "the plugin with its defaults"),
    "timed-storage": ({"IngestPerf": {"TimedStorage": True}}, True,
                      "the plugin's timed storage area stores every file (the generated PostgreSQL, MySQL "
                      "and Odbc `EnableStorage` set to false on both sides; the run fails unless "
                      "`storage.timed` is true)"),
    "transcoding": ({"IngestPerf": {}, "IngestTranscoding": "1.2.840.10008.1.2.4.50",
                     "IngestTranscodingOfUncompressed": False}, True,
                    "Orthanc transcodes at ingest, on both sides, the compressed instances that JPEG baseline "
                    "can hold (8 bits stored; lossy, so with a new SOP Instance UID): 3 instances of the "
                    "1.12.7 and 1.13.0 suites, 1 of the 1.10.1 suite; the others are stored as sent (the run "
                    "fails unless the plugin saw an instance stored in another transfer syntax than received)"),
    "tcp-nodelay": ({"IngestPerf": {}}, True,
                    "both Orthancs run their DICOM associations without Nagle's algorithm, started with "
                    "TCP_NODELAY=1 in their environment (the plugin only reads it: `dicomTcpNoDelay` checked "
                    "in effect, from the environment)"),
    "timed-storage-nocache": ({"IngestPerf": {"TimedStorage": True}, "MaximumStorageCacheSize": 0}, False,
                              "timed-storage with Orthanc's storage cache off on both sides, so that the "
                              "suite's reads go through the plugin's storage area too"),
    "transcoding-jpeg": ({"IngestPerf": {}, "IngestTranscoding": "1.2.840.10008.1.2.4.70"}, False,
                         "Orthanc transcodes every received instance to JPEG lossless, on both sides, so the "
                         "suite's tests that check an instance is stored as sent fail on both sides and do not "
                         "judge the plugin (22 more on 1.13.0, 21 on 1.12.7, 17 on 1.10.1)"),
    "transcode-timing": ({"IngestPerf": {"TranscodeTiming": "FallThrough"},
                          "IngestTranscoding": "1.2.840.10008.1.2.4.70"}, False,
                         "transcoding with the opt-in transcoder registered; `test_decode_elscint` is "
                         "expected to differ (Orthanc then decodes what it could not)"),
}
DEFAULT_MODES = [name for name, (_, default, _) in MODES.items() if default]
# The environment both Orthancs of a mode start with, beside their configuration: DCMTK reads
# TCP_NODELAY from the process's environment, which a plugin must not write.
MODE_ENVIRONMENTS = {"tcp-nodelay": {"TCP_NODELAY": "1"}}
FAILING = ("failed", "error", "aborted", "not-run")


def mode_configuration(mode):
    return json.loads(json.dumps(MODES[mode][0]))


def mode_environment(mode):
    return dict(MODE_ENVIRONMENTS.get(mode, {}))


def _environment_text(mode):
    return " ".join("%s=%s" % item for item in sorted(mode_environment(mode).items()))


def modes_text():
    """The modes for --help."""
    lines = ["modes (--modes; default: %s):" % ",".join(DEFAULT_MODES)]
    for name, (extra, default, what) in MODES.items():
        lines.append("  %-22s %s%s" % (name, "" if default else "(not by default) ", re.sub(r"`", "", what)))
        environment = _environment_text(name)
        lines.append("  %-22s %s%s" % ("", json.dumps(extra), "; environment: " + environment if environment else ""))
    return "\n".join(lines)


def modes_markdown():
    """The modes as the table of docs/reliability.md."""
    rows = ["| mode | by default | configuration of both sides | what it exercises |", "| --- | --- | --- | --- |"]
    for name, (extra, default, what) in MODES.items():
        environment = _environment_text(name)
        rows.append("| `%s` | %s | `%s`%s | %s |" % (name, "yes" if default else "no", json.dumps(extra),
                                                    "; environment `%s`" % environment if environment else "", what))
    return "\n".join(rows)


# ---- what a failure says ---------------------------------------------------------------------

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{8}){4}\b"), "<orthanc-id>"),  # Orthanc's resource IDs
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    # UIDs made anew by modifications and anonymizations; not the standard's (1.2.840.10008.*:
    # transfer syntaxes, SOP classes), whose difference is a real one.
    (re.compile(r"(?<![\d.])(?!1\.2\.840\.10008\.)\d+(?:\.\d+){4,}\b"), "<uid>"),
    (re.compile(r"/tmp/[^\s'\",)]*"), "/tmp/<path>"),
    (re.compile(r"\bport \d+|:\d{4,5}\b"), "<port>"),
]


def error_line(trace):
    """The first line of the exception in a formatted traceback, with what changes from one run to
    the next masked; "" when there is no traceback."""
    if not trace:
        return ""
    lines = trace.rstrip("\n").split("\n")
    frames = [i for i, line in enumerate(lines) if line.startswith("  File ")]
    start = 0
    if frames:
        start = frames[-1] + 1
        while start < len(lines) and lines[start].startswith("    "):  # the frame's source line
            start += 1
    rest = [line.strip() for line in lines[start:] if line.strip()]
    line = rest[0] if rest else lines[-1].strip()
    for pattern, replacement in _VOLATILE:
        line = pattern.sub(replacement, line)
    return line[:300]


def short_message(trace):
    """'Tests.py:LINE  Exception: message' from a formatted traceback, for people."""
    if not trace:
        return ""
    lines = trace.rstrip("\n").split("\n")
    frames = [i for i, line in enumerate(lines) if line.startswith("  File ")]
    if not frames:
        return " ".join(line.strip() for line in lines[-3:])
    i = frames[-1]
    where = ""
    for j in reversed(frames):  # the innermost frame in the suite's own Tests.py, if any
        m = re.match(r'  File "([^"]*)", line (\d+), in (\S+)', lines[j])
        if m and os.path.basename(m.group(1)) == "Tests.py":
            where = "Tests.py:%s " % m.group(2)
            break
    start = i + 2 if i + 1 < len(lines) and lines[i + 1].startswith("    ") else i + 1
    message = " ".join(line.strip() for line in lines[start:] if line.strip())
    if len(message) > 400:
        message = message[:400] + "..."
    return where + message


def outcome(record, traceback=None):
    """One test's entry on one side: its outcome, its error line when it fails, a message."""
    entry = dict(record)
    entry.setdefault("error", error_line(traceback) if entry["outcome"] in FAILING else "")
    return entry


def differs(a, b):
    """Why the two sides of a test differ, or None: the outcome, or, failing on both sides, the error line."""
    if a["outcome"] != b["outcome"]:
        return "outcome"
    if a["outcome"] in FAILING and a.get("error", "") != b.get("error", ""):
        return "error line"
    return None


def compare(without, with_):
    """(name, without, with) per test selected on either side, sorted."""
    names = list(without["selected"])
    names += [n for n in with_["selected"] if n not in names]
    absent = {"outcome": "not-run", "message": "not selected", "error": ""}
    return [(name, without["outcomes"].get(name, absent), with_["outcomes"].get(name, absent))
            for name in sorted(names)]


def summarise(rows):
    """The counts of a mode, the tests that differ and those failing the same way on both sides. A
    test judges the plugin when it does not fail or skip on both sides alike: passed in both, or
    differing."""
    summary = {"run": 0, "passedInBoth": 0, "failingInBoth": 0, "skippedInBoth": 0,
               "passedWithout": 0, "passedWith": 0, "differing": 0, "failingDifferently": 0, "judging": 0}
    differing, failing_both = [], []
    for name, a, b in rows:
        if a["outcome"] != "not-run" or b["outcome"] != "not-run":
            summary["run"] += 1
        summary["passedWithout"] += a["outcome"] == "passed"
        summary["passedWith"] += b["outcome"] == "passed"
        why = differs(a, b)
        if why:
            differing.append(name)
            summary["failingDifferently"] += why == "error line"
        elif a["outcome"] == "passed":
            summary["passedInBoth"] += 1
        elif a["outcome"] == "skipped":
            summary["skippedInBoth"] += 1
        elif a["outcome"] in FAILING:
            summary["failingInBoth"] += 1
            failing_both.append(name)
    summary["differing"] = len(differing)
    summary["judging"] = summary["passedInBoth"] + summary["differing"]
    return summary, differing, failing_both


def transcoded(pairs):
    """How many instances were stored in another transfer syntax than the one received, from
    [received syntax, stored syntax, instances] as the plugin labels them; "(none)" (no syntax
    read) and "(other)" (labels overflowed) say nothing of a transcoding."""
    unknown = ("(none)", "(other)")
    return sum(count for received, stored, count in pairs
               if received != stored and received not in unknown and stored not in unknown)


# ---- results kept per Orthanc version --------------------------------------------------------
# RESULTS/<version>/<start time>/result.json, one folder per run of the tool (--results): a run
# never removes another's. The latest run of each mode,
# per version and test selection, is the current result.

def new_run_folder(results, version, started_at):
    """A new folder for a run, RESULTS/<version>/<start time>[-N]: never one that exists."""
    base = os.path.join(results, version, started_at.replace(":", ""))
    folder, n = base, 1
    while True:
        try:
            os.makedirs(folder)
            return folder
        except FileExistsError:
            n += 1
            folder = "%s-%d" % (base, n)


def load_runs(results):
    """Every result.json under results (a folder), oldest first."""
    runs = []
    for folder, _, files in os.walk(results):
        if "result.json" in files:
            path = os.path.join(folder, "result.json")
            try:
                with open(path) as f:
                    run = json.load(f)
            except (OSError, ValueError):
                continue
            run["path"] = path
            runs.append(run)
    return sorted(runs, key=lambda r: (r.get("startedAt", ""), r["path"]))


def latest(runs):
    """{(version, tests, mode): (run, mode record)}, the latest finished record of each."""
    current = {}
    for run in runs:
        tests = run.get("tests", "all")
        tests = tests if isinstance(tests, str) else ",".join(tests)
        for mode, record in (run.get("modes") or {}).items():
            current[(run.get("orthancVersion", "?"), tests, mode)] = (run, record)
    return current


def summary_table(results):
    """The latest result of every version, test selection and mode kept under results, as a
    markdown table."""
    rows = ["| Orthanc | tests | mode | run | judging | passed in both | failing in both | skipped in both | differ "
            "| flaky | seconds | date |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    order = {name: i for i, name in enumerate(MODES)}
    current = latest(load_runs(results))
    for (version, tests, mode), (run, record) in sorted(
            current.items(), key=lambda kv: (kv[0][0], kv[0][1], order.get(kv[0][2], 99))):
        s = record["summary"]
        rows.append("| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %s | %s |" % (
            version.split()[-1], tests, mode, s["run"], s.get("judging", s["passedInBoth"] + s["differing"]),
            s["passedInBoth"], s["failingInBoth"], s.get("skippedInBoth", 0), s["differing"], s.get("flaky", 0),
            "%.0f" % record["seconds"] if "seconds" in record else "?", run.get("startedAt", "?")[:10]))
    return "\n".join(rows)
