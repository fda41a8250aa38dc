"""The library entry points: :func:`infer` and :func:`annotate`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Tuple, Union

import onnx

from . import dims
from .dims import Dim
from .engine import Assumption, Engine, Provenance
from .loader import SymbolTable, load_model
from .values import Tensor, Value
from .writer import write_metadata, write_shapes

ModelLike = Union[str, os.PathLike, onnx.ModelProto]

__version__ = "0.1.0"


@dataclass(frozen=True)
class UnresolvedDim:
    """A dim of a value that is not an expression over the model's input symbols."""

    value: str
    axis: Optional[int]  # None: the rank itself is unknown
    dim: Optional[Dim]
    provenance: Tuple[Provenance, ...]


@dataclass
class Result:
    """What :func:`infer` found."""

    model: onnx.ModelProto
    values: Dict[str, Value]
    produced: List[str]
    symbols: SymbolTable
    fresh: Dict[str, Provenance]
    unknown_rank: Dict[str, Provenance]
    assumptions: List[Assumption]
    warnings: List[str]
    no_rule: Dict[Tuple[str, str], int] = field(default_factory=dict)
    # Values computed inside subgraphs (If/Loop bodies), by name.
    subgraph_values: Dict[str, Value] = field(default_factory=dict)

    def shape(self, name: str) -> Optional[Tuple[Dim, ...]]:
        v = self.values.get(name)
        return v.shape if isinstance(v, Tensor) else None

    def unresolved(self) -> List[UnresolvedDim]:
        """Every produced value's dim that depends on a fresh symbol, or whose rank is unknown."""
        out = []
        for name in self.produced:
            if name in self.unknown_rank:
                out.append(UnresolvedDim(name, None, None, (self.unknown_rank[name],)))
                continue
            shape = self.shape(name)
            if shape is None:
                continue
            for axis, d in enumerate(shape):
                if isinstance(d, int):
                    continue
                prov = tuple(self.fresh[s.name] for s in sorted(dims.free_symbols(d), key=lambda s: s.name)
                             if s.name in self.fresh)
                if prov:
                    out.append(UnresolvedDim(name, axis, d, prov))
        return out

    def stats(self) -> Dict[str, int]:
        """Counts of values and dims: static, symbolic over input symbols, unresolved."""
        values = static = symbolic = unresolved = 0
        for name in self.produced:
            shape = self.shape(name)
            values += 1
            if shape is None:
                unresolved += 1
                continue
            for d in shape:
                if isinstance(d, int):
                    static += 1
                elif any(s.name in self.fresh for s in dims.free_symbols(d)):
                    unresolved += 1
                else:
                    symbolic += 1
        return {"values": values, "static_dims": static, "symbolic_dims": symbolic,
                "unresolved_dims": unresolved}


def _load(model_or_path: ModelLike) -> onnx.ModelProto:
    return load_model(model_or_path)[0]


def infer(model_or_path: ModelLike, bind: Optional[Mapping[str, int]] = None,
          ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
          progress: Optional[Callable[[int, int], None]] = None) -> Result:
    """Infer the symbolic shape of every value of a model.

    ``bind`` fixes input symbols to numbers before inference (``{"batch": 1}``);
    ``ranges`` narrows their ranges (``{"seq": (1, 4096)}``); ``progress(done, total)``
    is called after each node.
    """
    from . import rules  # noqa: F401  (registers the built-in rules)

    model = _load(model_or_path)
    table = SymbolTable(bound=dict(bind or {}), ranges=dict(ranges or {}))
    engine = Engine(model, table)
    engine.progress = progress
    engine.run()
    produced = [o for n in model.graph.node for o in n.output if o]
    return Result(model, engine.env, produced, table, engine.fresh, engine.unknown_rank,
                  engine.assumptions, engine.warnings, engine.no_rule, engine.subgraph_values)


def annotate(model_or_path: ModelLike, bind: Optional[Mapping[str, int]] = None,
             ranges: Optional[Mapping[str, Tuple[int, int]]] = None,
             inplace: bool = False) -> onnx.ModelProto:
    """The model with every produced value's dtype and symbolic shape in
    ``graph.value_info`` (graph outputs filled in place) and the symbol table in
    ``metadata_props``. A ``ModelProto`` argument is copied unless ``inplace``."""
    result = infer(model_or_path, bind=bind, ranges=ranges)
    return write_result(result, inplace=inplace or not isinstance(model_or_path, onnx.ModelProto))


def write_result(result: Result, inplace: bool = False) -> onnx.ModelProto:
    """The annotated model for an inference result."""
    model = result.model
    if not inplace:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        model = copy
    write_shapes(model.graph, result.values, result.produced, result.fresh, result.warnings)
    write_metadata(model, {
        "version": __version__,
        "symbols": {name: {"origin": result.symbols.origin.get(name, ""), "range": [s.lo, s.hi]}
                    for name, s in sorted(result.symbols.symbols.items())},
        "unresolved": [{"value": u.value, "axis": u.axis, "dim": None if u.dim is None else str(u.dim),
                        "reasons": [f"{p.op_type} '{p.node}': {p.reason}" for p in u.provenance]}
                       for u in result.unresolved()],
    })
    return model
