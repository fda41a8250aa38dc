"""The oracle: run the model in onnxruntime at concrete sizes and compare every
inferred dim with the real one."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import onnx

from . import dims
from .api import Result, infer
from .domain import guarded
from .errors import VerificationError
from .symbols import under_ranges_of_result
from .values import Tensor, Value


@dataclass
class Mismatch:
    value: str
    bindings: Dict[str, int]
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
    mismatches: List[Mismatch] = field(default_factory=list)
    assignments: List[Dict[str, int]] = field(default_factory=list)
    rule_failures: List[str] = field(default_factory=list)  # rules that raised: nothing they touch is known

    @property
    def ok(self) -> bool:
        """No wrong dim and no failed rule (a failed rule's outputs escape the check)."""
        return not self.mismatches and not self.rule_failures


def default_assignments(symbols: Sequence[str], count: int = 2, seed: int = 0) -> List[Dict[str, int]]:
    """A few small, different sizes for each input symbol."""
    rng = random.Random(seed)
    return [{s: rng.randint(2, 9) for s in symbols} for _ in range(count)]


@under_ranges_of_result
def constrained_assignments(result: Result, count: int = 2, seed: int = 0,
                            fixed: Optional[Mapping[str, int]] = None, tries: int = 500) -> List[Dict[str, int]]:
    """Small sizes for the root symbols, within their ranges, with every derived symbol
    computed from its definition, such that every recorded constraint holds."""
    rng = random.Random(seed)
    ranges = result.symbol_ranges()
    derived = result.derived_symbols()
    # What the model declares on its outputs does not bind a run; what its nodes need does.
    checkable = [c for c in result.constraints if c.kind != "declared" and not c.when and
                 not any(s.name in result.fresh for s in dims.free_symbols(c.lhs) | dims.free_symbols(c.rhs))]
    branches = _guarded(result)  # (what a subgraph needs: where some choice of the data runs it)
    out: List[Dict[str, int]] = []
    for attempt in range(tries):
        b = {}
        for name in result.roots():
            lo, hi = ranges[name]
            # small sizes: 2 to 9, or the 8 smallest a learned lower bound leaves (a Conv's need)
            lo2 = max(lo, 2 if attempt < tries // 2 else lo)
            hi2 = min(hi, max(lo2, 2) + 7)
            b[name] = rng.randint(lo2, hi2) if lo2 <= hi2 else (lo if hi < 2 else hi)
        b.update(fixed or {})
        for name, d in derived.items():
            if name not in b:
                b[name] = dims.evaluate(d, b)
        if all(ranges[n][0] <= v <= ranges[n][1] for n, v in b.items() if n in ranges) and \
                all(c.holds(b) for c in checkable) and guarded.choose(branches, b)[1] is None:
            if b not in out or attempt > tries // 2:
                out.append(b)
        if len(out) == count:
            return out
    if not out:
        raise VerificationError("no small sizes satisfy the recorded constraints: "
                                + "; ".join([f"{c} ({c.where})" for c in checkable[:3]]
                                            + [c.describe() for c in branches[:3]]))
    return out


def _feed(tensor: Value, name: str, bindings: Mapping[str, int]) -> np.ndarray:
    if not isinstance(tensor, Tensor) or tensor.shape is None:
        raise VerificationError(f"graph input '{name}': only tensors of known rank can be fed")
    shape = [dims.evaluate(d, bindings) for d in tensor.shape]
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.dtype)
    if np.issubdtype(dtype, np.integer):
        return np.ones(shape, dtype=dtype)  # valid as token ids, masks and indices
    if dtype == np.bool_:
        return np.ones(shape, dtype=np.bool_)
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


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


def _session(result: Result, base_dir: Optional[str] = None):
    """An onnxruntime session of the model with every produced value as an output."""
    import onnxruntime as ort

    exposed = _expose_all(result.model, result.produced, result)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
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
        raise VerificationError(f"onnxruntime cannot load the model: {str(exc).splitlines()[0]}") from None


def feeds(result: Result, bindings: Mapping[str, int]) -> Dict[str, np.ndarray]:
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


@under_ranges_of_result
def runtime_values(result: Result, assignments: List[Dict[str, int]], base_dir: Optional[str] = None):
    """For each assignment, ``(bindings, feeds, {name: OrtValue})``: every value the model
    computes, as onnxruntime's own tensors (their shapes and byte sizes, sub-byte types too)."""
    from onnxruntime import OrtValue

    sess = _session(result, base_dir)
    out_names = [o.name for o in sess.get_outputs()]
    for bindings in assignments:
        run_feeds = feeds(result, bindings)
        try:
            outs = sess.run_with_ort_values(out_names, {k: OrtValue.ortvalue_from_numpy(v) for k, v in run_feeds.items()})
        except Exception as exc:
            raise VerificationError(f"onnxruntime failed at {bindings}: {str(exc).splitlines()[0]}") from None
        yield bindings, run_feeds, dict(zip(out_names, outs))


def verify(model_or_path, assignments: Optional[List[Dict[str, int]]] = None,
           result: Optional[Result] = None, base_dir: Optional[str] = None) -> Report:
    """Compare the inferred shape of every value with onnxruntime's at each assignment."""
    result = result or infer(model_or_path)
    assignments = assignments or constrained_assignments(result)
    sess = _session(result, base_dir)
    report = Report(assignments=assignments, rule_failures=list(result.rule_failures))
    out_names = [o.name for o in sess.get_outputs()]
    for bindings in assignments:
        try:
            outs = sess.run(out_names, feeds(result, bindings))
        except Exception as exc:
            raise VerificationError(f"onnxruntime failed at {bindings}: {str(exc).splitlines()[0]}") from None
        for name, arr in zip(out_names, outs):
            t = result.values.get(name)
            if not isinstance(arr, np.ndarray) or not isinstance(t, Tensor):
                continue
            if t.shape is None:  # nothing inferred is nothing checked: unresolved, every dim
                report.unknown_rank_values += 1
                report.unresolved_dims += arr.ndim
                continue
            report.checked_values += 1
            actual = tuple(arr.shape)
            if len(actual) != len(t.shape):
                report.mismatches.append(Mismatch(name, bindings, t.shape, actual))
                continue
            for d, a in zip(t.shape, actual):
                if any(s.name in result.fresh for s in dims.free_symbols(d)):
                    report.unresolved_dims += 1
                    continue
                report.checked_dims += 1
                if dims.evaluate(d, bindings) != a:
                    report.mismatches.append(Mismatch(name, bindings, t.shape, actual))
                    break
    return report
