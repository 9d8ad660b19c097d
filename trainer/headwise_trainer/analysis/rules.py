"""LRP rules as a modified gradient: relevance(t) = t * d(target)/dt for every tensor t.

If every operation's backward carries c = R / activation, then the relevance of any tensor is
its value times its (modified) gradient, and one backward pass per target gives the relevance of
every neuron. For a bias-free linear map the ordinary gradient already does that (LRP-0); the
other rules change the backward only:

  rule "attnlrp" (Achtibat et al. 2024):
    linear layers        epsilon rule: the gradient at the output is scaled by z / (z + eps
                         sign z), eps = EPSILON; a bias keeps its share of the relevance (it is
                         absorbed)
    softmax              R_in = x * (R_out - s * sum(R_out)): exactly the ordinary gradient x
                         input, so the plain softmax backward is kept
    Q K^T and A V        epsilon rule with the relevance split 50/50 between the two factors
                         (each factor's gradient halved)
    LayerNorm            std detached (a constant), so the normalisation is linear; identity
                         through the centring and scaling, epsilon rule on the affine part
    activations          identity rule: R_in = R_out (backward multiplies by f(x) / x)
  rule "z" (Ding et al. 2017 weight ratios, the rule of Voita et al. 2019):
    every weighted sum z = zb + b splits its relevance in proportion to its input
    contributions, the bias excluded, so the bias absorbs nothing; the denominator zb (the sum
    of the contributions) is stabilised as in the epsilon rule, with an epsilon on the scale of
    the layer: the backward is scaled by z / (zb + e sign zb), e = Z_EPSILON * mean |zb| over
    the layer's outputs at that position (+ EPSILON, so that an all-zero output stays finite).
    Non-linearities pass relevance through (activations identity, LayerNorm std detached); the
    attention weights are the ratios of the context vector (A treated as a constant), so
    relevance reaches the values only, never the queries and keys
  rule None: the ordinary forward and backward (used for Michel scores and as the reference).

Why the z-rule needs a relative epsilon: its ratio z / zb is unbounded where the contributions
nearly cancel while the bias does not (a LayerNorm affine output x * gamma + beta with x * gamma
near 0 is the common case: the whole output's relevance is forced into a near-zero input and
comes back as huge values of both signs through the centring). With e as above every backward
factor is bounded, |z / (zb + e sign zb)| <= 1 + |b| / e, whatever the input; the price is that
each weighted sum keeps the share e / (|zb| + e) of its relevance (about Z_EPSILON for a typical
output, most of it for an output far smaller than the layer's mean). A scale-free e makes the
rule invariant to rescaling a layer's activations, which an absolute one is not. Tape (below)
records what every stabilised sum absorbs, so conservation can be checked exactly.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Tuple

import torch
import torch.nn.functional as F

RULES = ("attnlrp", "z")
EPSILON = 1e-6     # attnlrp: absolute epsilon on z; z-rule: floor of e
Z_EPSILON = 0.01   # z-rule: e relative to mean |zb| of the layer's outputs


@dataclass
class Tape:
    """What the stabilised weighted sums of one forward keep: per sum, its output ``out``
    (differentiate the target with respect to it for its relevance out * grad) and ``share``,
    the part of that relevance that does not reach the inputs. ``label`` (set by the caller with
    ``mark``) tags the entries that follow, e.g. ("encoder", 3)."""
    label: object = None
    entries: List[Tuple[object, torch.Tensor, torch.Tensor]] = field(default_factory=list)


_tape: Optional[Tape] = None


@contextlib.contextmanager
def taping() -> Iterator[Tape]:
    """Records the stabilised sums of the forward passes run inside (tests and diagnostics)."""
    global _tape
    previous, _tape = _tape, Tape()
    try:
        yield _tape
    finally:
        _tape = previous


def mark(label: object) -> None:
    """Tags the stabilised sums recorded from now on (no-op unless ``taping``)."""
    if _tape is not None:
        _tape.label = label


def scale_grad(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """``x`` forward (exactly: the added term is factor * 0); the gradient multiplied by
    ``factor`` (a constant) backward. Plain tensor operations (no custom autograd.Function)."""
    base = x.detach()
    return base + factor.detach() * (x - base)


def _signed(d: torch.Tensor, e) -> torch.Tensor:
    """d + e * sign(d), sign(0) = +1: |result| >= e."""
    return d + e * torch.where(d >= 0, torch.ones_like(d), -torch.ones_like(d))


def _stabilised(z: torch.Tensor, ratio: torch.Tensor, share: torch.Tensor) -> torch.Tensor:
    out = scale_grad(z, ratio)
    if _tape is not None:
        _tape.entries.append((_tape.label, out, share.detach()))
    return out


def z_epsilon(zb: torch.Tensor) -> torch.Tensor:
    """The z-rule's e for the bias-free sums ``zb`` [..., outputs]: one per position."""
    return Z_EPSILON * zb.detach().abs().mean(dim=-1, keepdim=True) + EPSILON


