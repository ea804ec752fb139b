"""Area and leakage of a platform's components at its stated technology node and supply
(docs/models/area.md). This package owns the estimator: the published figures it rests on
(`sources.py`: Horowitz's 45 nm arithmetic, Aladdin's 40 nm leakage, CACTI 7.0 SRAM macros
in `cacti_sram.json`), node scaling after Stillmaker & Baas (`scaling.py`), the SRAM and logic
models (`sram.py`, `logic.py`), the per-component estimate (`estimate.py`: `platform_area`) and
the report it returns (`report.py`: `AreaReport`), plus the platform's `technology:` section
(`technology.py`). It imports only from `tlm_models.platform`, `tlm_models.energy`,
`tlm_models.errors` and `tlm_models.units`; runs, the CLI and `attn-tlm explore` read it.
"""
