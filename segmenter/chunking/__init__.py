"""Chunks for retrieval: a text cut into runs of whole sentences under a token budget.

Flow (one way): text -> sentence spans (`Segmenter`) -> pieces with token counts, a sentence over the
budget cut at its most likely inner gaps (`pieces`) -> one vector per piece (`SentenceVectors`, when
topics are read) -> the exact least-cost cut of the pieces into chunks within the budget (`plan`) ->
chunks checked against the real count and given their overlap (`chunker`). Token counting is in
`counting`, the settings in `config`.
"""
