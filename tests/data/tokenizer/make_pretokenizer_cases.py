#!/usr/bin/env python3
"""Writes pretokenizer-cases.jsonl: {"text", "pieces"} for the Qwen2 split regex, computed by
the Python `regex` module (a backtracking engine with \\p{L}/\\p{N}, like HF's Oniguruma), for
hand-picked edge cases and seeded random strings over letters, numbers, Unicode white space,
CR/LF, apostrophes and symbols. Only characters assigned before Unicode 14 are used, so the
expected classes do not depend on the Unicode version of either side.

usage: make_pretokenizer_cases.py > pretokenizer-cases.jsonl
"""
import json
import random

import regex

PAT = regex.compile(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

EDGE = [
    "", " ", "  ", "   ", "\t", "\n", "\n\n", "\t\n", " \n ", "a  b", "a \n b", "  \n  x",
    "Hello world", " Hello", "  Hello", "'s", "'S", "'sometimes", "I'm", "WE'LL", "we'Re",
    "can't", "'ſ", "'x", "''s", "' s", "123456", " 123", "x1y2", "...", " ...\n\n", "(Hello",
    "a\u00a0b", "a\u3000\u3000b", "x \u2028y", "\u0085a", "\r\n\r\n", " \r\n", "a\u200bb",
    "中文 字符", " 中文", "한국어", "e\u0301", "😀😀 x", " 😀\n", "\u2167\u2168", "½ ²",
    "tab\tsep", "end   ", "end \n", "$$$a", "--\n--", "a'b'c", "don't   stop", "\x0b\x0cq",
]

POOL = (list("aAbzZ09'sStTrReEvVmMlLdD \tſ\n\r\x0b\x0c.,!?-_()[]{}\"<>|/\\@#$%^&*+=~`;:") +
        ["\u00a0", "\u2028", "\u2029", "\u3000", "\u2003", "\u0085", "\u1680", "\u200b", "\ufeff",
         "\u202f", "\u205f", "\u180e", "\u0301", "\u0308", "\u093f", "\u0e31",
         "\U0001F600", "\u2764", "\ufe0f", "\u200d"] +
        list("éüßÆœǅǈＡｚ中文字한국어ひらカタ٣۴०१২௫០０ⅠⅫↂ〇²¹¼①❶€£©°±µ×÷–—…•ʰˆℂℝ"))


def main():
    rng = random.Random(20240611)
    texts = list(EDGE)
    for _ in range(250):
        s = "".join(rng.choice(POOL) for _ in range(rng.randint(1, 14)))
        if rng.random() < 0.3:
            s = s.replace(" ", " " * rng.randint(1, 4))
        texts.append(s)
    for t in texts:
        print(json.dumps({"text": t, "pieces": PAT.findall(t)}, ensure_ascii=False))


if __name__ == "__main__":
    main()
