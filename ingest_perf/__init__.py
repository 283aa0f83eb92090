"""The Python side of orthanc-ingest-perf, one installable package (pyproject.toml): what the tests,
the benchmarks, the main job and the tools share.

    orthanc_process       start and drive a real Orthanc, 1.10.1 or 1.12.7 (OrthancProcess, OrthancFactory)
    clients               the clients, one runner per kind: storescu, pynetdicom, gdcmscu, HTTP, STOW-RS
    bottleneck_scenarios  one function per ingest bottleneck, each leaving a real Orthanc that suffered it
    generate_series       deterministic synthetic CT series
    postgresql_server     a throw-away PostgreSQL server
    prometheus_server     a real Prometheus, and the text format's parser
    stats_checks          invariants of a /perf/stats answer
    perf_report           a /perf/stats answer as a plain-text report (standard library only)
    orthanc_suite         how Orthanc's own suite is judged with and without the plugin (standard library only)
    compare_orthanc_suite the suite run with and without the plugin (python -m ingest_perf.compare_orthanc_suite)
    main_job              the main job (python -m ingest_perf.main_job, Resources/run-main-job.sh)
    benchmarks            every benchmark, a module each (python -m ingest_perf.benchmarks.NAME)

Installed into the project's venv by Resources/install-dependencies.sh (editable), and imported as
installed: `from ingest_perf import orthanc_process`. Importing the package itself loads nothing, so
perf_report needs only Python 3.
"""
