"""The oracle: run the model in onnxruntime at concrete sizes and compare every
inferred dim with the real one."""

from __future__ import annotations

import contextlib
import os
import random
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx

from .. import dims
from ..api import Result, checked_size, infer
from ..domain import guarded
from ..errors import MissingDependency, UserInputError, VerificationError
from ..facts.fact import Rel
from ..inference.symbols import under_ranges_of_result
from ..inference.values import Tensor, Value


@dataclass
class Mismatch:
    value: str
    bindings: dict[str, int]
    inferred: tuple
    actual: tuple

    def __str__(self) -> str:
        b = ", ".join(f"{k}={v}" for k, v in sorted(self.bindings.items()))
        return f"value '{self.value}' at {b}: inferred {list(map(str, self.inferred))}, runtime {list(self.actual)}"


@dataclass
class Report:
    checked_values: int = 0
    checked_dims: int = 0
    unresolved_dims: int = 0  # fresh dims, and every dim of a value whose rank is unknown
    unknown_rank_values: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    assignments: list[dict[str, int]] = field(default_factory=list)
    rule_failures: list[str] = field(default_factory=list)  # rules that raised: nothing they touch is known
    crashes: list[str] = field(default_factory=list)  # sizes where onnxruntime died natively: nothing checked there

    @property
    def ok(self) -> bool:
        """No wrong dim, no failed rule (a failed rule's outputs escape the check) and no crash
        of onnxruntime."""
        return not self.mismatches and not self.rule_failures and not self.crashes


def default_assignments(symbols: Sequence[str], count: int = 2, seed: int = 0) -> list[dict[str, int]]:
    """A few small, different sizes for each input symbol."""
    rng = random.Random(seed)
    return [{s: rng.randint(2, 9) for s in symbols} for _ in range(count)]


def check_fixed(result: Result, fixed: Mapping[str, int]) -> dict[str, int]:
    """Each size the user fixes for a run names an input symbol and lies in its range
    (narrowed to the domain where it was computed); the sizes as ints."""
    ranges = result.symbol_ranges()
    out = {}
    for name, v in fixed.items():
        if name in result.fresh:
            p = result.fresh[name]
            why = (f"'{name}' is made by {p.op_type} '{p.node}' ({p.reason}): the run's data decides it, "
                   f"verify feeds only the graph inputs")
            raise UserInputError(f"bind[{name!r}]: {why}", f"--bind {name}: {why}")
        if name not in ranges:
            why = result.symbols.unknown_name(name)
            raise UserInputError(f"bind[{name!r}]: {why}", f"--bind {name}: {why}")
        v = checked_size(v, f"bind[{name!r}]", f"--bind {name}")
        lo, hi = ranges[name]
        if not lo <= v <= hi:
            why = f"outside {name}'s range [{lo}, {hi}]"
            if v == 0 and lo == 1 and name in result.symbols.defaulted:
                hint = (f" (a graph-input dim is >= 1 by default; allow_zero=[{name!r}] lets it be 0)",
                        f" (a graph-input dim is >= 1 by default; --allow-zero {name} lets it be 0)")
            else:
                hint = (" (the domain: Result.domain())", " (the domain: onnxsym domain MODEL)")
            raise UserInputError(f"bind[{name!r}] = {v}: {why}{hint[0]}", f"--bind {name}={v}: {why}{hint[1]}")
        out[name] = v
    return out


# How far above a range's low end the small draws go, and the largest high end drawn
# (a run at the high boundary of a range stays cheap below it).
SMALL = 8
HIGH_BOUNDARY = 1024


def _intervals(result: Result, domain) -> dict[str, tuple]:
    """Where each root symbol is drawn: its range, within the range conditions of the domain
    (also those of a branch that may not run: the sizes the shapes were inferred for)."""
    ranges = result.symbol_ranges()
    out = {n: ranges[n] for n in result.roots()}
    for c in domain.conditions:
        f = c.form
        if c.kind == "range" and f is not None and f.symbol in out:
            lo, hi = max(out[f.symbol][0], f.lo), min(out[f.symbol][1], f.hi)
            if lo <= hi:
                out[f.symbol] = (lo, hi)
    return out


