"""headwise_trainer: the PyTorch reference of the headwise runtime (MarianMT with Hard Concrete
head gates), its checkpoint formats, and the pipeline around it: `headwise-train SUBCOMMAND`.

Packages (each imports only from those listed before it; cli.py and cli_support.py on top):
    paths.py     where the trainer lives in the checkout
    threads.py   one thread count for torch and the OpenBLAS it calls (set_threads)
    data/        corpora (Debian archive, user text), data cards, SentencePiece vocabularies,
                 token batching
    model/       MarianConfig, MarianMTModel, head gates and layouts, decoding, checkpoints
                 (Hugging Face layout, safetensors, training-state files, averaging, import)
    evaluation/  BLEU/chrF (sacreBLEU's), evaluate and export, the runtime's Python module
    training/    the training loop (train.py) and what it uses: schedules, losses, dev
                 evaluation, logs, multi-process launch
    pruning/     L0 head pruning (training's loop with gate hooks), layouts scored
    analysis/    head analysis -> analysis.json
    sweep/       pruning experiments and the generated report
Each package's cli.py defines its subcommands; cli.py lists them and is the entry point.

Stable interface used by the rest of the project:
    MarianConfig                                     model/config.py
    MarianMTModel, DecoderState                      model/marian.py
    attach_gates, expected_l0, gate_values,
    head_layout, set_head_masks, head_masks, strip_heads        model/gates.py
    greedy, beam_search, forced_logits, Hypothesis,
    Sampling                                         model/decode.py
    export_checkpoint, load_checkpoint               model/checkpoint.py
    safetensors_io.read_file / write_file            model/safetensors_io.py
"""

# The names below are imported on first use (PEP 562), so that importing a submodule that needs
# no PyTorch (evaluation.metrics, evaluation.runtime_module, paths: what bench/bleu.py and the
# headwise worker of bench/compare_pytorch.py use) does not load torch, whose ~230 MiB would
# otherwise count in the runtime's measured peak RSS.
_EXPORTS = {
    "CheckpointError": "model.checkpoint", "export_checkpoint": "model.checkpoint",
    "load_checkpoint": "model.checkpoint", "read_vocab": "model.checkpoint",
    "MarianConfig": "model.config",
    "Hypothesis": "model.decode", "beam_search": "model.decode", "forced_logits": "model.decode",
    "greedy": "model.decode", "Sampling": "model.decode",
    "HeadGate": "model.gates", "attach_gates": "model.gates", "expected_l0": "model.gates",
    "expected_l0_per_block": "model.gates", "gate_values": "model.gates",
    "head_layout": "model.gates", "head_masks": "model.gates", "layout_summary": "model.gates",
    "mask_from_layout": "model.gates", "set_head_masks": "model.gates",
    "strip_heads": "model.gates",
    "DecoderState": "model.marian", "MarianMTModel": "model.marian",
    "SafetensorsError": "model.safetensors_io",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
