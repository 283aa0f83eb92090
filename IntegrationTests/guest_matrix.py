"""The guest matrix (issue 32, point 4): loaded beside the plugins and scripts that sites run, in any
load order, this plugin changes nothing of what Orthanc stores nor of what the other plugin sees.
The helpers of test_guests_scripts.py and test_guests_native.py.

A case is a set of guests: the other plugins ("Plugins") and scripts (orthanc-python's
"PythonScript", "LuaScripts") of a site, with the configuration that makes them take part in ingest.
Each case runs on fresh Orthancs of the same configuration: one WITHOUT this plugin (the baseline),
and one per position of this plugin: listed BEFORE the guests in "Plugins", listed AFTER them, and
in ONE FOLDER with them ("Plugins" names the folder), arranged so that its directory order, which
Orthanc follows, loads this plugin FIRST, then LAST (Run._plugin_folder; Run.loaded records the
order Orthanc loaded them from the log's "Registering plugin" lines, and judge() checks it). The
Orthancs of a case start together, and ingest together (each its own paths one after the other), on
both Orthancs.

Each run ingests a small series by DCMTK storescu (C-STORE, --no-halt), then by HTTP POST /instances
(with a duplicate, a body that is not DICOM and a duplicate carrying "X-Site-Refuse: yes", which
site_hooks.py's HTTP filter refuses) and by STOW-RS where orthanc-dicomweb is loaded; a different
series per path. Then, once the guests' asynchronous hooks have seen everything (Run.settle), a run's
outcome is what the senders got (DIMSE statuses, HTTP statuses and answers), what Orthanc stored
(instances, their metadata, attachments, some tags and the MD5 of each stored file, the change log,
/statistics, who holds the index and the storage area) and what each guest recorded (its
registrations' results, each call of each hook with the instance it saw, in order). The outcome of
every position must equal the baseline's, Orthanc's log may hold no error line ('E') that the
baseline's lacks (normalised: timestamps, threads, ports, paths and UUIDs removed), and both sides
must pass the case's own checks (the site's filter refused k of n, the received-instance callback
modified every stored instance...), so that "identical" cannot mean "both broken".

The guests (IntegrationTests/SiteScripts, IntegrationTests/Plugins/SiteFilters.c) refuse, with the
same rule, the instances whose SOP Instance UID ends in an odd digit (refused_by_site); the series'
seeds give a mix on every path (Inputs checks it).
"""
import collections
import json
import os
import re
import time
import traceback

from ingest_comparison import (JPEG_LOSSLESS, debian_plugins, differences, gdcm_section, http_outcome,
                               series_with_study_time, storescu_outcome, stored_state, stow_outcome)
from ingest_perf.clients import Concurrently
from ingest_perf.orthanc_process import HOST_ORTHANC, REPO_ROOT, orthanc_root

PLUGIN_NAME = "ingest-perf"
HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_SCRIPT = os.path.join(HERE, "SiteScripts", "site_hooks.py")
LUA_SCRIPT = os.path.join(HERE, "SiteScripts", "site_filters.lua")
SITE_FILTERS = "libTestSiteFilters.so"  # IntegrationTests/Plugins/SiteFilters.c, built with the tests

SERIES_SLICES = 5
SERIES_SIZE = 64
SEEDS = {"storescu": 401, "http": 402, "stow": 403}
POSITIONS = ("before", "after", "folder-first", "folder-last")
INSTITUTION = "SITE FIXED INSTITUTION"  # what site_hooks.py's ReceivedInstanceCallback writes
PYTHON_REFUSAL = "(Unknown Status: 0xa802)"  # storescu's words for site_hooks.py's refusal status
C_REFUSAL = "(Unknown Status: 0xa801)"  # and SiteFilters.c's
TAGS = ("SOPInstanceUID", "InstitutionName", "PatientID", "SeriesInstanceUID", "InstanceNumber")
RECORDING_TIMEOUT = 60  # seconds for the guests' asynchronous hooks to see everything (only a failure waits)

