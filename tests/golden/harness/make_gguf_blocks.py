#!/usr/bin/env python3
"""Golden data for the ggml block formats and the GGUF container (tests/golden/README.md §13).

Pinned: gguf==0.19.0 and numpy==2.4.6 from PyPI (Python 3.11), in a throw-away virtual environment:

  python3 -m venv /tmp/ggufenv && /tmp/ggufenv/bin/pip install gguf==0.19.0 numpy==2.4.6
  /tmp/ggufenv/bin/python tests/golden/harness/make_gguf_blocks.py tests/golden

Writes, from seeded values:

  gguf_blocks.gguf                    GGUF v3 (gguf.GGUFWriter, architecture "wan", alignment 32): one
                                      [4, 512] tensor per ggml type ShotChain reads, named after the type
                                      (f32, f16, bf16, q4_0 … q6_k), a 5-D F32 patch_embedding.weight, a
                                      Q8_0 tensor whose name is longer than 64 bytes, metadata of six kinds
  gguf_blocks_expected.safetensors    each tensor's values by gguf.quants.dequantize (F32, torch order), and
                                      `<name>.input`, the float32 values gguf.quants.quantize was given
  gguf_blocks_raw.safetensors         each tensor's bytes as stored in the GGUF file, `<name>.raw` (U8, 1-D)

gguf-py quantises F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0; it cannot quantise Q2_K…Q6_K, whose
tensors are seeded random blocks instead: random bytes, with every fp16 field (d, dmin) set to a finite
value. Nothing here needs torch.
"""
import hashlib
import importlib.metadata
import json
import struct
import sys
from pathlib import Path

import numpy as np

import gguf
from gguf import GGMLQuantizationType as Q

GGUF_VERSION = "0.19.0"
NUMPY_VERSION = "2.4.6"
SEED = 20260
SHAPE = (4, 512)  # torch order: 4 rows of 512 values (two K super-blocks per row)
LONG_NAME = "model.diffusion_model.blocks.0.cross_attn.norm_k_img.weight.a_name_longer_than_ggml_max_name"

# (name, type, torch shape) in file order; the K types come from random blocks, the others from values.
TENSORS = [
    ("f32", Q.F32, SHAPE),
    ("f16", Q.F16, SHAPE),
    ("bf16", Q.BF16, SHAPE),
    ("q4_0", Q.Q4_0, SHAPE),
    ("q4_1", Q.Q4_1, SHAPE),
    ("q5_0", Q.Q5_0, SHAPE),
    ("q5_1", Q.Q5_1, SHAPE),
    ("q8_0", Q.Q8_0, SHAPE),
    ("q2_k", Q.Q2_K, SHAPE),
    ("q3_k", Q.Q3_K, SHAPE),
    ("q4_k", Q.Q4_K, SHAPE),
    ("q5_k", Q.Q5_K, SHAPE),
    ("q6_k", Q.Q6_K, SHAPE),
    ("patch_embedding.weight", Q.F32, (8, 4, 1, 2, 2)),
    (LONG_NAME, Q.Q8_0, (2, 64)),
]

# Byte offsets of the fp16 fields in each K block (ggml-common.h).
K_HALF_FIELDS = {Q.Q2_K: (80, 82), Q.Q3_K: (108,), Q.Q4_K: (0, 2), Q.Q5_K: (0, 2), Q.Q6_K: (208,)}

METADATA = {
    "general.name": ("string", "ShotChain ggml block fixtures"),
    "general.quantization_version": ("uint32", 2),
    "shotchain.fixture.f32": ("float32", 0.15625),
    "shotchain.fixture.bool": ("bool", True),
    "shotchain.fixture.strings": ("array", ["first", "", "d\u00e9j\u00e0 vu"]),
    "shotchain.fixture.i32": ("array", [-7, 0, 42, 2147483647, -2147483648]),
}

