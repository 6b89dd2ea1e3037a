#!/usr/bin/env python3
"""Counterfactual augmentation for review's judge (scripts/dev/train_judge.py).

NLI training data rarely varies a number, a time, a date or a name while keeping the rest of a
sentence, so the judge reads "The west gate opens at 10 am." against "... at 9 am." as
entailment. It also gives too little mutual entailment to near-identical rewrites. This script
makes labelled pairs from single sentences of the TRAINING files only: the premises and
hypotheses of DATA_DIR/mnli_train.tsv and DATA_DIR/snli_train.tsv. No dev or test file and
nothing under core/tests/data/corpus is read.

    python3 scripts/dev/judge_augment.py --data DATA_DIR --out OUT_DIR/augment.tsv \
        [--seed 29] [--numbers 3000] [--names 1000] [--rewrites 2000] \
        [--drops 1500] [--fronts 500] [--bounds 300]

Kinds (each made pair is written in both orders, so rows = 2 x the counts above, which are
targets: a kind with too few sentences gives fewer):

- number → contradiction: one mention changed to a different value. Sub-kinds: time ("9 am" →
  "11 am", "11:00 a.m.", "6pm", "six o'clock"), amount ("$30" → "$45", "30 percent", "5 million"),
  weekday ("Monday" → "Thursday", plurals kept), month ("March" → "July"; "May" and "March" only
  where they read as months), year (1500-2029, shifted 1-40 years), ordinal ("3rd", "the third"),
  number word ("two" .. "twelve", "twenty" .. "ninety"; "one" is left alone: it is mostly a
  pronoun), digits (any other integer). A mention after a hedge or bound ("at least", "more
  than", "about", "nearly", "up to", ...) is skipped, because changing it need not contradict;
  so are footnote/list markers (a number that opens the sentence or sits in brackets) and
  numbers glued to other characters ("9/11", "3-D", "A4").
- name → contradiction: only sentences "<Name> <verb> ..." whose first token is a person's name
  that occurs once in the sentence, followed by a verb; that name is replaced by another
  person's name from the same data. A name counts as a person's when it is capitalised, never
  occurs in lower case in the data, is at least twice the subject of a verb only people do
  ("said", "smiled", "nodded", ...) or follows "Mr."/"Mrs."/"Dr.", and follows "in"/"near"/
  "into"/"inside"/"across" less than half as often. Every other name (places, organisations, non-initial names) is skipped: swapping
  them need not contradict ("Paris is lovely" / "Rome is lovely").
- rewrite → entailment: meaning-preserving edits only. identity (the sentence itself, written
  twice), case (all lower case / first letter lowered; the judge's tokenizer lower-cases, so
  these are identity pairs to the model), punct (final full stop/exclamation removed, or a full
  stop added), commas (all commas of a sentence with at most two removed), contraction
  ("isn't" / "is n't" ↔ "is not", "can't" ↔ "cannot", "'re"/"'ll"/"'ve"/"'m" expanded; "'s"
  and "'d" are ambiguous and never touched), numfmt (a number rewritten in another format with
  the same value: "two" ↔ "2", "9 am" ↔ "9 a.m.", "$30" ↔ "30 dollars", "%" ↔ "percent").
  Word swaps such as "the" ↔ "this" are not used: they change meaning.
- contrast pairs, so that "almost the same words" does not become "contradiction" (a first run
  without them read "The bus leaves at 8:15 from platform 2." → "The bus leaves at 8:15." as a
  contradiction):
  - drop: a trailing prepositional phrase of at most six words is dropped ("... from platform 2");
    long → short is entailment, short → long neutral. Sentences with a negation, a condition or
    a quantifier ("not", "if", "only", "all", ...) are skipped: there dropping a phrase need
    not be entailed;
  - front: a trailing time adjunct ("last week", "on Monday", "in 1999", "at 9 am") is moved to
    the front ("Last week, the boiler was serviced.") → entailment both ways;
  - bound: a number after "at least" / "more than" (or "at most" / "less than" / "fewer than" /
    "up to") is changed; the stronger bound entails the weaker one, the other way is neutral.

Sentences are de-duplicated and kept when they have 4 to 40 words and at most 250 characters.
Rare sub-kinds (time, amount, weekday, month, ordinal, and names) may give up to three
different changes of one sentence (bounds too). Generation is deterministic for a seed:
sentences are sorted before any seeded shuffle, and one random.Random(seed) drives every choice.

Output: OUT (TSV, UTF-8, header `premise  hypothesis  label  split`, no quoting, the format
train_judge.py reads; `split` is `augment:<kind>:<sub-kind>`), and OUT with `.json` in place of
`.tsv`: row counts per kind and sub-kind, the seed, the SHA-256 of the inputs and of OUT.
Only the Python standard library is used.
"""