def _target(kind: int, lo: int, hi: int, rng: random.Random) -> int:
    """The first try for a symbol in ``[lo, hi]`` at the ``kind``-th assignment: the low end
    (0 or 1 where the range allows), a small size, the high end (where a run stays cheap),
    1 (where the low end was 0), then small sizes."""
    small_lo = min(max(lo, 2), hi)
    if kind == 0:
        return lo
    if kind == 2 and hi <= HIGH_BOUNDARY:
        return hi
    if kind == 2 and lo == 0:
        return 1
    return rng.randint(small_lo, min(hi, small_lo + SMALL))


def _equalities(result: Result, domain, checkable) -> list[list[tuple]]:
    """The equalities a draw must meet, each as its alternatives ``[(lhs, rhs), ...]``: the
    recorded constraints and the domain's conditions (``past + seq == total_seq``, or
    ``total_seq == 1`` where a mask broadcasts)."""
    eqs = [[(c.lhs, c.rhs)] for c in checkable if c.rel is Rel.EQ]
    for c in domain.conditions:
        f = c.form
        if c.kind == "other" and f is not None and f.rel in ("==", "or"):
            eqs.append(list(f.alts) if f.rel == "or" else [(f.lhs, f.rhs)])
    return eqs


def _holds(lhs, rhs, b) -> bool:
    try:
        return dims.evaluate(lhs, b) == dims.evaluate(rhs, b)
    except Exception:  # a symbol not drawn yet, a division by zero: not met
        return False


def _solve_equalities(b: dict[str, int], eqs, free: Sequence[str]) -> None:
    """Set a symbol of ``free`` from each equality that ``b`` breaks and whose first linear
    alternative has it with coefficient +-1: ``total_seq == past + seq`` sets total_seq from
    past and seq, not from a draw of its own."""
    from ..facts.constraints import linear_symbols

    solved: set = set()
    for _ in range(3):
        changed = False
        for alts in eqs:
            if any(_holds(lhs, rhs, b) for lhs, rhs in alts):
                continue
            for lhs, rhs in alts:
                # a symbol alone on one side first (total_seq of past + seq == total_seq)
                alone = {a.name for a in (dims.as_sym(rhs), dims.as_sym(lhs)) if a is not None}
                pick = next(iter(sorted(((s, k, rest) for s, k, rest in linear_symbols(dims.sub(lhs, rhs))
                                         if s.name in free and s.name not in solved),
                                        key=lambda skr: skr[0].name not in alone)), None)
                if pick is None:
                    continue
                s, k, rest = pick
                try:
                    v = dims.evaluate(rest, b)
                except Exception:
                    continue
                b[s.name] = -v if k == 1 else v  # k*s + rest == 0
                solved.add(s.name)
                changed = True
                break
        if not changed:
            return


def constrained_assignments(result: Result, count: int = 2, seed: int = 0,
                            fixed: Mapping[str, int] | None = None, tries: int = 400) -> list[dict[str, int]]:
    """Sizes for the root symbols within the domain, every derived symbol computed from its
    definition, such that every recorded constraint and every condition of the domain holds
    (the assumed ones too: the shapes are inferred under them). The first assignment is at
    the low end of each range (0 or 1 where allowed), the others small sizes and the high end
    where it is small; a symbol an equality pins (``total_seq == past + seq``) is solved from it."""
    return _assignments(result.within_domain(), count, seed, fixed, tries)


