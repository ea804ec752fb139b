"""Steady-state fast-forward across the tiles of a tiled platform (docs/models/tiles.md).

Sound only when the whole chip repeats: every tile emits the same loop (the same number of
iterations of the same kinds and, for masked loops, the same shapes: balanced shares), and over
tile 0's iterations the changes of every statistic of the chip (every tile's replay, every
component) repeat or grow linearly. A loop of several regimes (approximate attention's key and
query passes; a masked loop's heads, each growing along the mask, and a sliding window's
plateau) is watched regime by regime, as on one tile, and each regime's skip is taken on every
tile; a growth skip's boundary correction is measured on the same snapshot rows, so it covers
every tile's statistics and the platform's, and an engine idle across a skip is found on its
own tile. Tile 0's iteration starts are watched (``FastForward`` on its control); each snapshot
row carries all tiles' replay statistics (``replay_tile<i>``). Once the chip repeats, the same
iterations are skipped on every tile: each tile's shortened trace is then the same loop with
fewer iterations, and the skipped periods' changes are added to every tile's statistics and the
platform's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tlm_models.errors import SimulationError
from tlm_models.fast_forward.control import FastForward, FastForwardSettings, IterationControl, Path
from tlm_models.fast_forward.growth import fast_forward_for
from tlm_models.fast_forward.linear_growth import READ_AHEAD


def unbalanced_reason(controls: Sequence[IterationControl | None]) -> str | None:
    """Why the tiles' loops cannot be skipped together (None when they can)."""
    if any(c is None for c in controls):
        return "the dataflow marks no loop iterations"
    first = controls[0]
    assert first is not None
    for tile, control in enumerate(controls):
        assert control is not None
        if control.total != first.total:
            return (
                f"tile {tile}'s loop ({control.total} iterations) differs from tile 0's "
                f"({first.total}): unbalanced shares run exactly"
            )
        if control.kinds != first.kinds:
            if first.shapes is not None:
                return (
                    f"tile {tile}'s blocks lie elsewhere along the mask than tile 0's (query "
                    "blocks dealt zig-zag: each tile its own rows of the mask, with their own "
                    "key ranges): masked shares of unlike blocks run exactly"
                )
            return (
                f"tile {tile}'s iterations differ in kind from tile 0's: shares of unlike "
                "blocks run exactly"
            )
        if control.shapes != first.shapes:
            # Equal kinds, but the blocks grow otherwise: a linear-growth skip planned on
            # tile 0's shapes could cross where another tile's growth breaks.
            return (
                f"tile {tile}'s blocks grow along the mask unlike tile 0's (other numbers "
                "of key tiles per block): masked shares of unlike growth run exactly"
            )
    return None


#: A tile's replay statistics in the snapshot rows (tile 0's are ``replay``).
_TILE_ROOT = re.compile(r"^replay_tile(\d+)$")


def drift(change: Mapping[Path, float], rows: Sequence[Mapping[Path, float]] = ()) -> str | None:
    """Why skipping iterations over which the counts change by ``change`` (tile 0's marks)
    would shift a tile against tile 0 (None when none moves); for a growth skip ``rows``, the
    counts at tile 0's last two watched iteration starts, must show every tile behind tile 0
    by less than that iteration (``_places``). Every tile skips the same
    iterations of the same loop, so each skips tile 0's work; its statistics get the change
    measured between tile 0's marks, which is that work only if the tile is as far behind
    tile 0 at the skip's end as at its start. A tile that falls behind (ties at the issue gate
    go to the lower tile index) or catches up over the skipped iterations would, in the
    shortened run, keep its place instead: its counts would miss or double the difference."""
    for path, value in change.items():
        match = _TILE_ROOT.match(path[0])
        if match is None or path[-1] in READ_AHEAD:
            continue
        own = f"tile{match.group(1)}_"
        lead = change.get(("replay", *(_tile0(p, own) for p in path[1:])))
        if lead is not None and lead != value:
            return (
                f"tile {match.group(1)} drifts against tile 0 over the loop "
                f"({'/'.join(path[1:])}: {value:,.0f} against tile 0's {lead:,.0f} over the "
                "iterations to skip): they are simulated, as a skip would shift it"
            )
    return _places(rows[-2], rows[-1]) if len(rows) >= 2 else None