import argparse
import collections
import csv
import hashlib
import json
import os
import random
import re
import sys

SOURCES = ["mnli_train.tsv", "snli_train.tsv"]

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
NUM_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40,
             "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
SMALL_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
               "eleven", "twelve"]
SPOKEN_NUMBERS = set(SMALL_WORDS) | set(NUM_WORDS) | {"thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
                                                    "eighteen", "nineteen", "hundred", "thousand", "million", "billion"}
ORD_WORDS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
# a number right after one of these is a bound or a guess: changing it need not contradict
HEDGES = {"least", "most", "than", "over", "under", "nearly", "almost", "about", "around",
          "approximately", "roughly", "some", "up", "to", "within", "below", "above", "beyond",
          "past", "another", "or", "between", "and"}
HUMAN_VERBS = {"said", "says", "asked", "asks", "told", "replied", "answered", "whispered", "shouted",
               "nodded", "smiled", "laughed", "sighed", "grinned", "frowned", "muttered", "cried",
               "exclaimed", "insisted", "thought", "wondered", "murmured", "shrugged"}
PLACE_PREPS = {"in", "near", "into", "inside", "across"}
SPEECH_VERBS = {"said", "says", "asked", "asks", "told", "tells", "replied", "answered", "thought",
                "thinks", "wondered", "shouted", "whispered", "nodded", "smiled", "laughed", "sighed",
                "frowned", "grinned", "wrote", "decided", "wanted", "wants", "knew", "knows",
                "felt", "remembered", "looked", "married", "explained", "agreed", "insisted"}
COMMON_VERBS = SPEECH_VERBS | {
    "is", "was", "has", "had", "does", "did", "will", "would", "could", "can", "should", "must",
    "might", "may", "went", "goes", "came", "comes", "saw", "sees", "took", "takes", "gave", "gives",
    "made", "makes", "got", "gets", "ran", "runs", "left", "leaves", "found", "finds", "became",
    "began", "brought", "bought", "held", "kept", "let", "lost", "met", "paid", "put", "read",
    "sat", "stood", "spoke", "heard", "hears", "caught", "drew", "drove", "fell", "fought",
    "led", "lived", "loved", "loves", "likes", "liked", "needs", "needed", "never", "also",
    "still", "then", "just", "already", "often", "always", "once", "won", "wore", "sold",
    "sent", "spent", "struck", "swung", "threw", "turned", "walked", "watched", "works", "worked"}
NOT_VERBS = {"always", "perhaps", "thus", "as", "is", "was", "has", "its", "his", "this", "us",
             "yes", "less", "unless", "bless", "news", "series", "species", "towards", "afterwards",
             "sometimes", "nevertheless", "nonetheless", "besides", "whereas", "was", "red", "bed",
             "seed", "need", "speed", "feed", "indeed", "hundred", "bred", "shed", "fled"}
NAME_STOP = set(WEEKDAYS) | set(MONTHS) | {
    "The", "This", "That", "These", "Those", "There", "Then", "They", "Their", "What", "When",
    "Where", "Which", "While", "Who", "Why", "How", "And", "But", "For", "Yes", "Well", "Mr", "Mrs",
    "Miss", "Sir", "Lady", "Lord", "Dr", "God", "English", "American", "French", "Spanish", "British",
    "Congress", "Senate", "Government", "President", "King", "Queen", "Church", "City", "State",
    "Street", "Island", "Jesus", "Christ", "Christmas", "Easter", "Internet", "Web", "Man", "Woman",
    "Mom", "Dad", "Mother", "Father", "Uncle", "Aunt", "Captain", "General", "Colonel", "Doctor",
    "Professor", "Judge", "Bishop", "Saint", "Prince", "Princess", "Emperor", "Loral", "Texan",
    "Perth", "Microsoft", "Clinton's"}
