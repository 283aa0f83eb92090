"""/perf/stats pluginCost: the plugin's own CPU time (its callbacks and its thread) per stored
instance is stable from run to run of one workload, whatever else runs on the machine: thread CPU
time, which a preemption does not advance, with the plugin's thread counted until it sleeps again."""
import statistics
import time

import pytest

RUNS = 20
INSTANCES = 60
# The runs take turns on ORTHANCS Orthancs: after its instances, a run waits about 5 s for the
# plugin's thread to sleep again (it ticks for 4 s after the last instance), while the next run sends
# its instances to another Orthanc. One run sends at a time; each is measured on its Orthanc alone.
ORTHANCS = 3


def watcher_of(orthanc):
    return orthanc.stats()["pluginCost"]["threads"]["ingestWatcher"]


def wait_until_watcher_sleeps(orthanc, since=None, timeout=60):
    """Until the plugin's thread has found Orthanc idle (a wake with nothing to do) since the reset;
    at most `timeout` s after `since` (a time.monotonic(); default: now)."""
    deadline = (time.monotonic() if since is None else since) + timeout
    while time.monotonic() < deadline:
        watcher = watcher_of(orthanc)
        if watcher["idleWakes"] >= 1:
            return watcher
        time.sleep(0.2)
    raise AssertionError("the plugin's thread did not go back to sleep: %s" % watcher_of(orthanc))


def test_twenty_runs_of_one_workload_within_twice_their_median(orthanc_factory, series_factory):
    orthancs = [orthanc_factory() for _ in range(ORTHANCS)]
    for orthanc in orthancs:
        wait_until_watcher_sleeps(orthanc)  # the ticks after Orthanc's start are over
    figures, parts, sent = [], [], {}

    def measure(orthanc):
        watcher = wait_until_watcher_sleeps(orthanc, since=sent[orthanc])  # its ticks during and after the run are in
        cost = orthanc.stats()["pluginCost"]
        assert cost["storedInstances"] == INSTANCES, cost
        assert watcher["running"] and watcher["ticks"] >= 1, watcher
        assert cost["threadsMicrosecondsPerStoredInstance"] > 0, cost
        assert cost["callbacksMicrosecondsPerStoredInstance"] > 0, cost
        assert cost["microsecondsPerStoredInstance"] == pytest.approx(
            cost["callbacksMicrosecondsPerStoredInstance"] + cost["threadsMicrosecondsPerStoredInstance"], abs=0.002)
        figures.append(cost["microsecondsPerStoredInstance"])
        parts.append((cost["callbacksMicrosecondsPerStoredInstance"], cost["threadsMicrosecondsPerStoredInstance"]))

    for run in range(RUNS):
        orthanc = orthancs[run % ORTHANCS]
        if run >= ORTHANCS:
            measure(orthanc)  # its previous run, in the order they ran
        files = series_factory(INSTANCES, 100 + run, size=64)  # new instances each run: all stored
        orthanc.reset_stats()
        assert watcher_of(orthanc)["idleWakes"] == 0
        orthanc.http_upload(files)
        sent[orthanc] = time.monotonic()
    for run in range(RUNS, RUNS + ORTHANCS):
        measure(orthancs[run % ORTHANCS])
    middle = statistics.median(figures)
    print("pluginCost of %d runs of %d HTTP instances, us per stored instance: median %.1f (callbacks %.1f, "
          "thread %.1f), runs %s" % (RUNS, INSTANCES, middle, statistics.median(p[0] for p in parts),
                                     statistics.median(p[1] for p in parts), ", ".join("%.1f" % f for f in figures)))
    outside = [f for f in figures if not middle / 2 <= f <= middle * 2]
    assert not outside, "median %.1f us, runs %s" % (middle, ", ".join("%.1f" % f for f in figures))

