#!/usr/bin/env python3
"""Reference token ids for the C tokenizer (sotto_tokenize): openai-whisper's own
tiktoken encodings, `gpt2` (English-only models such as tiny.en) and `multilingual` (base
and the other multilingual models), on a fixed corpus. Writes, one line per case, in the
same order:

    tests/golden/tokens/corpus.tsv   name <TAB> the text as hex of its UTF-8 bytes
    tests/golden/tokens/ENC.tsv      name <TAB> ids, space-separated (ENC: gpt2, multilingual)

ids are `encoding.encode_ordinary(text)` (what Tokenizer.encode gives for text without
special-token strings; sotto_tokenize treats those as ordinary text too).

It also checks what the C side relies on: the vocabulary of the CTranslate2 directories
(vocabulary.txt) is the encoding's ranks (token id = rank), and it reports how the merges
lists of their tokenizer.json (what the Hugging Face loader reads) relate to the ranks.

Run from the repository root: .venv-golden/bin/python scripts/golden_tokens.py
"""

import json
import os
import random
import sys

import whisper.tokenizer as wt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "golden", "tokens")
MODELS = {"gpt2": "models/tiny.en-ct2", "multilingual": "models/base-ct2"}
PROMPT = ("Sense and Sensibility, by Jane Austen, read for LibriVox. "
          "Mr. John Dashwood, Elinor and Marianne.")

