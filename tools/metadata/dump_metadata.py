#!/usr/bin/env python3
"""Dump a .tflite file's TFLite metadata (schema "M001") and associated-files zip as JSON.

The reader is deliberately independent of tflite-support: it uses only the Python standard
library (struct, zipfile, hashlib) and walks the flatbuffers by hand, with the vtable slot
numbers of TensorFlow Lite's schema.fbs and tflite-support's metadata_schema.fbs (listed
below). It is the model for NetRunner's Swift metadata reader, and its output
(Tests/Fixtures/Metadata/*.json) is what Swift tests assert against.

With --cross-check (needs the tools/metadata venv: tflite-support 0.4.4) the result is also
compared with tflite-support's own reader: MetadataDisplayer's JSON must equal our "metadata"
object, and its packed-file list and file buffers must equal our zip entries.

Usage: dump_metadata.py [--cross-check] MODEL.tflite OUT.json [MODEL2 OUT2 ...]
"""
import hashlib
import io
import json
import os
import struct
import sys
import zipfile

# ---------------------------------------------------------------- minimal flatbuffer reader


class Table:
    """A flatbuffer table at absolute offset `pos` of `buf`."""

    def __init__(self, buf: bytes, pos: int):
        self.buf, self.pos = buf, pos
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vt_len = struct.unpack_from("<H", buf, vt)[0]
        self.vt = vt

    def _field(self, slot):
        o = 4 + 2 * slot
        if o >= self.vt_len:
            return 0
        return struct.unpack_from("<H", self.buf, self.vt + o)[0]

    def has(self, slot):
        return self._field(slot) != 0

    def scalar(self, slot, fmt, default=None):
        off = self._field(slot)
        if not off:
            return default
        return struct.unpack_from("<" + fmt, self.buf, self.pos + off)[0]

    def _indirect(self, slot):
        off = self._field(slot)
        if not off:
            return None
        p = self.pos + off
        return p + struct.unpack_from("<I", self.buf, p)[0]

    def string(self, slot):
        p = self._indirect(slot)
        if p is None:
            return None
        n = struct.unpack_from("<I", self.buf, p)[0]
        return self.buf[p + 4:p + 4 + n].decode("utf-8")

    def table(self, slot):
        p = self._indirect(slot)
        return None if p is None else Table(self.buf, p)

    def vector_raw(self, slot):
        """(absolute offset of the first element, element count) or None."""
        p = self._indirect(slot)
        if p is None:
            return None
        return p + 4, struct.unpack_from("<I", self.buf, p)[0]

    def vector(self, slot, fmt):
        v = self.vector_raw(slot)
        if v is None:
            return None
        start, n = v
        size = struct.calcsize("<" + fmt)
        return [struct.unpack_from("<" + fmt, self.buf, start + i * size)[0] for i in range(n)]

    def tables(self, slot):
        v = self.vector_raw(slot)
        if v is None:
            return None
        start, n = v
        out = []
        for i in range(n):
            p = start + 4 * i
            out.append(Table(self.buf, p + struct.unpack_from("<I", self.buf, p)[0]))
        return out

    def strings(self, slot):
        v = self.vector_raw(slot)
        if v is None:
            return None
        start, n = v
        out = []
        for i in range(n):
            p = start + 4 * i
            s = p + struct.unpack_from("<I", self.buf, p)[0]
            ln = struct.unpack_from("<I", self.buf, s)[0]
            out.append(self.buf[s + 4:s + 4 + ln].decode("utf-8"))
        return out


def root(buf: bytes, pos: int = 0) -> Table:
    return Table(buf, pos + struct.unpack_from("<I", buf, pos)[0])


def file_identifier(buf: bytes, pos: int = 0) -> str:
    return buf[pos + 4:pos + 8].decode("latin-1")


# ------------------------------------------------- TFLite schema.fbs (vtable slots, 0-based)
# Model: version 0, operator_codes 1, subgraphs 2, description 3, buffers 4,
#        metadata_buffer 5, metadata 6, signature_defs 7
# SubGraph: tensors 0, inputs 1, outputs 2, operators 3, name 4
# Tensor: shape 0, type 1, buffer 2, name 3, quantization 4
# QuantizationParameters: min 0, max 1, scale 2, zero_point 3
# Buffer: data 0, offset 1, size 2
# Metadata: name 0, buffer 1
TENSOR_TYPES = ["FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL", "INT16",
                "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE", "VARIANT",
                "UINT32", "UINT16", "INT4", "BFLOAT16"]

