"""The onnxsym command line."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import TYPE_CHECKING

import click

from onnxsym import __version__
from onnxsym.commands.progress import Progress, working
from onnxsym.errors import OnnxsymError, OutputError, UserInputError, VerificationError
from onnxsym.output.atomic import STDOUT, check_target, replaces_a_file, save_model, target_kind, write_outputs
from onnxsym.output.paths import check_outputs, same_file

if TYPE_CHECKING:
    import onnx

    from onnxsym import api
else:
    # onnx, numpy and the rules load when a command runs, not for `--help` or a usage error
    class _Lazy:
        def __init__(self, name: str):
            self._name = name

        def __getattr__(self, attr: str):
            import importlib

            return getattr(importlib.import_module(self._name), attr)

    onnx = _Lazy("onnx")
    api = _Lazy("onnxsym.api")

# check, show and explain import their modules when they run: annotate starts faster.


def _once(out: dict, name: str, value, option: str, text: str) -> None:
    """``out[name] = value``; the same name given twice with another value is an error
    (the last one silently winning hides a typo)."""
    if name in out and out[name] != value:
        raise click.BadParameter(f"{name} is given twice, with different values ({text!r} after "
                                 f"{_shown(name, out[name])!r})", param_hint=option)
    out[name] = value


def _shown(name: str, value) -> str:
    return f"{name}={value[0]}:{value[1]}" if isinstance(value, tuple) else f"{name}={value}"


def _bindings(pairs) -> dict:
    out: dict = {}
    for p in pairs:
        name, sep, val = p.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=INT, got {p!r}", param_hint="--bind")
        try:
            value = int(val)
        except ValueError:
            raise click.BadParameter(f"expected NAME=INT, got {p!r}", param_hint="--bind") from None
        _once(out, name.strip(), value, "--bind", p)
    return out


def _ranges(pairs, option: str = "--range", one: bool = False) -> dict:
    """NAME=LO:HI pairs by name; with ``one``, NAME=N too, the range N:N (--require seq=128)."""
    out: dict = {}
    for p in pairs:
        name, sep, val = p.partition("=")
        lo, colon, hi = val.partition(":")
        if one and not colon:
            hi = lo
        try:
            if not sep or not (colon or one) or not name.strip():
                raise ValueError
            value = (int(lo), int(hi))
        except ValueError:
            expected = "NAME=LO:HI or NAME=N" if one else "NAME=LO:HI"
            raise click.BadParameter(f"expected {expected}, got {p!r}", param_hint=option) from None
        _once(out, name.strip(), value, option, p)
    return out


def _set_values(ctx, _param, texts):
    """--value NAME=NUMBER: the data of a graph input, for every inference this command makes
    (the default of api.infer's ``values``, until the command ends)."""
    if not texts:
        return  # (nothing imported: --help and usage errors load click alone)
    from onnxsym.model.given import CLI_VALUES, parse

    try:
        values = dict(parse(t) for t in texts)
    except UserInputError as exc:
        raise click.BadParameter(exc.cli, param_hint="--value") from None
    token = CLI_VALUES.set(values)
    ctx.call_on_close(lambda: CLI_VALUES.reset(token))


_value_opt = click.option("--value", "given_values", multiple=True, metavar="NAME=NUMBER[,NUMBER...]", expose_value=False,
                          callback=_set_values,
                          help="The data of a scalar or small graph input (an If it decides takes its branch).")


def _bind_opt(f):
    """--bind, and --value beside it on every command that takes it."""
    f = _value_opt(f)
    return click.option("--bind", multiple=True, metavar="NAME=INT", help="Fix an input symbol to a number.")(f)
def _load_rules(_ctx, _param, modules):
    """The onnxsym.rules entry points of installed packages, then each --rules MODULE:
    loaded before the command infers (not for --help, which exits first)."""
    from onnxsym import plugins

    plugins.load_entry_points()
    for m in modules:
        plugins.load_module(m)
    _ctx.meta["onnxsym.rules"] = tuple(modules)  # (check -j's workers load them too)
    return modules


def _rules_opt(f):
    return click.option("--rules", "rules", multiple=True, metavar="MODULE", expose_value=False, callback=_load_rules,
                        help="Import MODULE (a module name or a .py file) for its custom-op rules (repeatable); "
                             "the onnxsym.rules entry points of installed packages load by themselves.")(f)


def _constant_inits(f):
    """--constant-initializers, and --rules beside it: on every command that infers."""
    f = _rules_opt(f)
    return click.option("--constant-initializers", is_flag=True,
                        help="Initializers listed as graph inputs are constants (always so below IR version 4).")(f)


_EVERY = "\0every"  # what a bare --allow-zero gives
# A model argument: any path; the loader refuses a folder, a missing file or a device in one line
# naming it (click's own check would print its usage block and a second message style).
_MODEL = click.Path()


def _allow_zero(_ctx, _param, values):
    """``--allow-zero`` bare: every input dim may be 0 (True); with names: those symbols."""
    if _EVERY in values:
        return True
    return list(values) or False


def _allow_zero_opt(f):
    return click.option("--allow-zero", "allow_zero", multiple=True, is_flag=False, flag_value=_EVERY, metavar="[NAME]",
                        callback=_allow_zero,
                        help="Input dims may be 0 (their range starts at 1 otherwise); with NAME, that symbol's "
                             "(repeatable). Bare, put it after MODEL.")(f)


def _knowledge(f):
    """The options that tell onnxsym what the user knows about the input symbols."""
    f = _allow_zero_opt(f)
    f = click.option("--assume", multiple=True, metavar="'EXPR == EXPR'",
                     help="A constraint between input symbols, e.g. 'past == seq'.")(f)
    return click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI",
                        help="Narrow an input symbol's range, e.g. seq=1:4096.")(f)


def _in_env(result):
    """``result``, its range environment current until the command ends (what the command
    derives from its dims holds under its ranges)."""
    click.get_current_context().with_resource(result.env)
    return result


def deciding(assumptions) -> list:
    """The ``X >= 1`` assumptions that chose an If's branch: where X is 0 the other branch runs,
    with other shapes (and --allow-zero X leaves its dims unresolved). The others (a Reshape's
    target element read as a size) are the routine of most transformers: printed under -v."""
    return [c for c in assumptions if c.op_type == "If"]


