"""The report's entry point in a release or the Debian package: python/__main__.py beside the
ingest_perf/ folder it runs. The launcher runs `python3 -I -B <that python/ folder>`, and Python
puts a folder it runs first on its module path itself: nothing here edits sys.path."""
import sys

from ingest_perf.perf_report import main

sys.exit(main(prog="orthanc-ingest-perf-report"))