# ------------------------------------------- metadata_schema.fbs (file_identifier "M001")
# ModelMetadata: name 0, description 1, version 2, subgraph_metadata 3, author 4, license 5,
#                associated_files 6, min_parser_version 7
# SubGraphMetadata: name 0, description 1, input_tensor_metadata 2, output_tensor_metadata 3,
#                   associated_files 4, input_process_units 5, output_process_units 6,
#                   input_tensor_groups 7, output_tensor_groups 8, custom_metadata 9
# TensorMetadata: name 0, description 1, dimension_names 2, content 3, process_units 4,
#                 stats 5, associated_files 6
# Content: content_properties_type 0 (union tag), content_properties 1, range 2
# ImageProperties: color_space 0, default_size 1     ImageSize: width 0, height 1
# BoundingBoxProperties: index 0, type 1, coordinate_type 2
# AudioProperties: sample_rate 0, channels 1         ValueRange: min 0, max 1
# ProcessUnit: options_type 0 (union tag), options 1
# NormalizationOptions: mean 0, std 1
# ScoreCalibrationOptions: score_transformation 0, default_score 1
# ScoreThresholdingOptions: global_score_threshold 0
# Stats: max 0, min 1                                TensorGroup: name 0, tensor_names 1
# AssociatedFile: name 0, description 1, type 2, locale 3, version 4
# CustomMetadata: name 0, data 1
ASSOCIATED_FILE_TYPES = ["UNKNOWN", "DESCRIPTIONS", "TENSOR_AXIS_LABELS", "TENSOR_VALUE_LABELS",
                         "TENSOR_AXIS_SCORE_CALIBRATION", "VOCABULARY", "SCANN_INDEX_FILE"]
COLOR_SPACES = ["UNKNOWN", "RGB", "GRAYSCALE"]
CONTENT_PROPERTIES = ["NONE", "FeatureProperties", "ImageProperties", "BoundingBoxProperties",
                      "AudioProperties"]
BOUNDING_BOX_TYPES = ["UNKNOWN", "BOUNDARIES", "UPPER_LEFT", "CENTER"]
COORDINATE_TYPES = ["RATIO", "PIXEL"]
PROCESS_UNIT_OPTIONS = ["NONE", "NormalizationOptions", "ScoreCalibrationOptions",
                        "ScoreThresholdingOptions", "BertTokenizerOptions",
                        "SentencePieceTokenizerOptions", "RegexTokenizerOptions"]
SCORE_TRANSFORMATIONS = ["IDENTITY", "LOG", "INVERSE_LOGISTIC"]


def enum_name(names, value):
    return names[value] if 0 <= value < len(names) else f"UNKNOWN_ENUM_{value}"


def put(d, key, value):
    if value is not None:
        d[key] = value


# The metadata objects below use the key names and layout of tflite-support's JSON
# (MetadataDisplayer / flatc text output): fields absent from the buffer are left out, enums
# are written by name.

def associated_file(t: Table):
    d = {}
    put(d, "name", t.string(0))
    put(d, "description", t.string(1))
    ty = t.scalar(2, "b")
    put(d, "type", None if ty is None else enum_name(ASSOCIATED_FILE_TYPES, ty))
    put(d, "locale", t.string(3))
    put(d, "version", t.string(4))
    return d


def associated_files(ts):
    return None if ts is None else [associated_file(t) for t in ts]


