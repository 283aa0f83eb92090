"""How much does timing the ingest transcoding cost? Side by side, in one run:

  no plugin | plugin, TranscodeTiming FallThrough | plugin, TranscodeTiming Delegate
  x transcoder: Orthanc's DCMTK, Debian's orthanc-gdcm (loaded after the plugin)
  x 1 and 2 concurrent C-STORE associations (storescu), TCP_NODELAY=1 on both sides so that
    the network wait of DCMTK does not hide the server's work

Runs are interleaved (every configuration once, then again) and the median throughput of the
repetitions is reported, with the plugin's transcode phase where it measures one.
C-STORE rather than HTTP: Debian's orthanc-gdcm can overflow the 100 KiB stack of Orthanc 1.10.1's
HTTP threads while writing JPEG lossless.

  .venv/bin/python -m ingest_perf.benchmarks.transcode_timing [--slices 40] [--repeat 3] [--size 512]
"""
import argparse
import os
import statistics
import tempfile


from ingest_perf.clients import Concurrently, split
from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import OrthancProcess, default_plugin_path

GDCM = "/usr/share/orthanc/plugins/libOrthancGdcm.so"
TARGET = "1.2.840.10008.1.2.4.70"


def run_once(work, plugin, timing, transcoder, clients, files):
    plugins = [] if plugin is None else [plugin]
    if transcoder == "gdcm":
        plugins.append(GDCM)
    config = {"IngestTranscoding": TARGET, "Plugins": plugins, "DicomThreadsCount": 4}
    orthanc = OrthancProcess(work, plugin_path=None, extra_config=config, env={"TCP_NODELAY": "1"},
                             ingest_perf={"TranscodeTiming": timing} if timing else None)
    with orthanc:
        associations = Concurrently([lambda i=i, part=part: orthanc.storescu(part, calling_aet="SCU%d" % i,
                                                                           env={"TCP_NODELAY": "1"})
                                     for i, part in enumerate(split(files, clients))])
        associations.run()
        elapsed = associations.seconds
        transcode = None
        if plugin is not None:
            transcode = orthanc.stats(transport="dicom")["transports"]["dicom"]["phases"]["transcode"]
        return len(files) / elapsed, transcode


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slices", type=int, default=40)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plugin", default=default_plugin_path())
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="transcode-timing-")
    files = write_series(os.path.join(root, "series"), args.slices, seed=31, rows=args.size, columns=args.size)
    modes = [("no plugin", None, None), ("FallThrough", args.plugin, "FallThrough"),
             ("Delegate", args.plugin, "Delegate")]
    configurations = [(mode, transcoder, clients) for transcoder in ("dcmtk", "gdcm") for clients in (1, 2)
                      for mode in modes]
    results = {}
    for repetition in range(args.repeat):
        for index, (mode, transcoder, clients) in enumerate(configurations):
            work = os.path.join(root, "orthanc-%d-%d" % (repetition, index))
            rate, transcode = run_once(work, mode[1], mode[2], transcoder, clients, files)
            results.setdefault((mode[0], transcoder, clients), []).append((rate, transcode))

    print("%d slices of %dx%d, explicit little endian -> JPEG lossless (%s), C-STORE with TCP_NODELAY=1, "
          "median of %d interleaved runs" % (args.slices, args.size, args.size, TARGET, args.repeat))
    print()
    print("| transcoder | associations | mode | instances/s | vs no plugin | transcode p50 (ms) | transcode mean (ms) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for transcoder in ("dcmtk", "gdcm"):
        for clients in (1, 2):
            baseline = statistics.median(r for r, _ in results[("no plugin", transcoder, clients)])
            for mode in modes:
                runs = results[(mode[0], transcoder, clients)]
                rate = statistics.median(r for r, _ in runs)
                phases = [t for _, t in runs if t is not None and t["count"]]
                p50 = "%.2f" % statistics.median(t["p50"] for t in phases) if phases else "-"
                mean = "%.2f" % statistics.median(t["mean"] for t in phases) if phases else "-"
                print("| %s | %d | %s | %.1f | %+.1f%% | %s | %s |" % (
                    transcoder, clients, mode[0], rate, 100.0 * (rate / baseline - 1), p50, mean))


if __name__ == "__main__":
    main()
