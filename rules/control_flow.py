"""Rules for control flow: If, Loop, Scan. Their bodies are inferred as
subgraphs that see every value of the enclosing scopes."""

from __future__ import annotations

from dataclasses import replace

from onnx import TensorProto

from onnxsym import dims
from onnxsym.domain.needs import on_data
from onnxsym.errors import ShapeContradiction
from onnxsym.facts.fact import Origin, Rel, Relation
from onnxsym.facts.join import join
from onnxsym.inference.node import Node
from onnxsym.inference.provenance import Kind
from onnxsym.inference.values import Optional_, Sequence, Tensor, unranked
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics.intops import is_dim
from onnxsym.semantics.shapes import normalize_axis, prod

from .common import BOOL, I64, present, required_int, single_move


def _fresh_for(node, output):
    return lambda axis, why, lo, hi: node.fresh(why, output, axis, lo, hi, Kind.POLICY)  # a merge, on purpose


# --------------------------------------------------------------------- If

@register("If", conditions=["what each branch's nodes need, under that branch's condition"], subgraphs=True)
def if_rule(node):
    branches = [node.attr_graph("then_branch"), node.attr_graph("else_branch")]
    cond = node.value(0)
    if cond is not None and len(cond) == 1 and isinstance(cond[0], (bool, int, float)):
        node.act_on(0, "condition")
        outs = node.infer_graph(branches[0 if cond[0] else 1], [], sure=True)
        node.infer_untaken(branches[1 if cond[0] else 0])  # (for its shapes alone: onnxruntime loads it)
        return outs
    relation = node.relation(0)
    choice = node.branch_choice() if relation is not None else None
    if choice is not None:  # the nodes after it run with one branch only: see onnxsym.facts.branching
        holds = relation if choice.then else relation.negated()
        node.require_relation(holds, f"the If takes its {'then' if choice.then else 'else'} branch: "
                                     f"with the other, {choice.why}")
        return node.infer_graph(branches[0 if choice.then else 1], [], sure=True)
    # (each branch runs only where its guard holds: what it needs is recorded under it)
    then_out, else_out = (node.infer_graph(g, [], guard=w) for g, w in zip(branches, node.branch_guards()))
    outs = []
    for k, (a, b) in enumerate(zip(then_out, else_out)):
        if isinstance(a, Tensor) and isinstance(b, Tensor) and None not in (a.rank, b.rank) and a.rank != b.rank:
            why = f"the If branches give ranks {a.rank} and {b.rank}"
            if relation is not None and all(map(node.is_resolved, (relation.lhs, relation.rhs))):
                why += f", by {relation}"
                node.note_split(relation)
            outs.append(node.unknown_rank(why, k, a.dtype or b.dtype))
        else:
            outs.append(join([a, b], _cases_fresh(node, k, relation, a, b), "the If branches differ"))
    return outs


def _cases_fresh(node, output, relation, then_out, else_out):
    """The fresh symbol for a dim the branches give differently; where the condition is a
    relation of the input symbols and both branch dims are resolved, its reason records both
    cases with the condition (``max(0, seq - 2)//2 + 1 where seq > 8, seq where seq <= 8``):
    the metadata and explain keep what was proven."""
    def fresh(axis, why, lo, hi):
        both = isinstance(then_out, Tensor) and isinstance(else_out, Tensor) \
            and then_out.shape is not None and else_out.shape is not None
        if both and relation is not None and all(map(node.is_resolved, (relation.lhs, relation.rhs))):
            a, b = then_out.shape[axis], else_out.shape[axis]
            if node.is_resolved(a) and node.is_resolved(b):
                why = f"the If branches differ: {a} where {relation}, {b} where {relation.negated()}"
        # A merge is fresh by policy, unless a branch's dim or the condition is a count only the
        # data decides (a detector's "no box left" branch beside NonMaxSuppression's count).
        seen = [relation.lhs, relation.rhs] if relation is not None else []
        seen += [then_out.shape[axis], else_out.shape[axis]] if both else []
        data = any(Kind.DATA_DEPENDENT in node.kinds_of(d) for d in seen)
        return node.fresh(why, output, axis, lo, hi, Kind.DATA_DEPENDENT if data else Kind.POLICY)
    return fresh


# --------------------------------------------------------------------- carried values

CHANGES = "the loop-carried dim changes from one iteration to the next"