def _print_constraints(result, domain=None, limit: int = 10, verbose: bool = False) -> None:
    """What inference recorded, but what the domain states in its simplest form (a float32
    bound: one line per symbol there; `samples <= 703` for a page of floor divisions): the
    domain's lines follow."""
    from onnxsym.facts.edges import grouped
    from onnxsym.facts.fact import Origin, Rel

    def label(c) -> str:
        if c.origin is Origin.USER:
            return "given"
        return {Rel.GE: "requires", Rel.NE: "differ"}.get(c.rel, "assumed")
    def in_domain(c) -> bool:  # a bound or a need (the domain keeps the tightest), or a condition it states
        return domain is not None and c.origin is not Origin.USER and (c.rel in (Rel.LE, Rel.GE) or c.node in stated)
    stated = {src.node for c in domain.conditions for src in c.sources} if domain is not None else set()
    lines = [f"  {label(c)} {c} ({c.where}: {c.reason})" for c in result.constraints
             if c.origin is not Origin.DEFAULT_RANGE and not in_domain(c)]
    positive = result.positive_assumptions()
    shown = positive if verbose else deciding(positive)
    # (one the domain states, `domain assumed past >= 1: If ...`, is said there: not twice)
    said = {(c.text, src.node) for c in domain.conditions for src in c.sources} if domain is not None else set()
    lines += [f"  assumed {line} (a graph-input dim is >= 1 unless --allow-zero)"
              for line in grouped([c for c in shown if (str(c), c.node) not in said])]
    lines += [f"  derived {name} = {d}" for name, d in result.derived_symbols().items()]
    lines = list(dict.fromkeys(lines))  # (each once)
    for line in lines[:limit]:
        click.echo(line)
    if len(lines) > limit:
        click.echo(f"  ... and {len(lines) - limit} more (in the output's metadata: onnxsym.constraints)")
    hint = zero_hint(shown)
    if hint:
        click.echo(f"  {hint}")


def zero_hint(assumptions) -> str:
    """The suggestion to give ``--allow-zero NAME`` where a decision assumed a symbol >= 1."""
    from onnxsym.dims import free_symbols

    names = sorted({s.name for c in assumptions for s in free_symbols(c.lhs)})
    if not names:
        return ""
    opts = " ".join(f"--allow-zero {n}" for n in names)
    return (f"the shapes hold where {', '.join(n for n in names)} {'is' if len(names) == 1 else 'are'} >= 1; "
            f"for one that can be 0, rerun with --allow-zero NAME ({opts})")


def _print_domain(domain, limit: int = 5) -> None:
    """The domain's conditions in annotate's summary (all of them: ``onnxsym domain``)."""
    if not domain.conditions:
        every = (f"every size of {', '.join(domain.symbols)}" if domain.symbols else "static")
        click.echo(f"  domain: {every}" + (" but what is not stated below" if domain.unstated else ""))
        for line in domain.unstated_lines(2):
            click.echo(f"  domain {line}")
        return
    for c in domain.conditions[:limit]:
        click.echo(f"  domain {c.describe()}")
    if len(domain.conditions) > limit:
        click.echo(f"  ... and {len(domain.conditions) - limit} more (onnxsym domain MODEL; metadata: onnxsym.domain)")
    for line in domain.unstated_lines(2):
        click.echo(f"  domain {line}")


def _dynamic_opt(f):
    return click.option("--dynamic", "dynamic", multiple=True, metavar="INPUT:AXIS=NAME",
                        help="Take a static graph-input dim as the symbol NAME (repeatable): the domain then says "
                             "whether the graph runs at other sizes, and which nodes pin it.")(f)


def _dynamic(specs):
    from onnxsym.model import dynamic

    return dynamic.collect(specs) or None


def _pins_line(result, domain) -> str | None:
    """One line naming the declared symbols the domain pins or ties (None: none is)."""
    from onnxsym.domain.pins import pins_of

    pins = pins_of(result, domain)
    if not pins:
        return None
    what = "; ".join(f"{p.what} ({p.op_type} '{p.node}')" if p.op_type else f"{p.what} ({p.node})" for p in pins)
    return f"  pinned: {what}: declared free, the model runs only there"


def _check_targets(outputs, force: bool) -> None:
    """Before any work: each output is something onnxsym writes to, and replaces no
    regular file without --force (a pipe or a device, /dev/null, replaces nothing)."""
    for _what, path in outputs:
        check_target(path)
        if not force and replaces_a_file(path):
            raise OutputError(f"{path} exists; use --force to replace it")  # (as every command says it)


class _Command(click.Command):
    """A command whose bare ``--allow-zero`` may stand before MODEL: click would take the path
    for the option's NAME (``cost --allow-zero model.onnx``). A word after it that names a file
    or ends as a model does (.onnx, .mlir) is no symbol name: the option is then bare."""

    def parse_args(self, ctx, args):
        args = list(args)
        for i, word in enumerate(args[:-1]):
            if word == "--allow-zero" and _is_model_path(args[i + 1]):
                args[i] = f"--allow-zero={_EVERY}"
        return super().parse_args(ctx, args)


def _is_model_path(word: str) -> bool:
    return word.endswith((".onnx", ".mlir")) or os.sep in word or os.path.exists(word)


class _Main(click.Group):
    """The command group; an error that escapes a command is one line on stderr and exit 2."""

    command_class = _Command

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            raise  # standard output closed early (| head): click ends quietly with exit 1
        except Exception as exc:
            if ctx.meta.get("onnxsym.debug"):
                if not isinstance(exc, OnnxsymError):
                    raise  # a bug: its traceback, as Python prints it
                import traceback

                traceback.print_exc()  # a user's error: its traceback, then the same line and exit code 2
            # (a UserInputError names the library's argument; here, the command line's option)
            msg = " ".join((exc.cli if isinstance(exc, UserInputError) else str(exc)).split())
            if isinstance(exc, OnnxsymError):
                click.echo(f"onnxsym: error: {msg}", err=True)
            else:
                click.echo(f"onnxsym: internal error: {type(exc).__name__}: {msg} (rerun with --debug)", err=True)
            ctx.exit(2)


