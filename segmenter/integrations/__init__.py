"""The segmenter inside other frameworks: a spaCy pipeline component and Ray Data for corpora."""