def _widen(node, k, tmpl, out, varying, step=None):
    """The body input that covers both ``tmpl`` and what the body returned for it
    (``out``); ``tmpl`` itself when it already does. Dims made fresh here go into
    ``varying``. ``step`` (a _Counting) knows the values taken as counters ``v0 + it``:
    one the body adds 1 to is kept, one it returns unchanged is ``v0`` in every iteration."""
    if isinstance(tmpl, Tensor):
        if tmpl.shape is None:
            return tmpl
        if not isinstance(out, Tensor) or out.rank != tmpl.rank:
            return unranked(tmpl.dtype)
        shape = list(tmpl.shape)
        for axis, (t, o) in enumerate(zip(tmpl.shape, out.shape)):
            if not dims.same(t, o) and t not in varying:
                shape[axis] = node.fresh(CHANGES, k, axis)
                varying.add(shape[axis])
        if step is not None and step.counts(tmpl.value):
            value = tmpl.value if step.next(tmpl.value) == out.value else \
                step.first(tmpl.value) if out.value == tmpl.value else None
        else:
            value = tmpl.value if tmpl.value == out.value else None
        if tuple(shape) == tmpl.shape and value == tmpl.value:
            return tmpl
        return Tensor(tmpl.dtype, tuple(shape), value)
    if isinstance(tmpl, Sequence):
        if not isinstance(out, Sequence):
            return tmpl if tmpl == Sequence(None) else Sequence(None)
        items = tmpl.items if tmpl.items == out.items else None
        if tmpl.items == ():  # nothing was known of an item: the body's are the first
            elem = out.elem
        else:
            elem = None if tmpl.elem is None else _widen(node, k, tmpl.elem, out.elem, varying)
        length = tmpl.count
        if length is not None and (out.count is None or not dims.same(length, out.count)) and length not in varying:
            length = node.fresh("the number of items changes from one iteration to the next", k)
            varying.add(length)
        if (items, elem, length) == (tmpl.items, tmpl.elem, tmpl.count):
            return tmpl
        return Sequence(elem, items, length)
    if isinstance(tmpl, Optional_):
        if not isinstance(out, Optional_):
            return tmpl if tmpl == Optional_(None) else Optional_(None)
        elem = None if tmpl.elem is None else _widen(node, k, tmpl.elem, out.elem, varying)
        return tmpl if elem is tmpl.elem else Optional_(elem)
    return tmpl


def _after(node, k, tmpl, varying):
    """The carried value after the loop: a dim that changes gets a new symbol of the outer scope."""
    if isinstance(tmpl, Tensor):
        if tmpl.shape is None:
            return node.unknown_rank("the loop-carried value changes rank from one iteration to the next",
                                     k, tmpl.dtype)
        shape = tuple(node.fresh(CHANGES, k, axis) if d in varying else d for axis, d in enumerate(tmpl.shape))
        return Tensor(tmpl.dtype, shape, tmpl.value)
    if isinstance(tmpl, Sequence):
        length = tmpl.length
        if length in varying:
            length = node.fresh("the number of items changes from one iteration to the next", k)
        return Sequence(None if tmpl.elem is None else _after(node, k, tmpl.elem, varying), tmpl.items, length)
    if isinstance(tmpl, Optional_):
        return Optional_(None if tmpl.elem is None else _after(node, k, tmpl.elem, varying))
    return tmpl


MAX_PASSES = 8


def _iterate(node, body, initial, inputs_for, first, step=None, sure=False, guard=None):
    """Infer ``body`` until the carried values it is given cover what it returns for
    them: a dim the body leaves unchanged keeps its expression, one it changes gets a
    symbol that stands for any iteration's, a value ``step`` maps to what the body returns
    keeps its expression in the iteration number. ``inputs_for(carried)`` are the body's
    inputs, ``first`` the position of the carried values among its outputs. Every pass but
    the last, which starts from what covers every iteration, is a trial: what a pass
    recorded for values that did not cover every iteration is dropped.

    Returns the carried values as the body last saw them, its outputs then, the dims
    made to vary and the names of all symbols that may differ between iterations."""
    varying = set()
    born = set()  # (of every pass: a later pass may reuse a memoized result that holds one)
    carried = [v if v is not None else unranked() for v in initial]
    for n_pass in range(MAX_PASSES + 1):
        outs, _ = node.try_graph(body, inputs_for(carried), born)
        outs = list(outs) + [None] * (first + len(carried) - len(outs))
        wider = [_widen(node, k, c, outs[first + k], varying, step) for k, c in enumerate(carried)]
        if all(w is c for w, c in zip(wider, carried)):
            break
        if n_pass >= MAX_PASSES - 1:  # not settled: give up on the carried values
            wider = [unranked(c.dtype) if isinstance(c, Tensor) else type(c)(None) for c in carried]
        carried = wider
    outs = node.infer_graph(body, inputs_for(carried), born, sure=sure, guard=guard)
    outs = list(outs) + [None] * (first + len(carried) - len(outs))
    return carried, outs, varying, born | {s.name for d in varying for s in dims.free_symbols(d)}


