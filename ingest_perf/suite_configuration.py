"""Runs GenerateConfigurationForTests.py of Orthanc's own suite with its download of Orthanc's default
configuration replaced by a local file: run as a file by the suite's own interpreter (Python 2.7, or
3), never imported by ours, so it is Python 2.7 code and imports nothing of this package.
ingest_perf.compare_orthanc_suite starts it:

    COMPARE_SUITE_DEFAULT_CONFIGURATION=FILE PY2 suite_configuration.py SUITE/GenerateConfigurationForTests.py ...

FILE is the output of `Orthanc --config=FILE` of the Orthanc under test, so the generator's own edits
apply unchanged to that Orthanc's defaults. The generator uses urllib.urlopen, urllib2.urlopen or
urllib.request.urlopen depending on its age: each is replaced.
"""
import io
import os
import runpy
import sys


class Answer(io.BytesIO):  # what the generator reads of an answer: read(), getcode(), a `with`
    def getcode(self):
        return 200


def main(argv):
    path = os.environ["COMPARE_SUITE_DEFAULT_CONFIGURATION"]

    def urlopen(url, *args, **kwargs):
        sys.stderr.write("[compare-orthanc-suite] %s replaced by %s\n" % (url, path))
        with open(path, "rb") as f:
            return Answer(f.read())

    for name in ("urllib", "urllib2", "urllib.request"):
        try:
            module = __import__(name, fromlist=["urlopen"])
            module.urlopen = urlopen
        except ImportError:
            pass
    script = argv[0]
    sys.argv = [script] + argv[1:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