CONTRACTIONS = [  # (contracted, expanded); "'s" and "'d" are ambiguous and never touched
    ("isn't", "is not"), ("aren't", "are not"), ("wasn't", "was not"), ("weren't", "were not"),
    ("doesn't", "does not"), ("don't", "do not"), ("didn't", "did not"), ("hasn't", "has not"),
    ("haven't", "have not"), ("hadn't", "had not"), ("won't", "will not"), ("wouldn't", "would not"),
    ("can't", "cannot"), ("couldn't", "could not"), ("shouldn't", "should not"),
    ("mustn't", "must not"), ("needn't", "need not"),
    ("I'm", "I am"), ("you're", "you are"), ("we're", "we are"), ("they're", "they are"),
    ("I've", "I have"), ("you've", "you have"), ("we've", "we have"), ("they've", "they have"),
    ("I'll", "I will"), ("you'll", "you will"), ("we'll", "we will"), ("they'll", "they will"),
    ("he'll", "he will"), ("she'll", "she will"), ("it'll", "it will"),
]

NUMBER_TARGETS = {"time": 0.10, "amount": 0.13, "weekday": 0.12, "month": 0.12, "year": 0.12,
                  "ordinal": 0.08, "digits": 0.17, "number_word": 0.16}
REWRITE_TARGETS = {"identity": 0.10, "case": 0.15, "punct": 0.20, "commas": 0.15,
                   "contraction": 0.20, "numfmt": 0.20}
RARE = {"time", "amount", "weekday", "month", "ordinal"}  # may give up to 3 changes of a sentence

NUM = r"\d{1,3}(?:,\d{3})+|\d+"
GLUE_L = r"(?<![\w.,/\-$£€#§:])"
GLUE_R = r"(?![\w/\-%]|[.,:]\d)"
TIME_RE = re.compile(r"(?<![\w.,/\-$:])(\d{1,2})(:[0-5]\d)?( ?)(a\.m\.|p\.m\.|am|pm|AM|PM|A\.M\.|P\.M\.)(?!\w)")
OCLOCK_RE = re.compile(r"\b(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|Twelve)( o'clock| o ' clock)")
DOLLAR_RE = re.compile(r"(?<![\w.,])([$£€]) ?(" + NUM + r")(\.\d\d)?(?![\d,.]\d)(?!\w)")
UNIT_RE = re.compile(GLUE_L + r"(" + NUM + r")(\.\d+)?( ?)(%|percent|per cent|dollars|cents|pounds|euros|yen|million|billion)\b")
YEAR_RE = re.compile(GLUE_L + r"(1[5-9]\d\d|20[0-2]\d)" + GLUE_R)
ORD_DIGIT_RE = re.compile(GLUE_L + r"(\d{1,3})(st|nd|rd|th)\b")
ORD_WORD_RE = re.compile(r"\b([Tt]he )(" + "|".join(ORD_WORDS) + r")\b")
DIGIT_RE = re.compile(GLUE_L + r"(" + NUM + r")" + GLUE_R)
WORD_RE = re.compile(r"\b(" + "|".join(list(NUM_WORDS) + [w.capitalize() for w in NUM_WORDS]) + r")\b")
WEEKDAY_RE = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")(s?)\b")
MONTH_RE = re.compile(r"\b(" + "|".join(MONTHS) + r")\b")
MONTH_CUE = re.compile(r"(?:\b(?:in|of|since|until|till|by|early|late|mid|last|next|this|each|every|from|through) $)|(?:\d,? $)", re.I)


def read_tsv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def hedged(s, start):
    """True when the word before position `start` is a bound or a guess ("at least 3")."""
    pre = s[max(0, start - 30):start].rstrip(" $£€")
    words = re.findall(r"[A-Za-z]+", pre)
    return bool(words) and words[-1].lower() in HEDGES and pre.endswith(words[-1])


def marker(s, start, end):
    """A footnote or list marker: a number in digits that opens the sentence, or sits in brackets."""
    if not s[start:end][:1].isdigit():
        return False
    if s[:start].strip() == "":
        return True
    before, after = s[:start].rstrip(), s[end:].lstrip()
    return before.endswith(("(", "[")) and after.startswith((")", "]"))


def fmt_like(old, value):
    """Writes `value` with thousands separators when `old` had them."""
    return f"{value:,}" if "," in old else str(value)