# Change levels of orthanc-python's OnChange (patient to instance): those of Orthanc's change log;
# OrthancStarted and the job events have none.
LOGGED_CHANGE_LEVELS = (0, 1, 2, 3)
NEW_INSTANCE_CHANGE = 3


def refused_by_site(sop_instance_uid):
    """The rule of every guest's filter."""
    return sop_instance_uid[-1:].isdigit() and int(sop_instance_uid[-1]) % 2 == 1


class Inputs:
    """One series per path (5 slices of 64x64, with a StudyTime for GDCM), and their SOP Instance UIDs."""

    def __init__(self, tmp_path_factory):
        import pydicom

        self.files = {path: series_with_study_time(tmp_path_factory.mktemp("guests-%s" % path), SERIES_SLICES, seed,
                                                   SERIES_SIZE)
                      for path, seed in SEEDS.items()}
        self.sops = {path: [str(pydicom.dcmread(f, stop_before_pixels=True).SOPInstanceUID) for f in files]
                     for path, files in self.files.items()}
        for path, sops in self.sops.items():  # the rule must refuse some and accept some of every series
            refused = sum(refused_by_site(sop) for sop in sops)
            assert 0 < refused < len(sops), (path, sops)


class Case:
    """guests: keys of debian_plugins() and "site-filters", in the order the baseline lists them;
    paths: the ingest paths; check: callable(outcome, inputs, case) -> list of problems of one side;
    positions: those of POSITIONS, or ("listed",) for scripts (this plugin listed with the guests)."""

    def __init__(self, name, guests, paths, check, lua=False, positions=POSITIONS, gdcm_transcoding=False):
        self.name = name
        self.guests = list(guests)
        self.paths = tuple(paths)
        self.check = check
        self.lua = lua
        self.positions = tuple(positions)
        self.gdcm_transcoding = gdcm_transcoding

    @property
    def uses_postgresql(self):
        return any(guest.startswith("postgresql") for guest in self.guests)

    def configuration(self, postgresql):
        config = {}
        if "python" in self.guests:
            config["PythonScript"] = PYTHON_SCRIPT
        if self.lua:
            config["LuaScripts"] = [LUA_SCRIPT]
        if self.gdcm_transcoding:
            config.update(gdcm_section())
            config["IngestTranscoding"] = JPEG_LOSSLESS
            config["BuiltinDecoderTranscoderOrder"] = "After"
        if self.uses_postgresql:
            section = postgresql.orthanc_parameters(postgresql.new_database())
            section.update({"EnableIndex": "postgresql-index" in self.guests,
                            "EnableStorage": "postgresql-storage" in self.guests})
            config["PostgreSQL"] = section
        return config

    def __repr__(self):
        return self.name


def site_filters_plugin(plugin_path):
    """libTestSiteFilters.so: beside the plugin tested, else in <repo>/build (a plugin tested from
    elsewhere, e.g. INGEST_PERF_PLUGIN=/some/other/build/libOrthancIngestPerf.so)."""
    for folder in (os.path.dirname(plugin_path), os.path.join(REPO_ROOT, "build")):
        path = os.path.join(folder, SITE_FILTERS)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError("%s is not built: ninja -C %s/build TestSiteFilters" % (SITE_FILTERS, REPO_ROOT))


# --- one Orthanc of a case ------------------------------------------------------------------------

