"""Writing results: value_info into the model, its metadata, and files written atomically."""
