"""Markdown tables and PNG plots from the results of run_benchmarks.py."""
import math
import os


def percentile(values, fraction):
    """The nearest-rank percentile: the smallest value with at least `fraction` of them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)] if ordered else None


def _f(value, digits=1):
    if value is None:
        return "-"
    return ("%." + str(digits) + "f") % value


def table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def micro_table(micro):
    targets = {"BM_OneEvent": ("<= 100 ns per event", lambda ns: ns <= 100),
               "BM_FullInstance_Http/threads:1": ("<= 1 us per instance", lambda ns: ns <= 1000),
               "BM_FullInstance_CStore": ("<= 1 us per instance", lambda ns: ns <= 1000),
               "BM_StatsAnswer_FullLabels/0/0": ("<= 5 ms", lambda ns: ns <= 5e6),
               "BM_StatsAnswer_FullLabels/0/1": ("<= 5 ms", lambda ns: ns <= 5e6),
               "BM_StatsAnswer_FullLabels/1/0": ("<= 5 ms", lambda ns: ns <= 5e6),
               "BM_MetricsAnswer_FullLabels": ("<= 5 ms", lambda ns: ns <= 5e6)}
    rows = []
    for name, ns in micro:
        target, check = targets.get(name, ("", None))
        shown = "%.1f ns" % ns if ns < 1e4 else "%.2f ms" % (ns / 1e6)
        rows.append((name, shown, target, "" if check is None else ("met" if check(ns) else "**missed**")))
    return table(["benchmark", "time (median)", "target", ""], rows)


def ingest_table(rows, client_counts):
    workloads = []
    for row in rows:
        if row["workload"] not in workloads:
            workloads.append(row["workload"])
    lines = []
    for workload in workloads:
        cells = [workload]
        for clients in client_counts:
            match = [r for r in rows if r["workload"] == workload and r["clients"] == clients]
            cells.append("%s / %s" % (_f(match[0]["instancesPerSecond"]), _f(match[0]["megabytesPerSecond"]))
                         if match else "-")
        lines.append(cells)
    return table(["workload"] + ["x%d (inst/s / MB/s)" % c for c in client_counts], lines)


def side_by_side_table(rows):
    lines = []
    for r in rows:
        client = ("%s / %s" % (_f(r["latencyP50"]), _f(r["latencyP99"])) if r["latencyMeasured"]
                  else "%s (mean)" % _f(r["latencyMean"]))
        # One association per client: the first instance of each has no gap before it.
        gap_per_instance = (r.get("gapMean") or 0.0) * max(0, r["instances"] - r["clients"]) / r["instances"]
        remainder = r["latencyMean"] - (r["totalMean"] or 0.0) - gap_per_instance
        lines.append((r["workload"], r["clients"], client, "%s / %s" % (_f(r["totalP50"], 2), _f(r["totalP99"], 2)),
                      _f(r["receiveP50"], 2), _f(r["preStoreP50"], 2), _f(r["persistP50"], 2),
                      _f(r.get("gapMean"), 1), _f(remainder, 1)))
    return table(["workload", "clients", "client latency p50 / p99 (ms)", "serverTotal p50 / p99",
                  "receive p50", "preStore p50", "persist p50", "associationGap mean",
                  "unexplained: client mean - serverTotal mean - gaps per instance"], lines)


def variant_table(rows):
    return table(["variant", "instances/s", "MB/s", "serverTotal p50 (ms)", "associationGap mean (ms)"],
                 [(r["variant"], _f(r["instancesPerSecond"]), _f(r["megabytesPerSecond"]), _f(r["totalP50"], 2),
                   _f(r.get("gapMean"), 1)) for r in rows])


def download_table(rows):
    return table(["dataset", "clients", "method", "MB moved", "seconds", "MB/s"],
                 [(r["dataset"], r["clients"], r["method"], _f(r["megabytes"]), _f(r["seconds"], 2),
                   _f(r["megabytesPerSecond"])) for r in rows])


def overhead_table(rows):
    lines = []
    for r in rows:
        own = "-"
        if r.get("selfMicroseconds") is not None:
            own = "%.1f us, %.2f%% / %s" % (r["selfMicroseconds"], r["selfPercentOfServerTotal"],
                                            "-" if r.get("selfPercentOfCpu") is None
                                            else "%.2f%%" % r["selfPercentOfCpu"])
        # CPU time comes in clock ticks (10 ms): a short run can measure none on one side.
        cpu_change = ("%+.1f%%" % ((r["cpuMsWith"] / r["cpuMsWithout"] - 1) * 100)
                      if r["cpuMsWithout"] > 0 else "- (no CPU tick measured)")
        lines.append((r["case"], "%d (%d)" % (r["rounds"], r["pairs"]), _f(r["withoutPlugin"]),
                      _f(r["withPlugin"]), "%.3f" % r["ratio"], "%.3f .. %.3f" % (r["ratioLow"], r["ratioHigh"]),
                      "%.3f .. %.3f" % (r["roundRatioMin"], r["roundRatioMax"]),
                      "%+.1f%%" % ((r["ratio"] - 1) * 100), "%.3f / %.3f" % (r["cpuMsWithout"], r["cpuMsWith"]),
                      cpu_change, own))
    return table(["case", "rounds (chunk pairs)", "A (inst/s)", "B (inst/s)", "throughput B/A",
                  "95% interval (rounds resampled)", "rounds from .. to", "throughput change",
                  "Orthanc CPU ms/instance A / B", "CPU change",
                  "plugin's own time per instance, % of serverTotal / of CPU"], lines)


def _save(plt, figure, folder, name):
    path = os.path.join(folder, name)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plots(folder, results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(folder, exist_ok=True)
    made = []
    rows = results.get("ingestCt") or []
    if rows:
        figure, axis = plt.subplots(figsize=(8, 4.5))
        for workload in sorted({r["workload"] for r in rows}):
            points = sorted((r["clients"], r["instancesPerSecond"]) for r in rows if r["workload"] == workload)
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=workload)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("concurrent clients")
        axis.set_ylabel("instances/s")
        axis.set_title("Ingest of the CT series into Orthanc 1.10.1 with the plugin")
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8)
        made.append(_save(plt, figure, folder, "ingest-ct.png"))
    overhead = results.get("overhead") or []
    if overhead:
        figure, axis = plt.subplots(figsize=(9, 4))
        labels = [r["case"] for r in overhead]
        positions = list(range(len(overhead)))
        for y, r in zip(positions, overhead):
            color = "#4c72b0" if r["plugin"] else "#999999"
            axis.errorbar([r["ratio"]], [y], xerr=[[r["ratio"] - r["ratioLow"]], [r["ratioHigh"] - r["ratio"]]],
                          fmt="o", color=color, capsize=4)
            axis.plot([r["roundRatioMin"], r["roundRatioMax"]], [y + 0.25, y + 0.25], color=color, alpha=0.4,
                      linewidth=3)
        axis.set_yticks(positions)
        axis.set_yticklabels(labels)
        axis.axvline(1.0, color="black", linewidth=0.8)
        axis.axvline(0.99, color="red", linewidth=0.8, linestyle="--", label="1% loss")
        axis.plot([], [], color="#999999", alpha=0.4, linewidth=3, label="spread of the rounds")
        axis.set_xlabel("throughput B / A: ratio and 95% interval (fresh Orthanc pairs per round)")
        axis.legend(fontsize=8, loc="lower right")
        lo = min(min(r["roundRatioMin"] for r in overhead), 0.97)
        hi = max(max(r["roundRatioMax"] for r in overhead), 1.03)
        axis.set_xlim(lo - 0.01, hi + 0.01)
        axis.invert_yaxis()
        axis.grid(True, axis="x", alpha=0.3)
        made.append(_save(plt, figure, folder, "overhead.png"))
    downloads = results.get("downloads") or []
    if downloads:
        datasets = sorted({r["dataset"] for r in downloads})
        methods = [m for m in dict.fromkeys(r["method"] for r in downloads)]
        figure, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
        for axis, clients in zip(axes, (1, 10)):
            width = 0.8 / max(1, len(methods))
            for index, method in enumerate(methods):
                values = []
                for dataset in datasets:
                    match = [r for r in downloads if r["dataset"] == dataset and r["method"] == method
                             and r["clients"] == clients]
                    values.append(match[0]["megabytesPerSecond"] if match else 0)
                axis.bar([d + index * width for d in range(len(datasets))], values, width, label=method)
            axis.set_xticks([d + 0.4 - width / 2 for d in range(len(datasets))])
            axis.set_xticklabels(datasets)
            axis.set_title("%d client%s" % (clients, "" if clients == 1 else "s"))
            axis.set_yscale("log")
            axis.grid(True, axis="y", alpha=0.3)
        axes[0].set_ylabel("MB/s (log)")
        axes[1].legend(fontsize=7)
        made.append(_save(plt, figure, folder, "downloads.png"))
    return made
