"""The ``onnxsym.*`` entries an annotated model carries in ``metadata_props``: their keys,
what each holds, and their encoding (JSON, except the version's plain text).

    version      the onnxsym version that wrote them
    symbols      each symbol: {"origin": a graph input's dim or the node that made it, "range": [lo, hi]}
    constraints  each recorded constraint: {"constraint" (its text), "relation" (==, <=, >=, !=),
                 "origin" (needed, exact_within, default_range, user, branch: see
                 onnxsym.facts.fact.Origin), "node", "op_type", "reason"}, and where it comes from a
                 subgraph, "graph" (the nodes whose subgraphs hold it, outermost first) and "when"
                 (the guards that subgraph runs under) where it has some
    derived      each solved symbol: its definition over the others
    aliases      each name the model declares on a produced value: the dim it names
    stale        each stale declaration: {"value", "declared", "computed" (null: no rank), "why" (if known)}
    user         what the caller gave: {"bind", "ranges", "assume", "allow_zero", "allow_zero_symbols",
                 "values" (graph inputs' data, by name: row-major lists)}
                 (the written dims hold without the ranges, assumptions and values: api.written_result)
    value_only   each produced value whose dims hold only for the given values: its dims under them
                 (not written: fed other data, the model computes them otherwise)
    unresolved   each unresolved dim: {"value", "axis", "dim", "reasons"}
    domain       the valid input domain, when the result is narrowed to it (Domain.to_json)
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import onnx

if TYPE_CHECKING:
    from ..facts.fact import Constraint
    from ..inference.result import Result

PREFIX = "onnxsym."
KEYS = ("version", "symbols", "constraints", "derived", "aliases", "stale", "user", "unresolved", "domain", "withheld",
        "value_only")


def entries(result: Result, version: str) -> dict[str, object]:
    """The entries that describe ``result`` (``domain`` only when it is narrowed to it: the
    ranges in ``symbols`` are then its)."""
    ranges = result.symbol_ranges()
    table = result.symbols
    given = result.given or table  # what the caller gave (ranges and assume set aside: written_result)
    out: dict[str, object] = {
        "version": version,
        "symbols": {name: {"origin": table.origin.get(name, ""), "range": list(ranges[name])}
                    for name in sorted(table.symbols)},
        "constraints": [_constraint(c) for c in result.constraints],
        "derived": {name: str(v) for name, v in result.derived_symbols().items()},
        "aliases": {name: str(v) for name, v in sorted(result.aliases.items())},
        "stale": [{"value": st.value, "declared": list(st.declared),
                   "computed": None if st.computed is None else list(st.computed), **({"why": st.why} if st.why else {})}
                  for st in result.stale],
        "user": {"bind": dict(given.bound), "ranges": {k: list(v) for k, v in given.ranges.items()},
                 "assume": [f"{a} == {b}" for a, b in given.assume],
                 "allow_zero": given.default_lo == 0, "allow_zero_symbols": sorted(given.zero_ok),
                 "values": dict(result.given_values)},
        "unresolved": [{"value": u.value, "axis": u.axis, "dim": None if u.dim is None else str(u.dim),
                        "reasons": [f"{p.op_type} '{p.node}': {p.reason}" for p in u.provenance]}
                       for u in result.unresolved()],
    }
    if result.narrowed_to is not None:
        out["domain"] = result.narrowed_to.to_json()
    if result.value_only:  # dims that hold for the given data only: reported, never written
        out["value_only"] = {name: None if shape is None else [str(d) for d in shape]
                             for name, shape in sorted(result.value_only.items())}
    if result.withheld:  # values written without dims: the load-time inference would refuse the model
        out["withheld"] = dict(sorted(result.withheld.items()))
    return out


def _constraint(c: Constraint) -> dict[str, object]:
    out: dict[str, object] = {"constraint": str(c), "relation": c.rel.value, "origin": c.origin.value,
                              "node": c.node, "op_type": c.op_type, "reason": c.reason}
    if c.place.graph:
        out["graph"] = list(c.place.graph)
    if c.when:
        out["when"] = [g.text for g in c.when]
    return out


def write(model: onnx.ModelProto, entries: dict[str, object]) -> None:
    """Set the ``onnxsym.*`` entries to ``entries``: those of an earlier annotation go
    (a ``domain`` not computed this time among them); the model's other metadata stays."""
    kept = [p for p in model.metadata_props if not p.key.startswith(PREFIX)]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    for k, v in entries.items():
        p = model.metadata_props.add()
        p.key = PREFIX + k
        p.value = v if isinstance(v, str) else json.dumps(v, sort_keys=True)


def read(model: onnx.ModelProto) -> dict[str, object]:
    """The ``onnxsym.*`` entries of an annotated model, decoded, by key without the prefix
    (empty for a model onnxsym did not annotate)."""
    out: dict[str, object] = {}
    for p in model.metadata_props:
        if p.key.startswith(PREFIX):
            key = p.key[len(PREFIX):]
            out[key] = p.value if key == "version" else json.loads(p.value)
    return out
