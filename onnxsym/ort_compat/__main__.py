"""``python -m onnxsym.ort_compat``: onnxruntime's ``symbolic_shape_infer.py`` command line, answered by
onnxsym; or ``python -m onnxsym.ort_compat -m MODULE ARGS...``: MODULE's command line run with the
drop-in installed (as ``python -m cProfile -m MODULE`` runs it)."""

from __future__ import annotations

import argparse
import runpy
import sys

USAGE = "python -m onnxsym.ort_compat --input IN [--output OUT] ... | -m MODULE [ARGS...]"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m onnxsym.ort_compat", usage=USAGE,
                                description="onnxruntime's symbolic shape inference command line, answered by "
                                            "onnxsym (auto_merge and int_max are accepted and change nothing).")
    p.add_argument("--input", required=True, help="The input model file")
    p.add_argument("--output", help="The output model file")
    p.add_argument("--auto_merge", action="store_true", default=False,
                   help="accepted for ORT's command line; onnxsym never merges dims")
    p.add_argument("--int_max", type=int, default=2**31 - 1, help="accepted for ORT's command line; unused")
    p.add_argument("--guess_output_rank", action="store_true", default=False,
                   help="guess output rank to be the same as input 0 for unknown ops")
    p.add_argument("--verbose", type=int, default=0, help="accepted for ORT's command line")
    p.add_argument("--save_as_external_data", action="store_true", default=False,
                   help="Saving an ONNX model to external data")
    p.add_argument("--all_tensors_to_one_file", action="store_true", default=False,
                   help="Saving all the external data to one file")
    p.add_argument("--external_data_location", default="./", help="The file location to save the external file")
    p.add_argument("--external_data_size_threshold", type=int, default=1024,
                   help="The size threshold for external data")
    return p


def run_module(argv: list[str]) -> int:
    """Run ``argv[0]``'s ``__main__`` with ``argv[1:]`` as its arguments, the drop-in installed."""
    from . import install
    if not argv:
        print(f"usage: {USAGE}\nerror: -m needs a module name", file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)  # run_module(alter_sys=True) puts the module's file in argv[0]
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    return 0


def shape_infer(argv: list[str]) -> int:
    import onnx

    from .shape_inference import SymbolicShapeInference
    args = parser().parse_args(argv)
    try:
        model = onnx.load(args.input)
    except Exception as exc:  # a missing file, or not an ONNX model
        print(f"{args.input}: cannot load the model: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
              file=sys.stderr)
        return 1
    out = SymbolicShapeInference.infer_shapes(model, args.int_max, args.auto_merge, args.guess_output_rank,
                                              args.verbose)
    if args.output and out is not None:
        if args.save_as_external_data:
            onnx.save_model(out, args.output, save_as_external_data=True,
                            all_tensors_to_one_file=args.all_tensors_to_one_file,
                            location=args.external_data_location,
                            size_threshold=args.external_data_size_threshold, convert_attribute=False)
        else:
            onnx.save(out, args.output)
    return 0


def main(argv: list[str] | None = None) -> int:
    from ..errors import UserInputError
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ["-m"]:
            return run_module(argv[1:])
        if argv[:1] and argv[0].startswith("-m") and len(argv[0]) > 2:  # -mMODULE, as python takes it
            return run_module([argv[0][2:], *argv[1:]])
        return shape_infer(argv)
    except UserInputError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except Exception as exc:
        if "Incomplete symbolic shape inference" not in str(exc):
            raise
        print(f"{argv[argv.index('--input') + 1] if '--input' in argv else 'model'}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