@under_ranges_of_result
def _assignments(result: Result, count: int, seed: int, fixed: Mapping[str, int] | None,
                 tries: int) -> list[dict[str, int]]:
    """constrained_assignments of a result narrowed to its domain."""
    domain = result.domain()
    fixed = check_fixed(result, fixed or {})
    rng = random.Random(seed)
    ranges = result.symbol_ranges()
    derived = result.derived_symbols()
    where = _intervals(result, domain)
    # What the model declares on its outputs does not bind a run; what its nodes need does.
    checkable = [c for c in result.constraints if not c.when and
                 not any(s.name in result.fresh for s in dims.free_symbols(c.lhs) | dims.free_symbols(c.rhs))]
    eqs = _equalities(result, domain, checkable)
    free = [n for n in where if n not in fixed]

    def complete(b: dict[str, int]) -> dict[str, int]:
        b = {**b, **fixed}
        _solve_equalities(b, eqs, free)
        for name, d in derived.items():
            # (a fresh symbol solved as another, a NonZero count, has no size the inputs give)
            if name not in fixed and name not in result.fresh \
                    and not any(s.name in result.fresh for s in dims.free_symbols(d)):
                b[name] = dims.evaluate(d, b)
        return b

    def broken(b: dict[str, int]):
        """The first range, constraint or condition ``b`` breaks (None: it is a valid draw)."""
        for n, v in b.items():
            if n in ranges and not ranges[n][0] <= v <= ranges[n][1]:
                return f"{n} = {v} outside [{ranges[n][0]}, {ranges[n][1]}]", [n]
        c = next((c for c in checkable if not c.holds(b)), None)
        if c is not None:
            return f"{c} ({c.where}: {c.reason})", sorted(s.name for s in dims.free_symbols(c.lhs) | dims.free_symbols(c.rhs))
        d = domain.violated(b)
        if d is not None:
            return d.describe(), list(d.symbols)
        return None

    out: list[dict[str, int]] = []
    last_broken = None
    for kind in range(count if free else 1):
        start = {n: _target(kind, lo, hi, rng) for n, (lo, hi) in where.items()}
        b = complete(start)
        for attempt in range(tries):
            why = broken(b)
            if why is None and b not in out:
                out.append(b)
                break
            if why is None and attempt >= 20:
                break  # only sizes drawn before are left (symbols fixed or pinned): no new run
            if why is not None:
                last_broken = why
            # draw again the symbols of what broke (all of them after a while), in a wider window
            names = [n for n in (why[1] if why and attempt < tries // 2 else free) if n in free] or free
            if not names:
                break  # every symbol fixed or derived: one assignment there is
            widen = SMALL * (1 + attempt // 25)
            for n in names:
                lo, hi = where[n]
                start[n] = rng.randint(lo, min(hi, lo + widen))
            b = complete(start)
    if not out:
        given = f" with {', '.join(f'{k}={v}' for k, v in sorted(fixed.items()))}" if fixed else ""
        if last_broken is None:
            raise VerificationError(f"no sizes could be drawn{given}")
        raise VerificationError(f"no sizes{given} satisfy what the model needs: the last draw broke "
                                f"{last_broken[0]}")
    return out


def _feed(tensor: Value, name: str, bindings: Mapping[str, int]) -> np.ndarray:
    if not isinstance(tensor, Tensor) or tensor.shape is None:
        raise VerificationError(f"graph input '{name}': only tensors of known rank can be fed")
    shape = [dims.evaluate(d, bindings) for d in tensor.shape]
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.dtype)
    except (KeyError, ValueError):
        raise VerificationError(f"graph input '{name}': verify cannot feed its element type {tensor.dtype}") from None
    if tensor.value is not None and all(isinstance(v, (bool, int, float)) for v in tensor.value):
        return np.array(tensor.value, dtype=dtype).reshape(shape)  # data the caller gave (--value)
    if np.issubdtype(dtype, np.integer):
        return np.ones(shape, dtype=dtype)  # valid as token ids, masks and indices
    if dtype == np.bool_:
        return np.ones(shape, dtype=np.bool_)
    if dtype == np.object_:  # strings
        return np.full(shape, "a", dtype=object)
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


# Element types numpy has no type of its own for (ml_dtypes gives them one onnxruntime does
# not take): fed as their bytes; 4-bit ones onnxruntime's python API cannot fill.
_FOUR_BIT = {getattr(onnx.TensorProto, n) for n in ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2")
             if hasattr(onnx.TensorProto, n)}
_BY_BYTES = {getattr(onnx.TensorProto, n) for n in (
    "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0")
    if hasattr(onnx.TensorProto, n)}


def _ort_value(name: str, arr: np.ndarray, elem_type: int):
    """``arr`` as an onnxruntime tensor; a bfloat16 or float8 one from its bytes."""
    from onnxruntime import OrtValue

    if elem_type in _FOUR_BIT:
        raise VerificationError(f"graph input '{name}': verify cannot feed its "
                                f"{onnx.TensorProto.DataType.Name(elem_type).lower()} elements "
                                f"(onnxruntime's python API fills no 4-bit tensor)")
    if elem_type not in _BY_BYTES:
        return OrtValue.ortvalue_from_numpy(arr)
    v = OrtValue.ortvalue_from_shape_and_type(list(arr.shape), elem_type)
    if arr.size:
        v.update_inplace(np.ascontiguousarray(arr).reshape(arr.shape).view(np.uint8 if arr.itemsize == 1 else np.uint16))
    return v


def _expose_all(model: onnx.ModelProto, names: Sequence[str], result: Result) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    have = {o.name for o in m.graph.output}
    for name in names:
        v = result.values.get(name)
        if name in have or not isinstance(v, Tensor):
            continue
        vi = m.graph.output.add()
        vi.name = name
        if v.dtype:  # (an unknown value has no type here: onnxruntime fills it in)
            vi.type.tensor_type.elem_type = v.dtype
    for o in m.graph.output:  # declared output shapes must not constrain the run
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    return m


NO_ONNXRUNTIME = ("verify runs the model in onnxruntime, and no onnxruntime is installed: "
                  "pip install onnxruntime (what the onnxruntime extra installs), or your own distribution of it "
                  "(onnxruntime-gpu, onnxruntime-directml, onnxruntime-openvino, ...)")


def onnxruntime():
    """The installed onnxruntime module, whichever distribution provides it (onnxruntime,
    onnxruntime-gpu, ...: onnxsym requires none of them, so that installing it never adds a
    second one); without one, a :class:`MissingDependency` that says what to install."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise MissingDependency(NO_ONNXRUNTIME) from None
    return ort


def _session(result: Result, base_dir: str | None = None):
    """An onnxruntime session of the model with every produced value as an output
    (onnxruntime's own log silenced: a failure is one error here, not C++ lines on stderr)."""
    ort = onnxruntime()

    exposed = _expose_all(result.model, result.produced, result)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 4
    try:
        if base_dir:
            import os
            import tempfile
            with tempfile.NamedTemporaryFile(suffix=".onnx", dir=base_dir, delete=False) as f:
                f.write(exposed.SerializeToString())
            try:
                return ort.InferenceSession(f.name, opts, providers=["CPUExecutionProvider"])
            finally:
                os.unlink(f.name)
        return ort.InferenceSession(exposed.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise VerificationError(f"onnxruntime cannot load the model: {_load_refusal(exc)}") from None


def _load_refusal(exc: Exception) -> str:
    """onnxruntime's first line of a refused load, without the name of the temporary copy it
    was handed (``Load model from /tmp/tmpXXXX.onnx failed:``): that file is gone, and no help."""
    line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return re.sub(r"Load model from .*? failed: ?", "", line, count=1)


def feeds(result: Result, bindings: Mapping[str, int]) -> dict[str, np.ndarray]:
    """The inputs ``verify`` runs the model with at ``bindings`` (sizes of the input symbols):
    every graph input that is not an initializer, ones for integers and bools (valid as
    token ids, masks and indices), standard normal floats otherwise (seeded)."""
    init = {t.name for t in result.model.graph.initializer}
    out = {inp.name: _feed(result.values[inp.name], inp.name, bindings)
           for inp in result.model.graph.input if inp.name not in init}
    branches = _guarded(result)
    chosen = guarded.choose(branches, bindings)[0] if branches else None
    for name, v in (guarded.feeds(branches, chosen) if chosen else {}).items():
        if name in out:  # a data input that picks a branch the sizes run (silero's sr)
            out[name] = np.full(out[name].shape, v, dtype=out[name].dtype)
    return out


def _guarded(result: Result) -> list:
    """The domain's conditions that hold only where a subgraph runs (see onnxsym.domain.guarded)."""
    if not any(c.when for c in result.constraints) and not any(when for _, when, _ in result.subgraph_runs):
        return []
    return [c for c in result.domain().conditions if c.when]


def _run(sess, result: Result, bindings: Mapping[str, int], run_feeds: Mapping[str, np.ndarray], out_names):
    """Every output as onnxruntime's own values (any element type: bfloat16 has no numpy type)."""
    import onnxruntime as ort

    run_opts = ort.RunOptions()
    run_opts.log_severity_level = 4
    if any(v.dtype == np.object_ for v in run_feeds.values()):
        # onnxruntime makes no OrtValue of strings: numpy in and out (no bfloat16 output then)
        try:
            return [_NumpyValue(o) for o in sess.run(out_names, dict(run_feeds), run_opts)]
        except Exception as exc:
            raise VerificationError(f"onnxruntime failed at {_sizes(bindings)}: {str(exc).splitlines()[0]}") from None
    types = {inp.name: getattr(result.values[inp.name], "dtype", 0) for inp in result.model.graph.input if inp.name in run_feeds}
    values = {k: _ort_value(k, v, types[k]) for k, v in run_feeds.items()}
    try:
        return sess.run_with_ort_values(out_names, values, run_opts)
    except Exception as exc:
        raise VerificationError(f"onnxruntime failed at {_sizes(bindings)}: {str(exc).splitlines()[0]}") from None


class _NumpyValue:
    """A numpy output with the part of OrtValue's interface verify reads."""

    def __init__(self, value):
        self.value = value

    def is_tensor(self) -> bool:
        return isinstance(self.value, np.ndarray)

    def shape(self) -> list:
        return list(self.value.shape)

    def numpy(self):
        return self.value


def _sizes(bindings: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in bindings.items()) or "static sizes"


@under_ranges_of_result
def runtime_values(result: Result, assignments: list[dict[str, int]], base_dir: str | None = None):
    """For each assignment, ``(bindings, feeds, {name: OrtValue})``: every value the model
    computes, as onnxruntime's own tensors (their shapes and byte sizes, sub-byte types too)."""
    sess = _session(result, base_dir)
    out_names = [o.name for o in sess.get_outputs()]
    for bindings in assignments:
        run_feeds = feeds(result, bindings)
        yield bindings, run_feeds, dict(zip(out_names, _run(sess, result, bindings, run_feeds, out_names)))


def require_onnxruntime() -> None:
    """A :class:`MissingDependency` without an installed onnxruntime (found, not imported: it runs
    in a child process, see onnxsym.model.isolated)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("onnxruntime") is not None
    except ImportError:
        found = False
    if not found:
        raise MissingDependency(NO_ONNXRUNTIME)


def _isolated_feed(name: str, arr: np.ndarray, elem_type: int):
    """A feed as the child takes it: the array, or its bytes with its shape and element type
    (bfloat16, float8: numpy has no type onnxruntime takes for them)."""
    if elem_type in _FOUR_BIT:
        _ort_value(name, arr, elem_type)  # (raises: no 4-bit tensor can be fed)
    if elem_type not in _BY_BYTES:
        return arr
    raw = np.ascontiguousarray(arr).reshape(arr.shape).view(np.uint8 if arr.itemsize == 1 else np.uint16)
    return raw, tuple(arr.shape), elem_type


@contextlib.contextmanager
def _child_session(result: Result, base_dir: str | None = None):
    """The model with every produced value as an output, loaded in an onnxruntime child process
    (see onnxsym.model.isolated: a native crash of onnxruntime ends the child, not verify):
    the child and its output names, for the ``with`` block (a fresh child after a crash loads
    the model again: a file written beside the model, for its external data, lives as long)."""
    from ..model.isolated import Child, Crashed, Refused

    require_onnxruntime()
    exposed = _expose_all(result.model, result.produced, result).SerializeToString()
    with contextlib.ExitStack() as stack:
        child = stack.enter_context(Child())
        model: bytes | str = exposed
        if base_dir:  # loaded from a file beside the model: its external data is found
            f = stack.enter_context(tempfile.NamedTemporaryFile(suffix=".onnx", dir=base_dir, delete=False))
            stack.callback(os.unlink, f.name)
            f.write(exposed)
            f.close()
            model = f.name
        try:
            names = child.load(model, {"optimization": "disable_all"})
        except Refused as exc:
            raise VerificationError(f"onnxruntime cannot load the model: {_load_refusal(exc)}") from None
        except Crashed as exc:
            raise VerificationError(f"onnxruntime crashed ({exc.signal}) loading the model") from None
        yield child, names


def _crash_text(model_or_path, bindings: Mapping[str, int], signal: str) -> str:
    name = model_or_path if isinstance(model_or_path, str) else "the model"
    return (f"onnxruntime crashed ({signal}) running {name} at {_sizes(bindings)}: a native fault of "
            f"onnxruntime's own, in a child process (the other sizes are still checked)")


def verify(model_or_path, assignments: list[dict[str, int]] | None = None,
           result: Result | None = None, base_dir: str | None = None) -> Report:
    """Compare the inferred shape of every value with onnxruntime's at each assignment
    (default: :func:`constrained_assignments`). Needs onnxruntime (any distribution of it),
    which runs in a child process: a size where it crashes natively is a line of
    ``Report.crashes``, and the next size runs in a fresh child."""
    from ..model.isolated import Crashed, Refused

    require_onnxruntime()  # before the inference: a missing runtime is said at once
    result = result or infer(model_or_path)
    if not assignments:  # (within the domain its dims are those narrowed to it)
        result = result.within_domain()
        assignments = constrained_assignments(result)
    report = Report(assignments=assignments, rule_failures=list(result.rule_failures))
    types = {inp.name: getattr(result.values[inp.name], "dtype", 0) for inp in result.model.graph.input}
    with _child_session(result, base_dir) as (child, out_names):
        for bindings in assignments:
            try:
                run_feeds = {k: _isolated_feed(k, v, types[k]) for k, v in feeds(result, bindings).items()}
                shapes = child.run(run_feeds, out_names)
            except Crashed as exc:
                report.crashes.append(_crash_text(model_or_path, bindings, exc.signal))
                continue
            except Refused as exc:
                err = VerificationError(f"onnxruntime failed at {_sizes(bindings)}: {str(exc).splitlines()[0]}")
                domain = result.domain()
                if domain.violated(bindings) is not None:
                    raise err from None
                on_data = domain.on_data()
                if on_data:  # (verify feeds ones and random floats: data the condition may not meet)
                    text, src = on_data[0]
                    raise VerificationError(f"{err} (these sizes are inside the domain onnxsym computed, which cannot "
                                            f"promise what the model needs of its input data: {_condition_only(text)}: "
                                            f"{src}; verify's data need not meet it)") from None
                raise VerificationError(f"{err} (these sizes are inside the domain onnxsym computed "
                                        f"(onnxsym domain MODEL): the model needs a condition onnxsym does not know, "
                                        f"perhaps one on the input data; --bind the sizes it runs at)") from None
            _compare(result, report, bindings, zip(out_names, shapes))
    return report


def _condition_only(text: str) -> str:
    """A data-dependent line of the domain without what it says of itself."""
    from ..domain import DATA

    return text[:-len(DATA)].rstrip(", ") if text.endswith(DATA) else text


def _compare(result: Result, report: Report, bindings: Mapping[str, int], shapes) -> None:
    """Each output's shape onnxruntime gave (None: not a tensor) against the inferred one."""
    for name, actual in shapes:
        t = result.values.get(name)
        if actual is None or not isinstance(t, Tensor):
            continue
        if t.shape is None:  # nothing inferred is nothing checked: unresolved, every dim
            report.unknown_rank_values += 1
            report.unresolved_dims += len(actual)
            continue
        report.checked_values += 1
        if len(actual) != len(t.shape):
            report.mismatches.append(Mismatch(name, dict(bindings), t.shape, actual))
            continue
        for d, a in zip(t.shape, actual):
            if any(s.name in result.fresh for s in dims.free_symbols(d)):
                report.unresolved_dims += 1
                continue
            report.checked_dims += 1
            if dims.evaluate(d, bindings) != a:
                report.mismatches.append(Mismatch(name, dict(bindings), t.shape, actual))
                break