def _finish(node, initial, carried, outs, varying, unstable, trip):
    """The carried values after the loop. A dim that grows by the same step in every
    iteration ends at its initial value plus ``trip`` steps, when ``trip`` is exact."""
    after = []
    for k, (c, v, out) in enumerate(zip(carried, initial, outs)):
        if c is v:
            after.append(v)
            continue
        if trip is not None and isinstance(c, Tensor) and c.shape is not None and isinstance(out, Tensor) \
                and out.rank == c.rank:
            shape = tuple(_grown(d, o, d0, trip, varying, unstable) for d, o, d0 in zip(c.shape, out.shape, v.shape))
            c = Tensor(c.dtype, shape, c.value)
        if trip is not None and isinstance(c, Sequence) and isinstance(out, Sequence) and c.length is not None \
                and out.count is not None and v.count is not None:
            c = Sequence(c.elem, c.items, _grown(c.length, out.count, v.count, trip, varying, unstable))
        after.append(_after(node, k, c, varying))
    return after


def _grown(d, out, initial, trip, varying, unstable):
    """``d`` after ``trip`` iterations if each adds the same step to it (``out - d``), else ``d``."""
    step = dims.sub(out, d)
    if d in varying and not any(s.name in unstable for s in dims.free_symbols(step)):
        return dims.add(initial, dims.mul(trip, step))
    return d


ZERO_TRIPS = ("the loop may run no iteration: onnxruntime then gives the scan output the shape its own "
              "inference knows of the body's output (even the rank may be lost), with 0 for the unknown dims")


def _stacked(node, k, per_iter, count, axis, unstable, runs=True):
    """A scan output: the per-iteration values stacked along ``axis``. Where the loop may
    run no iteration (``runs`` None) or runs none (False), its shape is what onnxruntime's
    own shape inference knows (tried: a Reshape computed from shapes loses the rank):
    unknown here."""
    if not isinstance(per_iter, Tensor) or per_iter.shape is None:
        return node.unknown_rank("the body's scan output has unknown rank", k,
                                 per_iter.dtype if isinstance(per_iter, Tensor) else 0)
    if runs is not True:
        return node.unknown_rank(ZERO_TRIPS, k, per_iter.dtype)
    shape = list(per_iter.shape)
    for a, d in enumerate(shape):
        if any(s.name in unstable for s in dims.free_symbols(d)):
            shape[a] = node.fresh(f"the scan output's dim may differ between iterations: {d}", k, a)
    axis = normalize_axis(axis, len(shape) + 1)
    return Tensor(per_iter.dtype, tuple(shape[:axis]) + (count,) + tuple(shape[axis:]))


# --------------------------------------------------------------------- Loop

