"""Benchmark harness for `segmenter bench` and `segmenter bench-topics`: datasets, systems, metrics,
runner, reports.

Installed as `segmenter.bench` (pyproject.toml maps this `benchmarks/` folder, which also keeps the
harness's data, results and reports, onto that name), so no generic top-level `benchmarks` package is
installed. Nothing is imported here, so `import segmenter.bench` stays cheap.
"""
