"""Text as the model reads it: tokens with character offsets, character classes, line breaks,
surface and line features of each token, and the conditions a text is read under. No torch.
"""
