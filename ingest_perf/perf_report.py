"""The ingest-perf report: GET /perf/diagnosis and /perf/stats of an Orthanc (or a saved answer) as
plain text that fits a terminal, and the command that prints it (main(); `python3 -m
ingest_perf.perf_report`, Resources/perf_report.py, or `orthanc-ingest-perf-report` from the Debian
package). Python 3's standard library only (urllib), so that it runs on any host with python3.

Every line fits the width (80 columns unless --width or a terminal says otherwise): text is wrapped
between words only, and a table that is too wide shows fewer decimals, then leaves out its optional
columns, then prints each row as a wrapped record; no number is ever cut or split across lines. Only
a single word longer than a whole line (a long path) stands alone on a wider one, whole.
"""
import argparse
import base64
import getpass
import json
import os
import re
import sys
import textwrap
import urllib.error
import urllib.parse
import urllib.request

TRANSPORT_TITLES = {
    "rest": "REST (HTTP POST /instances)",
    "dicom": "DICOM (C-STORE)",
    "plugin": "plugin (DICOMweb STOW-RS, Lua, WebDAV, other)",
    "job": "job (stored by an Orthanc job)",
    "all": "all transports",
}
COLUMNS = ["count", "mean", "p50", "p90", "p99", "max"]
DEFAULT_WIDTH = 80
MINIMUM_WIDTH = 40
EXIT_ERROR = 2


def terminal_width():
    """The width of the terminal the report is printed on; 80 when it is not printed on one (a pipe,
    a file), whatever $COLUMNS says."""
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or DEFAULT_WIDTH
    except (AttributeError, OSError, ValueError):
        return DEFAULT_WIDTH


def _width(width):
    return max(int(width), MINIMUM_WIDTH) if width else max(terminal_width(), MINIMUM_WIDTH)


def _oneline(text):
    return " ".join(str(text).split())


def _wrap(text, width, indent="", more="    "):
    """`text` on lines of at most `width` characters, broken between words only; continuation lines
    are indented by `more` (relative to the first line's `indent`). A word longer than a whole line
    (a path) is kept whole on a line of its own, for it to be copied: the one line that may be wider."""
    return textwrap.wrap(_oneline(text), width, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def _wrap_parts(parts, width, indent="", more="  ", separator=" | "):
    """Parts joined by `separator`, a line broken only between two parts (the separator left out
    there); a part too long for a line of its own is wrapped between its words."""
    lines = []
    line = ""
    for part in [_oneline(p) for p in parts if p]:
        prefix = indent if not lines and not line else indent + more
        if line and len(line) + len(separator) + len(part) <= width:
            line += separator + part
            continue
        if line:
            lines.append(line)
        if len(prefix) + len(part) <= width:
            line = prefix + part
        else:
            wrapped = _wrap(part, width, prefix, "  ")
            lines.extend(wrapped[:-1])
            line = wrapped[-1]
    if line:
        lines.append(line)
    return lines or [indent.rstrip()]


def _cell(value, digits):
    """A table cell: None is "-", an integer as it is, a float with `digits` decimals."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or digits is None:
        return str(value)
    return "%.*f" % (digits, value)


def _table(columns, rows, width, indent="  ", optional=(), after=None, record=None):
    """The lines of a table, none wider than `width`.

    columns: [(header, decimals)]: decimals None for a text column (left-aligned), else the number
    of decimals of its floats (right-aligned; 0 for a column of counts). rows: [[value]]. A column is
    as wide as its header or its widest cell: nothing is cut. When the table is too wide it shows one
    decimal less, then leaves out the `optional` columns (indexes, the first listed first), then one
    decimal less again (never fewer than one), and at last prints each row as one record: "first:
    header value, ..." wrapped between words, or the parts `record(row)` gives, a line broken between
    two of them only. `after`: the lines to print under each row (already fitted).
    """
    after = after or [[] for _ in rows]

    def layout(keep, fewer):
        shown = [(i, columns[i]) for i in keep]
        texts = [[_cell(row[i], None if digits is None else max(min(digits, 1), digits - fewer))
                  for i, (_, digits) in shown]
                 for row in rows]
        widths = [max([len(header)] + [len(r[k]) for r in texts]) for k, (_, (header, _)) in enumerate(shown)]

        def line(cells):
            out = [text.ljust(widths[k]) if digits is None else text.rjust(widths[k])
                   for k, (text, (_, (_, digits))) in enumerate(zip(cells, shown))]
            return (indent + "  ".join(out)).rstrip()

        lines = [line([header for _, (header, _) in shown])]
        for r, cells in enumerate(texts):
            lines.append(line(cells))
            lines.extend(after[r])
        return lines

    # One decimal less first, then the optional columns, then one decimal more less.
    attempts = [(0, 0)] + [(dropped, 1) for dropped in range(len(optional) + 1)] + [(len(optional), 2)]
    for dropped, fewer in attempts:
        lines = layout([i for i in range(len(columns)) if i not in optional[:dropped]], fewer)
        if max(len(line) for line in lines) <= width:
            return lines
    # Even the narrowest table is too wide: one record per row, "header value" pairs.
    lines = []
    for r, row in enumerate(rows):
        if record is not None:
            lines.extend(_wrap_parts(record(row), width, indent, "    ", " "))
        else:
            first = _cell(row[0], columns[0][1])
            pairs = ["%s %s" % (header, _cell(value, digits)) for (header, digits), value in zip(columns[1:], row[1:])]
            lines.extend(_wrap("%s: %s" % (first, ", ".join(pairs)), width, indent, "    "))
        lines.extend(after[r])
    return lines


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


def _transport_summary(title, transport, outcome_names, width):
    """"<title>: N stored, ... | R instances/s, M MB/s over S s active", wrapped between its parts."""
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
    recent = None
    if last10.get("instancesPerSecond"):
        recent = "last 10 s: %s instances/s" % _number(last10.get("instancesPerSecond"), 1)
    return _wrap_parts(["%s: %s" % (title, ", ".join(parts)), rate, recent], width)


def vocabulary_order(stats, kind):
    """The names of one list of the plugin's vocabulary ("transports", "phases", "phaseParts",
    "outcomes", "failureReasons") in its order, as the answer's definitions give it; [] for an answer without
    them (a plugin older than GET /perf/vocabulary)."""
    return list(((stats.get("definitions") or {}).get("order") or {}).get(kind) or [])


def _ordered(names, order):
    """`names` in the vocabulary's `order`, those it does not list after them, sorted."""
    return [n for n in order if n in names] + sorted(n for n in names if n not in order)


