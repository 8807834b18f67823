"""Gold sentence data: CoNLL-U and golden-rule files read into documents, corrupted or laid out in
lines, and the dataset specs (`ewt-dev`, `conllu:PATH`, ...) resolved to them.
"""
