"""Checking each distinct node once: the raw conditions of its repeats are replayed.

A many-layer model repeats one layer: its nodes differ in names only, and the checks
of :mod:`.needs` give them the same conditions but for the node's label and index.
A check marked ``replayable`` (:class:`onnxsym.registry.Condition`) reads of its
:class:`.needs.Site` only the node's op, attributes, input and output names (to look
their values and element bounds up), the opset, and the label and index it puts on
each :class:`.needs.Raw`. The key holds all of that but the label and index:

- op, domain, opset and the serialized attributes;
- the number of inputs and the id of each input's and output's value (values are
  interned, and every object of a graph's values lives through the walk: equal ids
  are one value); where names repeat, which positions share one; which are omitted;
- the element bounds a check asked for: recorded (by the position of the name) on
  the first node, asked again for a repeat and compared, since they depend on how
  the value was made, not only on the value.

The first node of a key runs its checks on a watched site: a check that reads any
other value or element bound, or makes a raw with another place or order than the
node's, is not replayed. A repeat gets the raws with its own label and index.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import onnx

from .elements import Elements
from .needs import Raw, Site

_serialize = onnx.AttributeProto.SerializeToString
_READ = operator.attrgetter("input", "output", "attribute")
Position = tuple[bool, int]  # (an output?, its index)
Read = tuple[str, Position, tuple, object]  # (Elements method, of which name, other args, its answer)


class Replay:
    """The raws of each distinct node of one graph walk, by key (see the module)."""

    def __init__(self, values: Mapping[str, object], elements: Elements | None) -> None:
        self.values, self.elements = values, elements
        self._kept: dict[tuple, tuple[list[Read], list[Raw]]] = {}

    def raws(self, node: onnx.NodeProto, index: int, label: str, op_type: str, domain: str, opset: int,
             checks: list) -> list[Raw]:
        """What ``checks`` (all replayable) give at ``node``, the ``index``-th, labelled ``label``."""
        get = self.values.get
        inputs, outputs, attributes = _READ(node)  # (each protobuf field read once: a read costs)
        names = (*inputs, *outputs)
        key = (op_type, domain, opset, tuple(map(_serialize, attributes)) if attributes else (), len(inputs),
               tuple(map(id, map(get, names))),  # ("" has no value: told apart from a name without one below)
               tuple(map(names.index, names)) if len(set(names)) < len(names) else (),
               tuple(map(bool, names)) if "" in names else ())
        kept = self._kept.get(key)
        if kept is not None and self._same_reads(kept[0], inputs, outputs):
            return [replace(r, fact=replace(r.fact, place=replace(r.fact.place, node=label)), order=index) for r in kept[1]]
        watched = _Watched(self.values, names)
        recorded = None if self.elements is None else _Recorded(self.elements, list(inputs), list(outputs))
        site = Site(node, index, label, watched, cast(Elements, recorded), opset)  # (reads the same way)
        out = [raw for check in checks for raw in check(site)]
        # replayable when every raw is this node's own: the place names the node (relabelled on a
        # replay), the reason never does (a check says what it needs, :meth:`Site.raw` where)
        own = all(r.order == index and r.fact.place.node == label for r in out)
        if own and not watched.foreign and (recorded is None or not recorded.foreign):
            self._kept[key] = ([] if recorded is None else recorded.reads, out)
        return out

    def _same_reads(self, reads: list[Read], inputs: Sequence[str], outputs: Sequence[str]) -> bool:
        for method, (is_out, i), args, answer in reads:
            name = outputs[i] if is_out else inputs[i]
            if not _same(getattr(self.elements, method)(name, *args), answer):
                return False
        return True


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types throughout (``1`` is not ``True``; Exprs are interned)."""
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


class _Watched(Mapping[str, object]):
    """A graph's values as a check sees them, noting a read of any name not the node's."""

    def __init__(self, values: Mapping[str, object], names: Iterable[str]) -> None:
        self._values, self._names, self.foreign = values, set(names), False

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        if name not in self._names:
            self.foreign = True
        return self._values.get(name, default)

    def __getitem__(self, name: str) -> object:
        if name not in self._names:
            self.foreign = True
        return self._values[name]

    def __contains__(self, name: object) -> bool:
        if name not in self._names:
            self.foreign = True
        return name in self._values

    def __iter__(self) -> Iterator[str]:
        self.foreign = True
        return iter(self._values)

    def __len__(self) -> int:
        self.foreign = True
        return len(self._values)


class _Recorded:
    """Element bounds as a check sees them: each answer recorded by the position of its name;
    any other read (another name, another attribute) is foreign."""

    def __init__(self, elements: Elements, inputs: list[str], outputs: list[str]) -> None:
        self._elements, self.reads, self.foreign = elements, cast(list[Read], []), False
        self._at: dict[str, Position] = {}
        for is_out, names in ((True, outputs), (False, inputs)):  # (an input's position wins)
            self._at.update({x: (is_out, i) for i, x in reversed(list(enumerate(names))) if x})

    def _read(self, method: str, name: str, *args: Any) -> Any:
        answer = getattr(self._elements, method)(name, *args)
        at = self._at.get(name)
        if at is None:
            self.foreign = True
        else:
            self.reads.append((method, at, args, answer))
        return answer

    def bounds(self, name: str) -> Any:
        return self._read("bounds", name)

    def columns(self, name: str, k: int) -> Any:
        return self._read("columns", name, k)

    def reads_data(self, name: str) -> Any:
        return self._read("reads_data", name)

    def __getattr__(self, attr: str) -> Any:  # (only for what is not defined above)
        self.foreign = True
        return getattr(self._elements, attr)