FIXED = [
    ("prose", "The quick brown fox jumps over the lazy dog."),
    ("prose-long", "And Mr. John Dashwood had then leisure to consider how much there might be "
     "prudently in his power to do for them. He was not an ill-disposed young man, unless to be "
     "rather cold-hearted and rather selfish is to be ill-disposed: but he was, in general, well "
     "respected; for he conducted himself with propriety in the discharge of his ordinary duties."),
    ("prompt", " " + PROMPT),
    ("contractions", "I'm sure you're right: they've said it's what we'd do, and we'll see. "
     "I'M SURE YOU'RE, 'tis 'S 's 'll 'Ll' 're've'd'm't ''s ' s"),
    ("apostrophes", "rock'n'roll ’s don’t O'Neill '''s 'x' l'été"),
    ("numbers", "In 1999 we bought 3 apples, 12 oranges and 1,234,567.89 dollars; 2024-01-31 at "
     "12:30:45.5, +44 (0)20 7946 0958, 3.14159e-10, 0x1F, 007"),
    ("numbers-unicode", "½ ¼ ² ³ ¹ ٣٤٥ ७८९ Ⅻ ⅷ ① ⑳ 𝟙𝟚𝟛 ¾x x¾"),
    ("digits-spaced", "1 2  3   4    5 10 100 1000 10000 100000 1000000"),
    ("punctuation", "Wait... what?!? (yes) [no] {maybe} -- --- ... !!! ??? ;;; <<>> $$$ %%% \"\"\" "
     "*** @#&^~`|\\ /// ,,, ::: -_- =+= «quoted» „so“ — – … • · ¡¿"),
    ("whitespace", "a  b   c    d\t\te\n\nf\r\ng \n h\t \t\ti   \n\n\n j\n \n"),
    ("trailing-spaces", "trailing spaces   "),
    ("trailing-newline", "line one\nline two\n"),
    ("leading-spaces", "   three leading spaces"),
    ("leading-space", " one leading space"),
    ("leading-newlines", "\n\nnewlines first"),
    ("leading-tab", "\tTab first"),
    ("only-spaces", "     "),
    ("only-newline", "\n"),
    ("space-newline-space", " \n "),
    ("only-tab", "\t"),
    ("single-space", " "),
    ("empty", ""),
    ("unicode-spaces", "a\u00a0b\u2003c\u3000d\u0085e\u2028f\u2029g\u1680h\u202fi\u205fj\u2000k\u200al"),
    ("not-spaces", "x\u001cy\u001dz\u001ew\u001fv u\u200bt s\u180er q\ufeffp \u00ad"),
    ("space-before-unicode-space", "a \u00a0b  \u3000c \u2003 d"),
    ("controls", "\x01\x02\x03 \x7f\x1b[0m bell\x07 \x0b\x0c vt ff"),
    ("accented-latin", "Élodie a mangé une crème brûlée à Besançon; Ærøskøbing, Straße, naïve café, "
     "São Paulo, Dvořák, Łódź, Đorđe, İstanbul, ﬁnal ﬂow"),
    ("combining", "e\u0301 a\u0308 n\u0303o Z\u0351\u0352\u0353algo \u0301lead"),
    ("cyrillic", "Сегодня хорошая погода, и мы пойдём гулять в парк. Вечером мы будем читать книги."),
    ("greek", "Η γρήγορη καφέ αλεπού πηδάει πάνω από το τεμπέλικο σκυλί. Ελλάδα!"),
    ("cjk", "今天天气很好，我们去公园散步吧。東京は日本の首都です。서울은 한국의 수도입니다。カタカナ ｶﾀｶﾅ"),
    ("arabic", "مرحبا بالعالم، كيف حالك اليوم؟ ١٢٣"),
    ("hebrew", "שלום עולם, מה שלומך?"),
    ("hindi", "नमस्ते दुनिया, आप कैसे हैं? हिन्दी"),
    ("thai", "สวัสดีครับ ยินดีที่ได้รู้จัก"),
    ("emoji", "I ❤️ pizza 🍕🍕! 👍🏽 👨‍👩‍👧‍👦 🇩🇪🇫🇷 ☕ 😀😃😄 ✔︎"),
    ("mixed-scripts", "Hello мир 世界 123abc abc123 x²+y²=z² naïveté Ελλάδα! tōkyō東京2020 Ωmega"),
    ("special-token-text", "<|endoftext|> <|startoftranscript|><|en|><|transcribe|> <|0.00|> <|notimestamps|>"),
    ("html-code", "<p class=\"x\">Hi &amp; bye</p> if (a->b != NULL) { return x[i] * 2; } // done"),
    ("url-email", "https://example.org/path?q=1&r=two#frag mail@example.com"),
    ("german-compound", "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft"),
    ("repeats", "hahahahahahahaha aaaaaaaaaaaaaaaa ........ ------- ________ ======== "
     "the the the the the the"),
    ("astral", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐐀𐐁 𠜎𠜱𠝹 \U0001E5D0 \U00031350 \U000A0000 \U0010FFFD"),
]


def long_cases():
    rng = random.Random(20250625)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(4000))
    mixed = "".join(rng.choice("etaoinshrdlucmfwyp") for _ in range(3000))
    return [
        ("long-a", "a" * 5000),
        ("long-letters", letters),
        ("long-letters-spaced", " " + mixed),
        ("long-digits", "9" * 3000),
        ("long-digits-mixed", "".join(str(rng.randrange(10)) for _ in range(2500))),
        ("long-bang", "!" * 2000),
        ("long-spaces-word", " " * 1000 + "x"),
        ("long-spaces-end", "x" + " " * 1000),
        ("long-newlines", "\n" * 500 + "y"),
        ("long-ab", "ab" * 1500),
        ("long-cjk", "".join(chr(0x4E00 + rng.randrange(0x5000)) for _ in range(1500))),
        ("long-emoji", "".join(chr(0x1F600 + rng.randrange(0x50)) for _ in range(800))),
        ("long-cyrillic", "".join(chr(0x0430 + rng.randrange(32)) for _ in range(2000))),
    ]


