"""Benchmark harness for `segmenter bench`: datasets, systems, metrics, runner, reports.

`load_dataset(spec)` (in `benchmarks.datasets`) is the stable entry point other commands use to resolve
dataset specs. Nothing is imported here, so `import benchmarks` stays cheap.
"""
