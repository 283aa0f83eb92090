"""The benchmarks, a module each, run with `python -m ingest_perf.benchmarks.NAME` (docs/development.md,
"Benchmarks")."""
