"""Boundary probabilities to spans of the caller's text, with the text-only rules the decoder asks
(lists, bulleted lines, quotes and brackets, e-mail addresses and URLs).
"""
