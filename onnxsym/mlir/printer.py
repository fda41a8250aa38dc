"""Printing a program in one of the symbol dialect's forms, pretty or generic.

Styles, each the result of one of the seed's passes:

- ``propagate`` (propagate-symbol): a ``symbol.symbolic_int`` per symbol at the top
  of the function, a ``symbol.bind_symbolic_shape`` after every value with a
  dynamic dim;
- ``erased`` (erase-symbol): no symbol ops;
- ``encoding`` (symbol-to-encoding): the bindings moved into the tensor types'
  encodings, ``tensor<?x640xf16, [@S0]>`` (one symbol per dynamic dim);
- ``unfolded`` (unfold-symbolic-int): each symbolic_int without a map replaced by
  ``tensor.dim`` of the first value bound to it, where that binding names it
  directly (an identity binding) in the function's own block; a binding that
  only restates those dims is dropped. A root that a remaining opaque symbol's
  expression names stays a symbolic_int, so that the name still resolves.

The ``symbol`` ops are not registered in upstream MLIR, so only the generic form
(``--generic``) parses there (with ``--allow-unregistered-dialect``). In generic
form a symbolic_int carries ``sym_name``, ``min_val``, ``max_val`` and, when
derived, ``int_expressions`` (its map over its operands); a bind carries
``shape_expressions``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Dict, List, Optional

from .attrs import string_attr
from .build import Block, Op, Program, Val, type_of
from .symbols import Symbol, bind_map

STYLES = ("propagate", "erased", "encoding", "unfolded")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$.]*$")


def symbol_ref(name: str) -> str:
    return "@" + name if _IDENT.match(name) else '@"' + name.replace("\\", "\\5C").replace('"', '\\22') + '"'


def _fn_type(ins: List[str], outs: List[str]) -> str:
    res = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return f"({', '.join(ins)}) -> {res}"


def bind_line(ref: str, type_text: str, symbols: List[str], amap: str, generic: bool, ind: str) -> str:
    """One ``symbol.bind_symbolic_shape`` of ``ref`` to ``symbols`` through ``amap``."""
    if generic:
        types = ", ".join([type_text] + ["index"] * len(symbols))
        ops = "".join(", " + s for s in symbols)
        return f'{ind}"symbol.bind_symbolic_shape"({ref}{ops}) {{shape_expressions = {amap}}} : ({types}) -> ()'
    return f"{ind}symbol.bind_symbolic_shape {ref}, [{', '.join(symbols)}], {amap} : {type_text}"


class Printer:
    def __init__(self, prog: Program, style: str = "propagate", generic: bool = False):
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; one of {', '.join(STYLES)}")
        self.prog = prog
        self.style = style
        self.generic = generic
        self.lines: List[str] = []
        self.top: List[Symbol] = []
        self.after: Dict[int, list] = defaultdict(list)     # id(val) -> [("dim", sym, axis) | ("sym", sym)]
        self.before: Dict[int, List[Symbol]] = defaultdict(list)  # id(top-level op) -> derived symbols
        self.drop: set = set()
        if style in ("propagate", "encoding"):
            self.top = list(prog.symbols.order)
        elif style == "unfolded":
            self._plan_unfold()

    # -- types ------------------------------------------------------------------
    def ty(self, v: Val) -> str:
        if self.style == "encoding" and v.binding:
            refs = [symbol_ref(e.name) for e in v.binding if isinstance(e, Symbol)]
            return type_of(v, "[" + ", ".join(refs) + "]")
        return type_of(v)

    # -- the unfold plan ----------------------------------------------------------
    def _sites(self, block: Block, depth: int, anchor: Optional[Op]):
        for a in block.args:
            yield a, depth, anchor
        for op in block.ops:
            here = op if depth == 0 else anchor
            for r in op.regions:
                yield from self._sites(r, depth + 1, here)
            for v in op.results:
                yield v, depth, here

    def _plan_unfold(self) -> None:
        pinned: set = set()
        while True:
            unfolded = self._plan(pinned)
            named = {r for s in self.top if s.expression is not None for r in s.names if r in unfolded}
            if not named:
                return
            pinned |= named

    def _plan(self, pinned: set) -> set:
        """Where each symbol is defined; returns the symbols unfolded into tensor.dim."""
        self.after.clear()
        self.before.clear()
        self.drop.clear()
        defined, unfolded = set(), set()
        rank = {id(s): i for i, s in enumerate(self.prog.symbols.order)}
        top = []
        for val, depth, anchor in self._sites(self.prog.func.body, 0, None):
            if not val.binding:
                continue
            direct = {}
            for axis, e in enumerate(val.binding):
                if isinstance(e, Symbol) and e not in direct:
                    direct[e] = axis
            here: Dict[Symbol, int] = {}

            def need(s: Symbol) -> None:
                if s in defined:
                    return
                if s.defined_by_map:
                    for o in s.operands:
                        need(o)
                    if depth == 0:
                        self.after[id(val)].append(("sym", s))
                    else:
                        self.before[id(anchor)].append(s)
                elif depth == 0 and s in direct and s not in pinned:
                    self.after[id(val)].append(("dim", s, direct[s]))
                    here[s] = direct[s]
                    unfolded.add(s)
                else:
                    top.append(s)
                defined.add(s)

            for e in val.binding:
                if isinstance(e, Symbol):
                    need(e)
            if all(not isinstance(e, Symbol) or here.get(e) == axis for axis, e in enumerate(val.binding)):
                self.drop.add(id(val))
        self.top = sorted(top, key=lambda s: rank[id(s)])
        return unfolded

    # -- symbol ops ---------------------------------------------------------------
    def symbolic_int(self, s: Symbol, ind: str) -> None:
        attrs = []
        if s.expression is not None:
            attrs.append(f"expression = {string_attr(s.expression)}")
        attrs += [f"max_val = {s.hi} : i64", f"min_val = {s.lo} : i64"]
        ops = ", ".join(o.ssa for o in s.operands)
        if self.generic:
            if s.map:
                attrs.insert(0, f"int_expressions = {s.map}")
            attrs.append(f"sym_name = {string_attr(s.name)}")
            self.lines.append(f'{ind}{s.ssa} = "symbol.symbolic_int"({ops}) {{{", ".join(attrs)}}} : '
                              f'{_fn_type(["index"] * len(s.operands), ["index"])}')
        else:
            definition = f" [{ops}], {s.map}" if s.map else ""
            self.lines.append(f"{ind}{s.ssa} = symbol.symbolic_int {symbol_ref(s.name)}{definition} "
                              f"{{{', '.join(attrs)}}} : index")

    def bind(self, v: Val, ind: str) -> None:
        syms, amap = bind_map(v.binding)
        self.lines.append(bind_line(v.ref, self.ty(v), [s.ssa for s in syms], amap, self.generic, ind))

    def tensor_dim(self, v: Val, s: Symbol, axis: int, ind: str) -> None:
        c = self.prog.namer.fresh(f"c{axis}")
        if self.generic:
            self.lines.append(f'{ind}{c} = "arith.constant"() <{{value = {axis} : index}}> : () -> index')
            self.lines.append(f'{ind}{s.ssa} = "tensor.dim"({v.ref}, {c}) : ({self.ty(v)}, index) -> index')
        else:
            self.lines.append(f"{ind}{c} = arith.constant {axis} : index")
            self.lines.append(f"{ind}{s.ssa} = tensor.dim {v.ref}, {c} : {self.ty(v)}")

    def site(self, v: Val, ind: str) -> None:
        """What follows a value's definition: unfolded dims, derived symbols, its binding."""
        if self.style == "unfolded":
            for item in self.after.get(id(v), ()):
                if item[0] == "dim":
                    self.tensor_dim(v, item[1], item[2], ind)
                else:
                    self.symbolic_int(item[1], ind)
            if v.binding and id(v) not in self.drop:
                self.bind(v, ind)
        elif self.style == "propagate" and v.binding:
            self.bind(v, ind)

    # -- ops and blocks -------------------------------------------------------------
    def op(self, op: Op, ind: str) -> None:
        for s in self.before.get(id(op), ()):
            self.symbolic_int(s, ind)
        if op.name == "func.return" and not self.generic:
            outs = ", ".join(v.ref for v in op.operands)
            types = ", ".join(self.ty(v) for v in op.operands)
            self.lines.append(f"{ind}return {outs} : {types}" if op.operands else f"{ind}return")
            return
        head = ""
        if op.results:
            head = (op.results[0].ref if len(op.results) == 1 else f"{op.result_name}:{len(op.results)}") + " = "
        head += f'"{op.name}"({", ".join(v.ref for v in op.operands)})'
        attrs = ""
        if op.attrs:
            attrs = " {" + ", ".join(f"{k} = {t}" for k, t in sorted(op.attrs)) + "}"
        sig = _fn_type([self.ty(v) for v in op.operands], [self.ty(v) for v in op.results])
        if not op.regions:
            self.lines.append(f"{ind}{head}{attrs} : {sig}")
        else:
            self.lines.append(f"{ind}{head} ({{")
            for k, r in enumerate(op.regions):
                if k:
                    self.lines.append(f"{ind}}}, {{")
                self.block(r, ind, ind + "  ")
            self.lines.append(f"{ind}}}){attrs} : {sig}")
        for v in op.results:
            self.site(v, ind)

    def block(self, b: Block, label_ind: str, ind: str, header: bool = True) -> None:
        if b.args and header:
            args = ", ".join(f"{a.ref}: {self.ty(a)}" for a in b.args)
            self.lines.append(f"{label_ind}^bb0({args}):")
        for a in b.args:
            self.site(a, ind)
        for op in b.ops:
            self.op(op, ind)

    def run(self) -> str:
        f = self.prog.func
        ins = [self.ty(a) for a in f.body.args]
        outs = [self.ty(v) for v in f.outputs]
        name = symbol_ref(f.name)
        if self.generic:
            self.lines.append('"builtin.module"() ({')
            self.lines.append(f'  "func.func"() <{{function_type = {_fn_type(ins, outs)}, '
                              f"sym_name = {string_attr(f.name)}}}> ({{")
            self._body("    ", "  ")
            self.lines.append("  }) : () -> ()")
            self.lines.append("}) : () -> ()")
        else:
            args = ", ".join(f"{a.ref}: {t}" for a, t in zip(f.body.args, ins))
            res = "" if not outs else " -> " + (outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")")
            self.lines.append("module {")
            self.lines.append(f"  func.func {name}({args}){res} {{")
            self._body("    ", None)
            self.lines.append("  }")
            self.lines.append("}")
        self.lines += self.prog.resources.section()
        return "\n".join(self.lines) + "\n"

    def _body(self, ind: str, label_ind: Optional[str]) -> None:
        b = self.prog.func.body
        if label_ind is not None and b.args:
            self.lines.append(f"{label_ind}^bb0({', '.join(f'{a.ref}: {self.ty(a)}' for a in b.args)}):")
        for s in self.top:
            self.symbolic_int(s, ind)
        self.block(b, ind, ind, header=False)
