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


def _ranges(pairs) -> dict:
    out = {}
    for p in pairs:
        name, sep, val = p.partition("=")
        lo, colon, hi = val.partition(":")
        try:
            if not sep or not colon or not name.strip():
                raise ValueError
            out[name.strip()] = (int(lo), int(hi))
        except ValueError:
            raise click.BadParameter(f"expected NAME=LO:HI, got {p!r}", param_hint="--range") from None
    return out


def _knowledge(f):
    """The options that tell onnxsym what the user knows about the input symbols."""
    f = click.option("--allow-zero", is_flag=True, help="Input dims may be 0 (their range starts at 1 otherwise).")(f)
    f = click.option("--assume", multiple=True, metavar="'EXPR == EXPR'",
                     help="A constraint between input symbols, e.g. 'past == seq'.")(f)
    return click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI",
                        help="Narrow an input symbol's range, e.g. seq=1:4096.")(f)


def _print_constraints(result, limit: int = 10) -> None:
    lines = [f"  assumed {c} ({c.where}: {c.reason})" for c in result.constraints]
    lines += [f"  derived {name} = {d}" for name, d in result.derived_symbols().items()]
    for line in lines[:limit]:
        click.echo(line)
    if len(lines) > limit:
        click.echo(f"  ... and {len(lines) - limit} more (in the output's metadata: onnxsym.constraints)")


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
@_knowledge
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
def annotate(model, out, in_place, bind, ranges, assume, allow_zero, quiet):
    """Write MODEL with the symbolic shape of every value in value_info.

    Example: onnxsym annotate model.onnx -o model.sym.onnx
    """
    if in_place and out:
        raise click.UsageError("give either -o or --in-place, not both")
    target = model if in_place else (out or (model[:-5] if model.endswith(".onnx") else model) + ".sym.onnx")
    if os.path.abspath(target) == os.path.abspath(model) and not in_place:
        raise click.UsageError("the output would overwrite the input; use --in-place to do that")
    try:
        result = api.infer(model, bind=_bindings(bind), ranges=_ranges(ranges), assume=assume,
                           allow_zero=allow_zero)
        annotated = api.write_result(result, inplace=True)
        _save(annotated, target)
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
    _print_constraints(result)
    for w in result.warnings[:5]:
        click.echo(f"  warning: {w}", err=True)


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--bind", multiple=True, metavar="NAME=INT",
              help="A size for an input symbol (repeat for each; default: two random assignments).")
@_knowledge
def verify(model, bind, ranges, assume, allow_zero):
    """Run MODEL in onnxruntime and compare every inferred dim with the real one.

    Exits 1 if any dim is wrong. Example: onnxsym verify model.onnx --bind batch=2 --bind seq=7
    """
    from onnxsym.verify import constrained_assignments, verify as run_verify

    try:
        result = api.infer(model, ranges=_ranges(ranges), assume=assume, allow_zero=allow_zero)
        b = _bindings(bind)
        assignments = constrained_assignments(result, count=1, fixed=b) if b else None
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


if __name__ == "__main__":
    main()