def other_int(rng, n):
    """A different integer of a similar size."""
    if n <= 12:
        return rng.choice([k for k in range(1, 13) if k != n])
    if rng.random() < 0.3:  # a small change: 84 -> 85
        return max(1, n + rng.choice([-3, -2, -1, 1, 2, 3]))
    if n < 100:
        return rng.choice([k for k in range(max(13, n - 40), n + 41) if k != n and k % 5 in (0, n % 5)])
    for _ in range(20):
        m = int(round(n * rng.choice([0.25, 0.4, 0.5, 0.6, 0.75, 1.25, 1.5, 2, 3, 4])))
        digits = len(str(m)) - 2
        if digits > 0:
            m = int(round(m, -digits))
        if m != n and m > 0:
            return m
    return n + 1


def ordinal(n):
    suf = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suf}"


def same_case(old, new):
    if old.isupper() and len(old) > 1:
        return new.upper()
    return new[0].upper() + new[1:] if old[:1].isupper() else new


def number_changes(s, rng):
    """Candidate contradiction edits: list of (sub-kind, start, end, function rng -> replacement)."""
    out, taken = [], []

    def add(kind, start, end, fn, check=True):
        if any(not (end <= a or start >= b) for a, b in taken):
            return
        if check and (hedged(s, start) or marker(s, start, end)):
            taken.append((start, end))
            return
        taken.append((start, end))
        out.append((kind, start, end, fn))

    for m in TIME_RE.finditer(s):
        h = int(m.group(1))
        if 1 <= h <= 12:
            add("time", m.start(1), m.end(1), lambda r, h=h: str(r.choice([k for k in range(1, 13) if k != h])))
        else:
            taken.append((m.start(), m.end()))
    for m in OCLOCK_RE.finditer(s):
        g = m.group(1)
        h = int(g) if g.isdigit() else SMALL_WORDS.index(g.lower())
        if 1 <= h <= 12:
            def fn(r, h=h, g=g):
                k = r.choice([k for k in range(1, 13) if k != h])
                return str(k) if g.isdigit() else same_case(g, SMALL_WORDS[k])
            add("time", m.start(1), m.end(1), fn)
    for m in DOLLAR_RE.finditer(s):
        v = int(m.group(2).replace(",", ""))
        add("amount", m.start(2), m.end(2), lambda r, v=v, g=m.group(2): fmt_like(g, other_int(r, v)))
    for m in UNIT_RE.finditer(s):
        v = int(m.group(1).replace(",", ""))
        add("amount", m.start(1), m.end(1), lambda r, v=v, g=m.group(1): fmt_like(g, other_int(r, v)))
    for m in WEEKDAY_RE.finditer(s):
        d = m.group(1)
        add("weekday", m.start(1), m.end(1), lambda r, d=d: r.choice([w for w in WEEKDAYS if w != d]), check=False)
    for m in MONTH_RE.finditer(s):
        mo = m.group(1)
        after = s[m.end():m.end() + 3].lstrip()
        if mo in ("May", "March") and not (MONTH_CUE.search(s[:m.start()]) or after[:1].isdigit()):
            continue
        if m.start() == 0 and not after[:1].isdigit():
            continue
        add("month", m.start(1), m.end(1), lambda r, mo=mo: r.choice([x for x in MONTHS if x != mo]), check=False)
    for m in ORD_DIGIT_RE.finditer(s):
        n = int(m.group(1))
        add("ordinal", m.start(), m.end(), lambda r, n=n: ordinal(
            r.choice([k for k in range(max(1, n - 9), n + 10) if k != n]) if n > 12 else r.choice([k for k in range(1, 13) if k != n])))
    for m in ORD_WORD_RE.finditer(s):
        w = m.group(2)
        add("ordinal", m.start(2), m.end(2), lambda r, w=w: r.choice([x for x in ORD_WORDS if x != w]), check=False)
    for m in YEAR_RE.finditer(s):
        y = int(m.group(1))
        def fn(r, y=y):
            while True:
                z = y + r.choice([-1, 1]) * r.randint(1, 40)
                if 1500 <= z <= 2029:
                    return str(z)
        add("year", m.start(1), m.end(1), fn)
    for m in DIGIT_RE.finditer(s):
        v = int(m.group(1).replace(",", ""))
        add("digits", m.start(1), m.end(1), lambda r, v=v, g=m.group(1): fmt_like(g, other_int(r, v)))
    for m in WORD_RE.finditer(s):
        w = m.group(1)
        v = NUM_WORDS[w.lower()]
        pool = [x for x, k in NUM_WORDS.items() if k != v and (k <= 12) == (v <= 12)]
        add("number_word", m.start(1), m.end(1), lambda r, w=w, pool=pool: same_case(w, r.choice(pool)))
    return out


