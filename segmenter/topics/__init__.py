"""Topic segmentation: sentence vectors from the encoder and an exact partition into sections."""
