"""Worked example of docs/guide-dataflow.md: attention with Q, K, V, S and O all on chip.

Per head: load Q, K and V once, S = Q K^T, softmax by rows, O = P V, store O. Off-chip
traffic is T = 4Nd elements per head (Q, K, V read once, O written once). It fits only while
4Nd + N^2 + 2N elements fit in the scratchpad (M), so it is a teaching dataflow, not a study one.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from tlm_models.dataflows.builder import DEFAULT_CHUNK_OPS, Prev, TraceBuilder, role_offsets
from tlm_models.dataflows.setup import EmittedTrace, make_setup
from tlm_models.workload.spec import Workload
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import Broadcast, VectorOp


def resident_elements(workload: Workload) -> int:
    """On-chip elements the plan needs: Q, K, V, O (N x d each), S (N x N), row max and sum."""
    n, d = workload.seq_len, workload.head_dim
    return 4 * n * d + n * n + 2 * n


def resident_traffic(workload: Workload) -> int:
    """Closed form of the off-chip elements moved: T = 4Nd per head."""
    return 4 * workload.seq_len * workload.head_dim * workload.head_count


def emit_resident(
    workload: Workload, platform: PlatformInfo, chunk_ops: int = DEFAULT_CHUNK_OPS
) -> EmittedTrace:
    """The trace of resident attention on ``platform``; UserError when it does not fit."""
    need, capacity = resident_elements(workload), platform.capacity_elements(workload.elem_bytes)
    if need > capacity:
        raise UserError(f"resident attention needs {need} elements on chip, M = {capacity}")
    n, d, eb = workload.seq_len, workload.head_dim, workload.elem_bytes
    setup = make_setup("resident", workload, platform, {"resident_elements": need})
    a = setup.scratch  # buffers by name; a plan that does not fit is reported with every size
    q, k, v, o = (a.alloc(name, n, d) for name in ("Q", "K", "V", "O"))
    s, m, row_sum = a.alloc("S", n, n), a.alloc("m", n), a.alloc("l", n)

    def chunks() -> Iterator[np.ndarray]:
        b = TraceBuilder(setup.header, chunk_ops)
        smm = omm = store = None  # the previous head's ops that later writes must wait for
        for head in range(workload.head_count):
            # A load may overwrite a buffer only after the PE array has read the old contents:
            # DMA and PE are different engines, so the dependency is named.
            lq = b.load(
                setup.base("Q", head), q.addr, n, d * eb, tensor=setup.tensor["Q"], deps=[smm]
            )
            lk = b.load(
                setup.base("K", head), k.addr, n, d * eb, tensor=setup.tensor["K"], deps=[smm]
            )
            lv = b.load(
                setup.base("V", head), v.addr, n, d * eb, tensor=setup.tensor["V"], deps=[omm]
            )
            b.vector(VectorOp.MUL, q.addr, q.addr, n, d, bcast=Broadcast.SCALAR,
                     scalar=workload.scale, deps=[lq])  # fmt: skip
            smm = b.matmul(q.addr, k.addr, s.addr, n, n, d, trans_b=True, deps=[lk])
            b.vector(VectorOp.ROWMAX, m.addr, s.addr, n, n)
            shifted = b.vector(VectorOp.SUB, s.addr, s.addr, n, n, src1=m.addr, bcast=Broadcast.ROW)
            p = b.exp(s.addr, s.addr, n, n, deps=[shifted])  # the Exp unit waits for the PE
            b.vector(VectorOp.ROWSUM, row_sum.addr, s.addr, n, n, deps=[p])
            # O is rewritten only after the previous head's O has been stored.
            omm = b.matmul(s.addr, v.addr, o.addr, n, d, n, deps=[lv, p, store])
            norm = b.vector(
                VectorOp.DIV, o.addr, o.addr, n, d, src1=row_sum.addr, bcast=Broadcast.ROW
            )
            store = b.store(
                o.addr, setup.base("O", head), n, d * eb, tensor=setup.tensor["O"], deps=[norm]
            )
            yield from b.ready()
        yield from b.finish()

    return EmittedTrace(setup.header, chunks(), setup.layout())


def emit_resident_repeated(
    workload: Workload, platform: PlatformInfo, chunk_ops: int = DEFAULT_CHUNK_OPS
) -> EmittedTrace:
    """The same trace with the per-head body recorded once as a template and tiled over the
    heads by ``repeat``: no Python call per record, however many heads."""
    need, capacity = resident_elements(workload), platform.capacity_elements(workload.elem_bytes)
    if need > capacity:
        raise UserError(f"resident attention needs {need} elements on chip, M = {capacity}")
    n, d, eb = workload.seq_len, workload.head_dim, workload.elem_bytes
    setup = make_setup("resident", workload, platform, {"resident_elements": need})
    a = setup.scratch
    q, k, v, o = (a.alloc(name, n, d) for name in ("Q", "K", "V", "O"))
    s, m, row_sum = a.alloc("S", n, n), a.alloc("m", n), a.alloc("l", n)

    def chunks() -> Iterator[np.ndarray]:
        b = TraceBuilder(setup.header, chunk_ops)
        tpl = b.template()  # handles are body-local; Prev(role) is that op one head earlier
        r = tpl.roles
        t = setup.tensor
        r["lq"] = tpl.load(setup.base("Q"), q.addr, n, d * eb, tensor=t["Q"], deps=[Prev("smm")])
        r["lk"] = tpl.load(setup.base("K"), k.addr, n, d * eb, tensor=t["K"], deps=[Prev("smm")])
        r["lv"] = tpl.load(setup.base("V"), v.addr, n, d * eb, tensor=t["V"], deps=[Prev("omm")])
        tpl.vector(VectorOp.MUL, q.addr, q.addr, n, d, bcast=Broadcast.SCALAR,
                   scalar=workload.scale, deps=[r["lq"]])  # fmt: skip
        r["smm"] = tpl.matmul(q.addr, k.addr, s.addr, n, n, d, trans_b=True, deps=[r["lk"]])
        tpl.vector(VectorOp.ROWMAX, m.addr, s.addr, n, n)
        shifted = tpl.vector(VectorOp.SUB, s.addr, s.addr, n, n, src1=m.addr, bcast=Broadcast.ROW)
        p = tpl.exp(s.addr, s.addr, n, n, deps=[shifted])
        tpl.vector(VectorOp.ROWSUM, row_sum.addr, s.addr, n, n, deps=[p])
        r["omm"] = tpl.matmul(s.addr, v.addr, o.addr, n, d, n, deps=[r["lv"], p, Prev("st")])
        norm = tpl.vector(
            VectorOp.DIV, o.addr, o.addr, n, d, src1=row_sum.addr, bcast=Broadcast.ROW
        )
        r["st"] = tpl.store(o.addr, setup.base("O"), n, d * eb, tensor=t["O"], deps=[norm])
        per_head = setup.base("Q", 1) - setup.base("Q", 0) if workload.head_count > 1 else 0

        def offsets(heads: np.ndarray) -> dict[str, dict[int, np.ndarray | int]]:
            moved = heads * per_head  # head h's tensors start h * N * d elements further on
            return role_offsets(
                tpl,
                {("lq", "src0"): moved, ("lk", "src0"): moved, ("lv", "src0"): moved,
                 ("st", "dst"): moved},
            )  # fmt: skip

        yield from b.repeat(tpl, workload.head_count, offsets)
        yield from b.finish()

    return EmittedTrace(setup.header, chunks(), setup.layout())
