"""The shipped probes (plain arrays and a meta file each) and their model cards, installed as the
package data of `segmenter.models`."""