def process_unit(t: Table):
    d = {}
    tag = t.scalar(0, "B", 0)
    if t.has(0):
        d["options_type"] = enum_name(PROCESS_UNIT_OPTIONS, tag)
    o = t.table(1)
    if o is not None:
        opts = {}
        if tag == 1:      # NormalizationOptions
            put(opts, "mean", o.vector(0, "f"))
            put(opts, "std", o.vector(1, "f"))
        elif tag == 2:    # ScoreCalibrationOptions
            st = o.scalar(0, "b")
            put(opts, "score_transformation",
                None if st is None else enum_name(SCORE_TRANSFORMATIONS, st))
            put(opts, "default_score", o.scalar(1, "f"))
        elif tag == 3:    # ScoreThresholdingOptions
            put(opts, "global_score_threshold", o.scalar(0, "f"))
        elif tag in (4, 5, 6):  # tokenizers: vocab / model files
            if tag == 6:
                put(opts, "delim_regex_pattern", o.string(0))
                put(opts, "vocab_file", associated_files(o.tables(1)))
            elif tag == 5:
                put(opts, "sentencePiece_model", associated_files(o.tables(0)))
                put(opts, "vocab_file", associated_files(o.tables(1)))
            else:
                put(opts, "vocab_file", associated_files(o.tables(0)))
        d["options"] = opts
    return d


def process_units(ts):
    return None if ts is None else [process_unit(t) for t in ts]


def content(t: Table):
    d = {}
    tag = t.scalar(0, "B", 0)
    if t.has(0):
        d["content_properties_type"] = enum_name(CONTENT_PROPERTIES, tag)
    p = t.table(1)
    if p is not None:
        props = {}
        if tag == 2:      # ImageProperties
            cs = p.scalar(0, "b")
            put(props, "color_space", None if cs is None else enum_name(COLOR_SPACES, cs))
            size = p.table(1)
            if size is not None:
                sd = {}
                put(sd, "width", size.scalar(0, "I"))
                put(sd, "height", size.scalar(1, "I"))
                props["default_size"] = sd
        elif tag == 3:    # BoundingBoxProperties
            put(props, "index", p.vector(0, "I"))
            bt = p.scalar(1, "b")
            put(props, "type", None if bt is None else enum_name(BOUNDING_BOX_TYPES, bt))
            ct = p.scalar(2, "b")
            put(props, "coordinate_type", None if ct is None else enum_name(COORDINATE_TYPES, ct))
        elif tag == 4:    # AudioProperties
            put(props, "sample_rate", p.scalar(0, "I"))
            put(props, "channels", p.scalar(1, "I"))
        d["content_properties"] = props
    r = t.table(2)
    if r is not None:
        rd = {}
        put(rd, "min", r.scalar(0, "i"))
        put(rd, "max", r.scalar(1, "i"))
        d["range"] = rd
    return d


def tensor_metadata(t: Table):
    d = {}
    put(d, "name", t.string(0))
    put(d, "description", t.string(1))
    put(d, "dimension_names", t.strings(2))
    c = t.table(3)
    if c is not None:
        d["content"] = content(c)
    put(d, "process_units", process_units(t.tables(4)))
    s = t.table(5)
    if s is not None:
        sd = {}
        put(sd, "max", s.vector(0, "f"))
        put(sd, "min", s.vector(1, "f"))
        d["stats"] = sd
    put(d, "associated_files", associated_files(t.tables(6)))
    return d


def tensor_groups(ts):
    if ts is None:
        return None
    out = []
    for t in ts:
        g = {}
        put(g, "name", t.string(0))
        put(g, "tensor_names", t.strings(1))
        out.append(g)
    return out


def subgraph_metadata(t: Table):
    d = {}
    put(d, "name", t.string(0))
    put(d, "description", t.string(1))
    for slot, key in ((2, "input_tensor_metadata"), (3, "output_tensor_metadata")):
        ts = t.tables(slot)
        put(d, key, None if ts is None else [tensor_metadata(x) for x in ts])
    put(d, "associated_files", associated_files(t.tables(4)))
    put(d, "input_process_units", process_units(t.tables(5)))
    put(d, "output_process_units", process_units(t.tables(6)))
    put(d, "input_tensor_groups", tensor_groups(t.tables(7)))
    put(d, "output_tensor_groups", tensor_groups(t.tables(8)))
    cms = t.tables(9)
    if cms is not None:
        d["custom_metadata"] = [{"name": c.string(0),
                                 "data_size": (c.vector_raw(1) or (0, 0))[1]} for c in cms]
    return d


