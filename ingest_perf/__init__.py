"""The Python side of orthanc-ingest-perf, one package: what the tests, the benchmarks, the main job
and the report tool share.

    orthanc_process     start and drive a real Orthanc (with or without the plugin)
    postgresql_server   a throw-away PostgreSQL server
    generate_series     deterministic synthetic CT series
    stats_checks        invariants of a /perf/stats answer
    perf_report         a /perf/stats answer as a plain-text report (standard library only)
    orthanc_suite       how Orthanc's own suite is judged with and without the plugin (standard library only)
    harness             the benchmark harness (Benchmarks/run_benchmarks.py)

Imported as `from ingest_perf import orthanc_process` with the repository root on sys.path: pytest
puts it there (pytest.ini), the scripts run by their path (Resources/*.py, Benchmarks/*.py) with
their first lines. Importing the package itself loads nothing, so perf_report needs only Python 3.
"""
