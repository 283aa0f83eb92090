"""The /perf/stats breakdown in the configurations issue 3 added, printed with perf_report:

  transcoding   IngestTranscoding to JPEG lossless, with Orthanc's DCMTK (C-STORE then HTTP), and
                with Debian's orthanc-gdcm loaded after the plugin (C-STORE only: see
                docs/measurements/transcoding.md for why not HTTP)
  storage       TimedStorage on: persist split into storage write and index update (C-STORE then HTTP)

Every instance has its phases split into on a CPU, waiting for a CPU and blocked (PhasePartsSampling
1, --parts-sampling), so that the report's "where each phase's time goes" rests on every instance.

  .venv/bin/python -m ingest_perf.benchmarks.breakdowns [--slices 40] [--size 512] [--parts-sampling 1]
"""
import argparse
import os
import tempfile


from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import OrthancProcess, default_plugin_path
from ingest_perf.perf_report import render

GDCM = "/usr/share/orthanc/plugins/libOrthancGdcm.so"
JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"


def scenario(title, root, plugins, extra, ingest_perf, cstore, http, width):
    print("=" * width)
    print(title)
    print("=" * width)
    orthanc = OrthancProcess(os.path.join(root, title.split()[0].lower() + str(len(os.listdir(root)))),
                             plugin_path=None, extra_config=dict(extra, Plugins=plugins),
                             ingest_perf=ingest_perf)
    with orthanc:
        if cstore:
            orthanc.storescu(cstore, calling_aet="MODALITY")
        if http:
            orthanc.http_upload(http)
        print(render(orthanc.stats(), width=width))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slices", type=int, default=40)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--plugin", default=default_plugin_path())
    parser.add_argument("--parts-sampling", type=int, default=1, help="IngestPerf.PhasePartsSampling")
    args = parser.parse_args()
    parts = {"PhasePartsSampling": args.parts_sampling}
    root = tempfile.mkdtemp(prefix="breakdowns-")
    half = args.slices // 2
    files = write_series(os.path.join(root, "series"), args.slices, seed=101, rows=args.size, columns=args.size)
    os.makedirs(os.path.join(root, "runs"))
    runs = os.path.join(root, "runs")
    width = 110
    transcode = {"IngestTranscoding": JPEG_LOSSLESS}
    scenario("DCMTK transcoding to JPEG lossless: %d instances by C-STORE, %d by HTTP" % (half, args.slices - half),
             runs, [args.plugin], transcode, parts, files[:half], files[half:], width)
    scenario("GDCM transcoding to JPEG lossless: %d instances by C-STORE" % args.slices,
             runs, [args.plugin, GDCM], transcode, parts, files, None, width)
    scenario("Timed storage: %d instances by C-STORE, %d by HTTP" % (half, args.slices - half),
             runs, [args.plugin], {}, dict(parts, TimedStorage=True), files[:half], files[half:], width)


if __name__ == "__main__":
    main()