def model_metadata(buf: bytes, pos: int):
    t = root(buf, pos)
    d = {}
    put(d, "name", t.string(0))
    put(d, "description", t.string(1))
    put(d, "version", t.string(2))
    sgs = t.tables(3)
    put(d, "subgraph_metadata", None if sgs is None else [subgraph_metadata(s) for s in sgs])
    put(d, "author", t.string(4))
    put(d, "license", t.string(5))
    put(d, "associated_files", associated_files(t.tables(6)))
    put(d, "min_parser_version", t.string(7))
    return d


# ----------------------------------------------------------------------------- the model


def tensor_info(sub: Table, index: int):
    t = sub.tables(0)[index]
    d = {"index": index, "name": t.string(3),
         "type": enum_name(TENSOR_TYPES, t.scalar(1, "b", 0)), "shape": t.vector(0, "i")}
    q = t.table(4)
    if q is not None:
        scale, zp = q.vector(2, "f"), q.vector(3, "q")
        if scale:
            d["quantization"] = {"scale": scale, "zero_point": zp}
    return d


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def find_zip(data: bytes, flatbuffer_end: int):
    """Locate the appended zip (End Of Central Directory record) and describe it."""
    eocd = data.rfind(b"PK\x05\x06")
    if eocd < 0 or eocd < flatbuffer_end:
        return None
    (_, disk, cd_disk, n_disk, n_total, cd_size, cd_offset,
     comment_len) = struct.unpack_from("<IHHHHIIH", data, eocd)
    cd_start = eocd - cd_size
    # zipfile/minizip convention: offsets in the central directory may be relative to the
    # start of the zip (the first local header) when data is prepended, or absolute.
    base = cd_start - cd_offset
    entries = []
    p = cd_start
    for _ in range(n_total):
        (sig, _vm, _vn, flags, method, mtime, mdate, crc, csize, usize, nlen, elen, clen,
         _dn, _ia, _ea, lho) = struct.unpack_from("<IHHHHHHIIIHHHHHII", data, p)
        assert sig == 0x02014B50, hex(sig)
        name = data[p + 46:p + 46 + nlen].decode("utf-8")
        p += 46 + nlen + elen + clen
        lh = base + lho
        assert data[lh:lh + 4] == b"PK\x03\x04", "bad local header"
        lnlen, lelen = struct.unpack_from("<HH", data, lh + 26)
        start = lh + 30 + lnlen + lelen
        payload = data[start:start + csize]
        entries.append({
            "name": name,
            "compression_method": method,          # 0 = stored
            "compressed_size": csize,
            "size": usize,
            "crc32": f"{crc:08x}",
            "local_header_offset_in_file": lh,
            "data_offset_in_file": start,
            "dos_date_time": [mdate, mtime],
            "sha256": sha256(payload) if method == 0 else None,
        })
    first = min(e["local_header_offset_in_file"] for e in entries) if entries else cd_start
    return {
        "zip_start_in_file": first,
        "central_directory_offset_in_file": cd_start,
        "central_directory_size": cd_size,
        "central_directory_offset_field": cd_offset,
        # Python's zipfile (used by tflite-support) writes absolute offsets: base 0.
        "offsets_relative_to": ("file_start" if base == 0 else "zip_start" if base == first
                                else f"file_offset_{base}"),
        "end_of_central_directory_offset_in_file": eocd,
        "entry_count": n_total,
        "entries": entries,
    }


def flatbuffer_extent(data: bytes, model: Table) -> int:
    """A lower bound for the end of the model flatbuffer: the furthest buffer's data end."""
    end = 0
    for b in model.tables(4) or []:
        v = b.vector_raw(0)
        if v is not None:
            end = max(end, v[0] + v[1])
    return end


