#!/usr/bin/env python3
"""Dialogue pairs for the learned judge's third run (issue 40), from Synthetic-Persona-Chat.

    python3 scripts/dev/judge_dialogue.py --spc DIR --out DATA_DIR/dialogue.tsv [--seed 29]

DIR holds Synthetic-Persona-Chat's `valid.csv` and `test.csv` (scripts/dev/judge_data.md says
where they come from; CC BY 4.0). Only those two files are read; stdlib only. What agents write
into memory is a speaker's turn or a fact about a person, often with the speaker's name and the
session's date in front ("Ana (8 May 2023): I have a dog."). The first two runs saw none of that,
and the judge read two facts about one person, or one speaker's fact beside another's, as
contradictions. The rows, each a (premise, hypothesis, label) the construction decides:

- two different persona facts of one person, plain or in the same speaker's words, with or without
  dates: neutral ("I love to bake cookies." / "Knitting is my passion.");
- two turns of a conversation by its two speakers, each with their name: neutral;
- a persona fact and its negation in the same speaker's words: contradiction ("I have a dog." /
  "I do not have a dog.");
- the same, the negation in another speaker's words: neutral (one speaker's word about
  themself is not contradicted by what another says of themself);
- a persona fact in a speaker's words with a session date and the same fact without it, or with
  another date: entailment (a date places a turn; it is no value).

Output: the TSV format of scripts/dev/judge_data.py (premise, hypothesis, label, split=train), and
DATA_DIR/dialogue.json with the counts.
"""
import argparse
import csv
import hashlib
import json
import os
import random
import re

# first names for the speakers (SPC calls them "User 1" and "User 2")
NAMES = [
    "Ana", "Ben", "Caroline", "Daniel", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Karin", "Luis",
    "Maya", "Nikos", "Olga", "Pedro", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wes", "Xenia",
    "Yusuf", "Zoe", "Melanie", "Marco", "Priya", "Tomas", "Leila", "Erik", "Nadia", "Omar", "Lena", "Ivo",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
PRESENT = {
    "like", "love", "enjoy", "hate", "work", "live", "play", "own", "want", "need", "eat", "drink", "read",
    "watch", "drive", "collect", "speak", "teach", "study", "go", "listen", "cook", "paint", "write", "prefer",
    "run", "swim", "volunteer", "believe", "know", "wear", "sing", "dance", "travel", "bake", "grow", "make",
    "take", "use", "visit", "spend", "keep", "ride", "attend", "raise",
}


def date(rng):
    y, m, d = rng.choice([2022, 2023, 2024, 2025]), rng.randrange(12), rng.randint(1, 28)
    return rng.choice([f"{d} {MONTHS[m]} {y}", f"{MONTHS[m]} {d}, {y}", f"{y}-{m + 1:02d}-{d:02d}"])


def said(name, text, when=None):
    return f"{name} ({when}): {text}" if when else f"{name}: {text}"


def negate(s):
    """The negation of a first-person persona fact, or None where no plain rule applies."""
    w = s.rstrip(".").split()
    if len(w) < 3 or s.count(".") > 1 or re.search(r"\b(not|never|no|n't|nobody|nothing)\b", s, re.I):
        return None
    head, verb, rest = w[0], w[1].lower(), " ".join(w[2:])
    if head == "I":
        if verb in ("am", "was"):
            return f"I {verb} not {rest}."
        if verb == "can":
            return f"I cannot {rest}."
        if verb == "have" and w[2].lower() not in ("been", "to", "had", "never"):
            return f"I do not have {rest}."
        if verb in PRESENT:
            return f"I do not {verb} {rest}."
        return None
    if head == "My" and len(w) > 3 and w[2] in ("is", "are"):
        return f"My {w[1]} {w[2]} not {' '.join(w[3:])}."
    return None


def negations(facts):
    """Each fact that has a negation, with it."""
    return [(f, n) for f in facts if (n := negate(f))]


def statement(turn):
    """A conversation turn that states something (not a question, a greeting or too short)."""
    return len(turn.split()) >= 5 and "?" not in turn and not re.match(r"(hi|hello|hey|thanks|thank you|bye)\b", turn, re.I)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows, counts = [], {}

    def add(kind, p, h, label):
        p, h = " ".join(p.split()), " ".join(h.split())
        if p and h and p != h:
            rows.append((p, h, label))
            counts[kind] = counts.get(kind, 0) + 1

    inputs = {}
    for part in ("valid", "test"):
        path = os.path.join(args.spc, f"{part}.csv")
        inputs[part] = hashlib.sha256(open(path, "rb").read()).hexdigest()
        for rec in csv.DictReader(open(path, newline="", encoding="utf-8")):
            personas = [[s.strip() for s in rec[k].split("\n") if s.strip()] for k in ("user 1 personas", "user 2 personas")]
            a, b = rng.sample(NAMES, 2)
            names = [a, b]
            turns = {0: [], 1: []}
            for line in rec["Best Generated Conversation"].split("\n"):
                m = re.match(r"User ([12]):\s*(.+)", line.strip())
                if m and statement(m.group(2)):
                    turns[int(m.group(1)) - 1].append(m.group(2).strip())
            for u in (0, 1):
                facts = personas[u]
                if len(facts) >= 2:
                    x, y = rng.sample(facts, 2)
                    style = rng.randrange(3)
                    if style == 0:
                        add("same person, two facts", x, y, "neutral")
                    elif style == 1:
                        add("same person, two facts", said(names[u], x), said(names[u], y), "neutral")
                    else:
                        add("same person, two facts", said(names[u], x, date(rng)), said(names[u], y, date(rng)), "neutral")
                negatable = negations(facts)
                if negatable:
                    f, n = rng.choice(negatable)
                    when = (date(rng), date(rng)) if rng.random() < 0.5 else (None, None)
                    p, h = (said(names[u], f, when[0]), said(names[u], n, when[1])) if rng.random() < 0.7 else (f, n)
                    if rng.random() < 0.5:
                        p, h = h, p
                    add("a fact and its negation, one speaker", p, h, "contradiction")
                if facts and u == 0:
                    f = rng.choice(facts)
                    add("one fact, dated and not", said(names[u], f, date(rng)), said(names[u], f, rng.choice([None, date(rng)])), "entailment")
            # the other speaker denies what the first says of themself: no contradiction
            negatable = negations(personas[0])
            if negatable and rng.random() < 0.5:
                f, n = rng.choice(negatable)
                add("a fact and its negation, two speakers", said(names[0], f), said(names[1], n), "neutral")
            if turns[0] and turns[1] and rng.random() < 0.75:
                x, y = rng.choice(turns[0]), rng.choice(turns[1])
                when = date(rng) if rng.random() < 0.5 else None
                add("two speakers' turns", said(names[0], x, when), said(names[1], y, when), "neutral")
    rng.shuffle(rows)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("premise\thypothesis\tlabel\tsplit\n")
        for p, h, label in rows:
            f.write(f"{p}\t{h}\t{label}\ttrain\n")
    labels = {}
    for _, _, label in rows:
        labels[label] = labels.get(label, 0) + 1
    out = {"rows": len(rows), "labels": labels, "kinds": counts, "inputs_sha256": inputs,
           "sha256": hashlib.sha256(open(args.out, "rb").read()).hexdigest(), "seed": args.seed}
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
