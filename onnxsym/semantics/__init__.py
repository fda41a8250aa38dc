"""Arithmetic on shapes and shape values exactly as onnxruntime computes it, for the rules."""
