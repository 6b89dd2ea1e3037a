#!/usr/bin/env python3
"""Write the compact WordNet extract that core/build.rs compiles into static tables.

Usage:
    python3 scripts/dev/wordnet_extract.py WORDNET_DICT_DIR [OUT_DIR]

WORDNET_DICT_DIR holds WordNet 3.0's database files: data.{noun,verb,adj,adv},
index.{noun,verb,adj,adv}, {noun,verb,adj,adv}.exc and cntlist.rev (Debian's
package wordnet-base installs them in /usr/share/wordnet). OUT_DIR defaults to
core/data/wordnet next to this script's repository root.

Python 3.11 standard library only. The output is deterministic: running it twice on
the same input gives byte-identical files. See core/data/wordnet/README.md for the
file formats and the choices made (which lemmas, how many senses).
"""

from __future__ import annotations

import os
import re
import sys
from collections import defaultdict

# Senses kept per (lemma, part of speech), in WordNet's order (most frequent first).
SENSE_CAP = 8
# Adjective satellites get the head's antonym ("indirect antonym") only when the
# satellite synset is among the first SAT_SENSE_CAP senses of the satellite word and
# the satellite word is attested as an adjective in SemCor (cntlist.rev count > 0):
# WordNet's whole similar-to clusters are too loose to read as contradictions.
SAT_SENSE_CAP = 1

POS_ORDER = "nvar"  # noun, verb, adjective (incl. satellites), adverb
FILE_POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
SS_TYPE_POS = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
# Single words only: ASCII lowercase letters, inner hyphens allowed ("e-mail").
WORD_RE = re.compile(r"^[a-z]+(?:-[a-z]+)*$")
HYPERNYM_PTRS = ("@", "@i")
# Lexicographer files noun.animal (5), noun.plant (20) and noun.person (18): their
# capitalised words are Latin taxonomic names (Canis, Felidae, Rosales) and names of
# individual people (Einstein, Lincoln), of little use for comparing two short English
# sentences; a lemma whose every kept sense is one of those is dropped (to stay small).
# Place names, weekdays, months, languages etc. are kept.
PROPER_LEX_FILES = (5, 18, 20)


def norm_word(w: str) -> str:
    """A data-file word as an index lemma: lower case, no adjective marker like '(a)'."""
    w = re.sub(r"\((?:a|p|ip)\)$", "", w)
    return w.lower()


def read_lines(path: str):
    with open(path, encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):  # licence header of the database files
                continue
            yield line.rstrip("\n")


def parse_index(src: str):
    """(lemma, pos) -> [synset offsets in sense order]."""
    senses: dict[tuple[str, str], list[int]] = {}
    for fname, pos in FILE_POS.items():
        for line in read_lines(os.path.join(src, f"index.{fname}")):
            parts = line.split()
            lemma, p_cnt = parts[0], int(parts[3])
            synset_cnt = int(parts[2])
            offsets = [int(x) for x in parts[4 + p_cnt + 2:]]
            assert len(offsets) == synset_cnt, line
            senses[(lemma, pos)] = offsets
    return senses


def parse_data(src: str):
    """(pos, offset) -> (ss_type, [words], [(sym, target_key, src_word, tgt_word)]),
    and the set of (word, pos, offset) senses that are capitalised names in PROPER_LEX_FILES."""
    synsets = {}
    proper_senses = set()
    for fname, pos in FILE_POS.items():
        for line in read_lines(os.path.join(src, f"data.{fname}")):
            body = line.split(" | ", 1)[0].split()
            offset, lex_file, ss_type = int(body[0]), int(body[1]), body[2]
            w_cnt = int(body[3], 16)
            raw_words = [body[4 + 2 * i] for i in range(w_cnt)]
            words = [norm_word(w) for w in raw_words]
            i = 4 + 2 * w_cnt
            p_cnt = int(body[i])
            i += 1
            ptrs = []
            for _ in range(p_cnt):
                sym, tgt, tpos, st = body[i], int(body[i + 1]), body[i + 2], body[i + 3]
                i += 4
                tpos = "a" if tpos == "s" else tpos
                ptrs.append((sym, (tpos, tgt), int(st[:2], 16), int(st[2:], 16)))
            synsets[(pos, offset)] = (ss_type, words, ptrs)
            if lex_file in PROPER_LEX_FILES:
                for raw, w in zip(raw_words, words):
                    if raw[:1].isupper():
                        proper_senses.add((w, pos, offset))
    return synsets, proper_senses


