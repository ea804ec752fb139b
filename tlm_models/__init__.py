"""attn-tlm: SystemC TLM-2.0 models of attention accelerators, driven from Python.

Importing the package is cheap: SystemC and cppyy load on the first simulation
(see ``tlm_models.kernel``).
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

#: Directory of the header-only C++ models (``-I`` this to include ``tlm_models/*.h``).
INCLUDE_DIR = Path(__file__).resolve().parent / "include"