class _SizeWords(_Command):
    """A command whose size options (``--budget``) also take the unit as a word of its own,
    ``--budget 1 GB``, as people type it: the shell splits it, click would see an extra argument."""

    size_options = ("--budget",)

    def parse_args(self, ctx, args):
        from onnxsym.output.numbers import parse_size

        args = list(args)
        for i, word in enumerate(args):
            name, eq, _ = word.partition("=")
            at = i if eq else i + 1  # the word that holds the option's value
            if name in self.size_options and at + 1 < len(args):
                number, unit = args[at].partition("=")[2] if eq else args[at], args[at + 1]
                if re.fullmatch(r"\d+(\.\d+)?", number) and unit.isalpha() and parse_size(f"1 {unit}") is not None:
                    args[at:at + 2] = [f"{args[at]} {unit}"]
                    break
        return super().parse_args(ctx, args)


@click.group(cls=_Main, invoke_without_command=True)
@click.version_option(__version__, prog_name="onnxsym")
@click.option("--debug", is_flag=True, help="Show the traceback of an error.")
@click.pass_context
def main(ctx, debug) -> None:
    """Annotate ONNX models with symbolic shapes.

    Example: onnxsym check model.onnx
    """
    ctx.meta["onnxsym.debug"] = debug
    if ctx.invoked_subcommand is None:  # bare `onnxsym`: the help, and success, as git and pip do
        click.echo(ctx.get_help())
        ctx.exit(0)


