"""AttenIO: a Q rows on chip, K and V streamed one row at a time (Sec. 3.3 and 4.2-4.4).

With b = 1 the online softmax needs no row reductions: every step is element-wise on a
vectors. K and V rows are preloaded into the cache up to ``stage`` rows ahead (Sec. 4.2's
preloads), each moved into the KV buffer by the PE array when its turn comes; S = Q_i k_j^T
and the O update read them from there, broadcast (Sec. 4.3). The softmax stages stream
(forwarding, Fig. 9); the rescale of O is fused into the O update by default
(``rescale=fused``: O = diag(alpha) O + p v_j), a separate pass over O (``rescale=separate``)
or a pass over the rows whose running max rose (``rescale=lazy``, ``rescale_rows.py``).
Tile a = floor((M - 2*stage*d)/(2d + 4)), which the header records; traffic
T = Nd + 2Nd*ceil(N/a) + Nd.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from tlm_models.dataflows.allocator import Buffer
from tlm_models.dataflows.builder import Ext, Template
from tlm_models.dataflows.online_softmax import (
    OnlineSoftmaxLoop,
    SoftmaxBuffers,
    TileShape,
    lazy_counts,
    mask_scores,
    rescale_o,
)
from tlm_models.dataflows.setup import DataflowTrace, make_setup
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import VectorOp
from tlm_models.workload.spec import Workload


@dataclass(frozen=True)
class AttenioPlan:
    a: int  # Q rows per block
    stage: int  # K (and V) rows staged ahead in the cache
    rescale: str  # fused | separate | lazy


def attenio_rows(workload: Workload, capacity: int, stage: int) -> int:
    """a = floor((M - 2*stage*d)/(2d + 4)): Q_i and O_i (a x d), s, m_old, m and l (a each),
    beside ``stage`` K rows and ``stage`` V rows (the paper reserves one d-element block)."""
    d = workload.head_dim
    reserve = 2 * stage * d
    a = (capacity - reserve) // (2 * d + 4)
    if a < 1:
        raise UserError(
            f"AttenIO needs M >= {2 * d + 4 + reserve} elements for d = {d} and stage = "
            f"{stage} (one Q row, one O row, 4 row statistics and {2 * stage} staged K/V "
            f"rows), M = {capacity}"
        )
    return a


def attenio_plan(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object] | None = None
) -> AttenioPlan:
    """The tile and switches this platform and ``params`` give."""
    variant = resolve("attenio", params)
    stage = int(variant["stage"])
    a = attenio_rows(workload, platform.capacity_elements(workload.elem_bytes), stage)
    if variant["rows"] != "auto":
        if int(variant["rows"]) > a:
            raise UserError(
                f"attenio rows={variant['rows']} does not fit: at most a = {a} Q rows fit "
                f"beside stage = {stage} for d = {workload.head_dim}"
            )
        a = int(variant["rows"])
    return AttenioPlan(a=a, stage=stage, rescale=variant["rescale"])


def attenio_tiling(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object] | None = None
) -> int:
    """The a this platform gets with ``params``."""
    return attenio_plan(workload, platform, params).a


@dataclass(frozen=True)
class _KvSlots:
    """Where S and the O update read k_j and v_j (KV buffer slots, or the staging slots)."""

    k: int | None  # None: straight from the staging slot, no move
    v: int | None


def _row_body(
    tpl: Template,
    bufs: SoftmaxBuffers,
    shape: TileShape,
    *,
    kv: _KvSlots,
    rescale: str,
) -> None:
    """One K/V row: move k_j to the KV buffer, s = Q_i k_j^T, move v_j, the element-wise
    online softmax as streamed stages, O_i = diag(alpha) O_i + p v_j."""
    a = shape.rows
    d = bufs.q.cols
    ldk, ldv = tpl.roles["ldk"], tpl.roles["ldv"]
    mcur, mnext, s, l_ = bufs.m[0].addr, bufs.m[1].addr, bufs.s.addr, bufs.l.addr
    k_at, v_at = bufs.k[0].addr, bufs.v[0].addr
    k_dep: int | None = ldk
    if kv.k is not None:
        tpl.roles["mvk"] = tpl.vector(VectorOp.COPY, kv.k, k_at, 1, d, deps=[ldk])
        k_at, k_dep = kv.k, None
    smm = tpl.matmul(bufs.q.addr, k_at, s, a, 1, d, trans_b=True, deps=[k_dep])
    tpl.roles["smm"] = smm
    if kv.k is None:
        tpl.roles["mvk"] = smm  # the last reader of the staging slot
    mask_scores(tpl, shape, s)
    if kv.v is not None:
        # The KV buffer takes v_j once S has read k_j (one slot at d = 128: Sec. 4.2).
        tpl.roles["mvv"] = tpl.vector(VectorOp.COPY, kv.v, v_at, 1, d, deps=[ldv])
        v_at = kv.v
    v_dep = ldv if kv.v is None else None
    if shape.first:
        tpl.vector(VectorOp.COPY, mnext, s, a, 1)
        sub = tpl.vector(VectorOp.SUB, s, s, a, 1, src1=mnext, stream=True)
        p = tpl.exp(s, s, a, 1, stream=True, deps=[sub])
        omm = tpl.matmul(s, v_at, bufs.o.addr, a, d, 1, deps=[v_dep, p, Ext("o_free")])
        tpl.roles["omm"] = omm
        tpl.vector(VectorOp.COPY, l_, s, a, 1, stream=True, deps=[p])
        if kv.v is None:
            tpl.roles["mvv"] = omm
        return
    # Fig. 9(a): max, subtract, exp stream across the a rows; alpha = exp(m_old - m) first,
    # so the Exp unit's second task, p, follows it.
    tpl.vector(VectorOp.MAX, mnext, mcur, a, 1, src1=s)
    dm = tpl.vector(VectorOp.SUB, mcur, mcur, a, 1, src1=mnext, stream=True)
    alpha = tpl.exp(mcur, mcur, a, 1, stream=True, rescale=True, deps=[dm])
    sub = tpl.vector(VectorOp.SUB, s, s, a, 1, src1=mnext, stream=True)
    p = tpl.exp(s, s, a, 1, stream=True, deps=[sub])
    if rescale == "fused":
        # The paper's P~ V mapping holds all of p in the MACs before the first v element is
        # broadcast, so the update waits for the whole of p.
        omm = tpl.matmul(s, v_at, bufs.o.addr, a, d, 1, scale_rows=mcur, deps=[v_dep, p, alpha])
    else:
        rescale_o(tpl, bufs, a, lazy=rescale == "lazy", deps=[alpha])
        omm = tpl.matmul(s, v_at, bufs.o.addr, a, d, 1, accumulate=True, deps=[v_dep, p])
    tpl.roles["omm"] = omm
    if kv.v is None:
        tpl.roles["mvv"] = omm
    # Fig. 9(b): l = l * exp(m_old - m) + p, streamed behind the Exp unit.
    tpl.vector(VectorOp.MUL, l_, l_, a, 1, src1=mcur, stream=True, deps=[alpha])
    tpl.vector(VectorOp.ADD, l_, l_, a, 1, src1=s, stream=True, deps=[p])


def _slots(name: str, stage: int, d: int, first: Buffer) -> tuple[Buffer, ...]:
    """``stage`` consecutive 1 x d slots of the block allocated at ``first``."""
    row = d * first.elem_bytes
    return tuple(
        Buffer(f"{name}.{i}", first.addr + i * row, 1, d, first.elem_bytes) for i in range(stage)
    )


def trace_attenio(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object]
) -> DataflowTrace:
    """AttenIO trace on ``platform``.
    ``params``: ``rescale`` (fused|separate|lazy), ``stage`` (K/V rows staged ahead),
    ``scores`` (where lazy's counts come from)."""
    d = workload.head_dim
    plan = attenio_plan(workload, platform, params)
    variant = resolve("attenio", params)
    rows = min(plan.a, workload.group * workload.seq_len)
    setup = make_setup("attenio", workload, platform, {"a": plan.a, "b": 1, "variant": variant})
    sp = setup.scratch
    kstage = sp.alloc("K_stage", plan.stage, d)
    vstage = sp.alloc("V_stage", plan.stage, d)
    kv = _KvSlots(None, None)
    if setup.kvbuf is not None and setup.kvbuf.fits(1, d):
        k_slot = setup.kvbuf.alloc("kv_k", 1, d).addr
        v_slot = setup.kvbuf.alloc("kv_v", 1, d).addr if setup.kvbuf.fits(1, d) else k_slot
        kv = _KvSlots(k_slot, v_slot)
    bufs = SoftmaxBuffers(
        q=sp.alloc("Q_i", rows, d),
        o=sp.alloc("O_i", rows, d),
        s=sp.alloc("s_p", rows),
        m=(sp.alloc("m_a", rows), sp.alloc("m_b", rows)),
        l=sp.alloc("l_i", rows),
        k=_slots("k", plan.stage, d, kstage),
        v=_slots("v", plan.stage, d, vstage),
    )
    body = partial(_row_body, kv=kv, rescale=plan.rescale)
    lazy = lazy_counts(workload, 1, variant)
    loop = OnlineSoftmaxLoop(
        setup, bufs, rows, 1, body, k_reader="mvk", v_reader="mvv", rescale_counts=lazy
    )
    iterations = loop.iterations if lazy is None or lazy.uniform else None
    return DataflowTrace(setup, loop, iterations)