class Run:
    """One Orthanc of a case: without this plugin (position None) or with it at `position`."""

    def __init__(self, case, position, orthanc_version, plugin_path, folder, postgresql):
        self.case, self.position, self.orthanc_version = case, position, orthanc_version
        self.records = os.path.join(folder, "records")
        os.makedirs(self.records)
        debian = debian_plugins(orthanc_version)
        guests = [site_filters_plugin(plugin_path) if g == "site-filters" else debian[g] for g in case.guests]
        if position is None:
            plugins = guests
        elif position in ("before", "listed"):  # "listed": a case of scripts only, beside other plugins
            plugins = [plugin_path] + guests
        elif position == "after":
            plugins = guests + [plugin_path]
        elif position in ("folder-first", "folder-last"):
            plugins = [self._plugin_folder(os.path.join(folder, "plugins"), plugin_path, guests,
                                           first=position == "folder-first")]
        else:
            raise ValueError(position)
        config = case.configuration(postgresql)
        config["Plugins"] = plugins
        # Orthanc 1.12.7 and 1.13.0 run in their roots: the host's folders of the plugins' files must be visible there
        # (a folder's links are followed inside the root; Debian's plugins are the root's own).
        bind = sorted({os.path.dirname(os.path.realpath(p)) for p in [plugin_path] + guests if self._on_host(p)})
        self.arguments = dict(plugin_path=None, extra_config=config,
                              env={"SITE_RECORDS": self.records, "INGEST_PERF_BIND": ":".join(bind)})
        self.orthanc = None
        self.outcome = None
        self.failure = None  # what ended a run that could not ingest or be read (e.g. Orthanc stopped)
        self.loaded = []  # plugin names in the order Orthanc registered them
        self.error_lines = []
        self.seconds = {}

    def _on_host(self, path):
        """Whether that Orthanc finds `path` on the host (Orthanc 1.10.1's are all there; 1.12.7 and
        1.13.0 find Debian's plugins in their roots)."""
        return self.orthanc_version == HOST_ORTHANC or path.startswith((REPO_ROOT + "/", "/tmp/")) \
            or not os.path.exists(orthanc_root(self.orthanc_version) + path)

    def _loaded_file(self, path):
        """The file that a plugin path of /system names, links followed as that Orthanc sees them.
        Orthanc 1.10.1 and 1.12.7 give that path so (canonical); 1.13.0 gives the path it loaded, which
        for a plugin of the folder of links below is a link under another name than its file's
        (libOrthancPostgreSQLIndex-2.so)."""
        root = orthanc_root(self.orthanc_version)
        for _ in range(40):  # a chain of links: Debian's plugins folder links to the library's file
            seen = path if not path or self._on_host(path) else root + path
            if not path or not os.path.islink(seen):
                return path
            path = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(seen)))
        return path

    def _plugin_folder(self, folder, plugin_path, guests, first):
        """A folder of links to this plugin and the guests (Debian's as that Orthanc sees them), whose
        directory order (readdir's, which Orthanc follows) puts this plugin first or last. That order
        depends on the file system (ext4: a hash of the names; tmpfs: the order of creation), so the
        links are made in either order, then under other names, until this plugin is where wanted;
        Run.loaded then says where Orthanc loaded it."""
        os.makedirs(folder)
        targets = [os.path.realpath(plugin_path)] + [os.path.realpath(p) if self._on_host(p) else p for p in guests]
        for attempt in range(200):
            suffix = "" if attempt < 2 else "-%d" % attempt
            names = [os.path.basename(p).replace(".so", suffix + ".so", 1) for p in [plugin_path] + guests]
            for name in os.listdir(folder):
                os.remove(os.path.join(folder, name))
            entries = list(zip(names, targets))
            for name, target in (entries if attempt % 2 == 0 else entries[::-1]):
                os.symlink(target, os.path.join(folder, name))
            order = os.listdir(folder)
            if order[0 if first else -1] == names[0]:
                return folder
        raise AssertionError("no names put the plugin %s in %s: %s" % ("first" if first else "last", folder, order))

    @property
    def name(self):
        return "without" if self.position is None else self.position

    def start(self, factory):
        began = time.monotonic()
        self.orthanc = factory(**self.arguments)
        self.seconds["start"] = time.monotonic() - began
        return self

    def ingest(self, inputs):
        """Ingests and reads the outcome; what stops it (Orthanc gone, an answer that is not JSON) is
        kept in self.failure, for judge() to report against the other runs."""
        try:
            return self._ingest(inputs)
        except Exception as error:  # noqa: BLE001 - reported by judge()
            ours = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(HERE)]
            self.failure = "%s: %s (at %s)" % (type(error).__name__, error, ", ".join(
                "%s:%d %s" % (os.path.basename(f.filename), f.lineno, f.name) for f in ours[-2:]))
            self.loaded = re.findall(r"Registering plugin '([^']+)'", self.orthanc.log_text())
            return self

    def _ingest(self, inputs):
        began = time.monotonic()
        orthanc = self.orthanc
        if self.case.gdcm_transcoding:  # DCMTK logs each of its transcodes at verbose level, GDCM does not
            assert orthanc.session.put(orthanc.url + "/tools/log-level", data="verbose").status_code == 200
        senders = {}
        if "storescu" in self.case.paths:
            senders["storescu"] = storescu_outcome(orthanc, inputs.files["storescu"], ["--no-halt"])
        if "http" in self.case.paths:
            senders["http"] = http_outcome(orthanc, inputs.files["http"])
            with open(inputs.files["http"][0], "rb") as f:
                answer = orthanc.post("/instances", data=f.read(),
                                      headers={"Content-Type": "application/dicom", "X-Site-Refuse": "yes"})
            senders["httpWithRefusalHeader"] = answer.status_code
        if "stow" in self.case.paths:
            senders["stow"] = stow_outcome(orthanc, inputs.files["stow"])
        self.seconds["ingest"] = time.monotonic() - began
        settled = self.settle()
        self.seconds["settle"] = time.monotonic() - began - self.seconds["ingest"]
        system = orthanc.get("/system").json()
        log = orthanc.log_text()
        self.outcome = {
            "senders": senders,
            "stored": stored_state(orthanc, TAGS),
            "records": self.read_records(),
            "recordsSettled": settled,
            "filesInStorageDirectory": sum(len(names) for _, _, names in os.walk(os.path.join(orthanc.work_dir,
                                                                                             "storage"))),
            # who holds the index and the storage area (its file's name without ".so" and version: a
            # folder's link has the name of the link Debian installs)
            "databaseBackend": library_name(self._loaded_file(system.get("DatabaseBackendPlugin"))),
            "storageArea": library_name(self._loaded_file(system.get("StorageAreaPlugin"))),
            "transcodedByDcmtk": "DCMTK transcoding from" in log,
            "alive": orthanc.is_running(),
        }
        self.loaded = re.findall(r"Registering plugin '([^']+)'", log)
        self.error_lines = normalised_error_lines(log, orthanc, self.records)
        self.seconds["all"] = time.monotonic() - began + self.seconds["start"]
        return self

    def read_records(self):
        """{guest: {hook: [its records, in order]}} from the guests' files (SITE_RECORDS)."""
        records = {}
        for name in sorted(os.listdir(self.records)):
            hooks = collections.defaultdict(list)
            with open(os.path.join(self.records, name), encoding="utf-8") as f:
                for line in f:
                    if line.endswith("\n"):  # a line still being written is read next time
                        record = json.loads(line)
                        hooks[record.pop("hook")].append(record)
            records[name.rsplit(".", 1)[0]] = dict(hooks)
        return records

    def settle(self):
        """Waits until the guests' asynchronous hooks have seen everything: orthanc-python's OnChange
        (its own queue) every change of Orthanc's log, Lua's OnStoredInstance (Lua's thread) every
        instance its filter accepted. False if they have not after RECORDING_TIMEOUT (the comparison
        then says what is missing)."""
        deadline = time.monotonic() + RECORDING_TIMEOUT
        while True:
            records = self.read_records()
            waiting = False
            if "python" in records:
                logged = len(self.orthanc.get("/changes", params={"limit": 100000}).json()["Changes"])
                seen = sum(1 for r in records["python"].get("onChange", []) if r["level"] in LOGGED_CHANGE_LEVELS)
                waiting |= seen < logged
            if "lua" in records:
                accepted = sum(1 for r in records["lua"].get("receivedInstanceFilter", []) if not r["refused"])
                waiting |= len(records["lua"].get("onStored", [])) < accepted
            if not waiting:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)


