"""The plugin's own cost inside a real Orthanc, per stored instance, for one or more plugin builds
side by side (e.g. before and after a change).

Each plugin gets a fresh Orthanc per round; N synthetic instances go in by one keep-alive HTTP
client, then (after a delete and a reset) by one storescu association. The figure is
/perf/stats "pluginCost": one callback call in 17 is timed from entry to return on each thread,
SDK calls included, in thread CPU time (a preemption does not count), the total scaled to all
calls, plus the plugin's own thread until it sleeps again after the instances. Rounds are
interleaved and each one is printed, with the median.

  .venv/bin/python -m ingest_perf.benchmarks.plugin_cost --plugin A.so [--plugin B.so] [--instances 1500] [--rounds 3]

A plugin may carry options of its IngestPerf section after a "?", e.g. "B.so?PhasePartsSampling=0"
(integers, true/false, or strings), to compare one build with itself in two configurations.
"""
import argparse
import os
import statistics
import tempfile
import time


from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import HOST_ORTHANC, OrthancProcess, default_plugin_path


def option_value(text):
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return text


def plugin_and_options(argument):
    """("path", {IngestPerf option: value}) from "path" or "path?Key=Value&Key=Value"."""
    path, _, query = argument.partition("?")
    options = {}
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        options[key] = option_value(value)
    return os.path.abspath(path), options


def measure(plugin, files, orthanc_version):
    """{transport: (us per instance, {callback: p50 us})} for one fresh Orthanc."""
    result = {}
    path, options = plugin_and_options(plugin)
    with tempfile.TemporaryDirectory() as work:
        with OrthancProcess(work, plugin_path=path, orthanc=orthanc_version, ingest_perf=options or None) as orthanc:
            for transport, send in (("http", orthanc.http_upload), ("dicom", orthanc.storescu)):
                orthanc.delete_all()
                orthanc.reset_stats()
                idle_wakes = orthanc.stats()["pluginCost"]["threads"]["ingestWatcher"]["idleWakes"]
                send(files)
                cost = orthanc.stats()["pluginCost"]
                while cost["threads"]["ingestWatcher"]["idleWakes"] == idle_wakes:  # its last ticks after ingest
                    time.sleep(0.5)
                    cost = orthanc.stats()["pluginCost"]
                if cost["storedInstances"] != len(files):
                    raise SystemExit("%s: %d instances stored of %d" % (transport, cost["storedInstances"], len(files)))
                callbacks = {name: value["p50"] * 1000 for name, value in cost["callbacks"].items() if value.get("count")}
                callbacks["(thread)"] = cost["threadsMicrosecondsPerStoredInstance"]
                result[transport] = (cost["microsecondsPerStoredInstance"], callbacks)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", action="append", help="a plugin build (repeatable; default: build/'s)")
    parser.add_argument("--instances", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--orthanc", default=HOST_ORTHANC,
                        help="1.10.1 (host), 1.12.7 (Debian 13 root) or 1.13.0 (Debian unstable root)")
    args = parser.parse_args()
    plugins = args.plugin or [default_plugin_path()]
    files = write_series(tempfile.mkdtemp(prefix="plugin-cost-"), args.instances, rows=64, columns=64)

    runs = {(p, t): [] for p in plugins for t in ("http", "dicom")}
    callbacks = {(p, t): {} for p in plugins for t in ("http", "dicom")}
    for round_index in range(args.rounds):
        for plugin in plugins:  # interleaved: every plugin once per round
            for transport, (per_instance, per_callback) in measure(plugin, files, args.orthanc).items():
                runs[(plugin, transport)].append(per_instance)
                for name, p50 in per_callback.items():
                    callbacks[(plugin, transport)].setdefault(name, []).append(p50)
                print("round %d  %-6s %s: %.2f us per instance" % (round_index + 1, transport, plugin, per_instance),
                      flush=True)

    print("\nOrthanc %s, %d instances per transport, %d rounds; median (and every round) of pluginCost, "
          "us of CPU per stored instance; (thread): the plugin's thread per instance"
          % (args.orthanc, args.instances, args.rounds))
    print("| plugin | transport | us per instance | rounds | callback medians (us) |")
    print("| --- | --- | ---: | --- | --- |")
    for plugin in plugins:
        for transport in ("http", "dicom"):
            values = runs[(plugin, transport)]
            medians = ", ".join("%s %.1f" % (name, statistics.median(v))
                                for name, v in sorted(callbacks[(plugin, transport)].items()))
            print("| %s | %s | %.1f | %s | %s |" % (plugin, transport, statistics.median(values),
                                                  " ".join("%.1f" % v for v in values), medians))


if __name__ == "__main__":
    main()
