"""``--sweep NAME=LO:HI[:STEP]``: the cost figures (``cost``) or the domain's verdict
(``domain``) at each size of one input symbol, as a table, CSV, JSON or a PNG chart.

The figures are the symbolic ones evaluated exactly at each size (the model is inferred once,
the other symbols bound by ``--bind``). A size outside the model's domain gets no figures:
the model does not run there, and the row names the first condition it breaks."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import dims
from ..errors import UserInputError
from ..output.numbers import flops_text, range_text, size_text
from .params import SweepSpec


@dataclass(frozen=True)
class Figure:
    key: str  # the JSON and CSV column
    label: str  # the table's column
    unit: str  # "bytes" or "FLOPs"


@dataclass
class Row:
    size: int
    values: list[int | None]  # one per figure; None outside the domain
    outside: str | None = None  # the first condition the size breaks, None inside the domain

    @property
    def valid(self) -> bool:
        return self.outside is None


@dataclass
class SweepTable:
    model: str
    symbol: str
    figures: list[Figure]
    rows: list[Row]
    fixed: dict[str, int] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)  # the figures over unresolved dims (no number)


def _others_bound(result, spec: SweepSpec, domain) -> None:
    """The swept name is an input symbol, and every other one is bound (each figure at each
    size is a number)."""
    roots = list(domain.symbols)
    if spec.name not in roots:
        those = ", ".join(roots) or "none"
        why = f"not an input symbol the sizes are free in (those: {those})"
        raise UserInputError(f"sweep {spec.name!r}: {why}", f"--sweep {spec.name}: {why}")
    others = [n for n in roots if n != spec.name]
    if others:
        why = f"the model has other symbols too; give {' '.join(f'--bind {o}=INT' for o in others)}"
        raise UserInputError(f"sweep {spec.name!r}: {why}", f"--sweep {spec.name}: {why}")


def _outside(domain, base: tuple[int, int], name: str, v: int) -> str | None:
    lo, hi = base
    if not lo <= v <= hi:
        return f"outside {name}'s range {range_text(lo, hi)}"
    bad = domain.violated({name: v})
    if bad is None:
        return None
    src = bad.sources[0]
    return f"{bad.text} ({src.op_type} '{src.node}')" if src.op_type else f"{bad.text} ({src.node})"


def cost_sweep(model: str, result, spec: SweepSpec) -> SweepTable:
    base = result.symbol_ranges().get(spec.name, (0, dims.INT64_MAX))  # before the domain narrows it
    result = result.within_domain()
    domain = result.domain()
    _others_bound(result, spec, domain)
    cost = result.cost()
    figures = [(Figure("activation_bytes", "activations", "bytes"), cost.activation_bytes),
               (Figure("flops", "FLOPs", "FLOPs"), cost.flops)]
    if cost.kv_outputs and cost.kv_cache is not None:
        figures.append((Figure("kv_cache_bytes", "KV cache", "bytes"), cost.kv_cache))
    figures += [(Figure("peak_bytes", "peak", "bytes"), cost.peak), (Figure("memory_bytes", "memory", "bytes"), cost.memory)]
    # a figure over an unresolved dim (a fresh symbol) has no number at any size: '?' in each row
    known = [all(s.name == spec.name for s in dims.free_symbols(d)) if not isinstance(d, int) else True
             for _, d in figures]
    rows = []
    with result.env:
        for v in spec.sizes():
            why = _outside(domain, base, spec.name, v)
            values = [dims.evaluate(d, {spec.name: v}) if ok and not why else None for (_, d), ok in zip(figures, known)]
            rows.append(Row(v, values, why))
    unknown = [f.label for (f, _), ok in zip(figures, known) if not ok]
    return SweepTable(model, spec.name, [f for f, _ in figures], rows, dict(result.symbols.bound), unknown)


def domain_sweep(model: str, result, spec: SweepSpec) -> SweepTable:
    base = result.symbol_ranges().get(spec.name, (0, dims.INT64_MAX))
    domain = result.domain()
    _others_bound(result, spec, domain)
    with result.env:
        rows = [Row(v, [], _outside(domain, base, spec.name, v)) for v in spec.sizes()]
    return SweepTable(model, spec.name, [], rows, dict(result.symbols.bound))


# ------------------------------------------------------------------ formats

def _text(value: int | None, unit: str, valid: bool) -> str:
    if value is None:
        return "-" if not valid else "?"
    return flops_text(value) if unit == "FLOPs" else size_text(value)


def text_lines(t: SweepTable, width: int | None = None) -> list[str]:
    from .table import render

    fixed = ", ".join(f"{k}={v}" for k, v in sorted(t.fixed.items()))
    head = f"{t.model}: {t.symbol} from {t.rows[0].size} to {t.rows[-1].size}" + (f" at {fixed}" if fixed else "")
    valid = sum(r.valid for r in t.rows)
    head += f"; {valid} of {len(t.rows)} sizes in the domain"
    header = [t.symbol] + [f.label for f in t.figures] + ["domain"]
    rows = [[str(r.size)] + [_text(v, f.unit, r.valid) for v, f in zip(r.values, t.figures)]
            + ["ok" if r.valid else f"fails: {r.outside}"] for r in t.rows]
    note = [f"(? : {', '.join(t.unknown)} over unresolved dims: onnxsym check MODEL names them)"] if t.unknown else []
    return [head] + render(header, rows, width, right=list(range(len(t.figures) + 1))) + note


def as_csv(t: SweepTable) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([t.symbol] + [f.key for f in t.figures] + ["valid", "fails_at"])
    for r in t.rows:
        w.writerow([r.size] + ["" if v is None else v for v in r.values] + [str(r.valid).lower(), r.outside or ""])
    return buf.getvalue()


def as_json(t: SweepTable) -> str:
    return json.dumps({"model": t.model, "symbol": t.symbol, "fixed": t.fixed, "unknown": t.unknown,
                       "figures": [{"key": f.key, "unit": f.unit} for f in t.figures],
                       "rows": [{t.symbol: r.size, **{f.key: v for f, v in zip(t.figures, r.values)},
                                 "valid": r.valid, "fails_at": r.outside} for r in t.rows]}, indent=2)


PLOT_MISSING = "--plot draws with matplotlib, which is not installed: pip install matplotlib (the plot extra)"


def plot_png(t: SweepTable) -> bytes:
    """A PNG: one line chart per figure against the size (the domain's verdict where there
    are no figures); sizes outside the domain are gaps."""
    try:
        import matplotlib
    except ImportError:
        raise UserInputError(PLOT_MISSING) from None
    matplotlib.use("Agg")  # a file, no window
    import matplotlib.pyplot as plt

    panels: Sequence[Figure] = t.figures or [Figure("valid", "in the domain", "")]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.2 * len(panels) + 0.6), sharex=True, squeeze=False)
    xs = [r.size for r in t.rows]
    for k, (ax, f) in enumerate(zip(axes[:, 0], panels)):
        if t.figures:
            ys = [float("nan") if r.values[k] is None else r.values[k] for r in t.rows]
            ax.plot(xs, ys, marker="." if len(xs) <= 64 else None)
            ax.set_ylabel(f.label if f.label == f.unit else f"{f.label} ({f.unit})")
        else:
            ax.step(xs, [int(r.valid) for r in t.rows], where="mid")
            ax.set_yticks([0, 1], ["fails", "runs"])
        ax.grid(True, alpha=0.3)
    fixed = ", ".join(f"{k}={v}" for k, v in sorted(t.fixed.items()))
    axes[0, 0].set_title(f"{t.model}" + (f" ({fixed})" if fixed else ""), fontsize=9)
    axes[-1, 0].set_xlabel(t.symbol)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()