@main.command(short_help="Write MODEL with every value's symbolic shape in value_info.")
@click.argument("model", type=_MODEL)
@click.option("-o", "--output", "out", type=click.Path(), help="Where to write (default: MODEL.sym.onnx).")
@click.option("--in-place", is_flag=True, help="Overwrite MODEL itself.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@_bind_opt
@_knowledge
@_constant_inits
@click.option("--keep-declared-names", is_flag=True,
              help="Keep a dim name the model declares on a produced value where it equals the inferred dim "
                   "(default: write the inferred dim; the name is recorded as an alias).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
@click.option("--mlir", "mlir_out", type=click.Path(), help="Also write the MLIR export (propagate-symbol form).")
@_dynamic_opt
@click.option("--verbose", "-v", is_flag=True,
              help="Also every 'assumed X >= 1' decision (not only those that chose an If's branch).")
def annotate(model, out, in_place, force, bind, ranges, assume, allow_zero, constant_initializers,
             keep_declared_names, quiet, mlir_out, dynamic, verbose):
    """Write MODEL with the symbolic shape of every value in value_info.

    Example: onnxsym annotate model.onnx -o model.sym.onnx
    """
    if in_place and out:
        raise click.UsageError("give either -o or --in-place, not both")
    if out is not None:
        check_target(out)  # (an empty -o is no request for the default)
    target = model if in_place else (out or (model[:-5] if model.endswith(".onnx") else model) + ".sym.onnx")
    if not in_place and same_file(target, model):
        raise click.UsageError("the output would overwrite the input; use --in-place to do that")
    if in_place and target_kind(model) not in (None, "file"):
        raise click.UsageError(f"--in-place rewrites a regular file; {model} is none")
    if target == STDOUT and sys.stdout.isatty():
        raise click.UsageError("-o -: standard output is a terminal; redirect it to a file or a pipe")
    outputs = ([] if in_place else [("the output", target)]) + ([("the MLIR output", mlir_out)] if mlir_out else [])
    check_outputs(outputs, [("the input model", model)])
    _check_targets(outputs, force)
    dyn = _dynamic(dynamic)
    result = _in_env(api.infer(model, bind=_bindings(bind), ranges=_ranges(ranges), assume=assume, allow_zero=allow_zero,
                       constant_initializers=constant_initializers, dynamic=dyn))
    if dyn:
        api.refuse_pinned(result, dyn)  # written with those dims symbolic, it would fail at other sizes
    from onnxsym.model.external import external_locations

    model_dir = os.path.dirname(os.path.abspath(model))
    locations = external_locations(result.model, model)  # (a scan of every node: once, if any)
    check_outputs(outputs + ([("the output", target)] if in_place else []),
                  [("a weight file of the input model", os.path.join(model_dir, loc)) for loc in locations])
    result = result.within_domain()  # the symbols' ranges narrowed to the domain before writing
    domain = result.domain()
    written = api.written_result(result)  # without --range and --assume, if given
    writing: list[str] = []  # what writing warns of
    annotated = api.write_result(written, inplace=True, keep_declared_names=keep_declared_names, warnings=writing)
    also = []
    if mlir_out:
        from onnxsym.mlir import to_mlir
        also.append((mlir_out, to_mlir(result).encode("utf-8")))
    save_model(annotated, target, model_dir, also, locations, replace=True if force else {target} if in_place else False)
    if quiet:
        return
    if STDOUT in (target, mlir_out):  # standard output carries a written file: the summary goes to stderr
        click.get_current_context().with_resource(contextlib.redirect_stdout(sys.stderr))
    st = written.stats()
    unresolved = result.unresolved()
    click.echo(f"{target}: {st['values']} values annotated; dims: {st['static_dims']} static, "
               f"{st['symbolic_dims']} symbolic, {st['unresolved_dims']} unresolved")
    _print_written_sizes(written)
    pinned = _pins_line(result, domain)
    if pinned:
        click.echo(pinned)
    if unresolved:  # by root cause, as `check` groups them, each with its next step
        from onnxsym.commands import check as check_report
        from onnxsym.commands.explain import Lineage

        lineage = Lineage(result)
        entries = check_report.entries_of(result, lineage=lineage)
        groups = check_report.by_root(entries)
        lines = check_report.unresolved_lines(entries, False, check_report.next_steps(entries, lineage))
        shown = lines if len(groups) <= 5 else [x for x in lines if x.startswith(("  cause", "    next"))][:10]
        for line in shown:
            click.echo(line.replace("    unresolved ", "    ", 1).replace("(-v lists them)", "(onnxsym check -v MODEL)"))
        if len(groups) > 5:
            click.echo(f"  ... and {len(groups) - 5} more causes ({len(entries)} unresolved dims: onnxsym check MODEL)")
    _print_constraints(result, domain, verbose=verbose)
    if result.aliases:
        n = len(result.aliases)
        click.echo(f"  {n} dim name{'s' if n > 1 else ''} the model declares on produced values "
                   f"{'are aliases' if n > 1 else 'is an alias'} (onnxsym.aliases; `onnxsym show` lists them)")
    _print_domain(domain)
    # inference's warnings, then what settling the written result (no onnxruntime to ask) and writing it add
    warnings = result.warnings + [w for w in written.warnings + writing if w not in result.warnings]
    for w in warnings[:5]:
        click.echo(f"  warning: {w}", err=True)


def _print_written_sizes(written) -> None:
    """What --bind, --range and --assume mean for the written model."""
    bound = written.symbols.bound
    if bound:
        fixed = ", ".join(f"{k} = {v}" for k, v in sorted(bound.items()))
        click.echo(f"  the graph inputs are written with {fixed}: the model runs at that size only")
    given = written.given
    if given is not None and given.bound and not bound:
        click.echo("  --bind: the graph inputs are not specialised (onnxruntime would refuse the model at that size: "
                   "a bound 0, an If only the bound size decides, or a node its load-time shape inference refuses "
                   "there); the dims are written as they hold at every size")
    if written.withheld:
        names = sorted(written.withheld)
        why = written.withheld[names[0]]
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        click.echo(f"  {len(names)} value{'s are' if len(names) > 1 else ' is'} written without dims "
                   f"({', '.join(names[:3])}{more}): with them, the load-time shape inference of onnx and onnxruntime "
                   f"refuses {why}; it loads the model without them")
    if written.value_only:
        names = sorted(written.value_only)
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        click.echo(f"  {len(names)} value{'s have' if len(names) > 1 else ' has'} dims that hold for the --value "
                   f"data only ({', '.join(names[:3])}{more}): written as they hold for every value the inputs may "
                   "be fed (their dims for that data: onnxsym.value_only)")
    if given is not None and (given.ranges or given.assume):
        click.echo("  the dims are written as they hold at every size the graph inputs allow: "
                   "--range and --assume narrow only what is printed here (recorded in onnxsym.user)")


@main.command(short_help="Run MODEL in onnxruntime and compare every inferred dim.")
@click.argument("model", type=_MODEL)
@click.option("--bind", multiple=True, metavar="NAME=INT",
              help="A size for an input symbol (repeat for each; the others are drawn: three assignments inside the domain).")
@_value_opt
@_knowledge
@_constant_inits
def verify(model, bind, ranges, assume, allow_zero, constant_initializers):
    """Run MODEL in onnxruntime and compare every inferred dim with the real one.

    Exits 1 if any dim is wrong, a rule failed, onnxruntime crashed (it runs in a child process:
    the other sizes are still checked), or no dim could be checked.
    Example: onnxsym verify model.onnx --bind batch=2 --bind seq=7
    """
    from onnxsym.commands.verify import constrained_assignments, require_onnxruntime
    from onnxsym.commands.verify import verify as run_verify

    require_onnxruntime()  # (it runs in a child process, its C++ log silenced there)
    result = _in_env(api.infer(model, ranges=_ranges(ranges), assume=assume, allow_zero=allow_zero,
                       constant_initializers=constant_initializers))
    assignments = constrained_assignments(result, count=3, fixed=_bindings(bind))
    try:
        report = run_verify(model, assignments=assignments, result=result,
                            base_dir=os.path.dirname(os.path.abspath(model)))
    except VerificationError as exc:  # named by the model, as a load error is
        raise VerificationError(f"{model}: {exc}") from None
    for m in report.mismatches:
        click.echo(f"WRONG {m}")
    for failure in report.rule_failures:
        click.echo(f"FAILED {failure}")
    for crash in report.crashes:
        click.echo(f"CRASHED {crash}")
    unknown = f" ({report.unknown_rank_values} values of unknown rank)" if report.unknown_rank_values else ""
    click.echo(f"{model}: {report.checked_values} values at {len(report.assignments)} assignment(s); "
               f"{report.checked_dims} dims checked, {len(report.mismatches)} wrong, "
               f"{report.unresolved_dims} unresolved{unknown}"
               + (f", {len(report.rule_failures)} rules failed" if report.rule_failures else "")
               + (f", onnxruntime crashed at {len(report.crashes)}" if report.crashes else ""))
    if any(report.assignments):
        click.echo("  at " + "; ".join(", ".join(f"{k}={v}" for k, v in a.items()) for a in report.assignments))
    if report.checked_dims == 0:
        click.echo(f"{model}: nothing was verified: 0 dims checked", err=True)
    sys.exit(1 if not report.ok or report.checked_dims == 0 else 0)


# -- check, show, explain: thin wrappers over onnxsym.commands.check, .show and .explain ----

def _infer_with_progress(model, bind, quiet, constant_initializers, ranges=(), assume=(), allow_zero=False,
                         dynamic=()):
    """Infer one model, with a progress bar on a terminal if it takes a while."""
    bar = Progress(f"inferring {os.path.basename(model)}", enabled=not quiet)
    try:
        return _in_env(api.infer(model, bind=_bindings(bind), ranges=_ranges(ranges), assume=assume,
                                 allow_zero=allow_zero, progress=bar, constant_initializers=constant_initializers,
                                 dynamic=_dynamic(dynamic)))
    finally:
        bar.close()


def _styler(color):
    """click.style by dim kind; click.echo drops the colours when stdout is not a terminal.
    NO_COLOR (https://no-color.org) set and not empty turns them off unless --color asks."""
    colors = {"symbolic": dict(fg="cyan"), "unresolved": dict(fg="red", bold=True), "head": dict(bold=True)}
    if color is False or (color is None and os.environ.get("NO_COLOR")):
        from onnxsym.commands import show as show_mod
        return show_mod.plain
    return lambda text, kind: click.style(text, **colors[kind]) if kind in colors else text


_quiet = click.option("--quiet", "-q", is_flag=True, help="Print less: only failures and errors.")
_verbose = click.option("--verbose", "-v", is_flag=True, help="Print more detail.")


def _sweep_opts(f):
    from onnxsym.commands.params import SWEEP

    f = click.option("--force", is_flag=True, help="Replace the --plot file if it exists.")(f)
    f = click.option("--plot", type=click.Path(), metavar="FILE.png",
                     help="With --sweep: also draw each figure against the size (needs matplotlib: onnxsym[plot]).")(f)
    return click.option("--sweep", type=SWEEP, metavar="NAME=LO:HI[:STEP]",
                        help="Evaluate at each size of NAME from LO to HI (by STEP; without it, LO, the powers of "
                             "two between, HI); every other symbol bound by --bind.")(f)


def _check_sweep(sweep, plot, fmt, force, other) -> None:
    """--sweep's companions, before any work."""
    if sweep is None:
        if plot is not None:
            raise click.UsageError("--plot draws a --sweep: give --sweep NAME=LO:HI")
        if fmt == "csv":
            raise click.UsageError("--format csv is for --sweep")
        return
    if other is not None:
        raise click.UsageError(f"--sweep and {other} do not go together")
    if plot is not None:
        _check_targets([("the plot", plot)], force)
        import importlib.util

        from onnxsym.commands.sweep import PLOT_MISSING

        if importlib.util.find_spec("matplotlib") is None:
            raise click.UsageError(PLOT_MISSING)


def _print_sweep(table, fmt, plot, force: bool) -> None:
    from onnxsym.commands import sweep as sweeps
    from onnxsym.commands.table import terminal_width

    if plot is not None:
        write_outputs([(plot, sweeps.plot_png(table))], replace=force)
    if fmt == "json":
        click.echo(sweeps.as_json(table))
    elif fmt == "csv":
        click.echo(sweeps.as_csv(table), nl=False)
    else:
        for line in sweeps.text_lines(table, terminal_width()):
            click.echo(line)
        if plot is not None:
            click.echo(f"{plot}: written")



@main.command()
@click.argument("models", nargs=-1, required=True, type=click.Path())
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Check N models at a time, each in a process of its own.")
@click.option("--allow-data-dependent", is_flag=True,
              help="Do not fail on dims that depend on tensor data (NonZero, Unique, ... counts).")
@click.option("--allow", "allow", multiple=True, metavar="SYMBOL",
              help="Do not fail on this fresh symbol, or those a node of this name made (glob; repeatable).")
@click.option("--outputs-only", is_flag=True, help="Only the graph outputs' dims must resolve.")
@click.option("--max-unresolved", type=click.IntRange(min=0), default=0, show_default=True,
              help="Pass a model with at most N unresolved dims.")
@click.option("--allow-stale", is_flag=True,
              help="Do not fail on a stale declaration (a declared output or value_info shape the graph contradicts).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text", show_default=True,
              help="text; json (docs/check-report.schema.json); github (GitHub Actions annotations).")
@click.option("--require", "require", multiple=True, metavar="NAME=LO:HI",
              help="Fail unless the model is valid for every size of NAME in LO..HI (repeatable); NAME=N: that size.")
@click.option("--baseline", type=_MODEL, metavar="OLD",
              help="Also fail when a model's contract breaks OLD's (as `onnxsym diff OLD MODEL`).")
@click.option("--allow-pinned", "allow_pinned", multiple=True, metavar="NAME",
              help="Do not fail when the domain pins this declared symbol to a few sizes or ties it to another "
                   "(glob; repeatable).")
@_bind_opt
@_allow_zero_opt
@_constant_inits
@_dynamic_opt
@_quiet
@_verbose
def check(models, jobs, allow_data_dependent, allow, outputs_only, max_unresolved, allow_stale, fmt, require, baseline,
          allow_pinned, bind, allow_zero, constant_initializers, dynamic, quiet, verbose):
    """Fail when a dim of MODELS cannot be resolved (a CI gate). A MODEL that is a
    folder stands for the *.onnx files under it (recursively).

    Exit 0 when every dim of every value is static or an expression over the
    graph-input symbols, 1 when some are unresolved (each listed with its place
    and provenance), the model declares a shape its graph contradicts (a stale
    declaration), the model is not valid for every size --require gives
    (naming the first condition that cuts them and its node), or its domain
    pins a symbol the model declares dynamic (batch == 1: a baked view(1, ...),
    a folded Shape; or ties it to another: height == width), 2 on an error
    (bad file, contradiction).

    Unresolved dims are grouped by their root cause (the node where the loss began);
    -v lists every dim, and a notice per passing model in GitHub format.

    Example: onnxsym check models/ -j 2 --allow-data-dependent --format github --require seq=1:4096
    """
    from onnxsym.commands import check as check_report

    required = tuple((n, lo, hi) for n, (lo, hi) in _ranges(require, "--require", one=True).items())
    opts = check_report.CheckOptions(allow_data_dependent, tuple(allow), outputs_only, max_unresolved, allow_stale,
                                     required, tuple(allow_pinned))
    b = _bindings(bind)
    dyn = _dynamic(dynamic)
    ctx = click.get_current_context()
    debug = ctx.meta.get("onnxsym.debug", False)
    paths = check_report.model_files(models)
    kw = dict(bind=b, reraise=debug, constant_initializers=constant_initializers, allow_zero=allow_zero, dynamic=dyn,
              baseline=baseline)
    if jobs > 1 and len(paths) > 1:
        reports = check_report.check_parallel(paths, opts, min(jobs, len(paths)), ctx.meta.get("onnxsym.rules", ()),
                                              **kw)
    else:
        reports = []
        for m in paths:
            bar = Progress(f"checking {os.path.basename(m)}", enabled=not quiet)
            try:
                reports.append(check_report.check_model(m, opts, progress=bar, **kw))
            finally:
                bar.close()
    if fmt == "json":
        click.echo(check_report.format_json(reports, opts))
    else:
        for r in reports:  # text: a file's error on stderr, the report on stdout; github: all on stdout
            lines = check_report.format_github([r], notices=verbose) if fmt == "github" else \
                check_report.format_text([r], quiet, verbose)
            for line in lines:
                click.echo(line, err=fmt == "text" and r.error is not None)
        if fmt == "text" and len(reports) > 1 and not quiet:
            click.echo(check_report.totals_line(reports))
    sys.exit(check_report.exit_code(reports))


@main.command(short_help="Print a table of MODEL's values and their shapes.")
@click.argument("model", type=_MODEL)
@click.option("--name", metavar="PATTERN", help="Only values whose name contains PATTERN (or matches it as a glob).")
@click.option("--op", "ops", multiple=True, metavar="OP", help="Only values produced by this op type (repeatable).")
@click.option("--outputs", is_flag=True, help="Only the graph outputs.")
@click.option("--unresolved", is_flag=True, help="Only values with an unresolved dim.")
@click.option("--all", "show_all", is_flag=True, help="Also the outputs of Constant nodes (hidden by default).")
@click.option("--subgraphs", is_flag=True, help="Also the values inside If branches and Loop and Scan bodies.")
@click.option("--summary", is_flag=True,
              help="The model on one screen instead of the table: inputs, outputs (with their dims), op types, "
                   "size (parameters, bytes, external data), opsets, producer.")
@click.option("--color/--no-color", default=None,
              help="Colour the dims (default: on a terminal, unless NO_COLOR is set).")
@_bind_opt
@_knowledge
@_constant_inits
@_dynamic_opt
@click.option("--quiet", "-q", is_flag=True, help="Print the rows alone: no header, no summary.")
@click.option("--verbose", "-v", is_flag=True,
              help="Add the node names, and the symbols (with their ranges), aliases, assumptions, "
                   "stale declarations and warnings of the values shown.")
@click.option("--pager/--no-pager", default=True,
              help="On a terminal, a table longer than the screen goes through $PAGER (less) (default); "
                   "--no-pager prints it all.")
def show(model, name, ops, outputs, unresolved, show_all, subgraphs, summary, color, bind, ranges, assume, allow_zero,
         constant_initializers, dynamic, quiet, verbose, pager):
    """Print a table of MODEL's values and their shapes; with -v, its symbols and assumptions.

    Symbolic dims are cyan, unresolved ones red (on a terminal). Every section keeps
    only what belongs to the values the filters keep. Lines fit the terminal (or
    COLUMNS); piped output has a line per value. On a terminal, a table longer than
    the screen is paged, as git pages its logs.

    Example: onnxsym show model.onnx --op Reshape --unresolved
    """
    from onnxsym.commands import show as show_mod
    from onnxsym.commands.table import pages, terminal_width

    result = _infer_with_progress(model, bind, quiet, constant_initializers, ranges, assume, allow_zero, dynamic)
    _known_ops(result, ops)
    if summary:
        from onnxsym.commands.summary import summary_lines

        style = _styler(color)
        text = lambda v: show_mod.shape_text(show_mod.declared_value(result, v), result.fresh, style)[0]  # noqa: E731
        for line in summary_lines(result, text) + show_mod.pinned_lines(result, show_mod.value_names(result)):
            click.echo(line, color=color)
        return
    flt = show_mod.ShowFilter(name, tuple(ops), outputs, unresolved, constants=show_all)
    layout = show_mod.Layout(quiet=quiet, verbose=verbose, subgraphs=subgraphs, width=terminal_width())
    lines = show_mod.show_lines(result, flt, _styler(color), layout=layout)
    if pager and pages(len(lines)):  # (a 96-layer model has 12,000 rows: a screen's worth would scroll by)
        click.echo_via_pager("\n".join(lines) + "\n", color=color)
        return
    for line in lines:
        click.echo(line, color=color)


def _known_ops(result, ops) -> None:
    """Each --op names an op type some node of the model has (any case), else a usage error with
    the nearest ones: a typo would show an empty table."""
    import difflib

    from onnxsym.commands.summary import graphs

    types = sorted({n.op_type for g in graphs(result.model.graph) for n in g.node})
    lower = {t.lower() for t in types}
    for op in ops:
        if op.lower() not in lower:
            near = difflib.get_close_matches(op, types, n=3) or difflib.get_close_matches(op.lower(), list(lower), n=3)
            hint = f"; did you mean {', '.join(repr(x) for x in near)}?" if near else ""
            raise click.BadParameter(f"no node of the model has op type {op!r}{hint} (its op types: "
                                     f"{', '.join(types)})", param_hint="--op")


@main.command(context_settings={"ignore_unknown_options": True},  # a negative AXIS is no option
              short_help="Explain how VALUE's dim got its expression, or was lost.")
@click.argument("model", type=_MODEL)
@click.argument("value")
@click.argument("axis", type=int, required=False)
@_bind_opt
@_knowledge
@_constant_inits
@_dynamic_opt
@click.option("--quiet", "-q", is_flag=True, help="One line per dim: its expression, or where it was lost.")
@click.option("--verbose", "-v", is_flag=True, help="Every step of the chain (default: the first 10).")
def explain(model, value, axis, bind, ranges, assume, allow_zero, constant_initializers, dynamic, quiet, verbose):
    """Explain how VALUE's dim AXIS got its expression, or where it was lost and why.

    Prints the chain of nodes (and their rules) back to the graph-input symbols,
    or to the node that made the unresolved dim and the upstream node that
    caused it. Without AXIS: every dim of VALUE. VALUE may also be a dim name the
    model declares on produced values (an alias): each place it is declared.

    Example: onnxsym explain model.onnx /m/Reshape_3_output_0 1
    """
    from onnxsym.commands.explain import Lineage

    result = _infer_with_progress(model, bind, quiet, constant_initializers, ranges, assume, allow_zero, dynamic)
    lineage = Lineage(result)
    if value not in result.values and value in result.aliases:
        # A name the model declares on produced values: explain where it is declared.
        places = result.alias_places(value)
        click.echo(f"{value}: an alias the model declares, = {result.aliases[value]}")
    elif axis is None:
        shape = result.shape(value)
        places = [(value, a) for a in ([None] if shape is None else range(len(shape)))]
    else:
        places = [(value, axis)]
    for v, a in places:
        e = lineage.explain(v, a)
        if quiet:
            click.echo(e.headline())
            continue
        for line in e.lines(max_steps=None if verbose else 10):
            click.echo(line)


@main.command(short_help="Print the input sizes MODEL is valid for, and why.")
@click.argument("model", type=_MODEL)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "trtexec", "ort", "torch"]), default="text",
              show_default=True,
              help="text; one JSON document (symbols, ranges, conditions with their sources); csv (with --sweep); "
                   "trtexec (--minShapes/--optShapes/--maxShapes from the ranges); ort (onnxruntime free-dimension "
                   "overrides at the opt sizes); torch (torch.export.Dim specs and dynamic_shapes).")
