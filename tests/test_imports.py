"""Importing the package, its API or the warm-up module loads no SystemC and runs nothing."""

from __future__ import annotations

import subprocess
import sys


def test_imports_have_no_side_effects() -> None:
    code = (
        "import sys, tlm_models, tlm_models.api, tlm_models.runtime.warm\n"
        "from tlm_models import Platform, simulate\n"
        "assert 'cppyy' not in sys.modules, 'SystemC was loaded at import'\n"
        "assert 'tlm_models.runtime.session' not in sys.modules, 'models loaded at import'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
