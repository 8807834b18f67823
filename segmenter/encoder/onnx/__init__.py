"""The encoder's blocks as an int8 ONNX Runtime graph: exported once through torch, cached, and run
without torch.
"""