@register("Loop", conditions=["what its body's nodes need, under \"the body runs\""], subgraphs=True)
def loop_rule(node):
    body = node.attr_graph("body")
    has_trip, has_cond = (i < len(node.input_names) and node.input_names[i] != "" for i in (0, 1))
    m = _max_trip(node) if has_trip else None
    initial = node.inputs[2:]
    n = len(initial)
    # The iteration number counts from 0 to below M: a symbol that differs between iterations.
    last = max(dims.range_of(m)[1] - 1, 0) if m is not None else dims.INT64_MAX
    i = Tensor(I64, (), (node.fresh("the iteration number", 0, None, 0, last),))
    it = i.value[0]
    # The body only runs while the condition holds, so inside it the condition is true.
    cond_in = Tensor(BOOL, (), (True,) if has_cond else None)
    counting = _Counting(it)
    start = [counting.start(v) for v in initial]
    runs = _runs_at_least_once(node, m, has_cond)
    # What the body needs holds where it runs: always when it surely runs an iteration; where
    # M >= 1 when only M decides; else under a choice of its own (the data decide).
    guard = None
    trips = node.value(0)[0] if has_trip and node.value(0) and len(node.value(0)) == 1 else None
    if runs is None and is_dim(trips) and not (has_cond and not _is_true(node.value(1))) and node.is_resolved(trips):
        guard = node.runs_guard(Relation(Rel.GE, trips, 1), f"{trips} >= 1")
    carried, outs, varying, unstable = _iterate(node, body, start, lambda c: [i, cond_in] + c, 1, counting,
                                                sure=runs is True, guard=guard)
    unstable |= {s.name for s in dims.free_symbols(it)}
    if runs is False:  # no iteration: the carried values come out as they went in
        after, trip = [v if v is not None else node.unknown_rank("the carried value is unknown", k)
                       for k, v in enumerate(initial)], 0
    else:
        exact = _exact_trip(node, m, has_cond, outs[0])
        if exact is None and runs and has_cond and m is not None:
            exact = _proven_trip(node, body, m, it, cond_in, carried)
        after = _finish(node, start, carried, outs[1:1 + n], varying, unstable, exact)
        after = [_ended(v, it, exact) for v in after]
        trip = exact if exact is not None else _unknown_trip(node, m, 1 if runs else 0)
    scans = [_stacked(node, n + j, v, trip, 0, unstable, runs)
             for j, v in enumerate(outs[1 + n:node.num_outputs + 1])]
    return after + scans


# --------------------------------------------------------------------- counters and the trip count

class _Counting:
    """The carried integer scalars taken as counters: one that starts at ``v0`` is given the
    value ``v0 + it`` in iteration ``it`` (``it`` the iteration number), which _widen keeps
    only where the body adds 1 to it."""

    # int32 and int64 keep a counter's expression (with the bound where it could wrap); narrower types wrap it.
    TYPES = frozenset({TensorProto.INT32, TensorProto.INT64})

    def __init__(self, it):
        self.it = dims.as_sym(it)
        self._it = it

    def start(self, v):
        if isinstance(v, Tensor) and v.dtype in self.TYPES and v.value is not None and len(v.value) == 1 \
                and is_dim(v.value[0]):
            return Tensor(v.dtype, v.shape, (dims.add(v.value[0], self._it),))
        return v

    def counts(self, value) -> bool:
        return value is not None and _symbolic(value) and \
            any(is_dim(d) and self.it in dims.free_symbols(d) for d in value)

    def next(self, value):
        return self._put(value, dims.add(self._it, 1))

    def first(self, value):
        return self._put(value, 0)

    def _put(self, value, d):
        return tuple(dims.substitute(v, {self.it: d}) if is_dim(v) else v for v in value)


def _symbolic(value) -> bool:
    """Whether an element of ``value`` is an expression (the types gathered at C speed: a carried
    tensor's known elements are mostly numbers, hundreds of them)."""
    return dims.Expr in set(map(type, value))


def _at(v, mapping):
    """Carried value ``v`` with the iteration number replaced as ``mapping`` says."""
    if not isinstance(v, Tensor) or (v.shape is None and v.value is None):
        return v
    sub = lambda d: dims.substitute(d, mapping) if is_dim(d) else d  # noqa: E731
    shape = None if v.shape is None else tuple(map(sub, v.shape))
    value = v.value if v.value is None or not _symbolic(v.value) else tuple(map(sub, v.value))
    return Tensor(v.dtype, shape, value)


def _ended(v, it, trip):
    """A value after the loop: a counter ``v0 + it`` ends at ``v0 + trip`` (unknown when the trip is)."""
    if not isinstance(v, Tensor) or v.value is None:
        return v
    s = dims.as_sym(it)
    if not _symbolic(v.value) or not any(is_dim(d) and s in dims.free_symbols(d) for d in v.value):
        return v
    if trip is None:
        return Tensor(v.dtype, v.shape)
    return _at(v, {s: trip})


