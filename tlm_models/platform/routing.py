"""Routing of a platform's address map: which out port of each interconnect leads to each window.

Derived after the components, bindings and address map are validated (``validate.py``): a
window is routed through every interconnect whose out ports reach its target, through exactly
one port each; several ports, an unreachable ``via`` or a cycle of interconnects is an error.
"""

from __future__ import annotations

from collections.abc import Callable

from tlm_models.platform.loader import Location
from tlm_models.platform.schema import AddressRange, Binding, ComponentConfig, Route

__all__ = ["route_address_map"]

#: Reports one problem: where, which key, what (``validate``'s checker collects them).
ErrorSink = Callable[[Location, str, str], None]


def route_address_map(
    bindings: list[Binding],
    address_map: list[AddressRange],
    components: dict[str, ComponentConfig],
    error: ErrorSink,
    source: str,
) -> list[Route]:
    """Each interconnect routes a window to the out port whose downstream reaches it;
    ambiguous routes, unreachable `via`s and routing cycles are reported through ``error``."""
    outs: dict[str, list[tuple[int, str, Binding]]] = {}
    for b in bindings:
        if components[b.initiator.component].spec.routes and b.initiator.index is not None:
            outs.setdefault(b.initiator.component, []).append(
                (b.initiator.index, b.target.component, b)
            )
    if _routing_cycle(outs, error, source):
        return []

    # What each component reaches and each target's out ports, worked out once: a platform
    # with thousands of windows onto a few targets (or a mesh of many routers) is checked in
    # time linear in its windows, not windows x ports x routers.
    reached: dict[str, set[str]] = {}

    def reach(name: str) -> set[str]:
        if name not in reached:
            found = {name}
            for _, downstream, _ in outs.get(name, []):
                found |= reach(downstream)
            reached[name] = found
        return reached[name]

    ports_to: dict[str, dict[str, list[int]]] = {}

    def ports_reaching(target: str) -> dict[str, list[int]]:
        if target not in ports_to:
            ports_to[target] = {}
            for ic, ports in outs.items():
                hits = sorted(idx for idx, down, _ in ports if target in reach(down))
                if hits:
                    ports_to[target][ic] = hits
        return ports_to[target]

    routes: list[Route] = []
    for entry in address_map:
        by_interconnect = ports_reaching(entry.target)
        for ic in entry.via:
            if ic not in by_interconnect:
                error(
                    entry.loc or Location(source),
                    "address_map",
                    f"via '{ic}': no out port of '{ic}' leads to '{entry.target}'",
                )
        chosen = entry.via or tuple(sorted(by_interconnect))
        for ic in chosen:
            hits = by_interconnect.get(ic, [])
            if len(hits) > 1:
                error(
                    entry.loc or Location(source),
                    "address_map",
                    f"'{entry.target}' is reachable through several out ports of '{ic}' "
                    f"({', '.join(f'out[{h}]' for h in hits)}): the route is ambiguous",
                )
            elif hits:
                # Through another interconnect: pass the address on for it to decode.
                down = next(d for i, d, _ in outs[ic] if i == hits[0])
                offset = entry.base if down == entry.target else 0
                routes.append(Route(ic, entry.base, entry.size, hits[0], entry.target, offset))
    return routes


def _routing_cycle(
    outs: dict[str, list[tuple[int, str, Binding]]], error: ErrorSink, source: str
) -> bool:
    """Interconnects whose out ports lead back to themselves would route forever."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(name: str, path: list[Binding]) -> Binding | None:
        state[name] = 1
        for _, down, binding in outs.get(name, []):
            if state.get(down) == 1:
                path.append(binding)
                return binding
            if down in outs and state.get(down) != 2:
                path.append(binding)
                closing = visit(down, path)
                if closing is not None:
                    return closing
                path.pop()
        state[name] = 2
        return None

    for start in sorted(outs):
        if state.get(start):
            continue
        path: list[Binding] = []
        closing = visit(start, path)
        if closing is not None:
            error(
                closing.loc or Location(source),
                "bindings",
                "routing cycle: " + ", ".join(str(b) for b in path) + " leads back to "
                f"'{closing.target.component}'",
            )
            return True
    return False