@_bind_opt
@_knowledge
@_constant_inits
@_dynamic_opt
@_verbose
@_sweep_opts
def domain(model, fmt, bind, ranges, assume, allow_zero, constant_initializers, dynamic, verbose, sweep, plot, force):
    """Print the input sizes MODEL is valid for: ranges, divisibility, equalities
    and what does not simplify, each with the nodes it comes from and why.

    Example: onnxsym domain model.onnx; onnxsym domain model.onnx --sweep seq=1:128 --bind batch=1
    """
    import json

    _check_sweep(sweep, plot, fmt, force, None)
    result = _infer_with_progress(model, bind, False, constant_initializers, ranges, assume, allow_zero, dynamic)
    if sweep is not None:
        from onnxsym.commands import sweep as sweeps

        _print_sweep(sweeps.domain_sweep(model, result, sweep), fmt, plot, force)
        return
    with working("computing the valid input domain"):
        d = result.domain()
    if fmt in ("trtexec", "ort", "torch"):
        from onnxsym.domain import deploy

        prof = deploy.profile(result, d) if fmt != "torch" else deploy.Profile({}, {}, {}, deploy.input_dims(result))
        for w in prof.warnings:
            click.echo(f"onnxsym: warning: {w}", err=True)
        if fmt == "trtexec":
            click.echo(deploy.trtexec(prof))
        else:
            lines = deploy.ort_overrides(prof, dict(result.symbols.bound)) if fmt == "ort" else deploy.torch_dims(d, prof)
            click.echo("\n".join(lines))
        return
    if fmt == "json":
        from onnxsym.domain.pins import pins_of

        click.echo(json.dumps({"model": model, **d.to_json(), "pinned": [p.to_json() for p in pins_of(result, d)]},
                              indent=2))
        return
    symbols = ", ".join(d.symbols) or "no input symbol"
    click.echo(f"{model}: {len(d.conditions)} condition{'s' if len(d.conditions) != 1 else ''} on {symbols}")
    pinned = _pins_line(result, d)
    if pinned:
        click.echo(pinned)
    for c in d.conditions:
        click.echo(f"  {c.describe() if not verbose else ('assumed ' if c.assumed else '') + c.text}")
        if verbose:
            for src in c.sources:
                click.echo(f"    from {src}")
            if c.assumed:
                click.echo(f"    assumed: {c.assumed}")
    from onnxsym.output.numbers import range_text

    click.echo("  ranges: " + ", ".join(f"{n} {range_text(lo, hi)}" for n, (lo, hi) in d.ranges.items()))
    for line in d.unstated_lines(len(d.unstated) if verbose else 5):
        click.echo(f"  {line}")