def _proven_trip(node, body, m, it, cond_in, carried):
    """M, when the body's condition provably holds after every iteration but the last.

    The body is tried once more with the iteration number ``M - 2 - k`` (k >= 0 a new
    symbol; ``it`` in the main pass is any of 0 .. M - 1): its values there cover every
    iteration ``it <= M - 2`` (and more, so what holds for them holds for those). Where the
    condition is then true, no iteration before the last ends the loop. What the trial had to
    record is recorded again for ``it`` (a bound, a ``>= 1`` decision); anything else it needed
    must be provable, else there is no proof."""
    hi = dims.range_of(m)[1]
    if hi <= 1:
        return m  # (it runs at least once, and at most once)
    k = node.fresh("the iterations after the next one: the loop's condition proved for iterations before "
                   "the last", 0, None, 0, hi - 2, Kind.POLICY)
    before_last = dims.sub(dims.sub(m, 2), k)
    into = {dims.as_sym(it): before_last}
    inputs = [Tensor(I64, (), (before_last,)), cond_in] + [_at(c, into) for c in carried]
    try:
        outs, made = node.try_graph(body, inputs)
    except ShapeContradiction:  # (k covers cases no iteration reaches, which may contradict themselves)
        return None
    cond = outs[0] if outs else None
    if not (isinstance(cond, Tensor) and _is_true(cond.value)):
        return None
    back = {dims.as_sym(k): dims.sub(dims.sub(m, 2), it)}
    again = []
    for c in made:
        c = replace(c, lhs=dims.substitute(c.lhs, back), rhs=dims.substitute(c.rhs, back))
        if c.origin in (Origin.EXACT_WITHIN, Origin.DEFAULT_RANGE):
            again.append(c)
        elif c.proven() is not True:
            return None
    for c in again:
        node.record(c)
    return m


def _runs_at_least_once(node, m, has_cond):
    """True when the loop provably runs an iteration, False when it provably runs none
    (M is 0, or the initial condition is false), None when either may be."""
    has_trip = m is not None or (node.input_names and node.input_names[0] != "")
    cond0 = node.value(1) if has_cond else None
    if (has_cond and cond0 is not None and len(cond0) == 1 and not cond0[0]) or (isinstance(m, int) and m <= 0):
        return False
    cond_true = not has_cond or _is_true(cond0)
    if has_cond and cond_true:
        node.act_on(1, "initial condition")
    if not has_trip:
        return True if cond_true else None
    if m is None:
        return None
    trip_positive = node.decide(lambda t: dims.try_le(1, t), (m,), lambda _: f"the loop runs at least once: {m} >= 1")
    return True if cond_true and trip_positive is True else None


def _max_trip(node):
    """M, when known; a negative M runs no iteration."""
    m = node.value(0)[0] if node.value(0) else None
    if m is not None and dims.range_of(m)[0] < 0:
        return 0 if isinstance(m, int) else None
    return m


def _is_true(value):
    return value is not None and len(value) == 1 and isinstance(value[0], int) and bool(value[0])


def _exact_trip(node, m, has_cond, cond_out):
    """The number of iterations, when nothing can end the loop before M."""
    if m is not None and (not has_cond or (_is_true(node.value(1)) and isinstance(cond_out, Tensor)
                                           and _is_true(cond_out.value))):
        return m
    return None


def _unknown_trip(node, m, lo):
    """The number of iterations, unknown: at least ``lo`` (1 where an iteration surely runs)."""
    hi = dims.range_of(m)[1] if m is not None else dims.INT64_MAX
    why = "the loop's trip count is unknown" if m is None else "the loop's condition may end it early"
    return node.fresh(why, node.num_outputs - 1, 0, lo, max(hi, lo))


# --------------------------------------------------------------------- Scan

def _scan_length(node, xs, axes, out):
    length = None
    for x, a in zip(xs, axes):
        if x is None or x.shape is None:
            continue
        d = x.shape[normalize_axis(a, len(x.shape))]
        if length is None:
            length = d
        elif d != length:
            if dims.try_eq(d, length) is False:
                raise ShapeContradiction(f"scan inputs have different lengths {length} and {d}")
            node.require_equal(d, length, "scan inputs have one length")
    return length if length is not None else node.fresh("no scan input has a known shape", out, 0)


def _slice(x, axis):
    if x is None or x.shape is None:
        return unranked(x.dtype if x is not None else 0)
    axis = normalize_axis(axis, len(x.shape))
    return Tensor(x.dtype, x.shape[:axis] + x.shape[axis + 1:])


def _scan_runs(node, length):
    """(sure, guard) of a Scan's body: it runs where the scanned length is >= 1 (a length onnxsym
    could not resolve too: the sizes decide it, no choice of the data, unless the data give it)."""
    if length is None or not is_dim(length):
        return False, None
    if dims.try_le(1, length) is True and node.is_resolved(length):
        return True, None
    return False, node.runs_guard(Relation(Rel.GE, length, 1), f"{length} >= 1")


def _all_shaped(states) -> bool:
    return all(isinstance(v, Tensor) and v.shape is not None for v in states)


