#!/usr/bin/env python3
"""The ingest-perf report of an Orthanc: GET /perf/diagnosis and /perf/stats as text that fits the
terminal (ingest_perf/perf_report.py, Python 3's standard library only). `--help` for the options.

    Resources/perf_report.py --url localhost:8042 --user admin --password secret
"""
import os
import sys

# Python puts only this script's folder on sys.path; the package is at the repository root.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ingest_perf.perf_report import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