def dump(path: str):
    data = open(path, "rb").read()
    model = root(data)
    out = {
        "file": os.path.basename(path),
        "file_size": len(data),
        "file_sha256": sha256(data),
        "tflite_file_identifier": file_identifier(data),
        "tflite_schema_version": model.scalar(0, "I"),
    }
    sub = model.tables(2)[0]
    out["subgraph0_inputs"] = [tensor_info(sub, i) for i in sub.vector(1, "i")]
    out["subgraph0_outputs"] = [tensor_info(sub, i) for i in sub.vector(2, "i")]

    buffers = model.tables(4) or []
    entries = []
    meta_pos = None
    for m in model.tables(6) or []:
        name, bi = m.string(0), m.scalar(1, "I", 0)
        b = buffers[bi]
        v = b.vector_raw(0)
        e = {"name": name, "buffer_index": bi}
        if v is not None:
            e["data_offset_in_file"], e["data_size"] = v
        else:  # buffers stored outside the flatbuffer (models > 2 GB): offset/size fields
            e["buffer_offset_field"], e["buffer_size_field"] = b.scalar(1, "Q"), b.scalar(2, "Q")
        entries.append(e)
        if name == "TFLITE_METADATA":
            meta_pos = e
    out["model_metadata_entries"] = entries

    if meta_pos is None:
        out["tflite_metadata"] = None
    else:
        pos, size = meta_pos["data_offset_in_file"], meta_pos["data_size"]
        mbuf = data[pos:pos + size]
        out["tflite_metadata"] = {
            "buffer_index": meta_pos["buffer_index"],
            "offset_in_file": pos,
            "size": size,
            "offset_mod_16": pos % 16,
            "sha256": sha256(mbuf),
            "file_identifier": file_identifier(mbuf),
            "metadata": model_metadata(mbuf, 0),
        }

    z = find_zip(data, flatbuffer_extent(data, model))
    out["associated_files_zip"] = z
    if z is not None:
        # Cross-check with Python's zipfile, and describe label files.
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = [i.filename for i in zf.infolist()]
            assert names == [e["name"] for e in z["entries"]], names
            for e in z["entries"]:
                content_bytes = zf.read(e["name"])
                assert e["sha256"] is None or e["sha256"] == sha256(content_bytes)
                text = content_bytes.decode("utf-8", errors="replace")
                lines = text.split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
                e["line_count"] = len(lines)
                e["first_lines"] = lines[:3]
                e["last_line"] = lines[-1] if lines else None
    return out


# -------------------------------------------------------------------- cross-check (optional)


def _drop_defaults(x):
    """Normalize for comparison: floats as float32 values, drop empty/zero-default scalars."""
    if isinstance(x, dict):
        return {k: _drop_defaults(v) for k, v in x.items()
                if v not in (0, 0.0, "UNKNOWN", "RATIO", "IDENTITY", None)}
    if isinstance(x, list):
        return [_drop_defaults(v) for v in x]
    if isinstance(x, float):
        return struct.unpack("<f", struct.pack("<f", x))[0]
    return x


def cross_check(path: str, d: dict):
    import ctypes
    try:
        import libusb_package
        ctypes.CDLL(os.path.join(os.path.dirname(libusb_package.__file__), "libusb-1.0.so"),
                    mode=ctypes.RTLD_GLOBAL)
    except ImportError:
        pass
    from tflite_support import metadata as _metadata
    displayer = _metadata.MetadataDisplayer.with_model_file(path)
    theirs = json.loads(displayer.get_metadata_json())
    ours = d["tflite_metadata"]["metadata"]
    if _drop_defaults(theirs) != _drop_defaults(ours):
        print(json.dumps(theirs, indent=1))
        raise SystemExit(f"cross-check FAILED for {path}: metadata differs from tflite-support")
    packed = sorted(displayer.get_packed_associated_file_list())
    ours_files = sorted(e["name"] for e in (d["associated_files_zip"] or {}).get("entries", []))
    assert packed == ours_files, (packed, ours_files)
    for e in (d["associated_files_zip"] or {}).get("entries", []):
        assert sha256(displayer.get_associated_file_buffer(e["name"])) == e["sha256"]
    from importlib.metadata import version
    print(f"cross-check OK ({path}): tflite-support {version('tflite-support')} "
          f"MetadataDisplayer agrees ({len(packed)} packed files)")


def main(argv):
    check = "--cross-check" in argv
    args = [a for a in argv if a != "--cross-check"]
    if not args or len(args) % 2:
        print(__doc__)
        return 2
    for model_path, out_path in zip(args[0::2], args[1::2]):
        d = dump(model_path)
        d["generator"] = "tools/metadata/dump_metadata.py (stdlib flatbuffer + zip reader)"
        if check and d["tflite_metadata"] is not None:
            cross_check(model_path, d)
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        with open(out_path, "w") as f:
            json.dump(d, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
