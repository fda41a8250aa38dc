"""The onnxsym command line."""

from __future__ import annotations

import os
import sys
import tempfile

import click
import onnx

from onnxsym import api
from onnxsym.errors import OnnxsymError


def _bindings(pairs) -> dict:
    out = {}
    for p in pairs:
        name, sep, val = p.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=INT, got {p!r}", param_hint="--bind")
        try:
            out[name.strip()] = int(val)
        except ValueError:
            raise click.BadParameter(f"expected NAME=INT, got {p!r}", param_hint="--bind") from None
    return out


def _fail(exc: Exception) -> None:
    click.echo(f"onnxsym: error: {exc}", err=True)
    sys.exit(2)


def _save(model: onnx.ModelProto, out: str) -> None:
    """Write to a temporary file beside OUT, then rename: never a half-written model."""
    folder = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(suffix=".onnx.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@click.group()
@click.version_option(api.__version__, prog_name="onnxsym")
def main() -> None:
    """Annotate ONNX models with symbolic shapes."""


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False), help="Where to write (default: MODEL.sym.onnx).")
@click.option("--in-place", is_flag=True, help="Overwrite MODEL itself.")
@click.option("--bind", multiple=True, metavar="NAME=INT", help="Fix an input symbol to a number.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
@click.option("--mlir", "mlir_out", type=click.Path(dir_okay=False), help="Also write the MLIR export (propagate-symbol form).")
def annotate(model, out, in_place, bind, quiet, mlir_out):
    """Write MODEL with the symbolic shape of every value in value_info.

    Example: onnxsym annotate model.onnx -o model.sym.onnx
    """
    if in_place and out:
        raise click.UsageError("give either -o or --in-place, not both")
    target = model if in_place else (out or (model[:-5] if model.endswith(".onnx") else model) + ".sym.onnx")
    if os.path.abspath(target) == os.path.abspath(model) and not in_place:
        raise click.UsageError("the output would overwrite the input; use --in-place to do that")
    try:
        result = api.infer(model, bind=_bindings(bind))
        annotated = api.write_result(result, inplace=True)
        _save(annotated, target)
        if mlir_out:
            from onnxsym.mlir import files, to_mlir
            files.write_text(mlir_out, to_mlir(result))
    except OnnxsymError as exc:
        _fail(exc)
    if quiet:
        return
    st = result.stats()
    unresolved = result.unresolved()
    click.echo(f"{target}: {st['values']} values annotated; dims: {st['static_dims']} static, "
               f"{st['symbolic_dims']} symbolic, {st['unresolved_dims']} unresolved")
    for u in unresolved[:5]:
        p = u.provenance[0]
        where = f"{u.value}[{u.axis}]" if u.axis is not None else f"{u.value} (rank)"
        click.echo(f"  unresolved {where}: {p.op_type} '{p.node}': {p.reason}")
    if len(unresolved) > 5:
        click.echo(f"  ... and {len(unresolved) - 5} more")
    for w in result.warnings[:5]:
        click.echo(f"  warning: {w}", err=True)


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--bind", multiple=True, metavar="NAME=INT",
              help="A size for an input symbol (repeat for each; default: two random assignments).")
def verify(model, bind):
    """Run MODEL in onnxruntime and compare every inferred dim with the real one.

    Exits 1 if any dim is wrong. Example: onnxsym verify model.onnx --bind batch=2 --bind seq=7
    """
    from onnxsym.verify import verify as run_verify

    try:
        result = api.infer(model)
        b = _bindings(bind)
        roots = [n for n in result.symbols.symbols if n not in result.fresh]
        assignments = None
        if b:
            assignments = [{**{r: 3 for r in roots}, **b}]
        report = run_verify(model, assignments=assignments, result=result,
                            base_dir=os.path.dirname(os.path.abspath(model)))
    except OnnxsymError as exc:
        _fail(exc)
    for m in report.mismatches:
        click.echo(f"WRONG {m}")
    click.echo(f"{model}: {report.checked_values} values at {len(report.assignments)} assignment(s); "
               f"{report.checked_dims} dims checked, {len(report.mismatches)} wrong, "
               f"{report.unresolved_dims} unresolved")
    sys.exit(1 if report.mismatches else 0)


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False), help="Where to write (default: MODEL.mlir).")
@click.option("--style", type=click.Choice(["propagate", "erased", "encoding", "unfolded"]), default="propagate",
              show_default=True, help="Which symbol-dialect form.")
@click.option("--generic", is_flag=True, help="MLIR's generic op form (parses with --allow-unregistered-dialect).")
@click.option("--weights", is_flag=True, help="Embed initializer contents (dense_resource blobs).")
@click.option("--names", is_flag=True, help="Name symbols as in the model (@batch) instead of @S0, @S1, ...")
def mlir(model, out, style, generic, weights, names):
    """Export MODEL as MLIR with its symbolic shapes as symbol-dialect ops.

    A MODEL ending in .mlir (onnxsym's encoding form) is read back into the
    propagate-symbol form. Example: onnxsym mlir model.onnx -o model.mlir --generic
    """
    from onnxsym.mlir.files import convert

    try:
        target = convert(model, out, style, generic, weights, names)
    except OnnxsymError as exc:
        _fail(exc)
    click.echo(f"{target}: written")


if __name__ == "__main__":
    main()
