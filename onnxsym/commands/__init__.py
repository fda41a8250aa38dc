"""What the command line's commands compute, as library calls: check, show, explain, verify, diff, coverage."""