def numfmt_edits(s):
    """Same value, another format: list of (start, end, replacement)."""
    out = []
    for m in WORD_RE.finditer(s):
        v = NUM_WORDS[m.group(1).lower()]
        near = re.findall(r"[A-Za-z]+", s[max(0, m.start() - 20):m.start()])[-1:] + re.findall(r"[A-Za-z]+", s[m.end():m.end() + 20])[:1]
        if m.start() > 0 and not any(w.lower() in SPOKEN_NUMBERS for w in near):  # not "nineteen eighty seven"
            out.append((m.start(1), m.end(1), str(v)))
    for m in DIGIT_RE.finditer(s):
        v = int(m.group(1).replace(",", ""))
        if 2 <= v <= 12 and re.match(r" [a-z]", s[m.end():]) and not hedged(s, m.start()) and not marker(s, m.start(), m.end()) \
                and not re.match(r" ?(a\.m\.|p\.m\.|am|pm|%|:)", s[m.end():], re.I) and not s[:m.start()].endswith(("$", "$ ")):
            out.append((m.start(1), m.end(1), SMALL_WORDS[v]))
    for m in TIME_RE.finditer(s):
        suf = m.group(4).lower().replace(".", "")
        alt = {"am": "a.m.", "pm": "p.m."}[suf] if "." in m.group(4) else {"am": " a.m.", "pm": " p.m."}[suf]
        alt = alt.strip() if "." in m.group(4) else alt
        new = m.group(1) + (m.group(2) or "") + (" " + suf if "." in m.group(4) else alt)
        out.append((m.start(), m.end(), new))
    for m in DOLLAR_RE.finditer(s):
        if m.group(1) == "$" and not m.group(3):
            out.append((m.start(), m.end(), m.group(2) + " dollars"))
    for m in re.finditer(r"(?<=\d) ?(%|percent)(?!\w)", s):
        out.append((m.start(), m.end(), " percent" if m.group(1) == "%" else "%"))
    return out


def contraction_edits(s):
    out = []
    for short, long in CONTRACTIONS:
        ptb = short.replace("n't", " n't").replace("'", " '", 1) if "n't" not in short else short.replace("n't", " n't")
        if short == "can't":
            ptb = "ca n't"
        if short == "won't":
            ptb = "wo n't"
        for form in (short, ptb, short.replace("'", "’")):
            for m in re.finditer(r"(?<![\w'])" + re.escape(form) + r"(?![\w'])", s, re.I):
                out.append((m.start(), m.end(), same_case(m.group(0), long)))
        for m in re.finditer(r"(?<![\w'])" + re.escape(long) + r"(?![\w'])", s, re.I):
            out.append((m.start(), m.end(), same_case(m.group(0), short)))
    return out


NEGATION = re.compile(r"\b(not|no|never|nobody|nothing|none|nor|neither|without|cannot|if|unless|whether|"
                      r"only|except|until|than|all|every|each|any|few|hardly|rarely|seldom)\b|n't\b|\?", re.I)
PREPS = ["in", "on", "at", "from", "with", "for", "near", "during", "after", "before", "by",
         "inside", "outside", "behind", "under", "across", "through", "along", "around"]
HEAD_BAD_END = {"is", "are", "was", "were", "be", "been", "being", "am", "the", "a", "an", "and", "or",
                "to", "of", "'s", "that", "this", "it", "up", "out", "off", "down", "depends", "depend",
                "rely", "relies", "consists", "consist", "lives", "live", "lived", "stay", "stays", "stayed",
                "located", "based", "born", "arrived", "arrive", "arrives", "put", "placed", "sits", "sat",
                "stands", "stood", "lies", "lay", "resides", "works", "worked"}
TIME_ADJ = (r"yesterday|today|tonight|last (?:week|month|year|night|summer|winter|spring|autumn)|"
            r"this (?:morning|afternoon|evening|week|year)|every (?:day|week|morning|evening|year)|"
            r"on (?:" + "|".join(WEEKDAYS) + r")s?|in (?:" + "|".join(MONTHS) + r")(?: \d{4})?|"
            r"in (?:1[5-9]\d\d|20[0-2]\d)|at \d{1,2}(?::\d\d)? ?(?:a\.m\.|p\.m\.|am|pm)")
