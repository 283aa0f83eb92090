"""The Python side of orthanc-ingest-perf, one installable package (pyproject.toml): what the tests,
the benchmarks, the main job and the tools share; its modules are listed in docs/development.md ("The
Python package"). Importing the package itself loads nothing, so perf_report needs only Python 3.
"""
