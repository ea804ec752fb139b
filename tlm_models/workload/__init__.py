"""The workload: the attention computation a run asks for.

Owns ``Workload`` (sequence lengths, head dimension, heads, batch, mask, phase; ``spec``), model
presets (``model_presets``) and Hugging Face config files (``hf_config``). It may import
``platform.info``, ``files``, ``units`` and ``errors``; dataflows and the run core build on it.
"""
