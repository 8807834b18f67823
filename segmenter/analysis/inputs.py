"""Build the analysis inputs: `[CLS] s1 [SEP] s2 [SEP] ... sk [SEP]` per gold document, and batch them.

Each token carries the id of its sentence, so statistics can ask whether two tokens share a sentence.
Batches are padded and sized by the memory the captured attention will take. Pure numpy; the only
model-specific piece is the `tokenize` callable passed in. Leaves out: running the model, statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from segmenter.gold.corpus import Document

NO_SENTENCE = -1


@dataclass(frozen=True)
class SentenceText:
    """One document as the analysis feeds it to the encoder.

    ids:      (T,) int64 `[CLS] s1 [SEP] ... sk [SEP]`
    sentence: (T,) int64 sentence index per token; -1 for [CLS]; a [SEP] has the sentence it closes
    dropped:  sentences of the document that did not fit (or were skipped as too long)
    """

    doc_id: str
    ids: np.ndarray
    sentence: np.ndarray
    n_sentences: int
    dropped: int

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def build_text(
    doc: Document,
    tokenize: Callable[[str], np.ndarray],
    cls_id: int,
    sep_id: int,
    max_tokens: int,
) -> SentenceText:
    """Consecutive sentences of `doc`, each followed by [SEP], after one [CLS], within `max_tokens`.

    The text is cut at the first sentence border that would exceed `max_tokens`; a first sentence that
    alone exceeds it is skipped and the next one tried. `tokenize(sentence) -> (n,) ids` adds no specials.

    >>> toks = {"a b": np.array([5, 6]), "c": np.array([7])}
    >>> t = build_text(Document("d", ("a b", "c")), toks.__getitem__, 1, 2, 16)
    >>> t.ids.tolist(), t.sentence.tolist()
    ([1, 5, 6, 2, 7, 2], [-1, 0, 0, 0, 1, 1])
    """
    ids, sentence = [np.array([cls_id], dtype=np.int64)], [np.array([NO_SENTENCE], dtype=np.int64)]
    length, kept, dropped = 1, 0, 0
    for number, text in enumerate(doc.sentences):
        piece = np.asarray(tokenize(text), dtype=np.int64)
        if piece.size == 0:
            dropped += 1
            continue
        if length + piece.size + 1 > max_tokens:
            if kept == 0:
                dropped += 1
                continue
            dropped += len(doc.sentences) - number
            break
        ids.append(np.append(piece, sep_id))
        sentence.append(np.full(piece.size + 1, kept, dtype=np.int64))
        length += piece.size + 1
        kept += 1
    return SentenceText(doc.id, np.concatenate(ids), np.concatenate(sentence), kept, dropped)


def build_texts(
    docs: Iterable[Document],
    tokenize: Callable[[str], np.ndarray],
    cls_id: int,
    sep_id: int,
    max_tokens: int,
    min_sentences: int,
) -> Iterator[SentenceText | None]:
    """`build_text` for each document, None where fewer than `min_sentences` sentences fit (one per doc)."""
    for doc in docs:
        text = build_text(doc, tokenize, cls_id, sep_id, max_tokens)
        yield text if text.n_sentences >= min_sentences else None


def attention_bytes(n_texts: int, length: int, n_layers: int, n_heads: int) -> int:
    """Bytes of float32 attention (L, B, H, T, T) captured for a batch of `n_texts` padded to `length`."""
    return 4 * n_layers * n_texts * n_heads * length * length


def plan_batches(
    texts: Iterable[SentenceText], n_layers: int, n_heads: int, budget_bytes: int
) -> Iterator[list[SentenceText]]:
    """Group consecutive texts so that each batch's captured attention stays within `budget_bytes`.

    A single text always forms a batch, whatever its size.
    """
    batch: list[SentenceText] = []
    longest = 0
    for text in texts:
        grown = max(longest, len(text))
        if batch and attention_bytes(len(batch) + 1, grown, n_layers, n_heads) > budget_bytes:
            yield batch
            batch, grown = [], len(text)
        batch.append(text)
        longest = grown
    if batch:
        yield batch


def pad_batch(texts: list[SentenceText], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(B, T) input ids and attention mask for `texts`, right-padded to the longest."""
    length = max(len(t) for t in texts)
    ids = np.full((len(texts), length), pad_id, dtype=np.int64)
    mask = np.zeros((len(texts), length), dtype=np.int64)
    for row, text in enumerate(texts):
        ids[row, : len(text)] = text.ids
        mask[row, : len(text)] = 1
    return ids, mask
