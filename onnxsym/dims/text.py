"""Text form of dims: the grammar of ``dim_param`` expressions.

Grammar (a subset of Python expressions)::

    expr   := term (('+' | '-') term)*
    term   := factor (('*' | '//' | '%') factor)*
    factor := ('-' | '+') factor | power
    power  := atom ('**' INT)?
    atom   := INT | NAME | STRING | '(' expr ')'
            | ('max' | 'min') '(' expr (',' expr)+ ')' | 'ceil_div' '(' expr ',' expr ')'

``NAME`` is a Python identifier; a symbol whose name is not an identifier is
written as a quoted string (``'sequence length' + 1``). ``//`` and ``%`` are
floor division and modulo with Python's semantics. Printing is deterministic and
``parse_dim(format_dim(d)) == d`` for every dim the engine makes.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

from .. import dims
from . import Dim, Expr, Sym, structure


class ExprSyntaxError(ValueError):
    """A dim_param string is not an expression of the documented grammar."""


# --------------------------------------------------------------------------- printing


def format_dim(d: Dim) -> str:
    return str(d)


def _name(s: Sym) -> str:
    return s.name if s.name.isidentifier() and s.name not in _FUNCS else repr(s.name)


def _is_sum(d: Dim) -> bool:
    if isinstance(d, int):
        return d < 0
    ts = structure.terms(d)
    return len(ts) > 1 or ts[0][0] < 0


def _is_division(f: Dim) -> bool:
    op = structure.operation(f)
    return op is not None and op[0] == "floordiv"


def _atom_text(f: Dim) -> str:
    s = dims.as_sym(f)
    if s is not None:
        return _name(s)
    op = structure.operation(f)
    assert op is not None, f
    kind, args = op
    if kind in ("max", "min"):
        return f"{kind}({', '.join(str(a) for a in args)})"
    n, d = args
    return f"{_operand(n, False)}//{_operand(d, True)}"


def _operand(d: Dim, right: bool) -> str:
    """``d`` as an operand of ``//`` or ``%``; parenthesized unless it is a single factor."""
    text = str(d)
    if _is_sum(d) or (not isinstance(d, int) and (not structure.is_atom(d) or _is_division(d))):
        return f"({text})"
    return text


def _mono_text(factors: tuple[structure.Factor, ...], c: int, negated: bool) -> str:
    """A monomial with a non-negative coefficient ``c``, to be printed after a sign."""
    parts = []
    for f, e in factors:
        t = _atom_text(f)
        # "-s % 4" would read as "(-s) % 4": a leading minus needs the parentheses too.
        if _is_division(f) and (len(factors) > 1 or c != 1 or e != 1 or negated):
            t = f"({t})"
        parts.append(t if e == 1 else f"{t}**{e}")
    if c != 1:
        parts.insert(0, str(c))
    return "*".join(parts)


def _remainders(e: Dim) -> tuple[list[tuple[int, Dim, Dim]], Dim]:
    """``e`` as ``rest + sum(k*(n % c))``: each ``n - c*(n//c)`` in ``e`` (the algebra's one form of a
    remainder) taken out whole, where that leaves fewer terms and ``rest`` keeps its terms as they are."""
    mods: list[tuple[int, Dim, Dim]] = []
    for _, factors in structure.terms(e):
        for f, _ in factors:
            op = structure.operation(f)
            if op is None or op[0] != "floordiv" or isinstance(e, int):
                continue
            n, c = op[1]
            k = structure.exact_quotient(dims.neg(structure.coefficient(e, f)), c)
            if not isinstance(k, int) or k <= 0:
                continue
            rest = dims.sub(e, dims.mul(k, dims.sub(n, dims.mul(c, f))))
            kept = set(structure.terms(e))
            if len(structure.terms(rest)) + 1 < len(kept) and set(structure.terms(rest)) <= kept:
                mods.append((k, n, c))
                e = rest
                break
        else:
            continue
        break
    if mods and not isinstance(e, int):
        more, e = _remainders(e)
        mods += more
    return mods, e