def _phase_table(phases, width, order):
    """The table of the measured phases and their notes; the phases not measured are listed once
    for every transport, by _not_measured()."""
    rows = []
    notes = []
    for name in _ordered(phases, order):
        phase = phases[name] or {}
        if phase.get("observable") is False:
            continue
        rows.append([name, phase.get("count")] + [phase.get(c) for c in COLUMNS[1:]])
        if phase.get("saturated"):
            notes.append("%s: %d values above the histogram range (max is a lower bound)" % (name, phase["saturated"]))
        if name == "changeDispatch" and phase.get("deliveredBeforeOnStored"):
            notes.append("changeDispatch: %d NewInstance changes were delivered before OnStored"
                         % phase["deliveredBeforeOnStored"])
    # p90 then p50 go first when the terminal is narrow: p99 and max show the tail, mean the cost.
    lines = _table([("phase (ms)", None), ("count", 0)] + [(c, 3) for c in COLUMNS[1:]], rows, width,
                   optional=(4, 3))
    for note in notes:
        lines.extend(_wrap("note: " + note, width, "  ", "  "))
    return lines


def _parts_table(phases, width, order, part_order, sampling):
    """Where each phase's time goes over its split instances (the answer's `parts`): per phase with
    some, the mean in ms and the share in % of each part; a part not observable is "-" and said once
    under the table, with its reason, as is a blocked that holds the wait for a CPU. [] when no
    phase has split instances."""
    split = [name for name in _ordered(phases, order)
             if isinstance((phases[name] or {}).get("parts"), dict) and phases[name]["parts"].get("sampled")]
    if not split:
        return []
    names = _ordered({key for name in split for key, value in phases[name]["parts"].items()
                      if isinstance(value, dict)}, part_order)
    rows = []
    unobservable = {}  # (part, reason) -> [phases]
    holding = {}  # part -> the phases whose part holds the wait for a CPU of all, or some, of their instances
    for name in split:
        parts = phases[name]["parts"]
        row = [name, parts["sampled"]]
        for part in names:
            figures = parts.get(part) or {}
            if figures.get("observable") is False:
                unobservable.setdefault((part, _oneline(figures.get("reason", "no reason given"))), []).append(name)
            share = figures.get("share")
            row += [figures.get("mean"), None if share is None else 100.0 * share]
            of = figures.get("includesWaitingForCpuOf")
            if of:
                holding.setdefault(part, []).append(name if of == parts["sampled"] else
                                                    "%s (%s of %d instances)" % (name, of, parts["sampled"]))
        rows.append(row)

    def record(row):  # a row too wide for any table: "persist, 20 split:", "onCpu 1.330 ms 42%,", ...
        said = ["%s %s" % (part, "not observable" if row[2 + 2 * k] is None else "%s ms %s%%" % (
            _number(row[2 + 2 * k]), _cell(row[3 + 2 * k], 0))) for k, part in enumerate(names)]
        return ["%s, %d split:" % (row[0], row[1])] + [text + "," for text in said[:-1]] + said[-1:]

    which = ("every instance" if sampling == 1 else
             "each thread's first, then one in %s" % _count(sampling))
    lines = _wrap("Where each phase's time goes (ms, %% of its mean) over its split instances, %s "
                  "(IngestPerf.PhasePartsSampling):" % which, width, "  ", "  ")
    columns = [("phase", None), ("split", 0)]
    for part in names:
        columns += [(part, 3), ("%", 0)]
    lines += _table(columns, rows, width, record=record)
    for (part, reason), where in unobservable.items():
        lines += _wrap("note: %s is not observable for %s: %s" % (part, ", ".join(where), reason), width, "  ", "  ")
    for part, where in holding.items():
        lines += _wrap("note: %s includes the wait for a CPU for %s" % (part, ", ".join(where)), width, "  ", "  ")
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
        source = no_delay.get("source")  # an older plugin's answer may say its former option set it
        who = {"environment": "TCP_NODELAY in Orthanc's environment"}.get(source, source)
        return "DICOM TCP_NODELAY: in effect (%s): no Nagle wait on Orthanc's side of its associations" % who
    return ("DICOM TCP_NODELAY: not in effect: each C-STORE answer can wait about 40 ms for a delayed ACK "
            "(starting Orthanc with TCP_NODELAY=1 in its environment removes Orthanc's side of it)")


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

    No line is wider than `width` (default: the terminal's width, or 80 when not printed on one):
    text is wrapped between words, tables fitted (_table). What no
    transport measures, and why, is listed once, after the transports. `context=False` leaves out
    what a reset does not change and an earlier report of the same Orthanc already showed: the
    C-STORE associations, the hooks not registered and the answer's `unobservable` list.
    Tolerant of missing keys, so that a report is printed even for an older or partial answer.
    """
    width = _width(width)
    out = []

    window = stats.get("window") if isinstance(stats.get("window"), dict) else None
    if window:
        scope = ["last %s (%s s covered)" % (window.get("name", "?"), _number(window.get("seconds"), 1))]
    else:
        scope = ["since %s" % stats.get("since", "?"), "elapsed %s s" % _number(stats.get("elapsedSeconds"), 1)]
    out.extend(_wrap_parts(["%s %s on Orthanc %s" % (stats.get("plugin", "ingest-perf"), stats.get("version", "?"),
                                                     stats.get("orthancVersion", "?"))] + scope, width))
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
    part_order = vocabulary_order(stats, "phaseParts")
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
        out.extend(_transport_summary(TRANSPORT_TITLES.get(name, name), transport, outcome_names, width))
        recent = (stats.get("recent") or {}).get(name) or {}
        now = ["last %s: %s stored, %s/s, serverTotal p50 %s p99 %s ms" % (
            span, _count(figures.get("stored")), _number(figures.get("instancesPerSecond"), 1),
            _number((figures.get("serverTotalMs") or {}).get("p50")),
            _number((figures.get("serverTotalMs") or {}).get("p99")))
            for span, figures in sorted(recent.items()) if isinstance(figures, dict)]
        if now:
            out.extend(_wrap("; ".join(now), width, "  ", "  "))
        out.extend(_phase_table(transport.get("phases") or {}, width, phase_order))
        out.extend(_parts_table(transport.get("phases") or {}, width, phase_order, part_order,
                                (stats.get("configuration") or {}).get("PhasePartsSampling")))
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
        out.extend(_wrap("Timed storage (%s):" % storage.get("root", "?"), width, more="  "))
        rows = [[name, operation["count"], operation.get("failures", 0), operation.get("mean"), operation.get("p99"),
                 operation.get("megabytesPerSecond")]
                for name, operation in ((n, operations.get(n) or {}) for n in ("create", "readWhole", "readRange",
                                                                               "remove"))
                if operation.get("count")]
        out.extend(_table([("operation", None), ("calls", 0), ("failures", 0), ("mean ms", 3), ("p99 ms", 3),
                           ("MB/s", 1)], rows, width, optional=(2,)))

    associations = stats.get("associations") or {}
    peers = associations.get("byRemoteAet") or []
    connections = associations.get("openConnections") or {}
    if context and (peers or connections.get("count")):
        out.append("")
        out.extend(_wrap("C-STORE associations by calling AET, %s open now (Orthanc's sockets on its DICOM port); "
                         "in progress: known by their connection or inferred; per assoc.: mean instances per "
                         "association; gaps in ms:" % _count(connections.get("count")), width, more="  "))
        rows = []
        for peer in peers:
            per = peer.get("instancesPerAssociation") or {}
            gap = peer.get("gap") or {}
            name = str(peer.get("remoteAet", "?"))
            if (peer.get("distinctAets") or 1) > 1:  # the one "(other)" row: the AETs beyond MaxLabelValues
                name += " (%d AETs)" % peer["distinctAets"]
            rows.append([name, peer.get("finished", 0), peer.get("inProgress", 0), peer.get("byConnection", 0),
                         peer.get("inferred", 0), per.get("mean"), gap.get("mean"), gap.get("p99")])
        if rows:
            out.extend(_table([("calling AET", None), ("finished", 0), ("in progress", 0), ("by conn.", 0),
                               ("inferred", 0), ("per assoc.", 1), ("gap mean", 3), ("gap p99", 3)], rows, width,
                              optional=(3, 4)))

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
            if hook.get("cost"):
                out.extend(_wrap("what it costs: %s" % hook["cost"], width, "    "))

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


def normalize_url(url):
    """Orthanc's address as given: "localhost:8042" and "pacs" mean http://; a trailing / is dropped."""
    url = url.strip()
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", url):
        url = "http://" + url
    return url.rstrip("/")


def fetch_json(url, path, params=None, user=None, password=None, timeout=15):
    """GET <url><path>?<params> and parse it; raises ReportError with a one-line message."""
    endpoint = normalize_url(url) + path
    status, body = _fetch(endpoint, params or {}, user, password, timeout)
    if status != 200:
        raise ReportError("GET %s answered HTTP %s" % (endpoint, _describe_http_error(status, body, user)))
    try:
        return json.loads(body)
    except ValueError:
        raise ReportError("GET %s did not answer JSON: %s" % (endpoint, " ".join(body.split())[:200]))


def _fetch(endpoint, params, user, password, timeout):
    """(HTTP status, body text) of a GET; a ReportError when there is no HTTP answer at all."""
    import http.client

    url = endpoint + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
    except ValueError as e:  # "unknown url type", a malformed address
        raise ReportError("cannot reach %s: %s" % (endpoint, e))
    if user is not None:
        token = base64.b64encode(("%s:%s" % (user, password or "")).encode()).decode()
        request.add_header("Authorization", "Basic " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except urllib.error.URLError as e:
        raise ReportError("cannot reach %s: %s" % (endpoint, _root_cause(e.reason)))
    except (OSError, http.client.HTTPException, ValueError) as e:
        raise ReportError("cannot reach %s: %s" % (endpoint, _root_cause(e)))


def _root_cause(error):
    """'[Errno 111] Connection refused', 'timed out': one line, whatever wraps it."""
    text = str(error)
    match = re.search(r"\[Errno -?\d+\][^'\")]*", text)
    if match:
        return match.group(0).strip()
    if "timed out" in text.lower():
        return "timed out"
    return " ".join(text.split())[:200] or type(error).__name__


# Orthanc's own figures that explain ingest, beside the phases they explain (GET /system and
# /tools/metrics-prometheus, read by this report as any client does: the plugin never calls Orthanc's
# REST API). (metric, what it is, the phase it sits beside); a metric this Orthanc lacks is left out.
ORTHANC_TIMERS = [
    ("orthanc_store_dicom_duration_ms", "Orthanc's own store timer", "serverTotal"),
    ("orthanc_storage_create_duration_ms", "Orthanc's storage create timer", "storageWrite"),
]
# Orthanc 1.13's caches: the storage cache takes a copy of every stored file (on the storing thread,
# inside persist); the parser's and the transcoder's serve reads, not ingest.
ORTHANC_CACHES = [
    ("storage", "storage cache (a copy of each stored file, inside persist)"),
    ("dicom_parser", "parser cache (reads)"),
    ("transcoder", "transcoder cache (reads)"),
]


def fetch_orthanc_figures(url, user=None, password=None, timeout=15):
    """(GET /system as JSON, {metric: value} of /tools/metrics-prometheus, notes): what could not be
    read is None, with the reason in notes; never raises."""
    notes = []
    system = metrics = None
    try:
        system = fetch_json(url, "/system", None, user, password, timeout)
    except ReportError as e:
        notes.append(str(e))
    endpoint = normalize_url(url) + "/tools/metrics-prometheus"
    try:
        status, body = _fetch(endpoint, {}, user, password, timeout)
        if status == 200:
            metrics = parse_prometheus_values(body)
        else:
            notes.append("GET %s answered HTTP %s (Orthanc's MetricsEnabled false?)" % (endpoint, status))
    except ReportError as e:
        notes.append(str(e))
    return system, metrics, notes


def parse_prometheus_values(text):
    """{name: value} of the unlabelled samples of a Prometheus text answer (Orthanc's own metrics)."""
    values = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and not line.startswith("#") and "{" not in fields[0]:
            try:
                values[fields[0]] = float(fields[1])
            except ValueError:
                pass
    return values


def render_orthanc_figures(system, metrics, notes, stats, width=None):
    """The section of Orthanc's own figures, beside the plugin's phases they explain."""
    width = _width(width)
    out = [""] + _wrap("Orthanc's own figures (GET /system, /tools/metrics-prometheus), beside the phases:", width,
                       more="  ")
    title = len(out)
    system = system if isinstance(system, dict) else {}
    metrics = metrics if isinstance(metrics, dict) else {}

    def line(text):
        out.extend(_wrap(text, width, indent="  "))

    mode = system.get("OverwriteInstancesMode")
    if mode is not None:
        line("OverwriteInstances: %s%s" % (mode, " (a duplicate ends after a lookup in the index, inside preStore, "
                                                 "answered before any filter)" if mode in ("Never", "IfChanged") else ""))
    phases = ((stats or {}).get("transports") or {}).get("all", {}).get("phases", {})
    for name, what, phase in ORTHANC_TIMERS:
        if name in metrics:
            beside = phases.get(phase) or {}
            measured = beside.get("observable") is not False and beside.get("max") is not None
            line("%s, the longest of its last 10 s: %s ms; %s" % (
                what, _number(metrics[name], 1),
                "%s max %s ms since the %s" % (phase, _number(beside.get("max"), 1),
                                               "window" if (stats or {}).get("window") else "reset")
                if measured else "%s not measured by the plugin here" % phase))
    for prefix, what in ORTHANC_CACHES:
        hits = metrics.get("orthanc_%s_cache_hit_count" % prefix)
        misses = metrics.get("orthanc_%s_cache_miss_count" % prefix)
        if hits is None and misses is None:
            continue
        figure = lambda suffix: metrics.get("orthanc_%s_%s" % (prefix, suffix))  # noqa: E731
        line("%s: %s hits, %s misses; %s files, %s MB cached; memory %s of %s MB" % (
            what, _count(None if hits is None else int(hits)), _count(None if misses is None else int(misses)),
            _count(None if figure("cache_count") is None else int(figure("cache_count"))),
            _number(figure("cache_size_mb"), 3), _number(figure("memory_usage_mb"), 1),
            _number(figure("memory_capacity_mb"), 1)))
    performance = system.get("Performance")
    if isinstance(performance, dict) and performance:
        line("Performance (/system): " + ", ".join("%s %s" % (key, performance[key]) for key in sorted(performance)))
    if len(out) == title:
        line("none that explains ingest in this Orthanc's answers (its caches and Performance are new in 1.13.0)")
    for note in notes:
        line("not read: " + note)
    return "\n".join(out) + "\n"


# Columns of the table of the slowest instances, the ranked phase first; their short headers.
SLOWEST_PHASES = ["serverTotal", "receive", "preStore", "persist", "associationGap"]
SHORT_HEADERS = {"serverTotal": "total", "receive": "recv", "preStore": "pre", "associationGap": "gap"}


def render_slowest(answer, count=None, width=None):
    """A GET /perf/slowest answer as a table, slowest first, each instance's Orthanc ID and thread under
    its row; `count` keeps the first ones only."""
    width = _width(width)
    phase = answer.get("phase", "serverTotal")
    instances = list(answer.get("instances") or [])[:count]
    ring = answer.get("ring") or {}
    lines = _wrap("%d slowest by %s (ms) of %s instances stored in the last %s; the ring holds %s of %s, back %s s"
                  % (len(instances), phase, _count(answer.get("matched")), answer.get("window", "?"),
                     _count(ring.get("held")), _count(ring.get("capacity")), _number(ring.get("reachesBackSeconds"))),
                  width, more="  ")
    if ring.get("coversWindow") is False:
        lines += _wrap("note: the ring was overwritten within the window: older instances of it are not ranked",
                       width, "  ", "  ")
    if not instances:
        lines.append("  no instance")
        return "\n".join(lines) + "\n"
    phases = [phase] + [p for p in SLOWEST_PHASES if p != phase]
    # A phase none of them has (receive for C-STORE only, the gap for HTTP only) is no column.
    phases = [p for p in phases if p == phase or any((i.get("phases") or {}).get(p) is not None for i in instances)]
    arrivals = [str(i.get("arrival", "?")) for i in instances]
    days = {a[:10] for a in arrivals}
    same_day = len(days) == 1 and all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", a) for a in arrivals)
    legend = ", ".join("%s: %s" % (SHORT_HEADERS[p], p) for p in phases if p in SHORT_HEADERS)
    lines += _wrap("In ms; %s; at: arrival (UTC%s); via: transport; from: calling AET or address" % (
        legend, ", " + days.pop() if same_day else ""), width, "  ", "  ")
    rows, after = [], []
    for rank, (instance, arrival) in enumerate(zip(instances, arrivals), 1):
        values = instance.get("phases") or {}
        labels = instance.get("labels") or {}
        source = labels.get("remoteAet")
        if source in (None, "", "(none)"):
            source = labels.get("remoteIp", "?")
        rows.append([rank, arrival[11:23] if same_day else arrival, instance.get("transport", "?"), str(source)]
                    + [values.get(p) for p in phases])
        after.append(_wrap("instance %s, thread %s" % (instance.get("instanceId", "?"), instance.get("thread", "?")),
                           width, "     ", ""))
    columns = [("#", 0), ("at", None), ("via", None), ("from", None)]
    columns += [(SHORT_HEADERS.get(p, p), 3) for p in phases]
    lines += _table(columns, rows, width, optional=(2, 1), after=after)
    return "\n".join(lines) + "\n"


def _fix_text(fix):
    """'HttpCompressionEnabled = false; <action>' from a finding's fix."""
    settings = ["%s = %s" % (key, json.dumps(value)) for key, value in sorted((fix.get("configuration") or {}).items())]
    return "; ".join(settings + ([fix["action"]] if fix.get("action") else []))


def render_diagnosis(answer, width=None):
    """A GET /perf/diagnosis answer: the findings, most costly first, each with its fix."""
    width = _width(width)
    span = answer.get("window", "?")
    header = _wrap("Diagnosis (%s, %s s with ingest):" % (
        "since the reset" if span == "sinceReset" else "last " + span, _number(answer.get("activeSeconds"), 1)),
        width, more="  ")
    findings = answer.get("findings") or []
    if not findings:
        return "\n".join(header + _wrap(answer.get("verdict", "?"), width, "  ")) + "\n\n"
    lines = header
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


DESCRIPTION = """\
The ingest-perf diagnosis and statistics of an Orthanc (GET /perf/diagnosis and
/perf/stats): the findings first, most costly first, each with its fix; then
where the time goes, phase by phase. Durations are in milliseconds."""

USAGE = """\
examples:
  %(prog)s --url pacs:8042 --user admin      # asks for the password
  %(prog)s --transport dicom --window 5m
  %(prog)s --slowest 20
  %(prog)s --json saved-stats.json
  %(prog)s --trace trace.json --seconds 300

Lines fit --width (default: the terminal's width, 80 when not on a terminal).
Exit code 0, or 2 when the server cannot be reached or refuses the request."""


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("expected a positive integer, got %s" % text)
    return value


def _parser(prog):
    parser = argparse.ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter, description=DESCRIPTION, epilog=USAGE)
    parser.add_argument("--url", default="http://localhost:8042",
                        help="Orthanc's HTTP address, http:// when no scheme is given (default: %(default)s)")
    parser.add_argument("--user", help="HTTP basic authentication user")
    parser.add_argument("--password", help="password of --user (prompted for when omitted on a terminal)")
    parser.add_argument("--transport", choices=["rest", "dicom", "plugin", "job", "all"],
                        help="only this transport ('all': merged over every transport); default: each of them")
    parser.add_argument("--json", metavar="FILE",
                        help="read a saved /perf/stats answer instead of querying ('-': stdin)")
    parser.add_argument("--slowest", metavar="N", type=_positive,
                        help="print the N slowest recent instances (GET /perf/slowest; with --json: a saved answer)")
    parser.add_argument("--phase", default="serverTotal",
                        help="with --slowest: the phase to rank by (default: %(default)s)")
    parser.add_argument("--window",
                        help="only the recent past: 1m, 5m, 15m or 1h (default: since the start or the last reset; "
                             "with --slowest: 5m, and any number of s, m or h)")
    parser.add_argument("--trace", metavar="FILE",
                        help="save GET /perf/trace (Chrome trace JSON) to FILE, print a summary")
    parser.add_argument("--seconds", type=_positive, default=60, help="with --trace: how recent (default: %(default)s)")
    parser.add_argument("--no-diagnosis", action="store_true",
                        help="do not print GET /perf/diagnosis before the statistics (it is never read with --json)")
    parser.add_argument("--width", type=_positive,
                        help="the widest line, in characters (default: the terminal's width, 80 when not on a "
                             "terminal; at least %d)" % MINIMUM_WIDTH)
    return parser


def main(argv=None, prog=None):
    """The command: prints the report, returns the exit code (0, or EXIT_ERROR with one line on stderr)."""
    parser = _parser(prog or os.path.basename(sys.argv[0]) or "perf_report")
    args = parser.parse_args(argv)
    width = _width(args.width)
    try:
        password = args.password
        if not args.json and args.user is not None and password is None:
            if not sys.stdin.isatty():
                raise ReportError("--user given without --password and no terminal to prompt on")
            password = getpass.getpass("Password for %s: " % args.user)
        if args.slowest or args.trace:
            if args.slowest:
                if args.json:
                    answer = load_json(args.json)
                else:
                    params = {"n": args.slowest, "phase": args.phase, "window": args.window or "5m"}
                    if args.transport:
                        params["transport"] = args.transport
                    answer = fetch_json(args.url, "/perf/slowest", params, args.user, password)
                if not isinstance(answer, dict):
                    raise ReportError("not a /perf/slowest document (expected a JSON object)")
                sys.stdout.write(render_slowest(answer, args.slowest, width))
            if args.trace:
                trace = fetch_json(args.url, "/perf/trace", {"seconds": args.seconds}, args.user, password, timeout=60)
                try:
                    with open(args.trace, "w", encoding="utf-8") as f:
                        json.dump(trace, f)
                except OSError as e:
                    raise ReportError("cannot write %s: %s" % (args.trace, e))
                sys.stdout.write("\n".join(_wrap("%s: %s" % (args.trace, trace_summary(trace)), width, more="  "))
                                 + "\n")
            return 0
        if args.json:
            stats = filter_transport(load_json(args.json), args.transport)
        else:
            stats = fetch_stats(args.url, args.transport, args.user, password, window=args.window)
            if not args.no_diagnosis:
                params = {"window": args.window or "5m"}
                if args.transport:
                    params["transport"] = args.transport
                sys.stdout.write(render_diagnosis(
                    fetch_json(args.url, "/perf/diagnosis", params, args.user, password), width))
        if not isinstance(stats, dict):
            raise ReportError("not a /perf/stats document (expected a JSON object)")
        sys.stdout.write(render(stats, width))
        if not args.json:
            system, metrics, notes = fetch_orthanc_figures(args.url, args.user, password)
            sys.stdout.write(render_orthanc_figures(system, metrics, notes, stats, width))
    except ReportError as e:
        sys.stderr.write("%s: %s\n" % (parser.prog, e))
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="perf_report"))
