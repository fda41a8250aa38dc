"""Where a fresh symbol (or an unknown rank) was made, why, and of what kind.

The kind is the closed set reports sort by: ``check --allow-data-dependent`` passes
exactly the ``DATA_DEPENDENT`` ones, and ``explain`` tags them. It is set where the
symbol is made (the engine's fresh-symbol factory, and the rules that ask for one),
never guessed later from op names or the wording of a reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..dims import Dim


class Kind(str, Enum):
    """Why resolution was lost, as one of a few words."""

    DATA_DEPENDENT = "data-dependent"  # the size depends on tensor elements (NonZero's count)
    NO_RULE = "no rule"                # no rule (nor function body) for the op
    UNSUPPORTED = "unsupported"        # a rule ran but cannot determine this size
    RULE_FAILED = "rule failed"        # the rule raised (a bug; loud in strict mode)
    POLICY = "fresh by policy"         # fresh on purpose: merged branches, per-item sequence dims


@dataclass(frozen=True)
class Provenance:
    """Where a fresh symbol was made and why."""

    symbol: str
    node: str
    op_type: str
    output: str
    axis: int | None
    reason: str
    kind: Kind = Kind.UNSUPPORTED
    # a proven upper bound over other symbols (NonZero's count <= the input's element count),
    # beside the range's number: what show and check print and cost's worst case reads
    bound: Dim | None = None
