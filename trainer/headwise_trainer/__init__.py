"""headwise_trainer: the PyTorch reference of the headwise runtime (MarianMT with Hard Concrete
head gates), its checkpoint formats, and the pipeline around it: `headwise-train SUBCOMMAND`.

Packages (each imports only from those listed before it; cli.py and cli_support.py on top):
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
    greedy, beam_search, forced_logits, Hypothesis   model/decode.py
    export_checkpoint, load_checkpoint               model/checkpoint.py
    safetensors_io.read_file / write_file            model/safetensors_io.py
"""

from .model.checkpoint import CheckpointError, export_checkpoint, load_checkpoint, read_vocab
from .model.config import MarianConfig
from .model.decode import Hypothesis, beam_search, forced_logits, greedy
from .model.gates import (HeadGate, attach_gates, expected_l0, expected_l0_per_block, gate_values,
                    head_layout, head_masks, layout_summary, mask_from_layout, set_head_masks,
                    strip_heads)
from .model.marian import DecoderState, MarianMTModel
from .model.safetensors_io import SafetensorsError

__all__ = [
    "CheckpointError", "DecoderState", "HeadGate", "Hypothesis", "MarianConfig", "MarianMTModel",
    "SafetensorsError", "attach_gates", "beam_search", "expected_l0", "expected_l0_per_block",
    "export_checkpoint", "forced_logits", "gate_values", "greedy", "head_layout", "head_masks",
    "layout_summary", "load_checkpoint", "mask_from_layout", "read_vocab", "set_head_masks",
    "strip_heads",
]