def library_name(path):
    """libOrthancPostgreSQLIndex for /usr/lib/orthanc/libOrthancPostgreSQLIndex.so.4.0 ('' for None)."""
    return re.sub(r"\.so(\.[0-9.]+)?$", "", os.path.basename(path or ""))


def normalised_error_lines(log, orthanc, records):
    """Orthanc's error lines ('E' in glog's format), each without its timestamp, thread and source
    location, with ports, folders, UUIDs and addresses replaced, so that two runs compare."""
    lines = []
    for line in log.splitlines():
        if not re.match(r"E\d{4} ", line):
            continue
        text = line.split("] ", 1)[-1]
        for folder, word in ((records, "RECORDS"), (orthanc.work_dir, "WORKDIR")):
            text = text.replace(folder, word)
        for port in (orthanc.http_port, orthanc.dicom_port):
            text = re.sub(r"\b%d\b" % port, "PORT", text)
        text = re.sub(r"/tmp/\S+", "PATH", text)
        text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}\b", "ORTHANC-ID", text)
        text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "UUID", text)
        text = re.sub(r"\b0x[0-9a-f]{6,}\b", "ADDRESS", text)
        lines.append(text)
    return lines


# --- a case on one Orthanc version ----------------------------------------------------------------

def run_case(case, orthanc_version, factory, plugin_path, inputs, tmp_path, postgresql):
    """The baseline and every position of `case`, started together and ingesting together:
    {position (None: the baseline): Run}."""
    runs = [Run(case, position, orthanc_version, plugin_path, str(tmp_path / ("run-%s" % (position or "without"))),
                postgresql) for position in (None,) + case.positions]
    Concurrently([lambda run=run: run.start(factory) for run in runs]).run(timeout=300)
    Concurrently([lambda run=run: run.ingest(inputs) for run in runs]).run(timeout=600)
    for run in runs:
        run.orthanc.terminate()  # stopping beside the next case; waited for at teardown
    return {run.position: run for run in runs}


