"""One thread count for everything that computes in a trainer process: torch's intra-op pool and
the BLAS library that torch calls for float32 products.

Debian's torch 1.13 is built with BLAS_INFO=generic: its fp32 matrix products go to
libblas.so.3, which the alternatives system points at OpenBLAS (libopenblas0-pthread, see
scripts/setup.sh). OpenBLAS keeps its own pthread pool, sized to every core, and
torch.set_num_threads does not reach it. So `--threads 1` ran fp32 products on every core, and
the pruning study's two one-thread processes ran four busy threads on two cores (bf16 autocast
goes through oneDNN, which follows torch's setting). set_threads sets both.
"""
from __future__ import annotations

import ctypes
import os
from typing import Optional

import torch


def _openblas() -> Optional[ctypes.CDLL]:
    """The OpenBLAS that torch calls, or None when the BLAS is another library (the reference
    BLAS of DEVELOPERS.md, MKL in PyPI's torch, which follows torch.set_num_threads)."""
    try:  # only the libblas.so.3 that torch has loaded (RTLD_NOLOAD: never load one here)
        lib = ctypes.CDLL("libblas.so.3", mode=os.RTLD_NOLOAD)
    except OSError:
        return None
    return lib if hasattr(lib, "openblas_set_num_threads") else None


def set_threads(n: int) -> None:
    """torch's intra-op threads and OpenBLAS's (where torch uses it) to n (>= 1)."""
    if n < 1:
        raise ValueError(f"threads must be >= 1, found {n}")
    torch.set_num_threads(n)
    lib = _openblas()
    if lib is not None:
        lib.openblas_set_num_threads(ctypes.c_int(n))


def blas_threads() -> Optional[int]:
    """OpenBLAS's thread count, or None when torch does not use OpenBLAS."""
    lib = _openblas()
    return None if lib is None else int(lib.openblas_get_num_threads())
