"""From tokens to boundary probabilities: windows over the tokens, the gap scorer that runs them
through an encoder and a probe, the stream that feeds a text in pieces, and paired readings.
"""
