"""Hard Concrete head gates (Louizos et al. 2018, as used by Voita et al. 2019).

Every gated attention block owns a submodule ``head_gate`` with a parameter ``log_alpha``
[num_heads], saved as ``<block>.head_gate.log_alpha`` (block = e.g.
``model.encoder.layers.3.self_attn``). The gate scales each head's output before ``out_proj``.

Training forward: one noise sample per head, shared by the whole batch, drawn anew on every call:
    u ~ U(eps, 1 - eps),  s = sigmoid((log u - log(1 - u) + log_alpha) / tau),
    g = clamp(s * (r - l) + l, 0, 1)
Test time, by the gate's ``rule`` (an experiment parameter, MarianConfig.gate_rule, carried by
exported checkpoints as config.json "headwise_gate_rule" and applied by the converter):
    hard        g = 1.0 if log_alpha > 0 else 0.0 (the paper's rule: whichever of P(g = 0) and
                P(g = 1) is larger)
    continuous  g = clamp(sigmoid(log_alpha) * (r - l) + l, 0, 1) (the reference code's
                deterministic gate without its final rounding): a head is removed where g is
                exactly 0 (log_alpha <= -log 11), a kept head's output is scaled by g, which the
                converter folds into its out_proj columns.
A gate has settled when no log_alpha lies within a margin of 0 (``unsettled``): its hard
decision no longer depends on the last few noisy updates.
Expected L0 (probability that a gate is non-zero): sigmoid(log_alpha - tau * log(-l / r)).
``expected_l0(model)`` is the SUM of that probability over every gated head of the model (the
reference code averages per-layer sums instead; divide by the number of gated blocks to get it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import torch
from torch import nn

from .config import GATE_RULES
from .marian import MarianAttention, MarianMTModel

TAU = 0.33
LIMIT_LOW = -0.1
LIMIT_HIGH = 1.1
EPS = 1e-6
L0_SHIFT = TAU * math.log(-LIMIT_LOW / LIMIT_HIGH)
# log_alpha 3.0 starts the gates open: P(g != 0) = sigmoid(3 - L0_SHIFT) = 0.978, hard gate 1,
# continuous gate 1.0 (the reference code starts near 0: P(g != 0) 0.69, continuous gate 0.5).
DEFAULT_INIT_LOG_ALPHA = 3.0
DEFAULT_SETTLE_MARGIN = 1.0  # |log_alpha| below this: not settled

KINDS = ("encoder_self", "decoder_self", "decoder_cross")


def check_rule(rule: str) -> str:
    if rule not in GATE_RULES:
        raise ValueError(f"gate rule {rule!r}: expected one of {', '.join(GATE_RULES)}")
    return rule


def test_time_gates(log_alpha: torch.Tensor, rule: str) -> torch.Tensor:
    """The test-time gate values [num_heads] of ``log_alpha`` under ``rule`` (float32)."""
    la = log_alpha.detach().to(torch.float32)
    if check_rule(rule) == "hard":
        return (la > 0).to(torch.float32)
    return torch.clamp(torch.sigmoid(la) * (LIMIT_HIGH - LIMIT_LOW) + LIMIT_LOW, 0.0, 1.0)


class HeadGate(nn.Module):
    def __init__(self, num_heads: int, init_log_alpha: float = DEFAULT_INIT_LOG_ALPHA,
                 rule: str = "hard"):
        super().__init__()
        self.log_alpha = nn.Parameter(torch.full((num_heads,), float(init_log_alpha)))
        self.fixed = False  # True: the test-time 0/1 gates in training too (fixed_gates())
        self.rule = check_rule(rule)  # the test-time rule (not saved: MarianConfig.gate_rule)

    def sample(self, generator: Optional[torch.Generator] = None) -> torch.Tensor:
        """A training sample of the gates, [num_heads] in [0, 1], differentiable in log_alpha."""
        u = torch.rand(self.log_alpha.shape, generator=generator,
                       device=self.log_alpha.device) * (1.0 - 2.0 * EPS) + EPS
        s = torch.sigmoid((torch.log(u) - torch.log(1.0 - u) + self.log_alpha) / TAU)
        return torch.clamp(s * (LIMIT_HIGH - LIMIT_LOW) + LIMIT_LOW, 0.0, 1.0)

    def eval_gates(self) -> torch.Tensor:
        """Test-time gates under self.rule (hard: exactly 1.0 where log_alpha > 0, else 0.0)."""
        return test_time_gates(self.log_alpha, self.rule)

    def expected_l0(self) -> torch.Tensor:
        """P(g != 0) per head, differentiable."""
        return torch.sigmoid(self.log_alpha - L0_SHIFT)

    def forward(self) -> torch.Tensor:
        return self.sample() if self.training and not self.fixed else self.eval_gates()


FIXED_LOG_ALPHA = 10.0  # |log_alpha| of fixed gates: kept heads +10, removed heads -10


def fixed_gates(model: MarianMTModel, layout: Mapping[str, Sequence[int]]) -> None:
    """Puts a frozen 0/1 gate on every attention block: the heads ``layout`` lists for a block
    are kept (log_alpha +10), the others removed (-10); blocks it does not list keep every head.
    The gates never sample and have no gradient (requires_grad False), so training with them is
    training that head layout from scratch; the saved log_alpha make exported checkpoints and
    converted models strip the removed heads as for a pruned model."""
    for name, _, _, attn in _blocks(model):
        if attn.head_gate is not None:
            raise ValueError(f"{name} already has a head gate")
        kept = set(layout.get(name, range(attn.num_heads)))
        bad = sorted(h for h in kept if not 0 <= h < attn.num_heads)
        if bad:
            raise ValueError(f"{name}: head {bad[0]} outside [0, {attn.num_heads})")
        gate = HeadGate(attn.num_heads)
        with torch.no_grad():
            gate.log_alpha.copy_(torch.tensor([FIXED_LOG_ALPHA if h in kept else -FIXED_LOG_ALPHA
                                               for h in range(attn.num_heads)]))
        gate.log_alpha.requires_grad_(False)
        gate.fixed = True
        gate.train(attn.training)
        attn.head_gate = gate


def set_rule(model: MarianMTModel, rule: str) -> None:
    """Makes ``rule`` the test-time rule of every gate of ``model`` and of its config."""
    model.config.gate_rule = check_rule(rule)
    for gate in gates(model).values():
        gate.rule = rule


def unsettled(model: MarianMTModel, margin: float = DEFAULT_SETTLE_MARGIN) -> Dict[str, List[int]]:
    """Gated block -> heads whose |log_alpha| < margin (fixed gates never count); only blocks
    with such heads are listed."""
    out = {}
    for name, gate in gates(model).items():
        if gate.fixed:
            continue
        heads = [h for h, a in enumerate(gate.log_alpha.detach().tolist()) if abs(a) < margin]
        if heads:
            out[name] = heads
    return out


def _blocks(model: MarianMTModel) -> Iterator[Tuple[str, str, int, MarianAttention]]:
    return model.attention_blocks()


def attach_gates(model: MarianMTModel, encoder_self: bool = True, decoder_self: bool = True,
                 decoder_cross: bool = True,
                 init_log_alpha: float = DEFAULT_INIT_LOG_ALPHA) -> List[str]:
    """Adds a HeadGate to every block of the chosen kinds; returns the gated block names.
    A block that already has a gate is an error (load_checkpoint restores saved gates)."""
    wanted = {"encoder_self": encoder_self, "decoder_self": decoder_self,
              "decoder_cross": decoder_cross}
    names = []
    for name, kind, _, attn in _blocks(model):
        if not wanted[kind]:
            continue
        if attn.head_gate is not None:
            raise ValueError(f"{name} already has a head gate")
        gate = HeadGate(attn.num_heads, init_log_alpha, model.config.gate_rule)
        gate.train(attn.training)
        attn.head_gate = gate.to(attn.q_proj.weight.device)
        names.append(name)
    return names


def gates(model: MarianMTModel) -> Dict[str, HeadGate]:
    """Block name -> HeadGate for the gated blocks, in canonical order."""
    return {name: a.head_gate for name, _, _, a in _blocks(model) if a.head_gate is not None}


def expected_l0(model: MarianMTModel) -> torch.Tensor:
    """Sum over all gated heads of P(g != 0); a differentiable scalar (0 without gates)."""
    total = torch.zeros((), device=model.model.shared.weight.device)
    for gate in gates(model).values():
        total = total + gate.expected_l0().sum()
    return total


def expected_l0_per_block(model: MarianMTModel) -> Dict[str, torch.Tensor]:
    return {name: gate.expected_l0().sum() for name, gate in gates(model).items()}


def gate_values(model: MarianMTModel) -> Dict[str, torch.Tensor]:
    """Block name -> test-time gate values [num_heads] of every gated block (0.0 / 1.0 under
    the hard rule)."""
    return {name: gate.eval_gates() for name, gate in gates(model).items()}


def head_layout(model: MarianMTModel) -> Dict[str, List[int]]:
    """Block name -> ascending indices of the heads kept: a test-time gate above 0 for gated
    blocks (log_alpha > 0 under the hard rule), every head for blocks without a gate. Covers
    every block in canonical order."""
    layout = {}
    for name, _, _, attn in _blocks(model):
        if attn.head_gate is None:
            layout[name] = list(range(attn.num_heads))
        else:
            layout[name] = [i for i, g in enumerate(attn.head_gate.eval_gates().tolist()) if g > 0]
    return layout


def gate_masks(model: MarianMTModel) -> Dict[str, List[float]]:
    """Block name -> the test-time multiplier of every head: the gate values of gated blocks,
    1.0 for blocks without a gate (what the model computes in eval mode, as head masks)."""
    return {name: (attn.head_gate.eval_gates().tolist() if attn.head_gate is not None
                   else [1.0] * attn.num_heads) for name, _, _, attn in _blocks(model)}


def layout_summary(model: MarianMTModel, layout: Optional[Mapping[str, Sequence[int]]] = None) -> str:
    """One line per kind, e.g. "encoder_self: 3/4 0/4 4/4 (7/12)"."""
    layout = head_layout(model) if layout is None else layout
    lines = []
    for kind in KINDS:
        parts, kept, total = [], 0, 0
        for name, k, _, attn in _blocks(model):
            if k == kind:
                n = len(layout[name])
                parts.append(f"{n}/{attn.num_heads}")
                kept, total = kept + n, total + attn.num_heads
        lines.append(f"{kind}: {' '.join(parts)} ({kept}/{total})")
    return "\n".join(lines)


def set_head_masks(model: MarianMTModel, masks: Optional[Mapping[str, Sequence[float]]]) -> None:
    """Fixed per-head multipliers for evaluation (e.g. 0 to switch a head off), applied on top of
    any gate. Blocks not named get no mask; ``None`` clears every mask. Masks are not saved."""
    masks = dict(masks or {})
    blocks = {name: attn for name, _, _, attn in _blocks(model)}
    unknown = sorted(set(masks) - set(blocks))
    if unknown:
        raise ValueError(f"set_head_masks: unknown attention block {unknown[0]!r}; expected names "
                         f"like {next(iter(blocks))!r}")
    for name, attn in blocks.items():
        if name not in masks:
            attn.head_mask = None
            continue
        m = torch.as_tensor(masks[name], dtype=torch.float32).flatten()
        if m.numel() != attn.num_heads:
            raise ValueError(f"set_head_masks: {name} has {attn.num_heads} heads, mask has "
                             f"{m.numel()} values")
        attn.head_mask = m


def mask_from_layout(model: MarianMTModel,
                     layout: Mapping[str, Sequence[int]]) -> Dict[str, List[float]]:
    """0/1 masks keeping exactly the heads listed per block (blocks not listed keep all)."""
    out = {}
    for name, _, _, attn in _blocks(model):
        kept = set(layout.get(name, range(attn.num_heads)))
        out[name] = [1.0 if h in kept else 0.0 for h in range(attn.num_heads)]
    return out


@contextlib.contextmanager
def head_masks(model: MarianMTModel, masks: Mapping[str, Sequence[float]]):
    """``with head_masks(model, {...}):`` applies masks, restoring the previous ones after."""
    previous = {name: attn.head_mask for name, _, _, attn in _blocks(model)}
    set_head_masks(model, masks)
    try:
        yield model
    finally:
        for name, _, _, attn in _blocks(model):
            attn.head_mask = previous[name]


def strip_heads(model: MarianMTModel,
                layout: Optional[Mapping[str, Sequence[int]]] = None) -> MarianMTModel:
    """A new model (eval mode, no gates) holding only the kept heads of each block: rows of
    q/k/v_proj and columns of out_proj. ``layout`` defaults to head_layout(model), and then
    each kept head's out_proj columns are multiplied by its test-time gate (1.0 under the hard
    rule; the converter folds the same), so the result computes what ``model`` computes in eval
    mode. An explicit ``layout`` keeps the columns as they are (0/1 gates)."""
    scales = gate_masks(model) if layout is None else None
    layout = head_layout(model) if layout is None else layout
    stripped = MarianMTModel(dataclasses.replace(model.config, gate_rule="hard"))
    new_blocks = {}
    for name, _, _, attn in _blocks(stripped):
        kept = sorted(set(layout[name]))
        if kept and (kept[0] < 0 or kept[-1] >= attn.num_heads):
            raise ValueError(f"strip_heads: {name} kept heads {kept} outside [0, {attn.num_heads})")
        new_blocks[name] = MarianAttention(attn.embed_dim, len(kept), attn.head_dim, attn.dropout)
    for name, new in new_blocks.items():
        parent_name, _, child = name.rpartition(".")
        setattr(stripped.get_submodule(parent_name), child, new)
    source = dict(model.named_modules())
    with torch.no_grad():
        own = model.state_dict()
        target = stripped.state_dict(keep_vars=True)
        for name, param in target.items():
            if name.rsplit(".", 2)[0] in new_blocks:
                continue
            param.copy_(own[name])
        for name, new in new_blocks.items():
            old = source[name]
            rows = torch.cat([torch.arange(h * old.head_dim, (h + 1) * old.head_dim)
                              for h in sorted(set(layout[name]))] or [torch.zeros(0, dtype=torch.long)])
            for proj in ("q_proj", "k_proj", "v_proj"):
                getattr(new, proj).weight.copy_(getattr(old, proj).weight[rows])
                getattr(new, proj).bias.copy_(getattr(old, proj).bias[rows])
            cols = old.out_proj.weight[:, rows]
            if scales is not None and cols.numel():
                per_head = torch.tensor([scales[name][h] for h in sorted(set(layout[name]))])
                cols = cols * per_head.repeat_interleave(old.head_dim)[None, :]
            new.out_proj.weight.copy_(cols)
            new.out_proj.bias.copy_(old.out_proj.bias)
    return stripped.eval()
