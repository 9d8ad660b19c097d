"""LRP rules as a modified gradient: relevance(t) = t * d(target)/dt for every tensor t.

If every operation's backward carries c = R / activation, then the relevance of any tensor is
its value times its (modified) gradient, and one backward pass per target gives the relevance of
every neuron. For a bias-free linear map the ordinary gradient already does that (LRP-0); the
other rules change the backward only:

  rule "attnlrp" (Achtibat et al. 2024):
    linear layers        epsilon rule: the gradient at the output is scaled by z / (z + eps
                         sign z); a bias keeps its share of the relevance (it is absorbed)
    softmax              R_in = x * (R_out - s * sum(R_out)): exactly the ordinary gradient x
                         input, so the plain softmax backward is kept
    Q K^T and A V        epsilon rule with the relevance split 50/50 between the two factors
                         (each factor's gradient halved)
    LayerNorm            std detached (a constant), so the normalisation is linear; identity
                         through the centring and scaling, epsilon rule on the affine part
    activations          identity rule: R_in = R_out (backward multiplies by f(x) / x)
  rule "z" (Ding et al. 2017 weight ratios, the rule of Voita et al. 2019):
    every weighted sum splits its relevance in proportion to its input contributions, the bias
    excluded (backward scaled by z / (z - b)), so nothing is absorbed; non-linearities pass
    relevance through (activations identity, LayerNorm std detached); the attention weights are
    the ratios of the context vector (A treated as a constant), so relevance reaches the values
    only, never the queries and keys
  rule None: the ordinary forward and backward (used for Michel scores and as the reference).
"""
from __future__ import annotations

from typing import Callable, Optional

import torch
import torch.nn.functional as F

RULES = ("attnlrp", "z")
EPSILON = 1e-6


def scale_grad(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """``x`` forward (exactly: the added term is factor * 0); the gradient multiplied by
    ``factor`` (a constant) backward. Plain tensor operations (no custom autograd.Function)."""
    base = x.detach()
    return base + factor.detach() * (x - base)


def _stabilise(d: torch.Tensor) -> torch.Tensor:
    return d + EPSILON * torch.where(d >= 0, torch.ones_like(d), -torch.ones_like(d))


def _ratio(z: torch.Tensor, denom: torch.Tensor) -> torch.Tensor:
    return (z / _stabilise(denom)).detach()


def weighted_sum(z: torch.Tensor, bias: Optional[torch.Tensor],
                 rule: Optional[str]) -> torch.Tensor:
    """The output ``z`` (bias included) of a weighted sum, with the rule's backward."""
    if rule == "attnlrp":
        return scale_grad(z, _ratio(z, z))
    if rule == "z" and bias is not None:
        return scale_grad(z, _ratio(z, z - bias))
    return z


def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
           rule: Optional[str]) -> torch.Tensor:
    return weighted_sum(F.linear(x, weight, bias), bias, rule)


def bilinear(a: torch.Tensor, b: torch.Tensor, rule: Optional[str],
             a_constant: bool = False) -> torch.Tensor:
    """a @ b. attnlrp: 50/50 split between the factors; z (a_constant): a is a constant."""
    if rule == "attnlrp":
        z = 0.5 * torch.matmul(a, b.detach()) + 0.5 * torch.matmul(a.detach(), b)
        return scale_grad(z, _ratio(z, z))
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
    """Elementwise x * weight + bias under the rule of a linear layer."""
    return weighted_sum(x * weight + bias, bias, rule)


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