DESCRIPTION = (
    "Seeded fixtures of the ggml block formats. `<name>`: the float32 values gguf.quants.dequantize gives for "
    "tensor <name> of gguf_blocks.gguf (torch order). `<name>.input`: the float32 values gguf.quants.quantize was "
    "given (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 tensors). The K tensors (q2_k ... q6_k) are seeded random "
    "blocks. The stored bytes are in gguf_blocks_raw.safetensors as `<name>.raw`."
)
INPUTS = (
    f"numpy.random.default_rng({SEED}), drawn in file order. Float tensors: N(0,1) times 10**U(-2, 0.5) per 32 "
    "values; the first row starts with edge blocks (zeros, a constant, a lone spike, all negative, +2/-2 tied "
    "extremes, 1e-6 magnitudes, 1e3 magnitudes); f16 and bf16 start with rounding ties, subnormals and extremes. "
    "K tensors: random bytes, each fp16 field replaced by +-U(1e-3, 2e-2) rounded to fp16, the first block's "
    "first fp16 field by the subnormal 3*2**-24."
)


def seeded_values(rng, shape):
    """N(0,1) scaled per 32 values by 10**U(-2, 0.5), with edge-case blocks at the start of the first row."""
    values = rng.standard_normal(shape).astype(np.float32)
    if len(shape) < 2 or shape[-1] % 32 != 0:
        return values
    flat = values.reshape(-1, 32)
    flat *= (10.0 ** rng.uniform(-2.0, 0.5, size=(flat.shape[0], 1))).astype(np.float32)
    edges = [
        np.zeros(32, np.float32),
        np.full(32, 0.75, np.float32),
        np.where(np.arange(32) == 5, -3.5, 0.0).astype(np.float32),
        -np.abs(flat[3]),
        np.concatenate([[0.5, 1.0, -1.5, -2.0], np.linspace(-1.0, 1.0, 6), [2.0], np.linspace(0.1, 1.9, 21)]),
        (rng.standard_normal(32) * 1e-6).astype(np.float32),
        (rng.standard_normal(32) * 1e3).astype(np.float32),
    ]
    for i, block in enumerate(edges[: flat.shape[0]]):
        flat[i] = block
    return values


def float_specials(qtype):
    """Values that exercise rounding to fp16 / bf16: ties to even, subnormals, the largest finite values."""
    if qtype == Q.F16:
        return [1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 2.5 * 2**-24, 3.5 * 2**-24, 2**-26, 65504.0, 65519.0,
                -65519.0, 1e-8, 0.1, 1 / 3]
    if qtype == Q.BF16:
        return [1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 1e-39, -3e-39, 3.0e38, 1 / 3, 0.1, 2**-133]
    return [1e-40, -0.0, 3.4e38, 1 / 3]