def parse_counts(src: str):
    """(lemma, pos) -> summed SemCor tag count over its senses (cntlist.rev)."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    path = os.path.join(src, "cntlist.rev")
    if not os.path.exists(path):
        return counts
    for line in read_lines(path):
        key, _sense_no, cnt = line.split()
        lemma, rest = key.split("%", 1)
        counts[(lemma, SS_TYPE_POS[rest[0]])] += int(cnt)
    return counts


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "core", "data", "wordnet")
    os.makedirs(out, exist_ok=True)

    index = parse_index(src)
    data, proper_senses = parse_data(src)
    counts = parse_counts(src)

    # Lemmas kept, with their first SENSE_CAP senses.
    kept = {
        (lemma, pos): offs[:SENSE_CAP]
        for (lemma, pos), offs in index.items()
        if WORD_RE.match(lemma)
        and not all((lemma, pos, off) in proper_senses for off in offs[:SENSE_CAP])
    }
    lemma_names = {lemma for lemma, _ in kept}

    def up_links(key):
        """Hypernyms (and instance hypernyms); for an adjective satellite, its head(s)."""
        ss_type, _words, ptrs = data[key]
        syms = ("&",) if ss_type == "s" else HYPERNYM_PTRS
        return sorted({tgt for sym, tgt, _s, _t in ptrs if sym in syms})

    # Synsets: those senses plus every hypernym ancestor (and satellites' heads).
    wanted: set[tuple[str, int]] = set()
    stack = [(pos, off) for (_, pos), offs in kept.items() for off in offs]
    while stack:
        key = stack.pop()
        if key in wanted:
            continue
        wanted.add(key)
        stack.extend(up_links(key))
    order = sorted(wanted, key=lambda k: (POS_ORDER.index(k[0]), k[1]))
    dense = {key: i for i, key in enumerate(order)}

    # Sense rank of a synset for a (lemma, pos): position in the kept sense list.
    rank = {}
    for (lemma, pos), offs in kept.items():
        for r, off in enumerate(offs):
            rank[(lemma, pos, off)] = r

    # Antonyms: WordNet's lexical '!' pointers between kept senses, as lemma pairs.
    direct: set[tuple[str, str, str]] = set()
    indirect: set[tuple[str, str, str]] = set()
    for (pos, off), (ss_type, words, ptrs) in data.items():
        for sym, (tpos, toff), s, t in ptrs:
            if sym != "!" or s == 0 or t == 0:
                continue
            a = words[s - 1]
            b = data[(tpos, toff)][1][t - 1]
            if (a, pos, off) in rank and (b, tpos, toff) in rank and a != b:
                direct.add((min(a, b), max(a, b), pos))
            # Satellites of a head adjective are indirect antonyms of the head's antonym.
            if pos == "a" and ss_type == "a" and (b, tpos, toff) in rank:
                for ssym, (spos, soff), _s2, _t2 in ptrs:
                    if ssym != "&":
                        continue
                    for x in data[(spos, soff)][1]:
                        r = rank.get((x, spos, soff))
                        if r is not None and r < SAT_SENSE_CAP and x != b and counts.get((x, "a"), 0) > 0:
                            indirect.add((min(x, b), max(x, b), pos))
    indirect -= direct
    indirect = {p for p in indirect if (p[0], p[1], p[2]) not in direct}

    # Morphological exceptions, single words, whose base is a kept lemma of that POS.
    exceptions = set()
    for fname, pos in FILE_POS.items():
        for line in read_lines(os.path.join(src, f"{fname}.exc")):
            parts = line.split()
            infl = parts[0]
            if not WORD_RE.match(infl):
                continue
            for base in parts[1:]:
                if base != infl and (base, pos) in kept:
                    exceptions.add((infl, pos, base))

    header = (
        "# Generated by scripts/dev/wordnet_extract.py from WordNet 3.0 (see README.md).\n"
        "# WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.\n"
        "# Licence and disclaimer: LICENSE in this directory.\n"
    )

    with open(os.path.join(out, "synsets.txt"), "w", encoding="ascii", newline="\n") as f:
        f.write(header)
        f.write("# line k (k = 0, 1, ... after these comments) is synset k: POS (n v a r, or s for an\n")
        f.write("# adjective satellite), then its hypernym ids (for a satellite: its head adjective)\n")
        for key in order:
            ups = sorted(dense[tgt] for tgt in up_links(key))
            tag = "s" if data[key][0] == "s" else key[0]
            f.write(" ".join([tag] + [str(h) for h in ups]) + "\n")

    with open(os.path.join(out, "lemmas.txt"), "w", encoding="ascii", newline="\n") as f:
        f.write(header)
        f.write("# lemma, then per part of speech (n v a r): POS letter + SemCor count (if > 0),\n")
        f.write("# then its synset ids in WordNet sense order (first = most frequent)\n")
        by_lemma: dict[str, list[str]] = defaultdict(list)
        for lemma, pos in sorted(kept, key=lambda k: POS_ORDER.index(k[1])):
            ids = [str(dense[(pos, off)]) for off in kept[(lemma, pos)]]
            count = counts.get((lemma, pos), 0)
            by_lemma[lemma].append(f"{pos}{count or ''} {' '.join(ids)}")
        for lemma in sorted(by_lemma, key=str.encode):
            f.write(f"{lemma} {' '.join(by_lemma[lemma])}\n")

    with open(os.path.join(out, "antonyms.txt"), "w", encoding="ascii", newline="\n") as f:
        f.write(header)
        f.write("# lemma lemma POS kind (d = direct '!' pointer, i = adjective satellite of a head's antonym)\n")
        rows = [(a, b, p, "d") for a, b, p in direct] + [(a, b, p, "i") for a, b, p in indirect]
        for a, b, p, k in sorted(rows):
            f.write(f"{a} {b} {p} {k}\n")

    with open(os.path.join(out, "exceptions.txt"), "w", encoding="ascii", newline="\n") as f:
        f.write(header)
        f.write("# inflected POS base (from noun.exc, verb.exc, adj.exc, adv.exc)\n")
        for infl, pos, base in sorted(exceptions, key=lambda e: (e[0], POS_ORDER.index(e[1]), e[2])):
            f.write(f"{infl} {pos} {base}\n")

    total = 0
    for name in ("lemmas.txt", "synsets.txt", "antonyms.txt", "exceptions.txt"):
        size = os.path.getsize(os.path.join(out, name))
        total += size
        print(f"{name}: {size} bytes", file=sys.stderr)
    print(
        f"lemmas={len(lemma_names)} lemma/pos entries={len(kept)} synsets={len(order)} "
        f"antonyms direct={len(direct)} indirect={len(indirect)} exceptions={len(exceptions)} "
        f"total={total} bytes",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
