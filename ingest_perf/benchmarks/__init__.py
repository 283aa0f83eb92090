"""The benchmarks of orthanc-ingest-perf, each a module run with `python -m ingest_perf.benchmarks.NAME`:
run_benchmarks (docs/measurements/benchmarks.md, through Resources/run-benchmarks.sh) and its parts (datasets,
workloads, sections, report, document); the plugin's whole cost: process_cpu, route_cost,
instruction_count, plugin_cost; the diagnosis: diagnosis_scenarios, diagnosis_effects; tcp_nodelay,
transcode_timing, breakdowns, gdcm_stow_crash."""
