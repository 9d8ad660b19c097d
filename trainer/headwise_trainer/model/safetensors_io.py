"""Reading and writing the safetensors format (F32, F16, BF16) without the safetensors library.

Layout: an 8-byte little-endian header length N, N bytes of JSON header, then the raw data.
The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
relative to the data start) and may hold "__metadata__" (string -> string). Data is little-endian
and row-major; the tensors tile the data region exactly, without gaps or overlaps. The writer
pads the header with spaces to a multiple of 8 bytes, as the reference implementation does.

Every malformed file raises SafetensorsError naming the file, what was expected and what was found.
"""

from __future__ import annotations

import json
import math
import os
from typing import Dict, Mapping, Optional, Tuple

import numpy as np
import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
NAMES = {v: k for k, v in DTYPES.items()}
ITEM_SIZE = {"F32": 4, "F16": 2, "BF16": 2}
_NUMPY_RAW = {"F32": "<f4", "F16": "<f2", "BF16": "<i2"}
MAX_HEADER_BYTES = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    pass


def _tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype(_NUMPY_RAW[NAMES[t.dtype]]).tobytes()


def serialize(tensors: Mapping[str, torch.Tensor],
              metadata: Optional[Mapping[str, str]] = None) -> bytes:
    """The file image of ``tensors`` (each kept in its own dtype: float32, float16 or bfloat16)."""
    header: Dict[str, object] = {}
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise SafetensorsError(f"__metadata__ must map strings to strings, found "
                                       f"{k!r}: {v!r}")
        header["__metadata__"] = dict(metadata)
    chunks, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name]
        if name == "__metadata__":
            raise SafetensorsError("a tensor cannot be named __metadata__")
        if t.dtype not in NAMES:
            raise SafetensorsError(f"{name}: dtype {t.dtype} not supported; expected "
                                   f"float32, float16 or bfloat16")
        data = _tensor_bytes(t)
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def write_file(path: "os.PathLike[str] | str", tensors: Mapping[str, torch.Tensor],
               metadata: Optional[Mapping[str, str]] = None) -> None:
    with open(path, "wb") as f:
        f.write(serialize(tensors, metadata))


def parse_header(buf: bytes, where: str = "safetensors") -> Tuple[Dict[str, dict], Dict[str, str], int]:
    """Validates the header of the file image ``buf``; returns (entries, metadata, data_start)."""
    if len(buf) < 8:
        raise SafetensorsError(f"{where}: file is {len(buf)} bytes, expected at least 8 (header "
                               f"length)")
    n = int.from_bytes(buf[:8], "little")
    if n > MAX_HEADER_BYTES or n > len(buf) - 8:
        raise SafetensorsError(f"{where}: header length {n} exceeds the file ({len(buf) - 8} bytes "
                               f"after the length field) or the {MAX_HEADER_BYTES}-byte limit; "
                               f"truncated or not a safetensors file")
    try:
        header = json.loads(buf[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorsError(f"{where}: header is not valid UTF-8 JSON ({e})") from e
    if not isinstance(header, dict):
        raise SafetensorsError(f"{where}: header must be a JSON object, found "
                               f"{type(header).__name__}")
    metadata = header.pop("__metadata__", {}) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise SafetensorsError(f"{where}: __metadata__ must map strings to strings")
    data_len = len(buf) - 8 - n
    spans = []
    for name, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise SafetensorsError(f"{where}: tensor {name!r}: expected keys dtype, shape, "
                                   f"data_offsets, found {e!r}")
        if e["dtype"] not in DTYPES:
            raise SafetensorsError(f"{where}: tensor {name!r}: dtype {e['dtype']!r} not supported; "
                                   f"expected one of {', '.join(DTYPES)}")
        shape, offs = e["shape"], e["data_offsets"]
        if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise SafetensorsError(f"{where}: tensor {name!r}: shape must be a list of "
                                   f"non-negative integers, found {shape!r}")
        if (not isinstance(offs, list) or len(offs) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offs)
                or not 0 <= offs[0] <= offs[1]):
            raise SafetensorsError(f"{where}: tensor {name!r}: data_offsets must be [begin, end] "
                                   f"with 0 <= begin <= end, found {offs!r}")
        expected = math.prod(shape) * ITEM_SIZE[e["dtype"]]
        if offs[1] - offs[0] != expected:
            raise SafetensorsError(f"{where}: tensor {name!r}: {e['dtype']} {shape} needs "
                                   f"{expected} bytes, data_offsets {offs} span "
                                   f"{offs[1] - offs[0]}")
        if offs[1] > data_len:
            raise SafetensorsError(f"{where}: tensor {name!r}: data_offsets {offs} end past the "
                                   f"data region ({data_len} bytes); file truncated?")
        spans.append((offs[0], offs[1], name))
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            kind = "overlaps the previous tensor" if begin < position else "leaves a gap"
            raise SafetensorsError(f"{where}: tensor {name!r} at byte {begin} {kind} (expected "
                                   f"it at {position})")
        position = end
    if position != data_len:
        raise SafetensorsError(f"{where}: tensors cover {position} data bytes, the file has "
                               f"{data_len}")
    return header, metadata, 8 + n


def deserialize(buf: bytes, where: str = "safetensors") -> Tuple[Dict[str, torch.Tensor], Dict[str, str]]:
    header, metadata, start = parse_header(buf, where)
    tensors = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        raw = np.frombuffer(buf, dtype=_NUMPY_RAW[e["dtype"]], offset=start + b,
                            count=(end - b) // ITEM_SIZE[e["dtype"]])
        t = torch.from_numpy(raw.astype(raw.dtype.newbyteorder("=")).copy())
        if e["dtype"] == "BF16":
            t = t.view(torch.bfloat16)
        tensors[name] = t.reshape(e["shape"])
    return tensors, metadata


def read_file(path: "os.PathLike[str] | str") -> Tuple[Dict[str, torch.Tensor], Dict[str, str]]:
    """(name -> tensor in the file's dtype, metadata)."""
    with open(path, "rb") as f:
        buf = f.read()
    return deserialize(buf, str(path))
