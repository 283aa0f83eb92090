#!/usr/bin/env python3
"""The ingest-perf report of an Orthanc: GET /perf/diagnosis and /perf/stats as text that fits the
terminal (ingest_perf/perf_report.py, Python 3's standard library only). `--help` for the options.

    Resources/perf_report.py --url localhost:8042 --user admin --password secret

It imports ingest_perf as installed (the set-up installs it into .venv); from this tree without
installing anything, the same report is `python3 -m ingest_perf.perf_report` run in its top folder.
"""
import sys

from ingest_perf.perf_report import main

if __name__ == "__main__":
    sys.exit(main())