def _fixed_states(node, body, initial, inputs_for, length=None, guard=None, lens=False):
    """Infer the body of a Scan that runs: its states keep the initial states' shapes.
    onnxruntime feeds each iteration's state outputs back in buffers of those shapes and
    refuses a body output of another shape (a state (1,) that Add broadcasts to (2,), a
    Concat that grows it), so each state output dim equals the initial one; only the values
    may change, and a value the body changes is dropped. At a length of 1 (``length`` may be
    1) no state is fed back: the one output goes to the final buffer, which onnxruntime shapes
    as onnx's inference gave the body's output where that is static (a [4, 1] state that Add
    broadcasts to [4, 4] runs), else as the initial state. There the rule states the equality
    only at other lengths, and the final state is the body's output; what a length of 1 needs
    is said by :mod:`onnxsym.domain.scan_view`, which reads onnx's inference. Returns the
    states after the loop, the body's outputs and the names of the symbols born in the body
    (they may differ between iterations). ``guard``: the body runs only where it holds (Scan 8
    without sequence_lens runs no step at a length of 0), and what the body needs, the state's
    shape too, holds under it. ``lens`` (Scan 8 with sequence_lens): a row whose entry is 1 runs one
    step, so whether a state the body changes is fed back the data decide; the rule states no
    equality for it (:mod:`onnxsym.domain.scan_view` says what the sizes and the data need) and the
    state after is unknown."""
    born: set[str] = set()
    carried = list(initial)
    if any(c.value is not None for c in carried):  # (else there is nothing to settle: no trial pass)
        for _ in range(MAX_PASSES):
            outs, _ = node.try_graph(body, inputs_for(carried), born)
            kept = [c if c.value is None or (isinstance(o, Tensor) and o.value == c.value) else Tensor(c.dtype, c.shape)
                    for c, o in zip(carried, list(outs) + [None] * len(carried))]
            if all(k is c for k, c in zip(kept, carried)):
                break
            carried = kept
        else:
            carried = [Tensor(c.dtype, c.shape) for c in carried]
    outs = list(node.infer_graph(body, inputs_for(carried), born, sure=guard is None, guard=guard))
    outs += [None] * (len(carried) - len(outs))
    one = one_step(node, length)
    runs = [] if guard is None or guard.relation is None else [(guard.relation, guard.text)]
    after = list(carried)
    for k, (c, o) in enumerate(zip(carried, outs)):
        if not isinstance(o, Tensor) or o.shape is None:
            continue
        if len(o.shape) != len(c.shape):
            raise ShapeContradiction(f"Scan: the body's state output {k} has rank {len(o.shape)}, the state {len(c.shape)}")
        grows = False
        for axis, (a, b) in enumerate(zip(c.shape, o.shape)):
            why = f"Scan: the body's state output {k} keeps the state's shape on axis {axis} (onnxruntime refuses another)"
            if Kind.DATA_DEPENDENT in node.kinds_of(b):  # (a NonZero's count: whether it is the state's the data say)
                node.require_of_data(b, a, why)
            elif lens and dims.try_eq(a, b) is not True and node.is_resolved(b):
                shape = after[k].shape
                after[k] = Tensor(c.dtype, shape[:axis] + (node.fresh(LENS_STATE, k, axis, kind=Kind.DATA_DEPENDENT),)
                                  + shape[axis + 1:], c.value)
            elif one is not None and dims.try_eq(a, b) is not True and node.is_resolved(b):
                node.require_equal_where(b, a, runs + [one], why + " at a length other than 1")
                grows = True
            elif runs:
                node.require_equal_where(b, a, runs, why)
            else:
                node.require_equal(b, a, why)
        if grows:  # (at one step the final state is the body's output)
            after[k] = Tensor(c.dtype, o.shape, c.value)
    return after, outs, born


def one_step(node, length):
    """(``length != 1``, its text) where the scan length may be 1, else None (a Scan in a
    subgraph too: :mod:`onnxsym.domain.scan_view` reads those, under their guards)."""
    if length is None or not is_dim(length) or not node.is_resolved(length) or dims.try_le(2, length) is True \
            or dims.try_eq(length, 1) is True:
        return None
    return Relation(Rel.NE, length, 1), f"{length} != 1"


