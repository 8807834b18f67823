"""`segmenter segment --engine ray`: inputs to a Ray dataset, a pool of actors, a sharded output
folder.
"""
