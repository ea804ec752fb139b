"""Where the header-only C++ models are: ``-I`` this directory to include ``tlm_models/*.h``."""

from __future__ import annotations

from pathlib import Path

#: Directory of the header-only C++ models (``-I`` this to include ``tlm_models/*.h``).
INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"
