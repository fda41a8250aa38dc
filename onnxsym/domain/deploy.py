"""The domain in the forms deployment tools take: TensorRT profiles for ``trtexec``
(``--minShapes/--optShapes/--maxShapes``), onnxruntime's free-dimension overrides, and
``torch.export.Dim`` specs.

Each names the model's own graph inputs and the dims they declare. A profile's three
points are sizes the model runs at (every condition of the domain holds there); where the
box between them leaves the domain (a divisibility, a joint bound), a warning names the
condition: TensorRT would build for sizes at which the model fails."""

from __future__ import annotations

import keyword
import math
import re
import shlex
from dataclasses import dataclass, field

from .. import dims
from ..errors import UserInputError
from . import guarded

# The largest number of sizes tried, per symbol, to find one the domain allows near a bound.
_SEARCH = 4096


@dataclass
class Profile:
    """Sizes of the root symbols at the low end, a middle and the high end of their ranges,
    each point inside the domain; ``inputs`` maps each graph input to its dims (ints, or
    (dim_param text, dim))."""

    min: dict[str, int]
    opt: dict[str, int]
    max: dict[str, int]
    inputs: list[tuple[str, list]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def input_dims(result) -> list[tuple[str, list]]:
    """Each graph input that is no weight, with its dims: an int, or (its declared text, the dim)."""
    inits = {t.name for t in result.model.graph.initializer}
    out = []
    for i in result.model.graph.input:
        if i.name in inits or not i.type.HasField("tensor_type"):
            continue
        shape = result.shape(i.name) or ()
        declared = list(i.type.tensor_type.shape.dim)
        row = []
        for k, d in enumerate(shape):
            text = declared[k].dim_param if k < len(declared) and declared[k].HasField("dim_param") else ""
            row.append(d if isinstance(d, int) else (text, d))
        out.append((i.name, row))
    return out


def _valid(domain, point) -> bool:
    try:
        return domain.violated(point) is None
    except (KeyError, ZeroDivisionError):
        return False


def _near(domain, point: dict[str, int], name: str, start: int, stop: int) -> int | None:
    """The first size of ``name`` from ``start`` towards ``stop`` where ``point`` is valid."""
    step = 1 if stop >= start else -1
    for k, v in enumerate(range(start, stop + step, step)):
        if k >= _SEARCH:
            return None
        if _valid(domain, {**point, name: v}):
            return v
    return None


def _near_alone(domain, name: str, start: int, stop: int) -> int | None:
    """The first size of ``name`` from ``start`` towards ``stop`` that no condition over ``name``
    alone (and its range) rules out."""
    step = 1 if stop >= start else -1
    for k, v in enumerate(range(start, stop + step, step)):
        if k >= _SEARCH:
            return None
        if domain.broken_by({name: v}) is None:
            return v
    return None


def profile(result, domain) -> Profile:
    """min, opt and max sizes of every root symbol, each point inside the domain. A symbol
    without an upper bound (int64's top) needs one: ``--range NAME=LO:HI``."""
    ranges = domain.ranges
    names = list(domain.symbols)
    unbounded = [n for n in names if ranges[n][1] >= dims.INT64_MAX]
    if unbounded:
        opts = " ".join(f"--range {n}=LO:HI" for n in unbounded)
        why = f"{', '.join(unbounded)} {'has' if len(unbounded) == 1 else 'have'} no largest size; give {opts}"
        raise UserInputError(f"a profile needs a largest size: {why}", f"--format: {why}")
    lo = {n: ranges[n][0] for n in names}
    hi = {n: ranges[n][1] for n in names}
    mid = {n: max(lo[n], min(hi[n], 2 ** round(math.log2(math.sqrt(max(lo[n], 1) * hi[n]))))) for n in names}
    points = []
    for label, base, towards in (("min", lo, hi), ("opt", mid, hi), ("max", hi, lo)):
        point = dict(base)
        if not _valid(domain, point):
            for n in names:  # move each symbol inward until the point runs
                got = _near(domain, point, n, point[n], towards[n])
                if got is not None:
                    point[n] = got
                    if _valid(domain, point):
                        break
        if not _valid(domain, point):
            # several symbols off at once (MaxViT at 17x17 needs height and width at 31): each to its
            # nearest size that the conditions over it alone allow, then the point as a whole
            point = dict(base)
            for n in names:
                got = _near_alone(domain, n, point[n], towards[n])
                point[n] = point[n] if got is None else got
        if not _valid(domain, point):
            bad = domain.violated(point)
            why = f"no {label} point found inside the domain" + (f" ({bad.text})" if bad is not None else "")
            raise UserInputError(why, f"--format: {why}; narrow the sizes with --range")
        points.append(point)
    prof = Profile(points[0], points[1], points[2], inputs=input_dims(result))
    from .box import check_box

    box = {n: (prof.min[n], prof.max[n]) for n in names if prof.min[n] < prof.max[n]}
    cut = check_box(domain, result, box) if box else None
    if cut is not None:
        prof.warnings.append(f"not every size between min and max runs: {cut.describe()}")
    return prof


def _shape(dims_: list, point: dict[str, int]) -> list[int]:
    return [d if isinstance(d, int) else dims.evaluate(d[1], point) for d in dims_]


def trtexec(prof: Profile) -> str:
    """``--minShapes=x:1x3x32x32 --optShapes=... --maxShapes=...`` for the model's inputs."""
    parts = []
    for flag, point in (("--minShapes", prof.min), ("--optShapes", prof.opt), ("--maxShapes", prof.max)):
        spec = ",".join(f"{name}:{'x'.join(map(str, _shape(d, point)))}" for name, d in prof.inputs)
        parts.append(shlex.quote(f"{flag}={spec}"))
    return " ".join(parts)


def ort_overrides(prof: Profile, bound: dict[str, int]) -> list[str]:
    """Python lines that fix each declared free dimension of the inputs at the opt point
    (``SessionOptions.add_free_dimension_override_by_name``); a bound one at its bind."""
    seen: dict[str, int] = {}
    for _, ds in prof.inputs:
        for d in ds:
            if isinstance(d, tuple) and d[0] and d[0] not in seen:
                seen[d[0]] = dims.evaluate(d[1], prof.opt)
    lines = ["import onnxruntime as ort", "so = ort.SessionOptions()"]
    lines += [f"so.add_free_dimension_override_by_name({name!r}, {v})" for name, v in {**seen, **bound}.items()]
    unnamed = [f"{n}[{k}]" for n, ds in prof.inputs for k, d in enumerate(ds) if isinstance(d, tuple) and not d[0]]
    if unnamed:
        lines.append(f"# no name to override by (declared -1 or '?'): {', '.join(unnamed)}")
    return lines


def _ident(name: str) -> str:
    """A Python name for the symbol ``name`` (``'p2o.DynamicDimension.0'`` -> ``p2o_DynamicDimension_0``)."""
    out = re.sub(r"\W", "_", name)
    return out if out.isidentifier() and not keyword.iskeyword(out) else f"_{out}"


def torch_dims(domain, prof: Profile) -> list[str]:
    """``torch.export.Dim`` specs over the ranges, and ``dynamic_shapes`` by input name (the
    forward's argument names where the exporter kept them). A divisibility ``n % m == 0`` is a
    derived dim (``m*_n``); any other condition the Dims cannot state is a comment."""
    lines = ["from torch.export import Dim", ""]
    multiple = {c.form.symbol: c.form.modulus for c in domain.conditions
                if c.kind == "divisible" and not c.when and c.form is not None and c.form.residues == (0,)
                and c.form.below is None}
    for n in domain.symbols:
        lo, hi = domain.ranges[n]
        v = _ident(n)
        m = multiple.get(n)
        if m is not None:
            top = "" if hi >= dims.INT64_MAX else f", max={hi // m}"
            lines += [f"_{v} = Dim({'_' + v!r}, min={-(-lo // m)}{top})", f"{v} = {m}*_{v}"]
        else:
            # the least (and largest) size the conditions over the symbol alone allow: MaxViT's
            # height >= 17 with height % 32 in {0, 31} is min=31
            least = _near_alone(domain, n, lo, hi)
            lo = lo if least is None else least
            most = None if hi >= dims.INT64_MAX else _near_alone(domain, n, hi, lo)
            hi = hi if most is None else most
            top = "" if hi >= dims.INT64_MAX else f", max={hi}"
            lines.append(f"{v} = Dim({v!r}, min={lo}{top})")
    for c in domain.conditions:
        stated = c.kind == "range" or (c.kind == "divisible" and c.form is not None and c.form.symbol in multiple
                                       and c.form.residues == (0,))
        if c.when or not stated:
            lines.append(f"# also needed: {guarded.prefix(c.when)}{c.text}")
    lines += ["", "dynamic_shapes = {"]
    for name, ds in prof.inputs:
        axes = ", ".join(f"{k}: {_torch_expr(d[1])}" for k, d in enumerate(ds) if isinstance(d, tuple))
        lines.append(f"    {name!r}: {{{axes}}},")
    return lines + ["}"]


def _torch_expr(d) -> str:
    """A dim over the Dims: a symbol, or an affine text (torch takes ``2*seq``, ``seq + 1``)."""
    text = str(d)
    for s in sorted(dims.free_symbols(d), key=lambda s: -len(s.name)):
        text = text.replace(f"'{s.name}'", _ident(s.name))
        if s.name.isidentifier():
            text = re.sub(rf"\b{re.escape(s.name)}\b", _ident(s.name), text)
    return text
