"""The `segmenter` command line: one click group (`main`) and one module per command."""
