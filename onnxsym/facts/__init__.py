"""What inference learns besides shapes: constraints between dims, ranges, decisions, claims, case splits."""