def random_k_blocks(rng, qtype, rows, columns):
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(rows * columns // block_size, type_size), dtype=np.uint8)
    for offset in K_HALF_FIELDS[qtype]:
        magnitude = rng.uniform(1e-3, 2e-2, size=blocks.shape[0])
        sign = rng.choice([-1.0, 1.0], size=blocks.shape[0])
        blocks[:, offset:offset + 2] = (magnitude * sign).astype(np.float16).view(np.uint8).reshape(-1, 2)
    first = K_HALF_FIELDS[qtype][0]
    blocks[0, first:first + 2] = np.array([3 * 2**-24], np.float16).view(np.uint8)
    return blocks.reshape(rows, -1)


def make_tensors():
    """name -> (type, torch shape, stored bytes [rows, row bytes], input float32 or None)."""
    rng = np.random.default_rng(SEED)
    result = {}
    for name, qtype, shape in TENSORS:
        rows = int(np.prod(shape[:-1]))
        if qtype in K_HALF_FIELDS:
            result[name] = (qtype, shape, random_k_blocks(rng, qtype, rows, shape[-1]), None)
            continue
        values = seeded_values(rng, shape)
        if qtype in (Q.F32, Q.F16, Q.BF16) and name == qtype.name.lower():
            specials = np.array(float_specials(qtype), np.float32)
            values.reshape(-1)[: specials.size] = specials
        stored = gguf.quants.quantize(values, qtype)
        raw = np.ascontiguousarray(stored).view(np.uint8).reshape(rows, -1)
        result[name] = (qtype, shape, raw, values)
    return result


def write_gguf(path, tensors):
    writer = gguf.GGUFWriter(path, arch="wan")
    for key, (kind, value) in METADATA.items():
        getattr(writer, "add_" + kind)(key, value)
    for name, (qtype, shape, raw, _) in tensors.items():
        if qtype == Q.F32:
            writer.add_tensor(name, raw.view(np.float32).reshape(shape))
        elif qtype == Q.F16:
            writer.add_tensor(name, raw.view(np.float16).reshape(shape))
        else:  # stored bytes, [rows, row bytes]: the writer derives the element shape from the type
            writer.add_tensor(name, raw.reshape(*shape[:-1], -1), raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_safetensors(path, tensors, metadata):
    """tensors: name -> numpy array (float32 or uint8), packed in the given order with no gaps."""
    header = {"__metadata__": metadata}
    offset = 0
    blobs = []
    for name, array in tensors.items():
        dtype = {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8"}[array.dtype]
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def check_file(path, tensors):
    """Reads the GGUF file back with gguf-py: every tensor's type, shape and bytes as written."""
    reader = gguf.GGUFReader(path)
    assert [t.name for t in reader.tensors] == list(tensors)
    for t in reader.tensors:
        qtype, shape, raw, _ = tensors[t.name]
        assert t.tensor_type == qtype, t.name
        assert tuple(int(n) for n in reversed(t.shape)) == tuple(shape), (t.name, t.shape)
        assert bytes(np.asarray(t.data).view(np.uint8).reshape(-1)) == raw.tobytes(), t.name
        assert t.data_offset % 32 == 0, t.name
    assert reader.fields["general.architecture"].contents() == "wan"
    for key, (_, value) in METADATA.items():
        assert reader.fields[key].contents() == value, key


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_gguf_blocks.py OUT_DIR")
    versions = (importlib.metadata.version("gguf"), np.__version__)
    if versions != (GGUF_VERSION, NUMPY_VERSION):
        sys.exit(f"needs gguf {GGUF_VERSION} and numpy {NUMPY_VERSION}, found {versions[0]} and {versions[1]}")
    out = Path(sys.argv[1])
    tensors = make_tensors()

    write_gguf(out / "gguf_blocks.gguf", tensors)
    check_file(out / "gguf_blocks.gguf", tensors)

    expected = {}
    raw_tensors = {}
    for name, (qtype, shape, raw, values) in tensors.items():
        dequantised = gguf.quants.dequantize(raw, qtype).astype(np.float32).reshape(shape)
        expected[name] = dequantised
        if values is not None:
            expected[name + ".input"] = values.astype(np.float32)
        raw_tensors[name + ".raw"] = raw.reshape(-1)
    source = f"gguf {GGUF_VERSION} (PyPI; gguf.GGUFWriter, gguf.quants), numpy {NUMPY_VERSION}; " \
             "tests/golden/harness/make_gguf_blocks.py"
    common = {"format": "wan-golden-v1", "source": source, "inputs": INPUTS}
    write_safetensors(out / "gguf_blocks_expected.safetensors", expected,
                      dict(common, description=DESCRIPTION,
                           calls="<name> = gguf.quants.dequantize(<stored bytes [rows, row bytes]>, type)"
                                 ".reshape(torch shape); the stored bytes = gguf.quants.quantize(<name>.input, "
                                 "type) for the types gguf-py quantises"))
    write_safetensors(out / "gguf_blocks_raw.safetensors", raw_tensors,
                      dict(common, description="The bytes of each tensor of gguf_blocks.gguf as stored there "
                                               "(its data section), `<name>.raw`, U8, 1-D."))
    for name in ("gguf_blocks.gguf", "gguf_blocks_expected.safetensors", "gguf_blocks_raw.safetensors"):
        data = (out / name).read_bytes()
        print(f"{name}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
