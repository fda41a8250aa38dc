"""The domain judged by onnxruntime at its boundary: for each condition a model's domain
states, sizes just inside must run and give the inferred shapes, sizes just outside must fail
at one of the condition's nodes or give other shapes. A condition whose boundary is not found
from the base sizes, or that holds only under a guard (the data picks the branch), is skipped
with why; an assumed one (a float32 bound) is not a place where onnxruntime fails: skipped.

    python -m onnxsym.commands.boundary MODEL --size n=4 ...     # one line per condition
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import onnx

from .. import dims

# How far a condition that does not simplify is searched for its boundary.
SEARCH = 4096

Feeds = Callable[[Mapping[str, int]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class Outcome:
    condition: str
    verdict: str  # "ok", "skipped", "too wide" (inside fails), "too narrow" (outside runs alike)
    detail: str
    inside: Mapping[str, int] | None = None
    outside: Mapping[str, int] | None = None


def default_feeds(model: onnx.ModelProto, input_shapes: Mapping[str, tuple] | None = None) -> Feeds:
    """Inputs of the given sizes: ones for integers (ids and indices valid for any table),
    "a" for strings, random floats. ``input_shapes``: each input's shape as inference named
    it (an unnamed dim, ``?`` or none, is a symbol such as ``x_d2``); else the declared names."""
    inits = {t.name for t in model.graph.initializer}

    def make(binding: Mapping[str, int]) -> dict[str, np.ndarray]:
        out = {}
        for inp in model.graph.input:
            if inp.name in inits:
                continue
            tt = inp.type.tensor_type
            named = (input_shapes or {}).get(inp.name)
            if named is not None and len(named) == len(tt.shape.dim):
                shape = [dims.evaluate(d, dict(binding)) for d in named]
            else:
                shape = [d.dim_value if d.HasField("dim_value") else binding[d.dim_param] for d in tt.shape.dim]
            dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
            if np.issubdtype(dtype, np.integer):
                out[inp.name] = np.ones(shape, dtype=dtype)
            elif dtype == np.object_:
                out[inp.name] = np.full(shape, "a", dtype=object)
            else:
                out[inp.name] = np.random.default_rng(0).standard_normal(shape).astype(dtype)
        return out
    return make


_child = None  # (the onnxruntime child process, and the model it holds: see onnxsym.model.isolated)
_held: tuple | None = None


def run(model: onnx.ModelProto, feeds: Feeds, binding: Mapping[str, int],
        optimized: bool = False) -> tuple[str | None, dict[str, tuple]]:
    """(onnxruntime's error or None, the output shapes). Unoptimized by default: the graph runs
    as written (the optimizer turns a Gather of a Range into a Slice, which clamps). onnxruntime
    runs in a child process, which keeps the model between calls: a native crash of it is an
    error said, and the next call starts a fresh child."""
    global _child, _held
    from ..model.isolated import Child, Crashed, Refused

    data = model.SerializeToString()
    key = (data, optimized)
    if _child is None:
        import atexit

        _child = Child()
        atexit.register(_child.close)
    try:
        if _held is None or _held[0] != key:
            _held = (key, _child.load(data, {"optimization": "all" if optimized else "disable_all"}))
        names = _held[1]
        shapes = _child.run(feeds(binding), names)
    except Refused as exc:  # onnxruntime's own failure: what is judged
        return str(exc), {}
    except Crashed as exc:
        return f"onnxruntime crashed ({exc.signal})", {}
    return None, {n: s for n, s in zip(names, shapes) if s is not None}


def expected(result, binding: Mapping[str, int]) -> dict[str, tuple]:
    out = {}
    for o in result.model.graph.output:
        shape = result.shape(o.name)
        if shape is None:
            continue
        try:
            out[o.name] = tuple(dims.evaluate(d, dict(binding)) for d in shape)
        except KeyError:
            continue  # a fresh dim: nothing to compare
    return out


def with_derived(result, binding: Mapping[str, int]) -> dict[str, int]:
    out = dict(binding)
    for s, v in result.derived.items():
        if s.name not in out:
            try:
                out[s.name] = dims.evaluate(v, out)
            except KeyError:
                pass
    return out


def roots(result, binding: Mapping[str, int]) -> dict[str, int]:
    derived = set(result.derived_symbols())  # (a symbol inference only narrowed keeps its name)
    return {k: v for k, v in binding.items() if k not in derived}


def points(result, domain, cond, base: Mapping[str, int]) -> tuple[dict[str, int], dict[str, int]] | None:
    """(inside, outside) sizes around ``cond``'s boundary from ``base``, or None."""
    f = cond.form
    if cond.kind == "equal":
        inside = dict(base)
        inside[cond.symbols[0]] = dims.evaluate(cond.definition, dict(base))
        return inside, dict(inside, **{cond.symbols[0]: inside[cond.symbols[0]] + 1})
    if cond.kind == "range":
        if f.hi < SEARCH:
            return dict(base, **{f.symbol: f.hi}), dict(base, **{f.symbol: f.hi + 1})
        if f.lo >= 2:  # (below 1 is no size the symbol has by default: nothing to judge there)
            return dict(base, **{f.symbol: f.lo}), dict(base, **{f.symbol: f.lo - 1})
        return None
    s = cond.symbols[0]
    for v in range(base[s], base[s] + SEARCH):
        inside = with_derived(result, roots(result, dict(base, **{s: v})))
        outside = with_derived(result, roots(result, dict(base, **{s: v + 1})))
        if cond.holds(inside) and not cond.holds(outside) and domain.violated(inside) is None:
            return inside, outside
    return None


def check(model: onnx.ModelProto, result, domain, cond, base: Mapping[str, int], feeds: Feeds) -> Outcome:
    """The boundary check of one condition of ``domain`` (``result``'s) from ``base`` sizes."""
    text = cond.text
    if cond.assumed:
        return Outcome(text, "skipped", f"assumed ({cond.assumed})")
    if cond.when:
        return Outcome(text, "skipped", "holds under a guard: " + ", ".join(g.text for g in cond.when))
    found = points(result, domain, cond, with_derived(result, base))
    if found is None:
        return Outcome(text, "skipped", f"no boundary within {SEARCH} of {dict(base)}")
    inside, outside = found
    if cond.kind != "equal":  # (an equality's outside breaks the definition on purpose)
        inside, outside = with_derived(result, roots(result, inside)), with_derived(result, roots(result, outside))
    if domain.violated(inside) is not None or cond.holds(outside) or min(outside.values(), default=0) < 0:
        return Outcome(text, "skipped", f"no clean pair of sizes around it from {dict(base)}", inside, outside)
    err, shapes = run(model, feeds, inside)
    if err is not None:
        return Outcome(text, "too wide", f"inside {inside} fails: {err[:300]}", inside, outside)
    if any(shapes.get(k) != v for k, v in expected(result, inside).items()):
        return Outcome(text, "too wide", f"inside {inside}: {shapes} != {expected(result, inside)}", inside, outside)
    err, shapes = run(model, feeds, outside)
    if err is not None:
        named = [s.node for s in cond.sources if f"Name:'{s.node}'" in err or f"_{s.node}'" in err]
        return Outcome(text, "ok", f"outside {outside} fails at " + (named[0] if named else "another node"),
                       inside, outside)
    if any(shapes.get(k) != v for k, v in expected(result, outside).items()):
        return Outcome(text, "ok", f"outside {outside} runs with other shapes", inside, outside)
    return Outcome(text, "too narrow", f"outside {outside} runs with the inferred shapes", inside, outside)


def check_model(model: onnx.ModelProto, base: Mapping[str, int], feeds: Feeds | None = None,
                **infer_args) -> list[Outcome]:
    """Every condition of ``model``'s domain checked at its boundary from ``base`` sizes."""
    import onnxsym

    result = onnxsym.infer(model, **infer_args)
    domain = result.domain()
    feeds = feeds or default_feeds(result.model, {i.name: shape for i in result.model.graph.input
                                                  for shape in [result.shape(i.name)] if shape is not None})
    for size in (8, 16, 32, 64):  # a base outside the domain (height 4 where it needs 5): larger sizes
        if domain.violated(with_derived(result, base)) is None:
            break
        base = {k: max(v, size) for k, v in base.items()}
    return [check(result.model, result, domain, c, base, feeds) for c in domain.conditions]


if __name__ == "__main__":
    import sys

    path, sizes = sys.argv[1], dict(a.split("=") for a in sys.argv[2:] if "=" in a)
    for o in check_model(onnx.load(path), {k: int(v) for k, v in sizes.items()}):
        print(f"{o.verdict:10} {o.condition}: {o.detail}")
