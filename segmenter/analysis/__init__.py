"""Attention-head analysis of the paper's claims: statistics, per-layer probe, claims, plots, report.

`run_analysis(encoder, documents, params)` computes everything and returns an `Analysis`;
`write_report(analysis, out)` writes heads.json, the figures and report.md; `analyze` is the click command.
Submodules import torch / matplotlib / scikit-learn only where they need them.
"""

from segmenter.analysis.params import AnalysisParams

__all__ = ["AnalysisParams", "run_analysis", "write_report"]


def __getattr__(name: str):
    if name == "run_analysis":
        from segmenter.analysis.analyze import run_analysis

        return run_analysis
    if name == "write_report":
        from segmenter.analysis.report import write_report

        return write_report
    raise AttributeError(name)
