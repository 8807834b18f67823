"""Fitting probes and tuning encoders (scikit-learn, torch autograd): what `segmenter train` runs.
Nothing on the inference path imports this package.
"""