class CaseRuns:
    """The runs of each (case, Orthanc version), made by the first test that needs them (its
    orthanc_factory starts them) and read by the others: one baseline per case and version. A case
    that could not run raises its error for each of its tests, without running again."""

    def __init__(self):
        self.runs = {}

    def get(self, case, orthanc_version, factory, plugin_path, inputs, tmp_path, request):
        key = (case.name, orthanc_version)
        if key not in self.runs:
            try:
                postgresql = request.getfixturevalue("postgresql") if case.uses_postgresql else None
                self.runs[key] = run_case(case, orthanc_version, factory, plugin_path, inputs, tmp_path, postgresql)
            except Exception as error:  # noqa: BLE001 - raised again for each test of the case
                self.runs[key] = error
        if isinstance(self.runs[key], Exception):
            raise self.runs[key]
        return self.runs[key]


def case_positions(cases):
    """(case, position) pairs of a module's cases, and their test ids."""
    pairs = [(case, position) for case in cases for position in case.positions]
    return pairs, ["%s-%s" % (case.name, position) for case, position in pairs]


def judge(case, runs, position, inputs):
    """Everything that differs between the baseline and `position`, and every problem of each side:
    a list of lines, empty when the plugin changed nothing."""
    baseline, run = runs[None], runs[position]
    failed = ["%s could not ingest (%s): %s" % (side.name, "alive" if side.orthanc.is_running() else "Orthanc stopped",
                                               side.failure) for side in (baseline, run) if side.failure]
    if failed:
        return failed + ["log of %s:\n%s" % (side.name, side.orthanc.log_tail()) for side in (baseline, run)
                         if side.failure]
    print("%s, %s: loaded %s; without the plugin: loaded %s; seconds %s / %s"
          % (case.name, position, run.loaded, baseline.loaded,
             {k: round(v, 1) for k, v in run.seconds.items()}, {k: round(v, 1) for k, v in baseline.seconds.items()}))
    new_errors = collections.Counter(run.error_lines) - collections.Counter(baseline.error_lines)
    found = ["error line of Orthanc's log only with the plugin (%dx): %s" % (n, line) for line, n in new_errors.items()]
    without, with_plugin = summary(baseline.outcome), summary(run.outcome)
    found += ["%s: without %s, with %s" % (key, without.get(key), with_plugin.get(key))
              for key in sorted(set(without) | set(with_plugin)) if without.get(key) != with_plugin.get(key)]
    found += ["differs: %s" % shortened(d) for d in differences(baseline.outcome, run.outcome)]
    # the plugin is where the case says, and the guests all loaded
    if PLUGIN_NAME not in run.loaded:
        found.append("the plugin did not load: %s" % run.loaded)
    elif position in ("before", "folder-first") and run.loaded[0] != PLUGIN_NAME \
            or position in ("after", "folder-last") and run.loaded[-1] != PLUGIN_NAME:
        found.append("the plugin is not where %s puts it: %s" % (position, run.loaded))
    if sorted(n for n in run.loaded if n != PLUGIN_NAME) != sorted(baseline.loaded) or PLUGIN_NAME in baseline.loaded:
        found.append("other plugins loaded: %s with, %s without" % (run.loaded, baseline.loaded))
    for side in (baseline, run):
        problems = common_problems(side.outcome, case, inputs) + case.check(side.outcome, inputs, case)
        found += ["%s, on its own: %s" % (side.name, shortened(problem)) for problem in problems]
    return found


