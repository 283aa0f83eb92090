"""The benchmark harness of orthanc-ingest-perf (see Benchmarks/run_benchmarks.py)."""
