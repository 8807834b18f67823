"""The encoder: where a backbone's files are, what the CPU computes natively, and the runtimes that
read a BERT-family model (`torch/`: transformers or our plain-torch BERT; `onnx/`: the int8 graph).
"""