def weighted_sum(z: torch.Tensor, bias: Optional[torch.Tensor], rule: Optional[str],
                 zb: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The output ``z`` [..., outputs] (bias included) of a weighted sum, with the rule's
    backward. The z-rule needs ``zb``, the same sum without the bias (computed directly: z - b
    would cancel where it matters), when there is a bias."""
    if rule == "attnlrp":
        d = _signed(z.detach(), EPSILON)
        # inputs get zb / d of the relevance; the bias and epsilon the rest, (b + e) / d
        kept = (d - z.detach()) if bias is None else (d - z.detach() + bias)
        return _stabilised(z, z.detach() / d, kept / d)
    if rule == "z" and bias is not None:
        if zb is None:
            raise ValueError("the z-rule needs the weighted sum without its bias (zb)")
        zb = zb.detach()
        d = _signed(zb, z_epsilon(zb))
        return _stabilised(z, z.detach() / d, (d - zb) / d)
    return z


def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
           rule: Optional[str]) -> torch.Tensor:
    z = F.linear(x, weight, bias)
    zb = None
    if rule == "z" and bias is not None:
        with torch.no_grad():
            zb = F.linear(x, weight)
    return weighted_sum(z, bias, rule, zb)


def bilinear(a: torch.Tensor, b: torch.Tensor, rule: Optional[str],
             a_constant: bool = False) -> torch.Tensor:
    """a @ b. attnlrp: 50/50 split between the factors; z (a_constant): a is a constant."""
    if rule == "attnlrp":
        z = 0.5 * torch.matmul(a, b.detach()) + 0.5 * torch.matmul(a.detach(), b)
        return weighted_sum(z, None, rule)
    if rule == "z" and a_constant:
        return torch.matmul(a.detach(), b)
    return torch.matmul(a, b)


def layer_norm(x: torch.Tensor, ln: torch.nn.LayerNorm, rule: Optional[str]) -> torch.Tensor:
    if rule is None:
        return ln(x)
    centred = x - x.mean(dim=-1, keepdim=True)
    std = torch.sqrt(centred.pow(2).mean(dim=-1, keepdim=True) + ln.eps).detach()
    return linear_affine(centred / std, ln.weight, ln.bias, rule)


def linear_affine(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                  rule: Optional[str]) -> torch.Tensor:
    """Elementwise x * weight + bias under the rule of a linear layer (one contribution per
    output, so the z-rule's mean |zb| is over the normalised features)."""
    zb = x * weight
    return weighted_sum(zb + bias, bias, rule, zb)


def activation(x: torch.Tensor, fn: Callable[[torch.Tensor], torch.Tensor],
               rule: Optional[str]) -> torch.Tensor:
    """fn(x); under an LRP rule its backward is the identity rule (multiplies by fn(x) / x)."""
    y = fn(x)
    if rule is None:
        return y
    if fn is F.silu:  # silu(x) / x = sigmoid(x), no division needed
        ratio = torch.sigmoid(x)
    else:
        safe = torch.where(x == 0, torch.ones_like(x), x)
        ratio = torch.where(x == 0, torch.zeros_like(x), y / safe)
    return x * ratio.detach()
