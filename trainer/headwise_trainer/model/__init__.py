"""The PyTorch reference model (MarianMT with Hard Concrete head gates), head layouts, decoding,
and every checkpoint format it reads and writes (Hugging Face layout, safetensors, training-
state files, averaging, start points)."""
