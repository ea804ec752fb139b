"""AttenIO: a = floor((M - d)/(2d + 4)) Q rows on chip, K and V streamed one row at a time.

With b = 1 the online softmax needs no row reductions: every step is element-wise on a
vectors (PE array for max/sub/mul/add, Exp unit for exp). K_j and V_j use one slot each, in
the KV buffer when it has room, else in the d elements of scratchpad the tile rule reserves.
Off-chip traffic T = Nd + 2Nd*ceil(N/a) + Nd.
"""

from __future__ import annotations

from tlm_models.dataflows.allocator import Buffer, OnChipAllocator
from tlm_models.dataflows.builder import DEFAULT_CHUNK_OPS, Ext, Template
from tlm_models.dataflows.online_softmax import (
    OnlineSoftmaxLoop,
    SoftmaxBuffers,
    TileShape,
)
from tlm_models.dataflows.setup import EmittedTrace, make_setup
from tlm_models.dataflows.workload import Workload
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import Broadcast, VectorOp


def attenio_rows(workload: Workload, capacity: int, kv_slots_on_chip: int = 1) -> int:
    """Tile a: the paper's floor((M - d)/(2d + 4)), with M - d replaced by M - s*d when the
    K/V row slots that do not fit the KV buffer (``kv_slots_on_chip``) need more than d."""
    d = workload.head_dim
    reserve = max(1, kv_slots_on_chip) * d
    a = (capacity - reserve) // (2 * d + 4)
    if a < 1:
        raise UserError(
            f"AttenIO needs M >= {2 * d + 4 + reserve} elements for d = {d} "
            f"(one Q row, one O row, 4 row statistics and the K/V row slots), M = {capacity}"
        )
    return a


def kv_slots_in_scratchpad(workload: Workload, platform: PlatformInfo) -> int:
    """How many of the two d-element K/V slots do not fit in the KV buffer."""
    if platform.kv_buffer is None:
        return 2
    per_slot = workload.head_dim * workload.elem_bytes
    return 2 - min(2, platform.kv_buffer.size // per_slot)


def attenio_tiling(workload: Workload, platform: PlatformInfo) -> int:
    """The a this platform gets (the formula's a whenever at most one slot is in the SRAM)."""
    return attenio_rows(
        workload,
        platform.capacity_elements(workload.elem_bytes),
        kv_slots_in_scratchpad(workload, platform),
    )


def _row_body(tpl: Template, bufs: SoftmaxBuffers, shape: TileShape, ldk: int, ldv: int) -> None:
    """One K/V row: s = Q_i k_j^T, element-wise online softmax, O_i = O_i*alpha + p v_j."""
    a = shape.rows
    d = bufs.q.cols
    mcur, mnext, s, l_ = bufs.m[0].addr, bufs.m[1].addr, bufs.s.addr, bufs.l.addr
    smm = tpl.matmul(bufs.q.addr, bufs.k[0].addr, s, a, 1, d, trans_b=True, deps=[ldk])
    tpl.roles["smm"] = smm
    if shape.first:
        tpl.vector(VectorOp.COPY, mnext, s, a, 1)
        sub = tpl.vector(VectorOp.SUB, s, s, a, 1, src1=mnext)
        p = tpl.exp(s, s, a, 1, deps=[sub])
        tpl.vector(VectorOp.COPY, l_, s, a, 1, deps=[p])
        tpl.roles["omm"] = tpl.matmul(
            s, bufs.v[0].addr, bufs.o.addr, a, d, 1, deps=[ldv, p, Ext("o_free")]
        )
        return
    tpl.vector(VectorOp.MAX, mnext, mcur, a, 1, src1=s)
    # m_old - m_new first: alpha is the Exp unit's first task, and the PE array's work until
    # it returns is the subtraction below; exp(s - m_new) then runs behind alpha while the
    # PE array rescales O, so only alpha's latency stays on the row's critical path.
    dm = tpl.vector(VectorOp.SUB, mcur, mcur, a, 1, src1=mnext)
    alpha = tpl.exp(mcur, mcur, a, 1, deps=[dm])
    sub = tpl.vector(VectorOp.SUB, s, s, a, 1, src1=mnext)
    p = tpl.exp(s, s, a, 1, deps=[sub])
    tpl.vector(
        VectorOp.MUL, bufs.o.addr, bufs.o.addr, a, d, src1=mcur, bcast=Broadcast.ROW, deps=[alpha]
    )
    # The l update fills the gap while the rescaled O is written back for the O update.
    tpl.vector(VectorOp.MUL, l_, l_, a, 1, src1=mcur, deps=[alpha])
    tpl.vector(VectorOp.ADD, l_, l_, a, 1, src1=s, deps=[p])
    tpl.roles["omm"] = tpl.matmul(
        s, bufs.v[0].addr, bufs.o.addr, a, d, 1, accumulate=True, deps=[ldv, p]
    )


def _slot(name: str, d: int, kv: OnChipAllocator | None, scratch: OnChipAllocator) -> Buffer:
    if kv is not None and kv.fits(1, d):
        return kv.alloc(name, 1, d)
    return scratch.alloc(name, 1, d)


def emit_attenio(
    workload: Workload, platform: PlatformInfo, chunk_ops: int = DEFAULT_CHUNK_OPS
) -> EmittedTrace:
    """AttenIO trace on ``platform``; records stream in chunks of ``chunk_ops``."""
    d = workload.head_dim
    a = attenio_tiling(workload, platform)
    rows = min(a, workload.seq_len)
    setup = make_setup("attenio", workload, platform, {"a": a, "b": 1})
    sp = setup.scratch
    k_slot = _slot("k_j", d, setup.kvbuf, sp)
    v_slot = _slot("v_j", d, setup.kvbuf, sp)
    bufs = SoftmaxBuffers(
        q=sp.alloc("Q_i", rows, d),
        o=sp.alloc("O_i", rows, d),
        s=sp.alloc("s_p", rows),
        m=(sp.alloc("m_a", rows), sp.alloc("m_b", rows)),
        l=sp.alloc("l_i", rows),
        k=(k_slot,),
        v=(v_slot,),
    )
    loop = OnlineSoftmaxLoop(setup, bufs, rows, 1, _row_body)
    return EmittedTrace(setup.header, loop.chunks(chunk_ops), setup.layout(), loop.iterations)