FRONT_RE = re.compile(r"^(?P<rest>[A-Z][^,;:()\"]{10,}?),? (?P<adv>" + TIME_ADJ + r")(?P<end> ?[.!]?)$")
LOWER_FIRST = {"The", "A", "An", "He", "She", "They", "We", "It", "There", "This", "That", "These",
               "Those", "My", "Our", "His", "Her", "Their", "Its", "Your", "You", "Some", "Many", "Most"}
BOUND_RE = re.compile(r"(?<![Nn]o )(?<![Nn]ot )\b(?P<cue>[Aa]t least|[Mm]ore than|[Aa]t most|[Ll]ess than|[Ff]ewer than|[Uu]p to) "
                      r"(?P<num>" + NUM + r"|" + "|".join(NUM_WORDS) + r")(?![\w/\-%]|[.,:]\d)")


def drop_edit(s):
    """s without its trailing prepositional phrase, or None."""
    if NEGATION.search(s):
        return None
    body = s.rstrip()
    end = ""
    if body.endswith((" .", " !")):
        body, end = body[:-2], body[-2:]
    elif body.endswith((".", "!")):
        body, end = body[:-1], body[-1:]
    best = None
    for m in re.finditer(r" (" + "|".join(PREPS) + r") ", body):
        best = m
    if best is None:
        return None
    head, pp = body[:best.start()].rstrip(" ,"), body[best.start():]
    words = head.split()
    if not (2 <= len(pp.split()) <= 7) or len(words) < 4 or re.search(r"[,;:()\"]", pp):
        return None
    if words[-1].lower() in HEAD_BAD_END or words[-1].lower() in PREPS:
        return None
    return head + end


def front_edit(s, rng=None):
    """s with its trailing time adjunct moved to the front, or None."""
    m = FRONT_RE.match(s)
    if not m or NEGATION.search(s):
        return None
    rest, adv = m.group("rest"), m.group("adv")
    if rest.split()[-1].lower() in set(PREPS) | {"late", "early", "until", "since", "of", "to", "than", "as", "and", "or"}:
        return None  # "by late this evening": the adjunct is part of a longer phrase
    first = rest.split()[0]
    if re.split(r"'| '", first)[0] in LOWER_FIRST:
        rest = rest[0].lower() + rest[1:]
    elif first == "I" or first[0].isupper():
        pass
    comma = "," if rng is None or rng.random() < 0.7 else ""
    return adv[0].upper() + adv[1:] + comma + " " + rest + m.group("end").strip()[:1]


def parse_number(t):
    return NUM_WORDS[t.lower()] if t.lower() in NUM_WORDS else int(t.replace(",", ""))


