"""PaperTrace models: pure torch/numpy, no web code."""