def _scan_axis_moved(node, x, axis) -> None:
    """onnxruntime moves a scan axis other than 0 to the front with its transpose kernel: a copy
    where that axis or all before it are 1; else it divides by the axis and every one after it,
    and dies (SIGFPE) on a 0 there (a [2, 3, 0] scanned on axis 1). The axis itself is the length,
    >= 1 already."""
    if x is None or x.shape is None:
        return
    k = normalize_axis(axis, len(x.shape))
    if k == 0:
        return
    d, before, after = x.shape[k], x.shape[:k], x.shape[k + 1:]
    where = [(Relation(Rel.NE, d, 1), f"{d} != 1"),
             (Relation(Rel.NE, prod(before), 1), f"{' * '.join(map(str, before))} != 1")]
    node.require_at_least_where(prod(after), 1, where, f"Scan: a scan input moved from axis {k} to the front: "
                                f"onnxruntime's transpose divides by the dims after it (crashes on 0)")


def _scan_output_moved(node, out, axis) -> None:
    """onnxruntime stacks a scan output on axis 0 and, for another axis, moves that axis there
    with its transpose kernel; as for a scan input, where it moves one axis alone and is not a
    copy (that axis, or all it moves past, 1) it divides by the moved dim and every dim it does
    not move past, and dies (SIGFPE) on a 0 there (a slice [0] stacked on axis 1 of 2 steps)."""
    if not isinstance(out, Tensor) or out.shape is None or len(out.shape) < 2:
        return
    k = normalize_axis(axis, len(out.shape))
    if k == 0:
        return
    stored = (out.shape[k],) + out.shape[:k] + out.shape[k + 1:]
    move = single_move(list(range(1, k + 1)) + [0] + list(range(k + 1, len(stored))))
    if move is None:
        return
    moved, shifted = move
    past = [stored[i] for i in shifted]
    divisors = [stored[i] for i in range(len(stored)) if i not in shifted]
    where = [(Relation(Rel.NE, stored[moved], 1), f"{stored[moved]} != 1"),
             (Relation(Rel.NE, prod(past), 1), f"{' * '.join(map(str, past))} != 1")]
    node.require_at_least_where(prod(divisors), 1, where, f"Scan: a scan output moved to axis {k}: onnxruntime's "
                                f"transpose divides by {', '.join(map(str, divisors))} (crashes on 0)")


SCAN = ["the scan inputs have one length, at least 1 (Scan 8: every input one batch size, at least 1, and "
        "any length)", "what its body's nodes need, under \"the body runs\"",
        "the body's state outputs have the initial states' shapes"]
SCAN_AXES = ["a scan input of an axis k other than 0, not 1, with its dims before k not all 1: its dims after k "
             "are >= 1 (onnxruntime's transpose divides by them)", "a scan output on an axis other than 0, where onnxruntime's "
             "transpose from axis 0 moves one axis, not 1, past dims not all 1: the other dims are >= 1"]


@register("Scan", since=9, conditions=SCAN + SCAN_AXES, subgraphs=True)
def scan_rule(node: Node) -> Outputs:
    body = node.attr_graph("body")
    m = required_int(node, "num_scan_inputs")
    n = len(node.inputs) - m
    states, xs = node.inputs[:n], node.inputs[n:]
    in_axes = node.attr_ints("scan_input_axes") or [0] * m
    out_axes = node.attr_ints("scan_output_axes") or [0] * (node.num_outputs - n)
    length = _scan_length(node, xs, in_axes, n)
    if is_dim(length):  # (onnxruntime 1.32 slices each scan input at step 0 before it looks at the length)
        node.require_at_least(length, 1, "Scan: onnxruntime refuses a scan of no step")
    for x, a in zip(xs, in_axes):
        _scan_axis_moved(node, x, a)
    slices = [_slice(x, a) for x, a in zip(xs, in_axes)]
    sure, guard = _scan_runs(node, length)
    if not sure and is_dim(length) and node.is_resolved(length):
        # the length is >= 1 wherever the domain holds (above): the body runs there, on the
        # initial states' shapes (not widened ones: what it needs of those is stated)
        sure, guard = True, None
    if sure and _all_shaped(states):
        after, outs, unstable = _fixed_states(node, body, states, lambda c: c + slices, length)
    else:  # (where the body may not run, what it needs holds under a guard: the states are widened)
        carried, outs, varying, unstable = _iterate(node, body, states, lambda c: c + slices, 0, sure=sure,
                                                    guard=guard)
        after = _finish(node, states, carried, outs[:n], varying, unstable, length)
    stacked = [_stacked(node, n + j, v, length, out_axes[j], unstable) for j, v in enumerate(outs[n:node.num_outputs])]
    for v, a in zip(stacked, out_axes):
        _scan_output_moved(node, v, a)
    return after + stacked