def format_expr(e: Expr) -> str:
    # Symbolic terms in canonical order, then remainders, the constant last: "2*s + t % 4 - 1".
    mods, rest = _remainders(e)
    ts = structure.terms(rest)
    pieces = [(c, _mono_text(fs, abs(c), i == 0 and c < 0)) for i, (c, fs) in enumerate(x for x in ts if x[1])]
    pieces += [(k, ("" if k == 1 else f"{k}*(") + f"{_operand(n, False)} % {_operand(c, True)}" + ("" if k == 1 else ")"))
               for k, n, c in mods]
    pieces += [(c, str(abs(c))) for c, fs in ts if not fs]
    out = []
    for i, (c, body) in enumerate(pieces):
        if i == 0:
            out.append(("-" + body) if c < 0 else body)
        else:
            out.append((" - " if c < 0 else " + ") + body)
    return "".join(out)


# --------------------------------------------------------------------------- parsing

_FUNCS: dict[str, Callable[..., Dim]] = {"max": dims.dmax, "min": dims.dmin, "ceil_div": dims.ceil_div}


@functools.lru_cache(maxsize=4096)
def syntax_tree(text: str) -> ast.Expression | None:
    """Python's syntax tree of ``text`` as an expression (None: no expression), read, never
    changed, by the readers of dim texts. Kept per text: a model declares the same texts in
    every inference of it (compiling a long torch text costs more than reading its tree).
    Raises what ``ast.parse`` raises besides SyntaxError (a NUL character: ValueError)."""
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError:
        return None


def parse_dim(text: str, symbol: Callable[[str], Dim] | None = None) -> Dim:
    """Parse ``text`` into a dim. ``symbol(name)`` gives the dim of each name
    (default: a symbol with the default range)."""
    if symbol is None:
        symbol = dims.sym
    try:
        tree = syntax_tree(text.strip())
        if tree is None:
            raise ExprSyntaxError(f"not a dim expression: {text!r}")
        return _eval(tree.body, symbol, text)
    except (RecursionError, dims.TooLarge) as exc:  # ("a + a + ... + a", 5000 terms deep: no dim a model means)
        raise ExprSyntaxError(f"a dim expression too large to read: {text[:60]!r}...") from exc


_BINARY: dict[type, Callable[[Dim, Dim], Dim]] = {ast.Add: dims.add, ast.Sub: dims.sub, ast.Mult: dims.mul,
                                                  ast.FloorDiv: dims.floordiv, ast.Mod: dims.mod}


def binary(op: ast.operator, a: Dim, b: Dim) -> Dim | None:
    """``a op b`` for the integer operators a dim text may use (``**`` by a constant >= 0); None for another."""
    f = _BINARY.get(type(op))
    if f is not None:
        return f(a, b)
    if isinstance(op, ast.Pow) and isinstance(b, int) and b >= 0:
        return a**b if isinstance(a, int) else a.__pow__(b)
    return None


def _eval(node: ast.expr, symbol: Callable[[str], Dim], text: str) -> Dim:
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ExprSyntaxError(f"{text!r}: only integers and names may appear, not {value!r}")
        return symbol(value) if isinstance(value, str) else value
    if isinstance(node, ast.Name):
        return symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, symbol, text)
        return dims.neg(v) if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        made = binary(node.op, _eval(node.left, symbol, text), _eval(node.right, symbol, text))
        if made is not None:
            return made
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS \
            and not node.keywords and len(node.args) >= (2 if node.func.id != "ceil_div" else 2):
        args = [_eval(a, symbol, text) for a in node.args]
        if node.func.id == "ceil_div" and len(args) != 2:
            raise ExprSyntaxError(f"{text!r}: ceil_div takes two arguments")
        return _FUNCS[node.func.id](*args)
    raise ExprSyntaxError(f"{text!r}: unsupported syntax {ast.unparse(node)!r}")


dims.later.format = format_expr  # str() of an Expr is its text in this grammar
