"""A GET /perf/stats answer as a plain-text report: render() and what Resources/perf_report.py needs
to fetch or read one. Standard library only (uses `requests` when installed, urllib otherwise), so
that the report tool runs on any machine with Python 3.
"""
import json
import re
import shutil
import sys
import textwrap

TRANSPORT_TITLES = {
    "rest": "REST (HTTP POST /instances)",
    "dicom": "DICOM (C-STORE)",
    "plugin": "plugin (DICOMweb STOW-RS, Lua, WebDAV, other)",
    "job": "job (stored by an Orthanc job)",
    "all": "all transports",
}
COLUMNS = ["count", "mean", "p50", "p90", "p99", "max"]
DEFAULT_WIDTH = 100
EXIT_ERROR = 2


def terminal_width():
    """The terminal's width, or 100 when the output is not a terminal."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def _oneline(text):
    return " ".join(str(text).split())


def _wrap(text, width, indent="", more="    "):
    """`text` on lines of at most `width` characters, broken between words; continuation lines
    are indented by `more` (relative to the first line's `indent`)."""
    return textwrap.wrap(_oneline(text), width, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def _number(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return "%.*f" % (digits, value)


def _count(value):
    return "-" if value is None else str(value)


def _outcome_total(transport, outcome_names):
    instances = transport.get("instances") or {}
    return sum(v for k, v in instances.items() if k in outcome_names and isinstance(v, (int, float)))


def _transport_summary(transport, outcome_names):
    instances = transport.get("instances") or {}
    parts = ["%d stored" % instances.get("stored", 0)]
    for name in outcome_names:
        if name != "stored" and isinstance(instances.get(name), int) and instances.get(name):
            parts.append("%d %s" % (instances[name], name))
            reasons = instances.get("failureReasons") or {}
            if name == "failed" and any(reasons.values()):
                parts[-1] += " (%s)" % ", ".join("%d %s" % (n, r) for r, n in reasons.items() if n)
    for name in ("storedWithoutTimeline", "transcodeAttempts", "transcodedWithoutHook"):
        if instances.get(name):
            parts.append("%d %s" % (instances[name], name))
    throughput = transport.get("throughput") or {}
    rate = "%s instances/s, %s MB/s over %s s active" % (
        _number(throughput.get("instancesPerSecond"), 1), _number(throughput.get("megabytesPerSecond"), 1),
        _number(throughput.get("activeSeconds"), 3))
    last10 = throughput.get("last10s") or {}
    if last10.get("instancesPerSecond"):
        rate += " (last 10 s: %s instances/s)" % _number(last10.get("instancesPerSecond"), 1)
    return ", ".join(parts) + " | " + rate


def vocabulary_order(stats, kind):
    """The names of one list of the plugin's vocabulary ("transports", "phases", "outcomes",
    "failureReasons") in its order, as the answer's definitions give it; [] for an answer without
    them (a plugin older than GET /perf/vocabulary)."""
    return list(((stats.get("definitions") or {}).get("order") or {}).get(kind) or [])


def _ordered(names, order):
    """`names` in the vocabulary's `order`, those it does not list after them, sorted."""
    return [n for n in order if n in names] + sorted(n for n in names if n not in order)


def _phase_table(phases, width, order):
    """The table of the measured phases and their notes; the phases not measured are listed once
    for every transport, by _not_measured()."""
    name_width = max([len("phase")] + [len(p) for p in list(phases) + order])
    header = "  " + "phase".ljust(name_width) + "".join(c.rjust(11) for c in COLUMNS) + "   (ms)"
    lines = [header]
    notes = []
    for name in _ordered(phases, order):
        phase = phases[name] or {}
        prefix = "  " + name.ljust(name_width)
        if phase.get("observable") is False:
            continue
        cells = [_count(phase.get("count")).rjust(11)]
        cells += [_number(phase.get(c)).rjust(11) for c in COLUMNS[1:]]
        lines.append(prefix + "".join(cells))
        if phase.get("saturated"):
            notes.append("%s: %d values above the histogram range (max is a lower bound)" % (name, phase["saturated"]))
        if name == "changeDispatch" and phase.get("deliveredBeforeOnStored"):
            notes.append("changeDispatch: %d NewInstance changes were delivered before OnStored"
                         % phase["deliveredBeforeOnStored"])
    for note in notes:
        lines.extend(_wrap("note: " + note, width, "  ", "  "))
    return lines


def _not_measured(transports, shown, unobservable, width, order):
    """One entry per reason: the phases that a shown transport does not measure for that reason
    (with the transports), and the answer's `unobservable` items of the shown transports and of
    "all", so that no reason is printed twice."""
    by_reason = {}  # reason -> {what: [transports]}, in order of first appearance
    for transport in shown:
        phases = (transports[transport] or {}).get("phases") or {}
        for name in _ordered(phases, order):
            phase = phases[name] or {}
            if phase.get("observable") is False:
                reason = _oneline(phase.get("reason", "no reason given"))
                by_reason.setdefault(reason, {}).setdefault(name, []).append(transport)
    for item in unobservable:
        if item.get("transport") not in shown + ["all"]:
            continue  # about a transport that stored nothing here
        reason = _oneline(item.get("reason", "no reason given"))
        by_reason.setdefault(reason, {}).setdefault(item.get("what", "?"), []).append(item.get("transport", "?"))
    lines = []
    for reason, whats in by_reason.items():
        groups = {}  # the same transports -> the names, so that "a, b, c (rest, dicom)" reads once
        for what, where in whats.items():
            groups.setdefault(tuple(where), []).append(what)
        label = "; ".join("%s (%s)" % (", ".join(names), ", ".join(where)) for where, names in groups.items())
        lines.extend(_wrap("%s: %s" % (label, reason), width, "  "))
    return lines


def _tcp_nodelay_line(no_delay):
    """Whether DCMTK disables Nagle's algorithm on Orthanc's DICOM associations, in one line."""
    if no_delay.get("inEffect"):
        source = no_delay.get("source")
        who = {"IngestPerf.DicomTcpNoDelay": "set by IngestPerf.DicomTcpNoDelay",
               "environment": "TCP_NODELAY in Orthanc's environment"}.get(source, source)
        return "DICOM TCP_NODELAY: in effect (%s): no Nagle wait on Orthanc's side of its associations" % who
    return ("DICOM TCP_NODELAY: not in effect: each C-STORE answer can wait about 40 ms for a delayed ACK "
            "(IngestPerf.DicomTcpNoDelay: true removes Orthanc's side of it)")


def plugin_state(stats):
    """("running" | "disabled" | "inert", reason) of a /perf/stats or /perf/diagnosis answer; an answer
    of an older plugin has "enabled" and "notStarted" instead."""
    if stats.get("state"):
        return stats["state"], stats.get("reason") or ""
    if stats.get("notStarted"):
        return "inert", stats["notStarted"]
    if stats.get("enabled") is False:
        return "disabled", "IngestPerf.Enable is false"
    return "running", ""


def nothing_recorded(stats, window=None, names=()):
    """The line of an answer without any instance: an idle window says how many were stored before it."""
    history = stats.get("sinceReset") or {}
    since = history.get("since") or stats.get("since", "the last reset")
    queried = " (transports queried: %s)" % ", ".join(names) if names else ""
    if window and history.get("stored"):
        return "No instance in the last %s; %d stored since %s, the last at %s." % (
            window.get("name", "?"), history["stored"], since, history.get("lastStored", "?"))
    return "No instance recorded since %s%s." % (since, queried)


def render(stats, width=None, context=True):
    """The plain-text report of one GET /perf/stats answer (a parsed JSON document).

    Explanations are wrapped between words to `width` (default: the terminal width, or 100); the
    header, each transport's summary line and the phase tables are one line each. What no
    transport measures, and why, is listed once, after the transports. `context=False` leaves out
    what a reset does not change and an earlier report of the same Orthanc already showed: the
    C-STORE associations, the hooks not registered and the answer's `unobservable` list.
    Tolerant of missing keys, so that a report is printed even for an older or partial answer.
    """
    if width is None:
        width = terminal_width()
    width = max(int(width), 40)
    out = []

    window = stats.get("window") if isinstance(stats.get("window"), dict) else None
    if window:
        scope = "last %s (%s s covered)" % (window.get("name", "?"), _number(window.get("seconds"), 1))
    else:
        scope = "since %s | elapsed %s s" % (stats.get("since", "?"), _number(stats.get("elapsedSeconds"), 1))
    header = "%s %s on Orthanc %s | %s" % (
        stats.get("plugin", "ingest-perf"), stats.get("version", "?"), stats.get("orthancVersion", "?"), scope)
    out.append(header)
    state, reason = plugin_state(stats)
    if state == "inert":
        out.extend(_wrap("THE PLUGIN IS INERT, nothing is measured and Orthanc runs without it: " + reason, width,
                         more=""))
    elif state == "disabled":
        out.extend(_wrap("THE PLUGIN IS DISABLED (%s): nothing is measured" % (reason or "IngestPerf.Enable is false"),
                         width, more=""))
    for item in stats.get("notInEffect") or []:
        if item.get("option") != "IngestPerf":
            out.extend(_wrap("NOT IN EFFECT: %s: %s" % (item.get("option"), item.get("reason")), width, more="  "))

    definitions = (stats.get("definitions") or {}).get("outcomes") or {}
    outcome_order = vocabulary_order(stats, "outcomes")
    outcome_names = outcome_order + sorted(k for k in definitions if k not in outcome_order)
    phase_order = vocabulary_order(stats, "phases")
    transports = stats.get("transports") or {}
    names = _ordered(transports, vocabulary_order(stats, "transports") + ["all"])
    active = [t for t in names if _outcome_total(transports[t] or {}, outcome_names) > 0]
    single = [t for t in active if t != "all"]
    if "all" in active and len(single) == 1:
        # "all" would repeat the only active transport (without its per-transport reasons).
        active.remove("all")
    if not active and state == "running":
        out.append("")
        out.extend(_wrap(nothing_recorded(stats, window, names), width, more=""))
    for name in active:
        transport = transports[name] or {}
        out.append("")
        out.append("%s: %s" % (TRANSPORT_TITLES.get(name, name), _transport_summary(transport, outcome_names)))
        recent = (stats.get("recent") or {}).get(name) or {}
        now = ["last %s: %s stored, %s/s, serverTotal p50 %s p99 %s ms" % (
            span, _count(figures.get("stored")), _number(figures.get("instancesPerSecond"), 1),
            _number((figures.get("serverTotalMs") or {}).get("p50")),
            _number((figures.get("serverTotalMs") or {}).get("p99")))
            for span, figures in sorted(recent.items()) if isinstance(figures, dict)]
        if now:
            out.extend(_wrap("; ".join(now), width, "  ", "  "))
        out.extend(_phase_table(transport.get("phases") or {}, width, phase_order))
        answers = transport.get("httpAnswers") or {}
        if answers.get("requests"):
            out.extend(_wrap("HTTP answers: %d requests, %d from clients accepting gzip/deflate, %d compressed by "
                             "Orthanc (HttpCompressionEnabled %s)" % (
                                 answers["requests"], answers.get("clientAcceptsCompression", 0),
                                 answers.get("compressedByOrthanc", 0),
                                 str(answers.get("HttpCompressionEnabled")).lower()), width, "  ", "  "))
    not_measured = _not_measured(transports, active, stats.get("unobservable") or [] if context else [], width,
                                 phase_order)
    if not_measured:
        out.append("")
        out.append("Not measured, and why:")
        out.extend(not_measured)

    storage = stats.get("storage") or {}
    operations = storage.get("operations") or {}
    if storage.get("timed") and operations:
        out.append("")
        out.append("Timed storage (%s):" % storage.get("root", "?"))
        for name in ("create", "readWhole", "readRange", "remove"):
            operation = operations.get(name) or {}
            if operation.get("count"):
                out.append("  %-10s %6d calls, mean %s ms, p99 %s ms, %s MB/s%s" % (
                    name, operation["count"], _number(operation.get("mean")), _number(operation.get("p99")),
                    _number(operation.get("megabytesPerSecond"), 1),
                    ", %d failures" % operation["failures"] if operation.get("failures") else ""))

    associations = stats.get("associations") or {}
    peers = associations.get("byRemoteAet") or []
    connections = associations.get("openConnections") or {}
    if context and (peers or connections.get("count")):
        out.append("")
        out.append("C-STORE associations: %s open now (Orthanc's sockets on its DICOM port)" % _count(
            connections.get("count")))
        for peer in peers:
            per = peer.get("instancesPerAssociation") or {}
            gap = peer.get("gap") or {}
            name = peer.get("remoteAet", "?")
            if (peer.get("distinctAets") or 1) > 1:  # the one "(other)" row: the AETs beyond MaxLabelValues
                name += " (%d AETs)" % peer["distinctAets"]
            out.append("  %-16s %d finished, %d in progress (%d by connection, %d inferred), %s instances/association, "
                       "gap mean %s ms p99 %s ms" % (
                name, peer.get("finished", 0), peer.get("inProgress", 0),
                peer.get("byConnection", 0), peer.get("inferred", 0),
                _number(per.get("mean"), 1), _number(gap.get("mean")), _number(gap.get("p99"))))

    no_delay = stats.get("dicomTcpNoDelay")
    if context and isinstance(no_delay, dict):  # fixed at start-up, like the hooks
        out.append("")
        out.extend(_wrap(_tcp_nodelay_line(no_delay), width, more="  "))

    changes = stats.get("changes") or {}
    if changes.get("newInstanceBacklog") or (changes.get("perInstanceWhileBackloggedMs") or {}).get("count"):
        per_instance = changes.get("perInstanceWhileBackloggedMs") or {}
        out.append("")
        out.extend(_wrap("Change queue: %d NewInstance changes waiting; while backlogged, %s ms of change-thread "
                         "time per instance (p50)" % (changes.get("newInstanceBacklog", 0),
                                                      _number(per_instance.get("p50"))), width, more="  "))

    cost = stats.get("pluginCost") or {}
    if cost.get("microsecondsPerStoredInstance") is not None:
        out.append("")
        out.extend(_wrap("This plugin's own CPU time: %s us per stored instance (callbacks %s us, SDK calls "
                         "included, one call in %s timed; its thread %s us while Orthanc ingests), %s%% of "
                         "serverTotal; while Orthanc was idle, %s ms in all" % (
                             _number(cost["microsecondsPerStoredInstance"], 2),
                             _number(cost.get("callbacksMicrosecondsPerStoredInstance"), 2),
                             cost.get("samplingPeriod", "?"),
                             _number(cost.get("threadsMicrosecondsPerStoredInstance"), 2),
                             _number(cost.get("percentOfServerTotal"), 3), _number(cost.get("idleCpuMs"), 3)),
                         width, more="  "))

    hooks = stats.get("hooks") or {}
    missing = [(n, h) for n, h in hooks.items() if isinstance(h, dict) and h.get("registered") is False]
    if context and missing:
        out.append("")
        out.append("Hooks not registered:")
        for name, hook in missing:
            out.extend(_wrap("%s: %s" % (name, hook.get("reason", "no reason given")), width, "  "))

    open_records = stats.get("openRecords") or {}
    receiving = open_records.get("receiving") or {}
    if open_records.get("count") or receiving.get("count") or open_records.get("threadsUntracked"):
        out.append("")
        out.extend(_wrap("Open records: %s instances in Orthanc's store, oldest %s ms; %s HTTP requests without "
                         "an instance yet, oldest %s ms; %s threads tracked, %s untracked%s" % (
                             _count(open_records.get("count")), _number(open_records.get("oldestAgeMs"), 1),
                             _count(receiving.get("count")), _number(receiving.get("oldestAgeMs"), 1),
                             _count(open_records.get("threadsTracked")),
                             _count(open_records.get("threadsUntracked")),
                             "; %s started before the reset" % _count(open_records["startedBeforeReset"])
                             if open_records.get("startedBeforeReset") else ""), width, more="  "))

    errors = stats.get("errors") or {}
    nonzero = [(k, v) for k, v in errors.items() if v]
    if nonzero:
        out.append("")
        out.extend(_wrap("Errors: " + ", ".join("%s=%s" % (k, v) for k, v in nonzero), width, more="  "))
    return "\n".join(out) + "\n"


def filter_transport(stats, transport):
    """Keep only one transport of a saved answer (what ?transport= does on the server)."""
    if transport is None:
        return stats
    result = dict(stats)
    result["transports"] = {k: v for k, v in (stats.get("transports") or {}).items() if k == transport}
    return result


class ReportError(Exception):
    """A one-line error for stderr; the tool exits with code 2."""


def _describe_http_error(status, body, user=None):
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if isinstance(document, dict):
        reason = document.get("error") or document.get("Message") or document.get("Details") or json.dumps(document)
        extra = document.get("allowed")
        if extra:
            reason += " (allowed: %s)" % ", ".join(str(a) for a in extra)
        if status == 404 and "error" not in document:
            reason += " (is the ingest-perf plugin loaded?)"
        return "%s: %s" % (status, reason)
    text = " ".join(body.split())[:300]
    if status == 401 and not text:
        text = ("authentication failed for user '%s'" % user) if user is not None else \
            "authentication required (use --user and --password)"
    return "%s: %s" % (status, text or "no body")


def fetch_stats(url, transport=None, user=None, password=None, timeout=15, window=None):
    """GET <url>/perf/stats (over `window`, e.g. "5m", when given) and parse it; raises ReportError
    with a one-line message."""
    params = {"transport": transport} if transport else {}
    if window:
        params["window"] = window
    return fetch_json(url, "/perf/stats", params, user, password, timeout)


def fetch_json(url, path, params=None, user=None, password=None, timeout=15):
    """GET <url><path>?<params> and parse it; raises ReportError with a one-line message."""
    endpoint = url.rstrip("/") + path
    params = params or {}
    try:
        import requests
    except ImportError:
        requests = None

    if requests is not None:
        try:
            answer = requests.get(endpoint, params=params, timeout=timeout,
                                  auth=(user, password) if user is not None else None)
        except requests.RequestException as e:
            raise ReportError("cannot reach %s: %s" % (endpoint, _root_cause(e)))
        status, body = answer.status_code, answer.text
    else:
        status, body = _fetch_urllib(endpoint, params, user, password, timeout)

    if status != 200:
        raise ReportError("GET %s answered HTTP %s" % (endpoint, _describe_http_error(status, body, user)))
    try:
        return json.loads(body)
    except ValueError:
        raise ReportError("GET %s did not answer JSON: %s" % (endpoint, " ".join(body.split())[:200]))


def _root_cause(error):
    """'[Errno 111] Connection refused' rather than urllib3's three nested wrappers."""
    text = str(error)
    match = re.search(r"\[Errno -?\d+\][^'\")]*", text)
    if match:
        return match.group(0).strip()
    if "timed out" in text.lower():
        return "timed out"
    return " ".join(text.split())[:200] or type(error).__name__


def _fetch_urllib(endpoint, params, user, password, timeout):
    import base64
    import urllib.error
    import urllib.parse
    import urllib.request

    if params:
        endpoint += "?" + urllib.parse.urlencode(params)
    request = urllib.request.Request(endpoint)
    if user is not None:
        token = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
        request.add_header("Authorization", "Basic " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as e:
        raise ReportError("cannot reach %s: %s" % (endpoint, getattr(e, "reason", e)))


# Columns of the table of the slowest instances, after the ranked phase.
SLOWEST_PHASES = ["serverTotal", "receive", "preStore", "persist", "associationGap"]


def render_slowest(answer, count=None):
    """A GET /perf/slowest answer as a table, slowest first; `count` keeps the first ones only."""
    phase = answer.get("phase", "serverTotal")
    instances = list(answer.get("instances") or [])[:count]
    ring = answer.get("ring") or {}
    lines = ["%d slowest by %s (ms) of %s instances stored in the last %s; the ring holds %s of %s, back %s s"
             % (len(instances), phase, _count(answer.get("matched")), answer.get("window", "?"),
                _count(ring.get("held")), _count(ring.get("capacity")), _number(ring.get("reachesBackSeconds")))]
    if ring.get("coversWindow") is False:
        lines.append("  note: the ring was overwritten within the window: older instances of it are not ranked")
    if not instances:
        lines.append("  no instance")
        return "\n".join(lines) + "\n"
    columns = [phase] + [p for p in SLOWEST_PHASES if p != phase]
    lines.append("  " + "".join(c.rjust(15) for c in columns) + "  transport  remoteAet        thread  arrival"
                 + " " * 21 + "instanceId")
    for instance in instances:
        phases = instance.get("phases") or {}
        cells = "".join(_number(phases.get(c)).rjust(15) for c in columns)
        labels = instance.get("labels") or {}
        lines.append("  %s  %-9s  %-16s %6s  %-27s %s" % (
            cells, instance.get("transport", "?"), str(labels.get("remoteAet", "?"))[:16], instance.get("thread", "?"),
            instance.get("arrival", "?"), instance.get("instanceId", "?")))
    return "\n".join(lines) + "\n"


def _fix_text(fix):
    """'HttpCompressionEnabled = false; <action>' from a finding's fix."""
    settings = ["%s = %s" % (key, json.dumps(value)) for key, value in sorted((fix.get("configuration") or {}).items())]
    return "; ".join(settings + ([fix["action"]] if fix.get("action") else []))


def render_diagnosis(answer, width=None):
    """A GET /perf/diagnosis answer: the findings, most costly first, each with its fix."""
    width = width or terminal_width()
    span = answer.get("window", "?")
    header = "Diagnosis (%s, %s s with ingest):" % (
        "since the reset" if span == "sinceReset" else "last " + span, _number(answer.get("activeSeconds"), 1))
    findings = answer.get("findings") or []
    if not findings:
        return "\n".join([header] + _wrap(answer.get("verdict", "?"), width, "  ")) + "\n\n"
    lines = [header]
    for rank, finding in enumerate(findings, 1):
        if finding.get("cost") == "unobservable":
            cost = "cost not observable"
        else:
            share = finding.get("shareOfCycle")
            cost = "%s ms per instance%s, %s" % (
                _number(finding.get("costMsPerInstance"), 1),
                "" if share is None else ", %d%% of the cycle" % round(100 * share), finding.get("cost"))
        lines += _wrap("%d. [%s] %s (%s; confidence %s)" % (rank, finding.get("transport"), finding.get("verdict"),
                                                          cost, finding.get("confidence")), width, "  ", "   ")
        fix = finding.get("fix") or {}
        lines += _wrap("fix: " + _fix_text(fix), width, "     ", "  ")
        if fix.get("effect"):
            lines += _wrap("effect: " + fix["effect"], width, "     ", "  ")
    # One base for every share, as the page says it.
    lines += _wrap("Costs are means per instance; a share is of the cycle, the mean time of one instance "
                   "(serverTotal, plus the gap before it for C-STORE).", width, "  ")
    return "\n".join(lines) + "\n\n"


def trace_summary(trace):
    """One line about a GET /perf/trace answer: events, threads, instances, time span."""
    events = trace.get("traceEvents") or []
    slices = [e for e in events if e.get("ph") == "X"]
    threads = {e.get("tid") for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
               and e.get("pid") == 1}
    instances = [e for e in slices if e.get("pid") == 1 and e.get("cat") == "instance"]
    span = 0.0
    if slices:
        span = (max(e["ts"] + e["dur"] for e in slices) - min(e["ts"] for e in slices)) / 1e6
    origin = (trace.get("otherData") or {}).get("origin", "?")
    return ("%d events, %d threads, %d instances, %.3f s span (from %s)"
            % (len(events), len(threads), len(instances), span, origin))


def load_json(path):
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, "r", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError("cannot read %s: %s" % (path, e))
