"""The crash table of issue 8, re-run: Orthanc with orthanc-gdcm and orthanc-dicomweb,
"IngestTranscoding" JPEG lossless, "BuiltinDecoderTranscoderOrder" "After", receiving STOW-RS
requests of 12 CT slices (512x512, explicit little endian), the study deleted between requests;
with and without this plugin, on each Orthanc. A run ends at its first crash.

    .venv/bin/python -m ingest_perf.benchmarks.gdcm_stow_crash --runs 10 --requests 20 [--orthanc 1.10.1,1.12.7,1.13.0]

Prints one Markdown row per Orthanc and plugin state: runs that crashed, requests answered, and
crashes per request.
"""
import argparse
import os
import tempfile

import requests


from ingest_perf.clients import stow_body
from ingest_perf.generate_series import write_series
from ingest_perf.orthanc_process import ALL_ORTHANCS, OrthancProcess, debian_plugin, default_plugin_path

JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70"


def one_run(folder, version, with_plugin, body, headers, request_count):
    """Returns (crashed, requests answered)."""
    plugins = [debian_plugin("libOrthancGdcm.so", version), debian_plugin("libOrthancDicomWeb.so", version)]
    if with_plugin:
        plugins = [default_plugin_path()] + plugins
    orthanc = OrthancProcess(folder, plugin_path=None, orthanc=version,
                             extra_config={"Plugins": plugins, "IngestTranscoding": JPEG_LOSSLESS,
                                           "BuiltinDecoderTranscoderOrder": "After"})
    orthanc.start()
    answered = 0
    try:
        for _ in range(request_count):
            try:
                answer = requests.post(orthanc.url + "/dicom-web/studies", data=body, headers=headers, timeout=120)
            except requests.ConnectionError:
                return True, answered
            if answer.status_code != 200:
                raise RuntimeError("STOW-RS answered %d: %s" % (answer.status_code, answer.text[:300]))
            answered += 1
            for study in orthanc.get("/studies").json():
                orthanc.delete("/studies/" + study)
        return False, answered
    finally:
        orthanc.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--orthanc", default=",".join(ALL_ORTHANCS))
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gdcm-stow-crash-")
    body, headers = stow_body(write_series(os.path.join(work, "series"), 12, seed=1, rows=512, columns=512))
    print("| Orthanc | this plugin | runs that crashed | requests answered | crashes per request |")
    print("| --- | --- | --- | --- | --- |")
    for version in arguments.orthanc.split(","):
        for with_plugin in (False, True):
            crashed = answered = 0
            for run in range(arguments.runs):
                folder = os.path.join(work, "%s-%d-%d" % (version, with_plugin, run))
                crash, count = one_run(folder, version, with_plugin, body, headers, arguments.requests)
                crashed += crash
                answered += count
            print("| %s | %s | %d of %d | %d of %d | %.3f |" % (
                version, "loaded" if with_plugin else "not loaded", crashed, arguments.runs, answered,
                arguments.runs * arguments.requests, crashed / max(1, answered + crashed)), flush=True)


if __name__ == "__main__":
    main()
