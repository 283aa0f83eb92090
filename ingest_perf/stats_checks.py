"""Assertions on a /perf/stats document shared by the integration tests."""
import time

TOTAL_PHASES = ("receive", "preStore", "persist")


def observable(phase):
    return phase.get("observable", True)


def check_phase_invariants(transport_stats, name=""):
    """Every measured phase: non-negative, min <= p50 <= p90 <= p99 <= p99.9 <= max."""
    for phase_name, phase in transport_stats["phases"].items():
        if not observable(phase) or phase["count"] == 0:
            continue
        where = "%s.%s" % (name, phase_name)
        assert phase["min"] >= 0, where
        ordered = [phase[k] for k in ("min", "p50", "p90", "p99", "p99.9", "max")]
        assert ordered == sorted(ordered), "%s: %s" % (where, ordered)
        assert phase["min"] <= phase["mean"] <= phase["max"], where
        assert abs(phase["sum"] - phase["mean"] * phase["count"]) <= 0.001 * phase["count"] + 0.001, where


def sum_of_phase_means(transport_stats):
    phases = transport_stats["phases"]
    return sum(phases[p]["mean"] for p in TOTAL_PHASES if observable(phases[p]) and phases[p]["count"])


def check_phases_within_total(transport_stats, name=""):
    """The phases that make up serverTotal never add up to more than it (0.1 us rounding each)."""
    total = transport_stats["phases"]["serverTotal"]
    assert total["count"] > 0, name
    assert sum_of_phase_means(transport_stats) <= total["mean"] + 0.0005, name


def stored(stats, transport):
    return stats["transports"][transport]["instances"]["stored"]


def wait_for(orthanc, predicate, timeout=15, **params):
    """Polls /perf/stats until predicate(stats) holds; returns the last document."""
    deadline = time.time() + timeout
    while True:
        stats = orthanc.stats(**params)
        if predicate(stats) or time.time() > deadline:
            return stats
        time.sleep(0.05)


def changes_paired(stats, transport):
    change = stats["transports"][transport]["phases"]["changeDispatch"]
    return change["count"] + change["deliveredBeforeOnStored"]
