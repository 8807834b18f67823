"""The boundary probe: its arrays and meta file, and the gap features it reads from one encoder pass
(block outputs, the paper's attention signals and per-head vectors).
"""