def bound_edits(s):
    """(start, end, replacement, is_lower_bound) for each bounded number of s."""
    out = []
    if re.search(r"\b(not|no|never|nor|none|neither|without|if|unless)\b|n't\b|\?", s, re.I):
        return out  # a negation or a condition turns the direction round
    for m in BOUND_RE.finditer(s):
        t = m.group("num")
        v = parse_number(t)
        if v >= 1500 and "," not in t:  # a year: "up to 1990" is a date
            continue
        lower = m.group("cue").lower() in ("at least", "more than")
        if t.lower() in NUM_WORDS:
            opts = [w for w, k in NUM_WORDS.items() if k != v]
            new = [same_case(t, w) for w in opts]
        else:
            new = [fmt_like(t, k) for k in sorted({max(1, v // 2), v * 2, v + max(1, v // 4), max(1, v - max(1, v // 4))}) if k != v]
        out += [(m.start("num"), m.end("num"), n, lower) for n in new]
    return out


def rewrite(s, sub, rng):
    """One meaning-preserving rewrite of s, or None."""
    if sub == "identity":
        return s
    if sub == "case":
        t = s.lower() if rng.random() < 0.5 else s[:1].lower() + s[1:]
        return t if t != s else None
    if sub == "punct":
        if s.endswith((" .", " !")):
            return s[:-2]
        if s.endswith((".", "!")) and not s.endswith(".."):
            return s[:-1]
        if s[-1:].isalnum():
            return s + "."
        return None
    if sub == "commas":
        n = s.count(",")
        if 1 <= n <= 2 and not re.search(r"\d,\d", s):
            return re.sub(r" ?,", "", s)
        return None
    edits = contraction_edits(s) if sub == "contraction" else numfmt_edits(s)
    if not edits:
        return None
    a, b, new = rng.choice(edits)
    return s[:a] + new + s[b:]


def person_names(sents):
    """Capitalised words never seen in lower case, at least twice the subject of a verb only
    people do ("said", "smiled", ...) or after "Mr."/"Mrs."/"Dr.", and after a place
    preposition ("in", "near", ...) less than half as often: taken to be people's names."""
    lower, human, place = set(), collections.Counter(), collections.Counter()
    for s in sents:
        toks = [t.strip("\"'(),.;:!?") for t in s.split()]
        for w in toks:
            if w and w[0].islower():
                lower.add(w.lower())
        for i in range(len(toks) - 1):
            w, nxt = toks[i], toks[i + 1]
            if re.fullmatch(r"[A-Z][a-z]{2,}", nxt) and w in ("Mr", "Mrs", "Ms", "Dr"):
                human[nxt] += 1
            if re.fullmatch(r"[A-Z][a-z]{2,}", w) and nxt in HUMAN_VERBS:
                human[w] += 1
            if re.fullmatch(r"[A-Z][a-z]{2,}", nxt) and w.lower() in PLACE_PREPS:
                place[nxt] += 1
    return sorted(w for w, n in human.items()
                  if n >= 2 and w.lower() not in lower and w not in NAME_STOP and 2 * place[w] < n)


def name_candidate(s, names):
    toks = s.split()
    if len(toks) < 3 or toks[0] not in names:
        return None
    v = toks[1]
    if v in ("also", "never", "then", "still", "just", "already", "often", "always", "once"):
        v = toks[2] if len(toks) > 3 else ""
    ok = v in COMMON_VERBS or (re.fullmatch(r"[a-z]{3,}(ed|s)", v) and v not in NOT_VERBS and not v.endswith(("ss", "us", "is")))
    if not ok or sum(1 for t in re.findall(r"[A-Za-z]+", s) if t == toks[0]) != 1:
        return None
    return toks[0]


def take(cands, targets, total, rng, rare, build):
    """Fills each sub-kind's share of `total` (rare ones may use a sentence up to 3 times),
    then gives any shortfall to the sub-kinds that have sentences left. Returns items."""
    items, used, counts = [], set(), collections.Counter()
    want = {k: int(round(total * f)) for k, f in targets.items()}
    pools = {k: list(v) for k, v in cands.items()}
    for k in pools:
        rng.shuffle(pools[k])

    def fill(k, n):
        got = 0
        for rep in range(3 if k in rare else 1):
            for s in pools.get(k, []):
                if got >= n:
                    return got
                if (s, k, rep) in used or (rep == 0 and s in used):
                    continue
                pair = build(s, k, rng, items)
                if pair is None:
                    continue
                used.add(s), used.add((s, k, rep))
                items.append((k,) + pair)
                got += 1
        return got

    for k in targets:
        counts[k] += fill(k, want[k])
    short = total - sum(counts.values())
    for k in sorted(targets, key=lambda k: -len(pools.get(k, []))):
        if short <= 0:
            break
        g = fill(k, short)
        counts[k] += g
        short -= g
    return items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--numbers", type=int, default=3000, help="sentences changed in a number (x2 rows)")
    ap.add_argument("--names", type=int, default=1000, help="sentences with a swapped name (x2 rows)")
    ap.add_argument("--rewrites", type=int, default=2000, help="meaning-preserving rewrites (x2 rows)")
    ap.add_argument("--drops", type=int, default=1500, help="trailing phrase dropped (x2 rows: E and N)")
    ap.add_argument("--fronts", type=int, default=500, help="time adjunct moved to the front (x2 rows)")
    ap.add_argument("--bounds", type=int, default=300, help="bounded numbers changed (x2 rows: E and N)")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    sents, inputs = set(), {}
    for name in SOURCES:
        path = os.path.join(args.data, name)
        inputs[name] = sha256(path)
        for r in read_tsv(path):
            assert r["split"] == "train", (name, r["split"])
            sents.add(r["premise"].strip())
            sents.add(r["hypothesis"].strip())
    all_sents = sorted(sents)
    sents = [s for s in all_sents if 4 <= len(s.split()) <= 40 and len(s) <= 250 and "\t" not in s]

    # numbers and dates -> contradiction
    cands = collections.defaultdict(list)
    for s in sents:
        for k in sorted({c[0] for c in number_changes(s, rng)}):
            cands[k].append(s)

    def build_number(s, k, r, items):
        opts = [c for c in number_changes(s, r) if c[0] == k]
        if not opts:
            return None
        for _ in range(5):
            _, a, b, fn = r.choice(opts)
            new = fn(r)
            t = s[:a] + new + s[b:]
            if t != s and (k, s, t) not in seen:
                seen.add((k, s, t))
                return s, t, "contradiction"
        return None

    seen = set()
    numbers = take(cands, NUMBER_TARGETS, args.numbers, rng, RARE, build_number)

    # names -> contradiction
    names = person_names(all_sents)
    ncands = {"person": [s for s in sents if name_candidate(s, set(names))]}

    def build_name(s, k, r, items):
        n = name_candidate(s, set(names))
        pool = [x for x in names if x != n and x not in s]
        t = r.choice(pool) + s[len(n):]
        if ("name", s, t) in seen:
            return None
        seen.add(("name", s, t))
        return s, t, "contradiction"

    people = take(ncands, {"person": 1.0}, args.names, rng, {"person"}, build_name)

    # meaning-preserving rewrites -> entailment
    rcands = collections.defaultdict(list)
    for s in sents:
        rcands["identity"].append(s)
        rcands["case"].append(s)
        rcands["punct"].append(s)
        if 1 <= s.count(",") <= 2:
            rcands["commas"].append(s)
        if contraction_edits(s):
            rcands["contraction"].append(s)
        if numfmt_edits(s):
            rcands["numfmt"].append(s)

    def build_rewrite(s, k, r, items):
        t = rewrite(s, k, r)
        return None if t is None else (s, t, "entailment")

    rewrites = take(rcands, REWRITE_TARGETS, args.rewrites, rng, set(), build_rewrite)

    # contrast pairs: a dropped phrase (E one way, N the other), a fronted adjunct (E), a bound
    ccands = collections.defaultdict(list)
    for s in sents:
        if drop_edit(s):
            ccands["drop"].append(s)
        if front_edit(s):
            ccands["front"].append(s)
        if bound_edits(s):
            ccands["bound"].append(s)

    def build_contrast(s, k, r, items):
        if k == "drop":
            return s, drop_edit(s), "entailment", "neutral"
        if k == "front":
            return s, front_edit(s, r), "entailment", "entailment"
        a, b, new, lower = r.choice(bound_edits(s))
        v_old, v_new = parse_number(s[a:b]), parse_number(new)
        t = s[:a] + new + s[b:]
        stronger = (v_old > v_new) == lower  # the original entails the changed sentence
        return (s, t, "entailment", "neutral") if stronger else (s, t, "neutral", "entailment")

    drops = take({"drop": ccands["drop"]}, {"drop": 1.0}, args.drops, rng, set(), build_contrast)
    fronts = take({"front": ccands["front"]}, {"front": 1.0}, args.fronts, rng, set(), build_contrast)
    bounds = take({"bound": ccands["bound"]}, {"bound": 1.0}, args.bounds, rng, {"bound"}, build_contrast)

    rows, counts = [], collections.Counter()
    for kind, items in (("number", numbers), ("name", people), ("rewrite", rewrites),
                        ("contrast", drops + fronts + bounds)):
        for item in items:
            sub, a, b, label = item[:4]
            back = item[4] if len(item) > 4 else label
            tag = f"augment:{kind}:{sub}"
            # both orders; an identity pair is written twice, like the others
            for x, y, l in ((a, b, label), (b, a, back)):
                rows.append((x, y, l, tag))
                counts[tag] += 1
    rng.shuffle(rows)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="") as f:
        f.write("premise\thypothesis\tlabel\tsplit\n")
        for r in rows:
            assert all("\t" not in x and "\n" not in x for x in r)
            f.write("\t".join(r) + "\n")
    by_kind = collections.Counter()
    for tag, n in counts.items():
        by_kind[tag.split(":")[1]] += n
    stats = {
        "seed": args.seed, "inputs": inputs, "sentences": len(all_sents), "sentences_kept": len(sents),
        "person_names": len(names), "rows": len(rows),
        "rows_by_label": dict(collections.Counter(r[2] for r in rows)),
        "rows_by_kind": dict(sorted(by_kind.items())), "rows_by_sub_kind": dict(sorted(counts.items())),
        "output": os.path.basename(args.out), "sha256": sha256(args.out),
    }
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(stats, f, indent=1)
    print(json.dumps(stats, indent=1))


if __name__ == "__main__":
    sys.exit(main())
