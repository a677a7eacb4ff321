#!/usr/bin/env python3
"""silero_vad_to_gguf.py — converts the 16 kHz Silero VAD from the `silero-vad` package's
ONNX file (silero_vad/data/silero_vad.onnx, the model its `load_silero_vad(onnx=True)` and
`get_speech_timestamps` run) into sotto's VAD GGUF file (docs/FORMAT.md, "Silero VAD").
Python 3 standard library only: the ONNX protobuf is read with a small wire-format decoder.

usage: python3 scripts/silero_vad_to_gguf.py IN.onnx OUT.gguf

Why the ONNX file and not silero_vad_16k.safetensors: in silero-vad 6.2.3 the safetensors
file (written for tinygrad_model.py) holds other weights than the ONNX and JIT models the
package's own functions run (only the STFT basis is equal; the convolution and LSTM weights
differ by up to 18), and its probabilities differ from the package's by up to 0.17 on our
clips. The ONNX file's 16 kHz branch holds the same tensors as silero_vad.jit.

The ONNX graph keeps both sample rates in one `If` node; the 16 kHz branch is the one whose
STFT basis is [258, 1, 256]. Its weights are Constant nodes (or initializers, in the
opset-15 file) named <prefix><state_dict name>; the prefix is dropped. Every tensor is
written as f32 with its PyTorch shape. OUT is written to OUT.tmp and renamed.
"""
import hashlib
import os
import struct
import sys

# the 16 kHz model's state_dict: name -> shape (PyTorch order, outermost first)
TENSORS = [
    ("stft.forward_basis_buffer", (258, 1, 256)),
    ("encoder.0.reparam_conv.weight", (128, 129, 3)),
    ("encoder.0.reparam_conv.bias", (128,)),
    ("encoder.1.reparam_conv.weight", (64, 128, 3)),
    ("encoder.1.reparam_conv.bias", (64,)),
    ("encoder.2.reparam_conv.weight", (64, 64, 3)),
    ("encoder.2.reparam_conv.bias", (64,)),
    ("encoder.3.reparam_conv.weight", (128, 64, 3)),
    ("encoder.3.reparam_conv.bias", (128,)),
    ("decoder.rnn.weight_ih", (512, 128)),
    ("decoder.rnn.weight_hh", (512, 128)),
    ("decoder.rnn.bias_ih", (512,)),
    ("decoder.rnn.bias_hh", (512,)),
    ("decoder.decoder.2.weight", (1, 128, 1)),
    ("decoder.decoder.2.bias", (1,)),
]

ONNX_FLOAT = 1

# ---- protobuf wire format (developers.google.com/protocol-buffers/docs/encoding) ------


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """(field number, wire type, value) of one message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("truncated field %d" % num)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def packed_ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


# ---- ONNX messages (onnx/onnx.proto) -----------------------------------------------------


def tensor_proto(b):
    """TensorProto -> (name, dims, float32 little-endian bytes) or None if not float."""
    name, dims, dtype, raw, floats = "", [], 0, None, []
    for num, wt, v in fields(b):
        if num == 1:
            dims += packed_ints(wt, v)
        elif num == 2:
            dtype = v
        elif num == 4:
            floats.append(v if wt == 5 else v)
        elif num == 8:
            name = v.decode()
        elif num == 9:
            raw = v
    if dtype != ONNX_FLOAT:
        return None
    data = raw if raw is not None else b"".join(floats)
    return name, tuple(dims), data


def graph_tensors(b, out):
    """Every float tensor of a GraphProto and its subgraphs: initializers and the values
    of Constant nodes (named by the node's output)."""
    for num, _, v in fields(b):
        if num == 5:  # initializer
            t = tensor_proto(v)
            if t:
                out.append(t)
        elif num == 1:  # node
            op, outputs, attrs = "", [], []
            for n2, _, v2 in fields(v):
                if n2 == 4:
                    op = v2.decode()
                elif n2 == 2:
                    outputs.append(v2.decode())
                elif n2 == 5:
                    attrs.append(v2)
            for a in attrs:
                for n3, _, v3 in fields(a):
                    if n3 == 5 and op == "Constant" and outputs:  # AttributeProto.t
                        t = tensor_proto(v3)
                        if t:
                            out.append((outputs[0], t[1], t[2]))
                    elif n3 == 6:  # AttributeProto.g: an If branch
                        graph_tensors(v3, out)
                    elif n3 == 11:  # AttributeProto.graphs
                        graph_tensors(v3, out)


def model_tensors(path):
    with open(path, "rb") as f:
        b = f.read()
    out = []
    for num, _, v in fields(b):
        if num == 7:  # ModelProto.graph
            graph_tensors(v, out)
    return out, hashlib.sha256(b).hexdigest()


def pick_16k(tensors):
    """The state_dict of the 16 kHz model: the prefix whose STFT basis is [258, 1, 256]."""
    groups = {}
    for name, dims, data in tensors:
        for want, shape in TENSORS:
            if name.endswith(want):
                groups.setdefault(name[:-len(want)], {})[want] = (dims, data)
    found = [g for g in groups.values()
             if "stft.forward_basis_buffer" in g and g["stft.forward_basis_buffer"][0] == (258, 1, 256)]
    if len(found) != 1:
        raise SystemExit("expected one 16 kHz model in the ONNX file, found %d" % len(found))
    g = found[0]
    for want, shape in TENSORS:
        if want not in g:
            raise SystemExit("16 kHz model lacks %s" % want)
        dims, data = g[want]
        n = 1
        for d in shape:
            n *= d
        if dims != shape or len(data) != 4 * n:
            raise SystemExit("%s: shape %s (%d bytes), expected %s" % (want, dims, len(data), shape))
    return g


# ---- GGUF v3 (ggml-org/ggml docs/gguf.md) ------------------------------------------------

GGUF_UINT32, GGUF_STRING = 4, 8
ALIGN = 32


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def write_gguf(path, g, source_sha, source=None):
    kv = [
        ("general.architecture", GGUF_STRING, "silero-vad"),
        ("general.name", GGUF_STRING, "Silero VAD (16 kHz)"),
        ("general.source", GGUF_STRING, source or "PyPI silero-vad 6.2.3, silero_vad/data/silero_vad.onnx"),
        ("general.source.sha256", GGUF_STRING, source_sha),
        ("general.alignment", GGUF_UINT32, ALIGN),
        ("silero-vad.sample_rate", GGUF_UINT32, 16000),
        ("silero-vad.window", GGUF_UINT32, 512),
        ("silero-vad.context", GGUF_UINT32, 64),
    ]
    head = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(TENSORS), len(kv)))
    for key, typ, val in kv:
        head += gguf_str(key) + struct.pack("<I", typ)
        head += gguf_str(val) if typ == GGUF_STRING else struct.pack("<I", val)
    data = bytearray()
    for name, shape in TENSORS:
        dims, blob = g[name]
        head += gguf_str(name) + struct.pack("<I", len(shape))
        head += b"".join(struct.pack("<Q", d) for d in reversed(shape))  # fastest first
        head += struct.pack("<IQ", 0, len(data))  # type f32, offset
        data += blob
        data += b"\0" * (-len(data) % ALIGN)
    head += b"\0" * (-len(head) % ALIGN)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head)
        f.write(data)
    os.replace(tmp, path)
    return len(head) + len(data)


