"""Area from one technology node to another: Stillmaker & Baas's area factors (relative to
45 nm), interpolated linearly in log(factor) against log(node) between their nodes."""

from __future__ import annotations

import itertools
import math

from tlm_models.errors import UserError
from tlm_models.platform.area.sources import AREA_VS_45NM

MIN_NODE_NM = AREA_VS_45NM[-1][0]
MAX_NODE_NM = AREA_VS_45NM[0][0]


def area_vs_45nm(node_nm: float) -> float:
    """Area of a design at `node_nm` relative to the same design at 45 nm."""
    if not MIN_NODE_NM <= node_nm <= MAX_NODE_NM:
        raise UserError(
            f"technology.node = {node_nm:g} nm: the node-scaling table covers "
            f"{MIN_NODE_NM:g}-{MAX_NODE_NM:g} nm (Stillmaker & Baas 2017)"
        )
    for (big, big_f), (small, small_f) in itertools.pairwise(AREA_VS_45NM):
        if small <= node_nm <= big:
            t = math.log(node_nm / big) / math.log(small / big)
            return math.exp(math.log(big_f) + t * math.log(small_f / big_f))
    raise AssertionError("unreachable: the range check covers the table")


def area_scale(from_nm: float, to_nm: float) -> float:
    """The factor a design's area at `from_nm` is multiplied by at `to_nm`."""
    return area_vs_45nm(to_nm) / area_vs_45nm(from_nm)