def _places(before: Mapping[Path, float], last: Mapping[Path, float]) -> str | None:
    """Why a growth skip's boundary correction would miss a tile's place (None when every
    tile is behind tile 0 by less than an iteration). The correction replaces tile 0's first
    iteration after the skip by its predicted change; a tile that many operations behind
    tile 0 finishes the iteration before the skip (smaller than the full loop's at that
    place) within that iteration, so the correction covers it too. A tile a whole iteration
    behind would finish it later, and one ahead of tile 0 would start the iteration after
    the skip (larger) before tile 0's mark: neither is corrected."""
    ops = ("replay", "ops")
    if ops not in last or ops not in before:
        return None
    size = last[ops] - before[ops]  # tile 0's last watched iteration; later ones are larger
    for path, value in last.items():
        match = _TILE_ROOT.match(path[0])
        if match is None or path[1:] != ("ops",):
            continue
        behind = last[ops] - value
        if not 0 <= behind < size:
            where = f"{-behind:,.0f} ahead of" if behind < 0 else f"{behind:,.0f} behind"
            return (
                f"tile {match.group(1)} runs {where} tile 0's operations at its iteration "
                f"starts, not within its iteration of {size:,.0f}: a growth skip's boundary "
                "correction would miss its place, so the blocks are simulated"
            )
    return None


def _tile0(name: str, own: str) -> str:
    """A tile's engine name as tile 0's (``tile3_pe`` -> ``tile0_pe``)."""
    return "tile0_" + name[len(own) :] if name.startswith(own) else name


@dataclass
class TileFastForward:
    """Watches tile 0's loop for the chip's steady state; skips it on every tile together."""

    controls: list[IterationControl]
    watcher: FastForward

    @staticmethod
    def of(controls: Sequence[IterationControl], settings: FastForwardSettings) -> TileFastForward:
        watcher = fast_forward_for(controls[0], settings)
        watcher.veto = drift
        return TileFastForward(list(controls), watcher)

    def attach(self, session: Any) -> None:
        """Watches tile 0's replayer (select it before calling)."""
        self.watcher.attach(session)

    def poll(self) -> None:
        """Between kernel slices: the watcher decides on tile 0's snapshots; a planned skip
        starts after the iteration furthest ahead of any tile's emitter, on every tile. A loop
        of several regimes is skipped several times (``fast_forward/growth.py``): the watcher
        waits until every tile has taken the last skip, so that no tile's is replaced."""
        lead = self.controls[0]
        for control in self.controls[1:]:
            control.marks.clear()  # only tile 0's iteration starts are snapshotted
        if any(c.skip is not None for c in self.controls[1:]):
            # No new skip until every tile has taken this one; tile 0's iteration starts are
            # still marked, or a growth skip would miss the snapshots its boundary correction
            # takes after the skip (a mark handed over after its record issued is lost).
            if not self.watcher.done_watching:
                for iteration, record in lead.marks:
                    self.watcher.session.mark_iteration(iteration, record)
                lead.marks.clear()
            return
        planned = lead.skip
        lead.next_fixed = max(c.next_fixed for c in self.controls)
        self.watcher.poll()
        if lead.skip is not None and lead.skip != planned:
            for control in self.controls[1:]:
                control.skip = lead.skip

    def apply(self, tiles: list[dict[str, Any]], platform: dict[str, Any]) -> dict[str, Any]:
        """Adds the skipped periods to every tile's replay tree and the platform's (in
        place); returns the result's ``fast_forward`` section."""
        skipped = {c.skipped for c in self.controls}
        if len(skipped) != 1:
            raise SimulationError(f"tiles skipped different iteration counts: {sorted(skipped)}")
        others = {f"replay_tile{i}": tree for i, tree in enumerate(tiles) if i}
        section = self.watcher.apply(tiles[0], platform, others)
        section["tiles_skipped_together"] = len(self.controls)
        return section