@main.command(short_help="Compare two versions' symbolic contract; exit 1 on a break.")
@click.argument("old", type=_MODEL)
@click.argument("new", type=_MODEL)
@click.option("--bind", multiple=True, metavar="NAME=INT",
              help="Compare the cost (parameters, KV cache, peak memory) at these sizes (the old model's names).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text", show_default=True,
              help="text; json (one document); github (GitHub Actions annotations).")
@_allow_zero_opt
@_constant_inits
@_verbose
def diff(old, new, bind, fmt, allow_zero, constant_initializers, verbose):
    """Compare the symbolic contract of two versions of a model: input and output shapes,
    the domain, unresolved and pinned symbols, and the cost at --bind sizes.

    Exit 1 when NEW breaks a caller of OLD (a dim made static or changed, the domain
    narrowed, a symbol pinned, dims left unresolved, a bigger KV cache), each shown at
    sizes where the two differ; 0 otherwise; 2 on an error. Renamed symbols are matched
    by their place in the graph inputs. Example: onnxsym diff v1.onnx v2.onnx --bind batch=1 --bind seq=128
    """
    from onnxsym.commands import diff as contract

    b = _bindings(bind)
    kw = dict(allow_zero=allow_zero, constant_initializers=constant_initializers)
    before = contract.contract_of(old, **kw)
    after = contract.contract_of(new, **kw)
    names = contract.symbol_map(before, after)
    if b:
        before.cost = contract.cost_at(old, b, kw)
        after.cost = contract.cost_at(new, {names.get(k, k): v for k, v in b.items()}, kw)
    changes = contract.compare(before, after)
    findings = [c for c in changes if c.finding]
    if fmt == "json":
        import json

        click.echo(json.dumps({"old": old, "new": new, "symbols": names, "findings": len(findings),
                               "changes": [c.to_json() for c in changes]}, indent=2))
    elif fmt == "github":
        from onnxsym.commands.check import gh_command

        for c in changes:
            if c.finding or verbose:
                click.echo(gh_command("error" if c.finding else "notice", new, f"onnxsym: contract {c.kind}",
                                      c.describe()))
    else:
        renamed = {k: v for k, v in names.items() if k != v}
        click.echo(f"{old} -> {new}: {len(findings)} finding{'s' if len(findings) != 1 else ''}"
                   + (f", {len(changes) - len(findings)} other change{'s' if len(changes) - len(findings) != 1 else ''}"
                      if len(changes) > len(findings) else "")
                   + (f"; symbols renamed: {', '.join(f'{k} -> {v}' for k, v in renamed.items())}" if renamed else ""))
        for c in changes:
            if c.finding or verbose:
                click.echo(f"  {'finding' if c.finding else 'change'}: {c.describe()}")
    sys.exit(1 if findings else 0)


