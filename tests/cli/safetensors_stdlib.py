"""A safetensors reader in the Python standard library alone, for checking from Python what hwaro writes.

It is written from the format's description (8-byte little-endian header length, a JSON header,
then the raw little-endian data) and refuses what the format's reference reader refuses: a header
over 100,000,000 bytes or past the end of the file, one that is not UTF-8 JSON, a tensor whose
offsets do not match its dtype and shape, and data that the offsets, taken in order, do not cover
from start to end without a gap. It also asks what the reference writer does, and what hwaro
promises: the header starts with "{" and pads the data's start to 8 bytes with spaces.
"""
import array
import json
import struct

ELEMENT_SIZE = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4,
                "F32": 4, "F64": 8, "I64": 8, "U64": 8}
ARRAY_CODE = {"F32": "f", "F64": "d", "I64": "q", "I32": "i", "U8": "B"}  # the ones decoded here
MAX_HEADER = 100_000_000


class FormatError(Exception):
    pass


def read(path):
    """Returns (metadata, tensors): the __metadata__ map, and name -> (dtype, shape, raw bytes)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise FormatError("shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER or 8 + n > len(blob):
        raise FormatError("header length %d: over the limit or past the end of the file" % n)
    text = blob[8:8 + n].decode("utf-8")
    if not text.startswith("{"):
        raise FormatError("the header does not start with '{'")
    if n % 8 != 0 or not text.rstrip(" ").endswith("}"):
        raise FormatError("the data's start is not padded to 8 bytes with spaces")
    header = json.loads(text)
    metadata = header.pop("__metadata__", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise FormatError("__metadata__ is not a map of strings")
    data = blob[8 + n:]
    end = 0
    for name, info in sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"])):
        begin, stop = info["data_offsets"]
        count = 1
        for dim in info["shape"]:
            count *= dim
        if begin != end or stop < begin:
            raise FormatError("%s: offsets %s leave a gap or overlap" % (name, info["data_offsets"]))
        if stop - begin != count * ELEMENT_SIZE[info["dtype"]]:
            raise FormatError("%s: %d bytes for %s %s" % (name, stop - begin, info["dtype"], info["shape"]))
        end = stop
    if end != len(data):
        raise FormatError("the offsets cover %d of the %d bytes of data" % (end, len(data)))
    return metadata, {name: (info["dtype"], info["shape"], data[info["data_offsets"][0]:info["data_offsets"][1]])
                      for name, info in header.items()}


def values(tensor):
    """A tensor's elements as a flat list, in row-major order."""
    dtype, _, raw = tensor
    out = array.array(ARRAY_CODE[dtype])
    out.frombytes(raw)
    if struct.pack("=H", 1) != struct.pack("<H", 1):
        out.byteswap()  # the data is little-endian
    return out.tolist()
