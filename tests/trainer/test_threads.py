"""--threads reaches the BLAS too: Debian's torch does its fp32 products in OpenBLAS
(libblas.so.3), whose own thread pool torch.set_num_threads does not size."""
import pytest
import torch

from conftest import THREADS
from headwise_trainer.threads import blas_threads, set_threads


def test_set_threads_sizes_torch_and_openblas():
    try:
        for n in (2, 1):
            set_threads(n)
            assert torch.get_num_threads() == n
            assert blas_threads() in (None, n)  # None: torch does not use OpenBLAS here
    finally:
        set_threads(THREADS)


def test_set_threads_refuses_zero():
    with pytest.raises(ValueError, match="threads must be >= 1"):
        set_threads(0)
