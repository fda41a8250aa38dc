"""The inference engine and what it passes around: values, nodes, scopes, symbols, results."""
