"""The command table of `attn-tlm`: lazy imports, and each command registered by its module."""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys

from tlm_models.cli import main as cli_main


def test_command_table_matches_what_each_module_registers() -> None:
    registered: dict[str, str | None] = {}
    for module in dict.fromkeys(c.module for c in cli_main.COMMANDS.values()):
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        for action in sub._choices_actions:
            registered[action.dest] = action.help
            assert cli_main.COMMANDS[action.dest].module == module
    assert registered == {name: c.help for name, c in cli_main.COMMANDS.items()}


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from tlm_models.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('numpy', 'matplotlib', 'yaml', 'cppyy', 'tlm_models.cli.run_cmd')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    for name in cli_main.COMMANDS:
        assert name in out.stdout


def test_a_command_imports_only_its_own_module() -> None:
    parser = cli_main.build_parser("bounds")
    args = parser.parse_args(["bounds", "--seq-len", "1K", "--head-dim", "64"])
    assert args.func.__module__ == "tlm_models.cli.bounds_cmd"
    # The other commands are placeholders: they parse but carry no handler.
    assert not hasattr(parser.parse_args(["report"]), "func")


def test_commands_run_numpy_on_one_blas_thread_unless_the_user_says_otherwise() -> None:
    code = (
        "import os\n"
        "from tlm_models.cli.main import main\n"
        "main(['bounds', '--seq-len', '1K', '--head-dim', '64'])\n"
        "import numpy\n"
        "threads = [l for l in open('/proc/self/status') if l.startswith('Threads:')]\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), threads[0].split()[1])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    # No BLAS worker threads beside the main one (OpenBLAS would start one per extra core).
    assert out.stdout.split()[-2:] == ["1", "1"]
    env["OPENBLAS_NUM_THREADS"] = "2"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split()[-2] == "2"