@main.command(cls=_SizeWords, short_help="Print MODEL's bytes, FLOPs, KV cache and peak memory.")
@click.argument("model", type=_MODEL)
@_bind_opt
@_knowledge
@_constant_inits
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text", show_default=True,
              help="text, json, or (with --sweep) csv.")
@click.option("--nodes", "per_node", is_flag=True,
              help="Also a table of the nodes: FLOPs, share of the total, parameter and output bytes, "
                   "sorted by FLOPs (text format).")
@click.option("--top", type=click.IntRange(min=1), metavar="N", help="The table of the N nodes with the most FLOPs.")
@click.option("--solve", "solve", metavar="SYMBOL", help="Find the largest SYMBOL whose memory fits --budget.")
@click.option("--budget", metavar="SIZE", help="Memory budget for --solve: 24GiB, 80 GB, or bytes.")
@_sweep_opts
def cost(model, bind, ranges, assume, allow_zero, constant_initializers, fmt, per_node, top, solve, budget, sweep,
         plot, force):
    """Print MODEL's parameter and activation bytes, FLOPs, KV cache and peak memory,
    each as an expression over the input symbols (in units, 13.8 MiB, 4.76 GFLOPs, once
    --bind gives every symbol a size).

    Memory is the parameters plus the peak of the activations live along the node
    order. Example: onnxsym cost model.onnx --solve batch --budget 24GiB --bind seq=4096;
    onnxsym cost model.onnx --bind batch=1 --bind seq=128 --top 10
    """
    from onnxsym.cost.report import as_json, text_lines
    from onnxsym.cost.solve import parse_budget

    if (solve is None) != (budget is None):
        raise click.UsageError("--solve and --budget go together")
    _check_sweep(sweep, plot, fmt, force, "--solve" if solve else "--nodes" if per_node else "--top" if top else None)
    limit = parse_budget(budget) if budget is not None else None
    b = _bindings(bind)
    if sweep is not None:
        from onnxsym.commands import sweep as sweeps

        result = _in_env(api.infer(model, bind=b, ranges=_ranges(ranges), assume=assume, allow_zero=allow_zero,
                                   constant_initializers=constant_initializers))
        _print_sweep(sweeps.cost_sweep(model, result, sweep), fmt, plot, force)
        return

    def run(given):
        bar = Progress(f"inferring {os.path.basename(model)}")
        try:
            return _in_env(api.infer(model, bind=given, ranges=_ranges(ranges), assume=assume, allow_zero=allow_zero,
                                     constant_initializers=constant_initializers, progress=bar))
        finally:
            bar.close()
    what_if: dict = {}
    if b:  # a size outside the domain: no cost to speak of (onnxruntime refuses the model there)
        _check_bind_in_domain(run({}), b)
    try:
        result = run(b)
    except UserInputError as exc:
        # A count the data decides (NonZero's) is no input symbol: --solve takes it as a what-if.
        if not exc.unknown_binds:
            raise
        result = run({k: v for k, v in b.items() if k not in exc.unknown_binds})
        other = [n for n in exc.unknown_binds if n not in result.fresh]
        if other:
            raise UserInputError(f"--bind {other[0]}: {result.symbols.unknown_name(other[0])}") from None
        if solve is None:
            p = result.fresh[exc.unknown_binds[0]]
            raise UserInputError(f"--bind {p.symbol}: a count the data decides ({p.op_type} '{p.node}'): only --solve "
                              f"takes it, as a what-if") from None
        what_if = {n: b[n] for n in exc.unknown_binds}
    if solve is not None:
        result = result.within_domain()  # solved within the domain's ranges, then its other conditions
    with working("computing the cost (the peak memory is a max over the nodes)"):
        c = result.cost()
    with working(f"solving for {solve}"):
        solution = c.solve(solve, limit, bind=what_if) if solve is not None else None
        if solution is not None:
            from onnxsym.cost.solve import within_domain

            solution = within_domain(solution, result.domain(), {})
    if fmt == "json":
        click.echo(as_json(model, c, solution))
        return
    from onnxsym.commands.table import terminal_width

    for line in text_lines(model, c, per_node, solution, top, terminal_width()):
        click.echo(line)