def summary(outcome):
    """The counts that say at a glance how two outcomes differ: instances stored, calls of each
    guest's hooks, storescu's statuses, the InstitutionName values stored."""
    counts = {"instances stored": len(outcome["stored"]["instances"])}
    for guest, hooks in outcome["records"].items():
        for hook, records in hooks.items():
            counts["%s %s calls" % (guest, hook)] = len(records)
    if "storescu" in outcome["senders"]:
        statuses = outcome["senders"]["storescu"]["statuses"]
        counts["storescu statuses"] = dict(collections.Counter(status for _, status in statuses))
    counts["InstitutionName stored"] = dict(collections.Counter(
        str(r["tags"]["InstitutionName"]) for r in outcome["stored"]["instances"].values()))
    return counts


def shortened(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "... (%d characters)" % len(text)


# --- each side on its own -------------------------------------------------------------------------

def expected_stored(case, inputs, refused_on_cstore, refused_everywhere=False):
    """The SOP Instance UIDs that must be stored."""
    stored = set()
    for path in case.paths:
        for sop in inputs.sops[path]:
            if not (refused_by_site(sop) and (refused_everywhere or path == "storescu" and refused_on_cstore)):
                stored.add(sop)
    return stored


def sent_to_store(inputs, case):
    """The SOP Instance UIDs of the DICOM instances that reach Orthanc's store (ServerContext::Store):
    every file of every path, and over HTTP the duplicate, and the duplicate asking for a refusal
    unless site_hooks.py's HTTP filter refuses it."""
    sent = sum((inputs.sops[path] for path in case.paths), [])
    if "http" in case.paths:
        sent += [inputs.sops["http"][0]] * (1 if "python" in case.guests else 2)
    return sent


def stored_sops(outcome):
    return {instance["tags"]["SOPInstanceUID"] for instance in outcome["stored"]["instances"].values()}


def common_problems(outcome, case, inputs):
    problems = []
    if not outcome["alive"]:
        problems.append("Orthanc is no longer running")
    if not outcome["recordsSettled"]:
        problems.append("the guests' asynchronous hooks did not see everything in %d s" % RECORDING_TIMEOUT)
    senders = outcome["senders"]
    if "storescu" in senders and senders["storescu"]["exitCodes"] != [0]:
        problems.append("storescu exit codes %s" % senders["storescu"]["exitCodes"])
    if "storescu" in senders and len(senders["storescu"]["statuses"]) != len(inputs.sops["storescu"]):
        problems.append("storescu got %d answers for %d files" % (len(senders["storescu"]["statuses"]),
                                                                  len(inputs.sops["storescu"])))
    if "http" in senders:
        statuses = [status for status, _ in senders["http"]]
        if statuses != [200] * (len(inputs.sops["http"]) + 1) + [400]:
            problems.append("HTTP statuses %s" % statuses)
    if "stow" in senders:
        answer = senders["stow"]
        if answer["status"] != 200 or not all(sop in answer["answer"] for sop in inputs.sops["stow"]):
            problems.append("STOW-RS answered %s: %s" % (answer["status"], answer["answer"][:300]))
    if outcome["stored"]["statistics"]["CountInstances"] != len(outcome["stored"]["instances"]):
        problems.append("/statistics counts %s instances, /instances lists %d"
                        % (outcome["stored"]["statistics"]["CountInstances"], len(outcome["stored"]["instances"])))
    for instance, record in outcome["stored"]["instances"].items():
        if record["fileMd5"] != record["attachments"]["dicom"]["UncompressedMD5"]:
            problems.append("instance %s: its file's MD5 is not its attachment's" % instance)
    return problems


def cstore_filter_problems(records, inputs, outcome, refusal):
    """A C-STORE filter that refuses by the site's rule: called once per instance sent by C-STORE, in
    order; storescu got `refusal` for those it refused."""
    problems = []
    calls = [(r["sop"], r["refused"]) for r in records.get("cstoreFilter", [])]
    wanted = [(sop, refused_by_site(sop)) for sop in inputs.sops["storescu"]]
    if calls != wanted:
        problems.append("C-STORE filter calls %s, expected %s" % (calls, wanted))
    statuses = [status for _, status in outcome["senders"]["storescu"]["statuses"]]
    expected = [refusal if refused_by_site(sop) else "(Success)" for sop in inputs.sops["storescu"]]
    if statuses != expected:
        problems.append("storescu statuses %s, expected %s" % (statuses, expected))
    return problems


def received_instance_problems(records, inputs, case):
    """A ReceivedInstanceCallback: called for every instance that reached Orthanc's store, and the
    HTTP body that is not DICOM."""
    calls = sorted(str(r["sop"]) for r in records.get("receivedInstance", []))
    # and, over HTTP, the body that is not DICOM (no SOP Instance UID): Orthanc parses after the callback
    wanted = sorted(sent_to_store(inputs, case) + (["None"] if "http" in case.paths else []))
    return [] if calls == wanted else ["ReceivedInstanceCallback calls %s, expected %s" % (calls, wanted)]


def python_problems(outcome, inputs, case):
    """site_hooks.py: its five registrations returned, its C-STORE filter refused k of n, its
    ReceivedInstanceCallback modified every stored instance, its HTTP filter refused the request that
    asked for it, OnStoredInstance and OnChange saw every stored instance."""
    records = outcome["records"].get("python", {})
    problems = []
    registrations = [(r["what"], r["outcome"]) for r in records.get("register", [])]
    wanted = [(name, "None") for name in ("ReceivedInstanceCallback", "IncomingCStoreInstanceFilter",
                                          "IncomingHttpRequestFilter", "OnStoredInstanceCallback", "OnChangeCallback")]
    if registrations != wanted:
        problems.append("registrations %s" % registrations)
    problems += cstore_filter_problems(records, inputs, outcome, PYTHON_REFUSAL)
    problems += received_instance_problems(records, inputs, case)
    stored = outcome["stored"]["instances"]
    if stored_sops(outcome) != expected_stored(case, inputs, refused_on_cstore=True):
        problems.append("stored %s" % sorted(stored_sops(outcome)))
    unmodified = [i for i, r in stored.items() if r["tags"]["InstitutionName"] != INSTITUTION]
    if unmodified or not stored:
        problems.append("InstitutionName not set by the site's script in %d of %d stored instances"
                        % (len(unmodified), len(stored)))
    on_stored = records.get("onStored", [])
    if {r["sop"] for r in on_stored} != stored_sops(outcome) or any(r["institution"] != INSTITUTION for r in on_stored):
        problems.append("OnStoredInstance calls %s" % on_stored)
    new_instances = [r["id"] for r in records.get("onChange", []) if r["change"] == NEW_INSTANCE_CHANGE]
    if sorted(new_instances) != sorted(stored):
        problems.append("OnChange NewInstance for %s, stored %s" % (sorted(new_instances), sorted(stored)))
    http = [(r["uri"], r["refused"]) for r in records.get("httpFilter", [])]
    wanted = [("/instances", False)] * (len(inputs.sops["http"]) + 2) + [("/instances", True)] \
        + ([("/dicom-web/studies", False)] if "stow" in case.paths else [])
    if http != wanted:
        problems.append("HTTP filter calls %s, expected %s" % (http, wanted))
    if outcome["senders"]["httpWithRefusalHeader"] != 403:
        problems.append("the request the HTTP filter refuses answered %s" % outcome["senders"]["httpWithRefusalHeader"])
    return problems


def site_filters_problems(outcome, inputs, case):
    """SiteFilters.c: both registrations succeeded, its C-STORE filter refused k of n, its
    ReceivedInstanceCallback saw every instance."""
    records = outcome["records"].get("c-plugin", {})
    problems = []
    registrations = {r["what"]: r["code"] for r in records.get("register", [])}
    if registrations != {"IncomingCStoreInstanceFilter": 0, "ReceivedInstanceCallback": 0}:
        problems.append("registrations answered %s" % registrations)
    problems += cstore_filter_problems(records, inputs, outcome, C_REFUSAL)
    problems += received_instance_problems(records, inputs, case)
    if stored_sops(outcome) != expected_stored(case, inputs, refused_on_cstore=True):
        problems.append("stored %s" % sorted(stored_sops(outcome)))
    return problems


def lua_problems(outcome, inputs, case):
    """site_filters.lua: its filter saw every instance that reached the store, on every path, and
    refused k of n; OnStoredInstance saw each one it accepted."""
    records = outcome["records"].get("lua", {})
    problems = []
    calls = sorted((r["sop"], r["refused"]) for r in records.get("receivedInstanceFilter", []))
    wanted = sorted((sop, refused_by_site(sop)) for sop in sent_to_store(inputs, case))
    if calls != wanted:
        problems.append("filter calls %s, expected %s" % (calls, wanted))
    if stored_sops(outcome) != expected_stored(case, inputs, refused_on_cstore=True, refused_everywhere=True):
        problems.append("stored %s" % sorted(stored_sops(outcome)))
    on_stored = sorted(r["sop"] for r in records.get("onStored", []))
    if on_stored != sorted(sop for sop, refused in wanted if not refused):
        problems.append("OnStoredInstance calls %s" % on_stored)
    return problems


def gdcm_problems(outcome, inputs, case):
    """orthanc-gdcm transcoded every instance to JPEG lossless (not DCMTK)."""
    problems = []
    syntaxes = {r["metadata"]["TransferSyntax"] for r in outcome["stored"]["instances"].values()}
    if syntaxes != {JPEG_LOSSLESS}:
        problems.append("stored transfer syntaxes %s" % syntaxes)
    if outcome["transcodedByDcmtk"]:
        problems.append("DCMTK transcoded, not GDCM")
    if stored_sops(outcome) != expected_stored(case, inputs, refused_on_cstore=False):
        problems.append("stored %s" % sorted(stored_sops(outcome)))
    return problems


def postgresql_problems(outcome, inputs, case):
    """orthanc-postgresql holds the index and the storage area, and has every instance."""
    problems = []
    if (outcome["databaseBackend"], outcome["storageArea"]) != ("libOrthancPostgreSQLIndex",
                                                                "libOrthancPostgreSQLStorage"):
        problems.append("index %r, storage %r" % (outcome["databaseBackend"], outcome["storageArea"]))
    if outcome["filesInStorageDirectory"] != 0:
        problems.append("%d files in the storage folder" % outcome["filesInStorageDirectory"])
    if stored_sops(outcome) != expected_stored(case, inputs, refused_on_cstore=False):
        problems.append("stored %s" % sorted(stored_sops(outcome)))
    return problems


def checks(*functions):
    """A case's check: every function's problems."""
    return lambda outcome, inputs, case: sum((f(outcome, inputs, case) for f in functions), [])
