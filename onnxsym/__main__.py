"""`python -m onnxsym`: the command line, as the `onnxsym` script runs it."""

from onnxsym.cli import run

if __name__ == "__main__":
    run()