def _check_bind_in_domain(free, bind) -> None:
    """A UserInputError naming the condition of ``free``'s domain (the model inferred
    without ``bind``) that the bound sizes break, as verify refuses them."""
    given = {k: v for k, v in bind.items() if k in free.symbols.origin}
    with free.env:
        for name, d in free.derived_symbols().items():
            if name not in given:
                try:
                    given[name] = onnxsym_dims().evaluate(d, given)
                except (KeyError, ZeroDivisionError):
                    continue
        broken = free.domain().broken_by(given)
    if broken is not None:
        sizes = " ".join(f"--bind {k}={v}" for k, v in bind.items() if k in given)
        raise UserInputError(f"bind {dict(bind)}: outside the domain, which needs {broken}",
                             f"{sizes}: outside the domain, which needs {broken} (onnxsym domain MODEL)")


def onnxsym_dims():
    from onnxsym import dims

    return dims


@main.command(short_help="Export MODEL as MLIR with its symbolic shapes.")
@click.argument("model", type=_MODEL)
@click.option("-o", "--output", "out", type=click.Path(), help="Where to write (default: MODEL.mlir).")
# (the choices are onnxsym.mlir.DIALECTS and STYLES, written out: importing the export would slow every
# command's start-up; test_cli holds them equal)
@click.option("--dialect", type=click.Choice(["symbol", "torch"]), default="symbol", show_default=True,
              help="symbol: the symbol dialect (bishengir-opt); torch: torch-mlir's ONNX import form (iree-compile).")
@click.option("--style", type=click.Choice(["propagate", "erased", "encoding", "unfolded"]), default=None,
              help="Which symbol-dialect form (default: propagate).")
@click.option("--generic", is_flag=True, help="MLIR's generic op form (parses with --allow-unregistered-dialect).")
@click.option("--weights/--no-weights", default=None,
              help="Embed initializer contents (dense_resource blobs). Default: yes for --dialect torch (a text "
                   "with elided weights compiles to nothing useful), no for the symbol dialect.")
@click.option("--names", is_flag=True, help="Name symbols as in the model (@batch) instead of @S0, @S1, ...")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@_bind_opt
@_knowledge
@_constant_inits
def mlir(model, out, dialect, style, generic, weights, names, force, bind, ranges, assume, allow_zero,
         constant_initializers):
    """Export MODEL as MLIR with its symbolic shapes as symbol-dialect ops.

    --range and --assume narrow the symbols' ranges (min_val/max_val; IREE's
    util.assume.int from the torch dialect), --bind fixes a symbol. A MODEL ending
    in .mlir (onnxsym's encoding form) is read back into the propagate-symbol form.
    Example: onnxsym mlir model.onnx -o model.mlir --generic; for IREE:
    onnxsym mlir model.onnx --dialect torch --range seq=1:4096 -o model.torch.mlir
    """
    from onnxsym.mlir.files import convert

    if dialect == "torch" and (style is not None or generic):
        raise click.UsageError("the torch dialect has one form: no --style, no --generic")
    if weights is None:
        weights = dialect == "torch"
    result = None
    knowledge = bind or ranges or assume or allow_zero or constant_initializers
    if not model.endswith(".mlir") and knowledge:
        result = _in_env(api.infer(model, bind=_bindings(bind), ranges=_ranges(ranges), assume=assume,
                                   allow_zero=allow_zero, constant_initializers=constant_initializers))
        result = result.within_domain()  # the ranges as the domain narrows them, as annotate --mlir writes
    elif model.endswith(".mlir") and knowledge:
        raise click.UsageError("a .mlir MODEL is converted as it is: no --bind, --range, --assume")
    target = convert(model, out, style or "propagate", generic, weights, names, force, dialect, result=result)
    click.echo(f"{target}: written", err=target == STDOUT)


def run() -> None:
    """The ``onnxsym`` command in a process of its own (the script, ``python -m onnxsym``). One
    command is one short process: the garbage collector's full passes over every object (the
    model's values, onnx's own modules) cost about a tenth of annotate's own work on a 96-layer
    model (0.94 s -> 0.85 s), so they are made rare here; a process that imports onnxsym keeps
    its own collector as it is."""
    import gc

    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    main(prog_name="onnxsym")


if __name__ == "__main__":
    run()
