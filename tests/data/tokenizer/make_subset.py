#!/usr/bin/env python3
"""Builds the committed tokenizer test subset from the golden set (../shared/golden/tokenizer):

  qwen2.5-subset-cases.jsonl      a sample of qwen2.5-hf-cases.jsonl (HF reference ids)
  qwen2.5-subset-tokenizer.json   qwen2.5-tokenizer.json trimmed to what those cases need

Trimming keeps every merge (a, b) whose result a+b occurs inside some pre-tokenised piece of the
sample (any merge that can fire while encoding a piece produces a substring of that piece), in
the original order, plus the tokens they use, all 256 byte tokens and all added tokens, with
their original ids (the vocabulary becomes sparse). Encoding the sample with the trimmed file
therefore gives exactly the reference ids.

usage: make_subset.py GOLDEN_TOKENIZER_DIR OUT_DIR
"""
import json
import sys
import unicodedata

import regex  # pip "regex": \p{L} / \p{N} like the HF pattern

PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
           r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def main():
    gdir, out = sys.argv[1], sys.argv[2]
    cases = [json.loads(l) for l in open(f"{gdir}/qwen2.5-hf-cases.jsonl", encoding="utf-8")]
    tj = json.load(open(f"{gdir}/qwen2.5-tokenizer.json", encoding="utf-8"))
    # Sample: every 10th case and every case containing an added token, up to 300 characters.
    added = [a["content"] for a in tj["added_tokens"]]
    sample = [c for i, c in enumerate(cases) if len(c["text"]) <= 300 and
              (i % 10 == 0 or any(a in c["text"] for a in added))]

    alpha = byte_alphabet()
    pat = regex.compile(PATTERN)
    split_added = regex.compile("|".join(regex.escape(a) for a in sorted(added, key=len, reverse=True)))
    substrings = set()
    for c in sample:
        for seg in split_added.split(c["text"]):
            for piece in pat.findall(unicodedata.normalize("NFC", seg)):
                bl = "".join(alpha[b] for b in piece.encode("utf-8"))
                for i in range(len(bl)):
                    for j in range(i + 2, min(len(bl), i + 64) + 1):
                        substrings.add(bl[i:j])

    vocab = tj["model"]["vocab"]
    merges = []
    keep = set(alpha.values())
    for m in tj["model"]["merges"]:
        a, b = m if isinstance(m, list) else m.split(" ", 1)
        if a + b in substrings:
            merges.append([a, b])
            keep.update((a, b, a + b))
    tj["model"]["vocab"] = {t: i for t, i in vocab.items() if t in keep}
    tj["model"]["merges"] = merges
    with open(f"{out}/qwen2.5-subset-tokenizer.json", "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False, separators=(",", ":"))
    with open(f"{out}/qwen2.5-subset-cases.jsonl", "w", encoding="utf-8") as f:
        for c in sample:
            f.write(json.dumps({"text": c["text"], "ids": c["ids"]}, ensure_ascii=False) + "\n")
    print(f"{len(sample)} cases, {len(tj['model']['vocab'])} tokens, {len(merges)} merges")


if __name__ == "__main__":
    main()
