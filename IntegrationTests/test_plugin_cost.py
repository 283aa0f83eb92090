"""/perf/stats pluginCost: the plugin's own CPU time (its callbacks and its thread) per stored
instance is stable from run to run of one workload, whatever else runs on the machine: thread CPU
time, which a preemption does not advance, with the plugin's thread counted until it sleeps again.
What a busy machine does to every thread's CPU time (caches, interrupts handled on the thread, the
CPU's frequency) it does to Orthanc's own as well: each run's figure is compared as a share of
Orthanc's whole CPU time per instance in the same run (the null), whose runs are printed beside.
The callbacks' share holds in every run; the whole share in all runs but one at most: the plugin's
thread costs 1 ms or so per run of 200 instances, and one run in about 60 here had it at 11 ms
(Orthanc's own CPU per instance up by a third in the same runs: the machine's other work)."""
import os
import statistics
import time

import pytest

RUNS = 20
INSTANCES = 200
# The runs take turns on ORTHANCS Orthancs: after its instances, a run waits about 5 s for the
# plugin's thread to sleep again (it ticks for 4 s after the last instance), while the next run sends
# its instances to another Orthanc. One run sends at a time; each is measured on its Orthanc alone.
ORTHANCS = 3


def process_cpu_seconds(pid):
    """utime + stime of a whole process (/proc/PID/stat), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    figures, parts, sent, shares, orthanc_us, cpu_before = [], [], {}, [], [], {}

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
        process_us = (process_cpu_seconds(orthanc.pid) - cpu_before[orthanc]) * 1e6 / INSTANCES
        orthanc_us.append(process_us)
        shares.append(cost["microsecondsPerStoredInstance"] / process_us)

    for run in range(RUNS):
        orthanc = orthancs[run % ORTHANCS]
        if run >= ORTHANCS:
            measure(orthanc)  # its previous run, in the order they ran
        files = series_factory(INSTANCES, 100 + run, size=64)  # new instances each run: all stored
        orthanc.reset_stats()
        assert watcher_of(orthanc)["idleWakes"] == 0
        cpu_before[orthanc] = process_cpu_seconds(orthanc.pid)
        orthanc.http_upload(files)
        sent[orthanc] = time.monotonic()
    for run in range(RUNS, RUNS + ORTHANCS):
        measure(orthancs[run % ORTHANCS])
    middle = statistics.median(shares)
    print("pluginCost of %d runs of %d HTTP instances, us per stored instance: median %.1f (callbacks %.1f, "
          "thread %.1f), runs %s; Orthanc's whole CPU per instance, us: median %.0f, runs %s; the plugin's share: "
          "median %.3f" % (RUNS, INSTANCES, statistics.median(figures), statistics.median(p[0] for p in parts),
                           statistics.median(p[1] for p in parts), ", ".join("%.1f" % f for f in figures),
                           statistics.median(orthanc_us), ", ".join("%.0f" % u for u in orthanc_us), middle))
    callback_shares = [p[0] / u for p, u in zip(parts, orthanc_us)]
    callbacks_middle = statistics.median(callback_shares)
    assert all(callbacks_middle / 2 <= c <= callbacks_middle * 2 for c in callback_shares), (
        "the callbacks' share of Orthanc's CPU per instance, median %.4f, runs %s"
        % (callbacks_middle, ", ".join("%.4f" % c for c in callback_shares)))
    outside = [s for s in shares if not middle / 2 <= s <= middle * 2]
    assert len(outside) <= 1, "share median %.3f, runs: share (pluginCost us = callbacks + thread / Orthanc us) %s" % (
        middle, ", ".join("%.3f (%.1f = %.1f + %.1f / %.0f)" % (s, f, p[0], p[1], u)
                          for s, f, p, u in zip(shares, figures, parts, orthanc_us)))
