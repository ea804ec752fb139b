"""Feature blocks of polynomial attention when H does not fit: monomials grouped by variables.

The d variables are split into G groups of w (the last one possibly narrower). Every monomial
of degree <= g uses at most g groups; the monomials whose variables fall in exactly the groups
of one combination S (|S| <= g) form S's feature block, so each monomial belongs to exactly
one block. The constant monomial joins the first block, (0,). Blocks are taken in
lexicographic order of their combinations.

A row's block features are generated from the |S| loaded groups only: each group's monomials
(degrees 1..g, ``monomial_plan`` of the group) are built in the group's area of the row
buffer, and for |S| >= 2 the block is the union over degree compositions (l_1..l_s), l_i >= 1,
sum <= g, of outer products of the groups' exact-degree sections (matmuls with k = 1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tlm_models.dataflows.polynomial import MonomialPlan, monomial_plan


def group_widths(head_dim: int, width: int) -> tuple[int, ...]:
    """Widths of the groups of ``width`` consecutive variables covering ``head_dim``."""
    full, last = divmod(head_dim, width)
    return (width,) * full + ((last,) if last else ())


def exact_group_features(widths: Sequence[int], degree: int) -> int:
    """Monomials of degree <= g over the union of groups that use every group at least once.

    Inclusion-exclusion over the groups left out; () gives 1, the constant.
    """
    s = len(widths)
    total = 0
    for t in range(s + 1):
        for kept in itertools.combinations(widths, s - t):
            total += (-1) ** t * math.comb(sum(kept) + degree, degree)
    return total


def section(width: int, level: int) -> tuple[int, int]:
    """(start, length) of the exact-degree ``level`` monomials in a ``monomial_plan`` row."""
    return math.comb(width + level - 1, level - 1), math.comb(width + level - 1, level)


@dataclass(frozen=True)
class FeatureGroupPlan:
    """Closed-form shape of the feature blocks for group width w (no enumeration)."""

    head_dim: int
    degree: int
    width: int  # w
    groups: int  # G = ceil(d / w)
    blocks: int  # sum_{s=1}^{min(g, G)} C(G, s)
    loaded_cols: int  # columns of a K (or Q) row loaded over all blocks: d sum C(G-1, s-1)
    max_features: int  # rows of the largest block (H rows on chip)
    area: int  # C(w+g, g): one group's generated features in the row buffer

    @property
    def max_groups(self) -> int:
        return min(self.degree, self.groups)

    @property
    def row_elements(self) -> int:
        """One row buffer: the group areas, the product row and (|S| >= 3) two partials."""
        f = self.max_features
        extra = (f if self.max_groups >= 2 else 0) + (2 * f if self.max_groups >= 3 else 0)
        return self.max_groups * self.area + extra

    def capacity_needed(self) -> int:
        """H of f_max x (d+1), two row buffers, two [1|v] slots, two o and two partial rows."""
        return (
            self.max_features * (self.head_dim + 1)
            + 2 * self.row_elements
            + 6 * (self.head_dim + 1)
        )


def feature_group_plan(head_dim: int, degree: int, width: int) -> FeatureGroupPlan:
    d, g = head_dim, degree
    widths = group_widths(d, width)
    groups = len(widths)
    top = min(g, groups)
    blocks = sum(math.comb(groups, s) for s in range(1, top + 1))
    loaded = d * sum(math.comb(groups - 1, s - 1) for s in range(1, top + 1))
    full, last = divmod(d, width)
    largest = math.comb(widths[0] + g, g)  # the first block: group 0 and the constant
    for s in range(2, top + 1):
        if full >= s:
            largest = max(largest, exact_group_features((width,) * s, g))
        if last and full >= s - 1:
            largest = max(largest, exact_group_features((width,) * (s - 1) + (last,), g))
    return FeatureGroupPlan(d, g, width, groups, blocks, loaded, largest, math.comb(width + g, g))


@dataclass(frozen=True)
class Product:
    """Block features [dst, dst + prod(lengths)) = outer product of one section per group."""

    dst: int
    sections: tuple[tuple[int, int], ...]  # (start, length) in each group's area


@dataclass(frozen=True)
class FeatureBlock:
    """One combination of groups: its monomials in row order and how a row generates them."""

    groups: tuple[int, ...]
    starts: tuple[int, ...]  # first variable of each group
    plans: tuple[MonomialPlan, ...]  # per group: generation of degrees 1..g in its area
    monomials: tuple[tuple[int, ...], ...]  # sorted global variable indices, row order
    products: tuple[Product, ...]  # empty for single groups
    first: int  # single group: the block row starts at this offset of the group area

    @property
    def size(self) -> int:
        return len(self.monomials)


def _block(combo: tuple[int, ...], widths: Sequence[int], width: int, degree: int) -> FeatureBlock:
    starts = tuple(gi * width for gi in combo)
    plans = tuple(monomial_plan(widths[gi], degree) for gi in combo)

    def shift(mono: tuple[int, ...], j: int) -> tuple[int, ...]:
        return tuple(starts[j] + v for v in mono)

    if len(combo) == 1:
        first = 0 if combo[0] == 0 else 1  # the constant belongs to the first block only
        monos = tuple(shift(m, 0) for m in plans[0].monomials[first:])
        return FeatureBlock(combo, starts, plans, monos, (), first)
    products: list[Product] = []
    monomials: list[tuple[int, ...]] = []
    for levels in itertools.product(range(1, degree + 1), repeat=len(combo)):
        if sum(levels) > degree:
            continue
        secs = tuple(section(widths[gi], lv) for gi, lv in zip(combo, levels, strict=True))
        products.append(Product(len(monomials), secs))
        parts = [
            [shift(m, j) for m in plans[j].monomials[st : st + ln]]
            for j, (st, ln) in enumerate(secs)
        ]
        for factors in itertools.product(*parts):
            monomials.append(tuple(sorted(v for f in factors for v in f)))
    return FeatureBlock(combo, starts, plans, tuple(monomials), tuple(products), 0)


def feature_blocks(head_dim: int, degree: int, width: int) -> Iterator[FeatureBlock]:
    """The blocks of every combination of 1..min(g, G) groups, in lexicographic order."""
    widths = group_widths(head_dim, width)
    combos = [
        c
        for s in range(1, min(degree, len(widths)) + 1)
        for c in itertools.combinations(range(len(widths)), s)
    ]
    for combo in sorted(combos):
        yield _block(combo, widths, width, degree)
