"""A Hugging Face model directory read with the standard library and torch only (no safetensors package).

A directory holds config.json and either one model.safetensors or the files named by model.safetensors.index.json
(docs/artifacts.md, "Models"); a torus shard directory has the same layout holding only one stage's tensors. A
safetensors file is an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}
(offsets relative to the end of the header), then the data.
"""

import json
import os
import re
import struct

import torch

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
MAX_HEADER_BYTES = 100_000_000  # the reference reader's own limit

DTYPES = {
    "BF16": torch.bfloat16,
    "F16": torch.float16,
    "F32": torch.float32,
    "F64": torch.float64,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}

LAYER = re.compile(r"^model\.layers\.(\d+)\.")


class ModelDir:
    """The tensors of a model directory by name (headers read at once, bytes on demand) and its config."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            self.config = json.load(f)
        index = os.path.join(path, INDEX)
        if os.path.exists(index):
            with open(index, encoding="utf-8") as f:
                files = sorted(set(json.load(f)["weight_map"].values()))
        elif os.path.exists(os.path.join(path, SINGLE)):
            files = [SINGLE]
        else:
            raise ValueError(f"{path}: neither {INDEX} nor {SINGLE}")
        self.tensors = {}  # name -> (file, dtype, shape, absolute begin, absolute end)
        for name in files:
            if "/" in name or name.startswith("."):
                raise ValueError(f"{path}/{INDEX}: names a file outside the directory: {name!r}")
            for tensor, entry in read_header(os.path.join(path, name)).items():
                self.tensors[tensor] = (name,) + entry

    def layers(self):
        """The block indices whose tensors this directory holds, sorted."""
        return sorted({int(m.group(1)) for m in map(LAYER.match, self.tensors) if m})

    def has(self, name):
        return name in self.tensors

    def load(self, name):
        """One tensor, its bytes read from the file into a tensor of its dtype and shape."""
        if name not in self.tensors:
            raise KeyError(f"{self.path}: no tensor {name}")
        file, dtype, shape, begin, end = self.tensors[name]
        with open(os.path.join(self.path, file), "rb") as f:
            f.seek(begin)
            data = bytearray(f.read(end - begin))
        if len(data) != end - begin:
            raise ValueError(f"{file}: tensor {name} is cut short ({len(data)} of {end - begin} bytes)")
        if not data:
            return torch.empty(shape, dtype=DTYPES[dtype])
        return torch.frombuffer(data, dtype=DTYPES[dtype]).reshape(shape)


def read_header(path):
    """{name: (dtype, shape, begin, end)} with absolute byte offsets, each range checked against the file."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ValueError(f"{path}: shorter than a safetensors header")
        (length,) = struct.unpack("<Q", head)
        if length > MAX_HEADER_BYTES or 8 + length > size:
            raise ValueError(f"{path}: header length {length} runs past the file ({size} bytes)")
        header = json.loads(f.read(length).decode("utf-8"))
    start = 8 + length
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (begin, end) = entry["dtype"], list(entry["shape"]), entry["data_offsets"]
        if dtype not in DTYPES:
            raise ValueError(f"{path}: tensor {name}: dtype {dtype} is not supported here")
        elements = 1
        for d in shape:
            elements *= d
        width = torch.tensor([], dtype=DTYPES[dtype]).element_size()
        if end - begin != elements * width or begin < 0 or start + end > size:
            raise ValueError(f"{path}: tensor {name}: offsets [{begin}, {end}) do not hold {dtype} {shape}")
        out[name] = (dtype, shape, start + begin, start + end)
    return out
