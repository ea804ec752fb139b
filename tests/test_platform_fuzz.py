"""Fuzzing the platform loader and the --set parser: whatever the text, the outcome is a
validated platform or a UserError, each quickly -- never another exception, a hang or a
traceback."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tlm_models.errors import UserError
from tlm_models.platform import load_platform
from tlm_models.platform.overrides import parse_override

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "platforms" / "attenio.yaml"
FUZZ = settings(
    max_examples=150,
    deadline=None,  # the bound below is checked per example instead, with a clearer message
    suppress_health_check=[HealthCheck.too_slow],
)
#: Seconds one load may take, however hostile the file.
BOUND_S = 2.0

#: Pieces that YAML and the unit parser treat specially.
_PIECES = [
    "&a ", "*a", "&b [*a, *a, *a]", "[", "]", "{", "}", ": ", "- ", "\n", "  ", "#",
    "!!binary ", "!!python/object ", "<<: *a", "? ", "|", ">", "'", '"', "\t", "\0",
    "1e999999999", "-1e-999999", "0x", "18446744073709551616", "4294967296", ".inf",
    ".nan", " GB/s", " KiB", " ps", " THz", " Hz", " ns", "include: /dev/zero",
    "include: .", "type: hbm", "channels: ", "components:", "9" * 5000,
]  # fmt: skip
_TOKENS = st.sampled_from(_PIECES)
_TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(_TOKENS, st.text(max_size=8)), max_size=60).map("".join),
)


def _load(text: str | bytes, overrides: tuple[str, ...] = ()) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.yaml"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        (Path(tmp) / "parts").mkdir()
        part = ROOT / "platforms" / "parts" / "hbm-spec.yaml"
        (Path(tmp) / "parts" / part.name).write_text(part.read_text())
        started = time.monotonic()
        try:
            load_platform(path, overrides)
        except UserError as exc:
            assert "Traceback" not in str(exc)
        assert time.monotonic() - started < BOUND_S


@FUZZ
@given(_TEXT)
@example("!0")  # an unknown tag, found by this test
@example("=")  # YAML's 'value' tag
@example("a: !!python/object:os.system x")
def test_arbitrary_text(text: str) -> None:
    _load(text)


@FUZZ
@given(st.data())
def test_reference_platform_with_a_line_replaced(data: st.DataObject) -> None:
    lines = REFERENCE.read_text().splitlines()
    index = data.draw(st.integers(0, len(lines) - 1))
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    lines[index] = indent + data.draw(_TEXT)
    _load("\n".join(lines) + "\n")


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes(data: bytes) -> None:
    _load(data)


_KEY_NAMES = [
    "hbm.channels", "hbm.latency", "sram.capacity", "pe.clock", "hbm.channel_bandwidth",
    "dma.max_burst", "name", "components.hbm.size", "nope.x", "",
]  # fmt: skip
_KEYS = st.sampled_from(_KEY_NAMES)


@FUZZ
@given(st.one_of(_TEXT, st.tuples(_KEYS, _TEXT).map("=".join)))
def test_arbitrary_overrides(text: str) -> None:
    parsed = parse_override(text)
    assert parsed is not None
    _load(REFERENCE.read_text(), (text,))
