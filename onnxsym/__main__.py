"""`python -m onnxsym`: the command line, as the `onnxsym` script runs it."""

from onnxsym.cli import main

if __name__ == "__main__":
    main(prog_name="onnxsym")
