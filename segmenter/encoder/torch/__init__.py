"""The encoder in torch: loading a BERT-family model offline, reading its heads, and the weight
changes a tuned probe carries (low-rank deltas, narrowed blocks, reordered bfloat16 weights).
"""
