"""RunConfig, its command-line parsers, and grid expansion."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tlm_models.errors import UserError
from tlm_models.run.config import (
    DATAFLOWS,
    RunConfig,
    parse_dataflows,
    parse_int_list,
    parse_key_value,
    parse_seq_len,
    resolve_platform,
)
from tlm_models.study.grid import GridSpec, expand_grid, parse_swept_setting


def test_seq_len_accepts_plain_numbers_and_k_suffix() -> None:
    assert parse_seq_len("8192") == 8192
    assert parse_seq_len("8K") == 8192
    assert parse_seq_len("128k") == 131072
    assert parse_seq_len("1M") == 1 << 20  # the same parser as `bounds --seq-len`
    for bad in ("", "1.5K", "-8K", "0", "K"):
        with pytest.raises(UserError):
            parse_seq_len(bad)


def test_int_lists_parse_and_reject_duplicates_and_gaps() -> None:
    assert parse_int_list("8K,16K, 32K") == (8192, 16384, 32768)
    assert parse_int_list("64,128", "head dim") == (64, 128)
    with pytest.raises(UserError, match="listed twice"):
        parse_int_list("8K,8192")
    with pytest.raises(UserError, match="'x'"):
        parse_int_list("8K,x")
    with pytest.raises(UserError):
        parse_int_list("8K,,16K")


def test_dataflow_lists_are_validated_with_a_suggestion() -> None:
    assert parse_dataflows("standard,flash2") == ("standard", "flash2")
    assert parse_dataflows("all") == DATAFLOWS
    with pytest.raises(UserError, match="did you mean 'flash2'"):
        parse_dataflows("standard,flash")
    with pytest.raises(UserError, match="twice"):
        parse_dataflows("flat,flat")


def test_key_value_needs_a_dotted_key_and_a_value() -> None:
    assert parse_key_value("sram.capacity=64KiB") == ("sram.capacity", "64KiB")
    for bad in ("sram.capacity", "=1", "sram.capacity=", "1x=2"):
        with pytest.raises(UserError, match=r"key\.path=value"):
            parse_key_value(bad)


def test_config_validates_its_fields() -> None:
    with pytest.raises(UserError, match="unknown dataflow"):
        RunConfig.of("flashy", 8192, 64)
    with pytest.raises(UserError, match="seq_len"):
        RunConfig.of("standard", 0, 64)
    with pytest.raises(UserError, match="override"):
        RunConfig.of("standard", 8192, 64, overrides=("nonsense",))
    with pytest.raises(UserError, match=r"simulated fraction in \(0, 1\], found 0.001 and 0"):
        RunConfig.of("standard", 8192, 64, ff_max_fraction=0)
    with pytest.raises(UserError, match="error bound must be > 0"):
        RunConfig.of("standard", 8192, 64, ff_error_bound=-1.0)


def test_key_is_stable_and_distinguishes_every_field() -> None:
    base = RunConfig.of(
        "approx", 8192, 64, overrides=("sram.capacity=64KiB",), extra=(("degree", "2"),)
    )
    assert base.key() == RunConfig.from_dict(base.as_dict()).key()
    assert base == RunConfig.from_dict(base.as_dict())
    variants = [
        RunConfig.of("flat", 8192, 64, overrides=base.overrides, extra=base.extra),
        RunConfig.of("approx", 16384, 64, overrides=base.overrides, extra=base.extra),
        RunConfig.of("approx", 8192, 128, overrides=base.overrides, extra=base.extra),
        RunConfig.of("approx", 8192, 64, heads=2, overrides=base.overrides, extra=base.extra),
        RunConfig.of(
            "approx", 8192, 64, platform="p.yaml", overrides=base.overrides, extra=base.extra
        ),
        RunConfig.of("approx", 8192, 64, extra=base.extra),
        RunConfig.of("approx", 8192, 64, overrides=base.overrides, extra=(("degree", "3"),)),
        replace(base, ff_error_bound=1e-2),
        replace(base, ff_max_fraction=1.0),
    ]
    tight = replace(base, ff_error_bound=1e-4, ff_max_fraction=0.5)
    assert tight == RunConfig.from_dict(tight.as_dict())
    assert tight.key().endswith(" ff_error_bound=0.0001 ff_max_fraction=0.5")
    keys = {base.key(), *(v.key() for v in variants)}
    assert len(keys) == len(variants) + 1
    assert base.key() == (
        "dataflow=approx N=8192 d=64 heads=1 platform=platforms/attenio.yaml "
        "set:sram.capacity=64KiB param:degree=2"
    )


def test_platform_resolves_from_cwd_then_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "mine.yaml"
    own.write_text("x: 1\n")
    assert resolve_platform(str(own)) == own
    monkeypatch.chdir(tmp_path)
    assert resolve_platform("mine.yaml") == Path("mine.yaml")
    with pytest.raises(UserError, match="not found"):
        resolve_platform("platforms/nope.yaml")


def test_swept_setting_parses_value_lists() -> None:
    setting = parse_swept_setting("sram.capacity=64KiB,128KiB")
    assert setting.key == "sram.capacity"
    assert setting.values == ("64KiB", "128KiB")
    with pytest.raises(UserError, match="twice"):
        parse_swept_setting("sram.capacity=64KiB,64KiB")


def test_grid_is_the_cartesian_product_in_a_fixed_order() -> None:
    spec = GridSpec(
        dataflows=("standard", "attenio"),
        seq_lens=(8192, 16384),
        head_dims=(64, 128),
        platforms=("a.yaml", "b.yaml"),
        settings=(
            parse_swept_setting("sram.capacity=64KiB,128KiB"),
            parse_swept_setting("hbm.channels=8,16"),
        ),
    )
    configs = expand_grid(spec)
    assert len(configs) == 2 * 4 * 2 * 2 * 2
    assert len({c.key() for c in configs}) == len(configs)
    assert configs[0] == RunConfig.of(
        "standard",
        8192,
        64,
        platform="a.yaml",
        overrides=("sram.capacity=64KiB", "hbm.channels=8"),
    )
    assert configs[1].head_dim == 128 and configs[2].seq_len == 16384
    assert configs[4].dataflow == "attenio"
    assert configs[8].overrides == ("sram.capacity=64KiB", "hbm.channels=16")
    assert configs[-1].platform == "b.yaml"
    assert expand_grid(spec) == configs


def test_scoped_dataflow_params_apply_to_their_dataflow_only() -> None:
    spec = GridSpec(
        dataflows=("standard", "approx"),
        seq_lens=(8192,),
        head_dims=(64,),
        params=(parse_swept_setting("approx.degree=1,2", "--param"),),
    )
    configs = expand_grid(spec)
    assert [(c.dataflow, c.extra) for c in configs] == [
        ("standard", ()),
        ("approx", (("degree", "1"),)),
        ("approx", (("degree", "2"),)),
    ]


def test_grid_rejects_a_key_given_twice() -> None:
    spec = GridSpec(
        dataflows=("standard",),
        seq_lens=(8192,),
        head_dims=(64,),
        settings=(parse_swept_setting("a.b=1"), parse_swept_setting("a.b=2")),
    )
    with pytest.raises(UserError, match="given twice"):
        expand_grid(spec)
