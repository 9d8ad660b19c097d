import json
import struct

import pytest
import torch

from headwise_trainer.model import safetensors_io as st
from headwise_trainer.model.safetensors_io import SafetensorsError


def sample_tensors():
    g = torch.Generator().manual_seed(0)
    return {
        "a.weight": torch.randn(3, 5, generator=g),
        "b.bias": torch.randn(7, generator=g).half(),
        "c": torch.randn(2, 2, 2, generator=g).bfloat16(),
        "empty": torch.zeros(0, 4),
        "scalar": torch.tensor(1.5),
    }


def test_round_trip_is_bit_exact(tmp_path):
    tensors = sample_tensors()
    st.write_file(tmp_path / "m.safetensors", tensors, {"format": "pt"})
    back, meta = st.read_file(tmp_path / "m.safetensors")
    assert meta == {"format": "pt"}
    assert set(back) == set(tensors)
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype and back[name].shape == t.shape
        assert torch.equal(back[name], t), name


def test_layout_follows_the_format():
    image = st.serialize({"x": torch.tensor([1.0, -2.0]), "h": torch.tensor([1.0]).half()})
    n = struct.unpack("<Q", image[:8])[0]
    assert n % 8 == 0
    header = json.loads(image[8:8 + n])
    assert header["h"] == {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}
    assert header["x"] == {"dtype": "F32", "shape": [2], "data_offsets": [2, 10]}
    assert image[8 + n:] == struct.pack("<e", 1.0) + struct.pack("<ff", 1.0, -2.0)


def test_reads_a_hand_written_file():
    header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]},
                         "__metadata__": {"k": "v"}}).encode()
    data = bytes([0x80, 0x3F, 0x00, 0xC0])  # bf16 1.0, -2.0
    tensors, meta = st.deserialize(struct.pack("<Q", len(header)) + header + data)
    assert tensors["w"].float().tolist() == [1.0, -2.0] and meta == {"k": "v"}


def image_with(header_obj, data=b"", raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header_obj).encode()
    return struct.pack("<Q", len(h)) + h + data


@pytest.mark.parametrize("image, message", [
    (b"\x01\x02", "file is 2 bytes, expected at least 8"),
    (struct.pack("<Q", 1000) + b"{}", "header length 1000 exceeds the file"),
    (image_with(None, raw_header=b"{not json"), "header is not valid UTF-8 JSON"),
    (image_with(None, raw_header=b"[1, 2]"), "header must be a JSON object, found list"),
    (image_with({"w": {"dtype": "I8", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
     "dtype 'I8' not supported; expected one of F32, F16, BF16"),
    (image_with({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4),
     "F32 [2] needs 8 bytes, data_offsets [0, 4] span 4"),
    (image_with({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 6),
     "end past the data region (6 bytes); file truncated?"),
    (image_with({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
     "at byte 4 leaves a gap (expected it at 0)"),
    (image_with({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                 "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
     "overlaps the previous tensor"),
    (image_with({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 6),
     "tensors cover 4 data bytes, the file has 6"),
    (image_with({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "shape must be a list of non-negative integers"),
    (image_with({"w": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
     "expected keys dtype, shape, data_offsets"),
    (image_with({"__metadata__": {"k": 1}}), "__metadata__ must map strings to strings"),
])
def test_corrupt_files_give_clear_errors(image, message):
    with pytest.raises(SafetensorsError) as e:
        st.deserialize(image, "bad.safetensors")
    assert message in str(e.value) and "bad.safetensors" in str(e.value)


def test_truncated_real_file(tmp_path):
    image = st.serialize(sample_tensors())
    (tmp_path / "t.safetensors").write_bytes(image[:-3])
    with pytest.raises(SafetensorsError, match="file truncated"):
        st.read_file(tmp_path / "t.safetensors")


def test_unsupported_tensor_dtype_on_write():
    with pytest.raises(SafetensorsError, match="dtype torch.int64 not supported"):
        st.serialize({"x": torch.tensor([1, 2])})
