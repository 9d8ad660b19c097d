"""headwise_trainer: the PyTorch reference of the headwise runtime (MarianMT with Hard Concrete
head gates), checkpoint I/O, and (data, spm, train, metrics) the training pipeline.

Stable interface used by the rest of the project:
    MarianConfig                                     config.py
    MarianMTModel, DecoderState                      model.py
    attach_gates, expected_l0, gate_values,
    head_layout, set_head_masks, head_masks, strip_heads        gates.py
    greedy, beam_search, forced_logits, Hypothesis   decode.py
    export_checkpoint, load_checkpoint               checkpoint.py
    safetensors_io.read_file / write_file            safetensors_io.py
"""

from .checkpoint import CheckpointError, export_checkpoint, load_checkpoint, read_vocab
from .config import MarianConfig
from .decode import Hypothesis, beam_search, forced_logits, greedy
from .gates import (HeadGate, attach_gates, expected_l0, expected_l0_per_block, gate_values,
                    head_layout, head_masks, layout_summary, mask_from_layout, set_head_masks,
                    strip_heads)
from .model import DecoderState, MarianMTModel
from .safetensors_io import SafetensorsError

__all__ = [
    "CheckpointError", "DecoderState", "HeadGate", "Hypothesis", "MarianConfig", "MarianMTModel",
    "SafetensorsError", "attach_gates", "beam_search", "expected_l0", "expected_l0_per_block",
    "export_checkpoint", "forced_logits", "gate_values", "greedy", "head_layout", "head_masks",
    "layout_summary", "load_checkpoint", "mask_from_layout", "read_vocab", "set_head_masks",
    "strip_heads",
]