def _sequence_lens(site):
    """Scan 8's sequence_lens: onnxruntime refuses an entry outside [1, the scan length], which the
    sizes do not decide (the entries are data); the length of at least 1 it implies the rule states."""
    if site.opset >= 9 or not site.node.input or not site.node.input[0]:
        return  # (from opset 9 input 0 is a state: the op's conditions are one list for every opset)
    yield on_data(site.label, site.node.op_type, site.index, f"1 <= each entry of '{site.node.input[0]}' <= the scan "
                  "length", "Scan 8: onnxruntime refuses a sequence_lens entry outside [1, the scan length]",
                  fed=bool(site.elements is None or site.elements.reads_data(site.node.input[0])))


LENS_STATE = ("Scan 8 with sequence_lens: a row of one step gives the final state the shape onnxruntime's inference "
              "gives the body's state output where that is static, the others the initial state's (the data decide)")
NO_STEP = ("Scan 8 at a length of 0 runs no step: onnxruntime gives the final state the shape its own inference "
           "gives the body's state output where that is static, else the initial state's")


def _no_step(node, k, initial, after):
    """A state after a Scan 8 that may run no step: a dim is the initial state's where the body
    keeps it (proven); else what it is at a length of 0 is onnxruntime's inference's, unknown here."""
    if not isinstance(after, Tensor) or after.shape is None or initial.shape is None:
        return after
    shape = tuple(d if dims.try_eq(d, a) is True else node.fresh(NO_STEP, k, axis)
                  for axis, (a, d) in enumerate(zip(initial.shape, after.shape)))
    return Tensor(after.dtype, shape, after.value)


SCAN8_LENS = Condition("Scan 8 with sequence_lens: each entry in [1, the scan length] (data-dependent), so the "
                       "length is at least 1", _sequence_lens)


@register("Scan", since=8, conditions=SCAN + [SCAN8_LENS], subgraphs=True)
def scan_v8(node):
    """Scan 8: every input and output has a leading batch axis, scan inputs scan axis 1."""
    body = node.attr_graph("body")
    m = required_int(node, "num_scan_inputs")
    ins = node.inputs[1:]
    n = len(ins) - m
    states, xs = ins[:n], ins[n:]
    known = [t for t in ins if t is not None and t.shape]
    batch = known[0].shape[0] if known else node.fresh("no input has a known shape", 0, 0)
    for t in known[1:]:  # (onnxruntime checks it at every run)
        node.require_equal(t.shape[0], batch, "Scan: every input has one batch size")
    if is_dim(batch):  # (a scan of no step runs: each row's is; a batch of no row is refused)
        node.require_at_least(batch, 1, "Scan: onnxruntime refuses a batch of no row")
    length = _scan_length(node, [_slice(x, 0) for x in xs], [0] * m, n)
    if present(node, 0) and is_dim(length):  # (each row's length, in [1, length]: SCAN8_LENS)
        node.require_at_least(length, 1, "Scan 8: onnxruntime refuses a sequence_lens entry outside [1, the scan "
                              "length], so a length of 0")
    inner = [_slice(s, 0) for s in states]
    slices = [_slice(_slice(x, 0), 0) for x in xs]
    # (without sequence_lens every row runs the length's steps: none at a length of 0, which runs)
    sure, guard = _scan_runs(node, length)
    lens = node.input(0) is not None
    if (sure or (not lens and guard is not None and node.is_resolved(length))) and _all_shaped(inner):
        after, outs, unstable = _fixed_states(node, body, inner, lambda c: c + slices, length, None if sure else guard,
                                              lens)
        if not sure:
            after = [_no_step(node, k, v, c) for k, (v, c) in enumerate(zip(inner, after))]
    else:
        carried, outs, varying, unstable = _iterate(node, body, inner, lambda c: c + slices, 0)
        # With sequence_lens each batch entry may run a different number of steps.
        after = _finish(node, inner, carried, outs[:n], varying, unstable, length if node.input(0) is None else None)
    batched = [Tensor(t.dtype, None if t.shape is None else (batch,) + t.shape) if isinstance(t, Tensor) else t
               for t in after]
    scans = [_stacked(node, n + j, v, length, 0, unstable) for j, v in enumerate(outs[n:node.num_outputs])]
    return batched + [Tensor(s.dtype, None if s.shape is None else (batch,) + s.shape) for s in scans]