def random_cases(n=300):
    """Short random strings over a pool that stresses the pre-split: letters of several
    scripts, digits, apostrophes and contraction letters, spaces of every kind, punctuation,
    combining marks, emoji, controls."""
    pool = (list("aAsStTrRevVmMlLdD'’ 0123456789.,!?-_\"()") + [" "] * 6
            + ["\t", "\n", "\r", "\u00a0", "\u3000", "\u2003", "\u0085", "\u001c", "\u200b"]
            + list("éßøñçЖжΩω中文日本한글ابגआ्ि") + ["\u0301", "\u0308"]
            + ["😀", "👍🏽", "🇩🇪", "❤️", "\U0001E5D0", "²", "½", "٣", "Ⅻ", "\x7f", "\x01"])
    rng = random.Random(51865)
    out = []
    for i in range(n):
        length = 1 + rng.randrange(40)
        out.append((f"random-{i:03d}", "".join(rng.choice(pool) for _ in range(length))))
    return out


def clip_cases():
    out = []
    for sub in ("", "lang"):
        path = os.path.join(ROOT, "tests", "data", "clips", sub, "transcripts.tsv")
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    cols = line.rstrip("\n").split("\t")
                    out.append((f"clip-{cols[0]}", " " + cols[-1]))
    return out


def byte_decoder():
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def check_model(name, enc):
    """vocabulary.txt == ranks; tokenizer.json merges vs ranks. Returns report lines."""
    d = os.path.join(ROOT, MODELS[name])
    if not os.path.isdir(d):
        return [f"{name}: {MODELS[name]} missing, vocabulary not checked"]
    dec = byte_decoder()
    ranks = enc._mergeable_ranks
    lines = []
    with open(os.path.join(d, "vocabulary.txt"), encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f]
    base = [bytes(dec[c] for c in tok) for tok in vocab[:len(ranks)]]
    bad = [i for i, t in enumerate(base) if ranks.get(t) != i]
    lines.append(f"{name}: vocabulary.txt ids 0..{len(ranks) - 1} == tiktoken ranks: "
                 f"{'yes' if not bad else 'NO, first differing ids ' + str(bad[:5])}; "
                 f"next token {vocab[len(ranks)]!r} (eot {enc.eot_token})")
    if bad:
        sys.exit("\n".join(lines))
    tj_path = os.path.join(d, "tokenizer.json")
    if os.path.exists(tj_path):
        with open(tj_path, encoding="utf-8") as f:
            merges = json.load(f)["model"]["merges"]
        made = {}
        for i, m in enumerate(merges):
            a, b = m.split(" ") if isinstance(m, str) else m
            made[bytes(dec[c] for c in a) + bytes(dec[c] for c in b)] = i
        offsets = sorted({ranks[t] - i for t, i in made.items()})
        unmade = sorted(ranks[t] for t in ranks if len(t) > 1 and t not in made)
        n_multi = sum(1 for t in ranks if len(t) > 1)
        lines.append(f"{name}: tokenizer.json has {len(merges)} merges for "
                     f"{n_multi} multi-byte ranks; merge i makes rank i + {offsets}; "
                     f"multi-byte ranks no merge makes: {unmade[:8]} "
                     f"{[ranks_inv(ranks, r) for r in unmade[:8]]}")
    return lines


def ranks_inv(ranks, r):
    for t, k in ranks.items():
        if k == r:
            return t
    return None


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = FIXED + clip_cases() + long_cases() + random_cases()
    names = [c[0] for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    report = []
    with open(os.path.join(OUT, "corpus.tsv"), "w", encoding="ascii") as f:
        f.write("".join(f"{case}\t{text.encode('utf-8').hex()}\n" for case, text in cases))
    for name in ("gpt2", "multilingual"):
        enc = wt.get_encoding(name)
        report += check_model(name, enc)
        rows = []
        for case, text in cases:
            ids = enc.encode_ordinary(text)
            assert enc.decode_bytes(ids) == text.encode("utf-8"), case
            rows.append(f"{case}\t{' '.join(map(str, ids))}\n")
        with open(os.path.join(OUT, f"{name}.tsv"), "w", encoding="ascii") as f:
            f.write("".join(rows))
        print(f"{name}: {len(rows)} cases, {sum(len(r.split(chr(9))[1].split()) for r in rows)} ids "
              f"-> tests/golden/tokens/{name}.tsv")
    for line in report:
        print(line)


if __name__ == "__main__":
    main()
