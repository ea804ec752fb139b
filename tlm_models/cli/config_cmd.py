"""``attn-tlm config``: where the C++ models are, for builds outside this package.

Like ``pybind11 --includes``: ``--includes`` prints compiler flags, ``--cmakedir`` the directory
of the CMake package (``find_package(attn_tlm)``), ``--pkgconfig`` the directory of
``attn-tlm.pc``. Several options print one line each, in the order given on the command line.
``--params PLATFORM`` prints a C++ header of the platform's ``Params`` initialisers instead
(tlm_models/platform/cpp_params.py), so that a C++ virtual prototype and the Python side build
the same components from the same YAML.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from tlm_models.cli.commands import add_command
from tlm_models.cli.platform_args import add_override_arg
from tlm_models.errors import UserError
from tlm_models.runtime.headers import INCLUDE_DIR

SHARE_DIR = Path(__file__).resolve().parent.parent / "share"
CMAKE_DIR = SHARE_DIR / "cmake" / "attn_tlm"
PKGCONFIG_DIR = SHARE_DIR / "pkgconfig"


def include_flags() -> list[str]:
    """``-I`` for the models plus whatever SystemC's headers need (nothing for /usr/include)."""
    from tlm_models.runtime.kernel import systemc_paths

    return [f"-I{INCLUDE_DIR}", *systemc_paths().cflags()]


def link_flags() -> list[str]:
    from tlm_models.runtime.kernel import systemc_paths

    return systemc_paths().ldflags()


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_command(subparsers, "config")
    options = (
        ("--includes", "includes", "compiler flags: -I for the models and SystemC's headers"),
        ("--libs", "libs", "linker flags for SystemC"),
        ("--cmakedir", "cmakedir", "directory of attn_tlmConfig.cmake (set attn_tlm_DIR to it)"),
        ("--pkgconfig", "pkgconfig", "directory of attn-tlm.pc (add it to PKG_CONFIG_PATH)"),
    )
    for flag, what, text in options:
        parser.add_argument(flag, dest="queries", action="append_const", const=what, help=text)
    parser.add_argument(
        "--params",
        metavar="PLATFORM",
        help="print a C++ header of PLATFORM's Params initialisers (one function per component, "
        "and accelerator() for an accelerator-shaped platform)",
    )
    add_override_arg(parser)
    parser.set_defaults(func=_config, queries=None)


def answer(query: str) -> str:
    """One line of output for one option."""
    if query == "includes":
        return shlex.join(include_flags())
    if query == "libs":
        return shlex.join(link_flags())
    if query == "cmakedir":
        return str(CMAKE_DIR)
    if query == "pkgconfig":
        return str(PKGCONFIG_DIR)
    raise ValueError(f"unknown config query {query!r}")


def params_header_for(platform: str, overrides: list[str] | tuple[str, ...] = ()) -> str:
    """The ``--params`` header of a platform file."""
    from tlm_models.platform import load_platform
    from tlm_models.platform.cpp_params import params_header
    from tlm_models.run.config import resolve_platform

    return params_header(load_platform(resolve_platform(platform), overrides), platform)


def _config(args: argparse.Namespace) -> int:
    queries: list[str] | None = args.queries
    if args.params is not None:
        if queries:
            raise UserError("config: --params prints a header; give it without other options")
        print(params_header_for(args.params, args.overrides), end="")
        return 0
    if args.overrides:
        raise UserError("config: --set applies to --params only")
    if not queries:
        raise UserError(
            "config: give at least one of --includes, --libs, --cmakedir, --pkgconfig, --params"
        )
    for query in queries:
        print(answer(query))
    return 0