# faster-whisper 1.2.1's faster_whisper/assets/silero_vad_v6.onnx: a 16 kHz-only export
# of the same network under other names, its LSTM as an ONNX LSTM node (W, R [1, 4H, H]
# with the gates in ONNX's order i, o, f, c; B [1, 8H]: W's biases, then R's)
FW_NAMES = {
    "encoder.feature_extractor.forward_basis_buffer": "stft.forward_basis_buffer",
    "decoder.conv1d.weight": "decoder.decoder.2.weight",
    "decoder.conv1d.bias": "decoder.decoder.2.bias",
}
for _k in range(4):
    for _p in ("weight", "bias"):
        FW_NAMES["encoder.conv_layers.%d.%s" % (_k, _p)] = "encoder.%d.reparam_conv.%s" % (_k, _p)


def onnx_gates_to_torch(blob, rows_per_gate, row_bytes):
    """ONNX gate blocks i, o, f, c -> PyTorch's i, f, g (= c), o."""
    n = rows_per_gate * row_bytes
    i, o, f, c = (blob[k * n:(k + 1) * n] for k in range(4))
    return i + f + c + o


def pick_fw(tensors):
    """The state_dict from faster-whisper's export, or None when TENSORS are not one."""
    named = {name: (dims, data) for name, dims, data in tensors}
    lstm = sorted(n for n in named if n.startswith("onnx::LSTM_"))
    if not all(k in named for k in FW_NAMES) or len(lstm) != 3:
        return None
    g = {FW_NAMES[k]: named[k] for k in FW_NAMES}
    by_shape = {named[n][0]: n for n in lstm}
    if (1, 1024) not in by_shape or len([n for n in lstm if named[n][0] == (1, 512, 128)]) != 2:
        raise SystemExit("faster-whisper VAD: unexpected LSTM tensors %s" % [(n, named[n][0]) for n in lstm])
    w, r = [n for n in lstm if named[n][0] == (1, 512, 128)]  # the node's inputs W, R in order of their names
    b = named[by_shape[(1, 1024)]][1]
    g["decoder.rnn.weight_ih"] = ((512, 128), onnx_gates_to_torch(named[w][1], 128, 128 * 4))
    g["decoder.rnn.weight_hh"] = ((512, 128), onnx_gates_to_torch(named[r][1], 128, 128 * 4))
    g["decoder.rnn.bias_ih"] = ((512,), onnx_gates_to_torch(b[:2048], 128, 4))
    g["decoder.rnn.bias_hh"] = ((512,), onnx_gates_to_torch(b[2048:], 128, 4))
    return g


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    tensors, sha = model_tensors(sys.argv[1])
    g = pick_fw(tensors)
    n = write_gguf(sys.argv[2], g if g else pick_16k(tensors), sha,
                   "PyPI faster-whisper 1.2.1, faster_whisper/assets/silero_vad_v6.onnx" if g else None)
    print("%s: %d tensors, %d bytes (from %s, sha256 %s)" % (sys.argv[2], len(TENSORS), n, sys.argv[1], sha))


if __name__ == "__main__":
    main()
