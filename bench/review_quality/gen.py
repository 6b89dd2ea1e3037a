#!/usr/bin/env python3
"""Writes the generated data sets of the review-quality harness into data/ (Python 3 standard
library only; deterministic: fixed seeds, one random stream per set).

    python3 bench/review_quality/gen.py            # (re)write data/
    python3 bench/review_quality/gen.py --check    # exit 1 if data/ differs from what it would write

Every record is one JSON object per line:
  id        unique in its set
  tenant    the tenant it is captured into
  user_id   the scope's user (a customer), or null
  text      what the agent remembers
  cls       event | multi | fact | state | change | paraphrase | near_miss | turn
  kind      the template family (shipped, residence, value, ...)
  chain     for state and change: "<user>/<attribute>", the single-valued attribute it sets
  supersedes  for change: the id of the state (or change) it replaces
  same_as   for paraphrase: the id of the record it restates
  near      for near_miss: the id of the record it must not be merged with
  dated     whether the text carries a date
Records of a set are captured in file order. Labels are by construction.
"""
import argparse
import datetime as dt
import hashlib
import json
import os
import random
import re
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vocab import (CHANNELS, CITIES, COMPANIES, COUNTRIES, DIETS, EVENTS, FACTS, FIRST, ITEMS, LAST,  # noqa: E402
                   MONTHS, MULTI, NICKNAMES, PLANS, RELATIONSHIP, STATE, STREETS, TIMEZONES, TITLES, TOPICS)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
SEED = 20261127
BASE = dt.date(2024, 1, 8)

# ---------------------------------------------------------------------------------------------
# rendering


def fmt_date(d, style):
    if style == "iso":
        return d.isoformat()
    if style == "mdy":
        return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def date_style(rng):
    return rng.choices(["dmy", "iso", "mdy"], [6, 2, 2])[0]


class Subj:
    """A customer and how the agent refers to them."""

    def __init__(self, cid, first, last, style):
        self.cid, self.first, self.last, self.style = cid, first, last, style
        self.fp = style == "fp"
        self.ref = {"id": cid, "cust": f"Customer {cid}", "full": f"{first} {last}", "first": first,
                    "fp": "I"}[style]

    def vals(self):
        if self.fp:
            return dict(S="I", s="I", Sp="my", sp="my", So="me")
        low = self.ref[0].lower() + self.ref[1:] if self.style == "cust" else self.ref
        return dict(S=self.ref, s=low, Sp=self.ref + "'s", sp=low + "'s", So=self.ref)

    def render(self, tpl, **vals):
        t = re.sub(r"\{([^{}|]*)\|([^{}|]*)\}", lambda m: m.group(2 if self.fp else 1), tpl)
        v = self.vals()
        v.update(vals)
        t = t.format(**v)
        if t[0].islower() and not t.startswith("cus_"):
            t = t[0].upper() + t[1:]
        return t


def make_subjects(rng, prefix, start, n, styles=None):
    styles = styles or (["id"] * 6 + ["cust"] * 5 + ["full"] * 3 + ["first"] * 3 + ["fp"] * 3)
    out = []
    for i in range(n):
        out.append(Subj(f"{prefix}{start + i}", rng.choice(FIRST), rng.choice(LAST), rng.choice(styles)))
    return out


class Ids:
    """Order, ticket and parcel numbers, unique within a set."""

    def __init__(self, rng, order=1000, ticket=5000, parcel=70000):
        self.rng, self.o, self.t, self.p = rng, order, ticket, parcel

    def order(self):
        self.o += self.rng.randint(1, 37)
        return self.o

    def ticket(self):
        self.t += self.rng.randint(1, 23)
        return self.t

    def parcel(self):
        self.p += self.rng.randint(1, 97)
        return self.p


def rec(rid, tenant, user, text, cls, kind, day=None, **kw):
    r = {"id": rid, "tenant": tenant, "user_id": user, "text": text, "cls": cls, "kind": kind}
    r.update({k: v for k, v in kw.items() if v is not None})
    if day is not None:
        r["_day"] = day
    return r


# ---------------------------------------------------------------------------------------------
# building blocks shared by the sets


def events_for(rng, subj, ids, n, day0, day1):
    """n events of one customer between two days, in time order."""
    weights = {"shipped": 3, "ordered": 2, "refund": 1, "ticket_opened": 1, "ticket_closed": 1,
               "damaged": 1, "payment": 2, "rescheduled": 1, "did": 3}
    days = sorted(rng.randint(day0, day1) for _ in range(n))
    orders, open_tickets, out, used = [], [], [], set()
    for day in days:
        while True:  # two events of a customer never read the same (an identical text is a repeat)
            kinds = [k for k in weights if k != "ticket_closed" or open_tickets]
            kind = rng.choices(kinds, [weights[k] for k in kinds])[0]
            forms = [f for f in EVENTS[kind] if not (subj.fp and "of {S}" in f)]
            form = rng.choice(forms)
            if " on {date}" in form and rng.random() < 0.3:
                form = form.replace(" on {date}", "")  # the same event, undated
            d = BASE + dt.timedelta(days=day)
            v = dict(date=fmt_date(d, date_style(rng)), item=rng.choice(ITEMS), topic=rng.choice(TOPICS),
                     city=rng.choice(CITIES), stars=rng.randint(1, 5), amt=rng.choice([19, 25, 40, 59, 75, 120, 249, 310]))
            new_order = kind in ("shipped", "ordered") or not orders or rng.random() < 0.3
            v["o"] = ids.order() if new_order else rng.choice(orders)
            v["t"] = ids.ticket() if kind == "ticket_opened" else (open_tickets[0] if kind == "ticket_closed" else 0)
            v["p"] = ids.parcel()
            text = subj.render(form, **v)
            if text.lower() not in used:
                break
        used.add(text.lower())
        if new_order:
            orders.append(v["o"])
        if kind == "ticket_opened":
            open_tickets.append(v["t"])
        elif kind == "ticket_closed":
            open_tickets.pop(0)
        out.append((day, kind, text, "{date}" in form))
    return out


def multi_for(rng, subj, plan):
    """{attribute: count} of multi-valued facts, as (attribute, value, text) in random order."""
    out = []
    for attr, k in plan.items():
        values, forms = MULTI[attr]
        for i, v in enumerate(rng.sample(values, k)):
            fs = [f for f in forms if i > 0 or "also" not in f]
            f = rng.choice(fs)
            out.append((attr, v, subj.render(f, v=v, year=rng.randint(2012, 2023))))
    rng.shuffle(out)
    return out


def facts_for(rng, subj, keys):
    """one compatible fact per key: (key, value, form index, text)."""
    out = []
    for key in keys:
        values, forms = FACTS[key]
        v = rng.choice(values)
        i = rng.randrange(len(forms))
        out.append((key, v, i, subj.render(forms[i], v=v)))
    return out


def fact_paraphrase(rng, subj, key, v, i):
    forms = FACTS[key][1]
    j = rng.choice([x for x in range(len(forms)) if x != i])
    return subj.render(forms[j], v=v)


def state_values(rng, attr):
    """A sequence of values of a single-valued attribute: initial, then one or two later ones."""
    if attr == "residence":
        return rng.sample(CITIES, 3)
    if attr == "employer":
        return rng.sample(COMPANIES, 3)
    if attr == "job":
        return rng.sample(TITLES, 3)
    if attr == "contact":
        return rng.sample(CHANNELS, 3)
    if attr == "timezone":
        return rng.sample(TIMEZONES, 3)
    if attr == "plan":
        return rng.sample(PLANS, 3)
    if attr == "diet":
        return rng.sample(DIETS, 2)  # one change only: "no longer X" leaves nothing to change from
    if attr == "relationship":
        first = rng.choice(list(RELATIONSHIP))
        seq = [first]
        while seq[-1] in RELATIONSHIP and len(seq) < 3:
            seq.append(rng.choice(RELATIONSHIP[seq[-1]])[0])
        return seq
    if attr == "nickname":
        full, a, b = rng.choice(NICKNAMES)
        return [a, b, full]
    if attr == "address":
        return [f"{rng.randint(1, 180)} {rng.choice(STREETS)}, {c}" for c in rng.sample(CITIES, 3)]
    raise KeyError(attr)


def state_text(rng, subj, attr, v, dated_day=None, avoid=None):
    spec = STATE[attr]
    if dated_day is not None and spec["dated_state"]:
        d = BASE + dt.timedelta(days=dated_day)
        return subj.render(rng.choice(spec["dated_state"]), v=v, date=fmt_date(d, date_style(rng))), None
    forms = [i for i in range(len(spec["state"])) if i != avoid]
    i = rng.choice(forms)
    return subj.render(spec["state"][i], v=v), i


def change_text(rng, subj, attr, old, new, dated_day=None):
    spec = STATE[attr]
    d = BASE + dt.timedelta(days=dated_day if dated_day is not None else 0)
    extra = dict(old=old, new=new, date=fmt_date(d, date_style(rng)), month=f"{MONTHS[d.month - 1]} {d.year}")
    if attr == "plan":
        extra["dir"] = "up" if PLANS.index(new) > PLANS.index(old) else "down"
    if attr == "relationship":
        forms = dict(RELATIONSHIP[old])[new]
        f = rng.choice([x for x in forms if ("{month}" in x) == (dated_day is not None)] or forms)
        return subj.render(f, **extra), "{month}" in f
    if dated_day is not None and spec["dated_change"]:
        return subj.render(rng.choice(spec["dated_change"]), **extra), True
    forms = spec["change"]
    if attr == "diet":
        # "no longer X" forms end the chain; the others name the new diet
        pass
    return subj.render(rng.choice(forms), **extra), False


def state_attrs(rng, k):
    return rng.sample(list(STATE), k)


# ---------------------------------------------------------------------------------------------
# (i) events


def gen_events():
    rng = random.Random(SEED + 1)
    ids = Ids(rng)
    out = []
    for subj in make_subjects(rng, "cus_", 101, 12):
        for k, (day, kind, text, dated) in enumerate(events_for(rng, subj, ids, 30, 0, 200)):
            out.append(rec(f"ev-{subj.cid}-{k:02d}", "rq_events", subj.cid, text, "event", kind, dated=dated))
    return out


# ---------------------------------------------------------------------------------------------
# (ii) multi-valued and compatible facts


def gen_multi():
    rng = random.Random(SEED + 2)
    out = []
    plan = {"likes": 3, "speaks": 2, "visited": 2, "owns": 2, "plays": 2, "reads": 1}
    for subj in make_subjects(rng, "cus_", 201, 12):
        items = [("multi", a, t) for a, _, t in multi_for(rng, subj, plan)]
        items += [("fact", key, t) for key, _, _, t in facts_for(rng, subj, rng.sample(list(FACTS), 3))]
        rng.shuffle(items)
        for k, (cls, kind, text) in enumerate(items):
            out.append(rec(f"mv-{subj.cid}-{k:02d}", "rq_multi", subj.cid, text, cls, kind))
    return out


# ---------------------------------------------------------------------------------------------
# (iii) states and later genuine changes


def state_block(rng, subj, prefix, tenant, attrs, first_days, change_days, dated_share=0.25):
    """States of attrs (on first_days), then their changes (on change_days): records with _day."""
    out = []
    n = 0

    def rid():
        nonlocal n
        n += 1
        return f"{prefix}-{subj.cid}-{n:02d}"

    for attr in attrs:
        seq = state_values(rng, attr)
        chain = f"{subj.cid}/{attr}"
        day = rng.randint(*first_days)
        dated = rng.random() < dated_share
        text, form = state_text(rng, subj, attr, seq[0], dated_day=day if dated else None)
        prev = rec(rid(), tenant, subj.cid, text, "state", attr, day, chain=chain, dated=dated,
                   _form=form, _value=seq[0], _attr=attr)
        out.append(prev)
        n_changes = 1 if len(seq) < 3 or rng.random() < 0.6 else 2
        cday = rng.randint(*change_days)
        for i in range(1, 1 + n_changes):
            dated = rng.random() < dated_share
            text, dated = change_text(rng, subj, attr, seq[i - 1], seq[i], dated_day=cday if dated else None)
            cur = rec(rid(), tenant, subj.cid, text, "change", attr, cday, chain=chain, supersedes=prev["id"],
                      dated=dated, _value=seq[i], _attr=attr)
            out.append(cur)
            # "no longer X" leaves no value to change from
            if attr == "diet" or "no longer" in text.lower() and seq[i] not in text:
                break
            prev = cur
            cday = min(cday + rng.randint(10, 40), change_days[1] + 40)
    return out


def gen_states():
    rng = random.Random(SEED + 3)
    out = []
    for subj in make_subjects(rng, "cus_", 301, 30):
        attrs = state_attrs(rng, 4)
        items = state_block(rng, subj, "sc", "rq_states", attrs, (0, 20), (40, 100))
        n = len(items)
        for key, _, _, text in facts_for(rng, subj, rng.sample(list(FACTS), 3)):
            n += 1
            items.append(rec(f"sc-{subj.cid}-{n:02d}", "rq_states", subj.cid, text, "fact", key, rng.randint(0, 60)))
        items.sort(key=lambda r: (r["_day"], r["id"]))
        out += items
    return out


# ---------------------------------------------------------------------------------------------
# (iv) paraphrases and near-misses


def _cid(rng):
    return f"cus_{rng.randint(10, 999)}"


def _two(rng, seq):
    a, b = rng.sample(seq, 2)
    return a, b


def _name(rng):
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _date(rng):
    return BASE + dt.timedelta(days=rng.randint(0, 400))


def families():
    """Each family: rng -> (original, [paraphrases], [(near-miss kind, text)])."""
    F = []

    def fam(f):
        F.append(f)
        return f

    @fam
    def contact_updates(r):
        c, c2 = _cid(r), _cid(r)
        ch, ch2 = _two(r, ["email", "SMS", "phone", "WhatsApp"])
        paras = [f"{c} would like order updates by {ch}.", f"{c} wants order updates sent by {ch}.",
                 f"Order updates for {c} should go out by {ch}."]
        return (f"Customer {c} prefers {ch} for all order updates.", paras,
                [("value", f"Customer {c} prefers {ch2} for all order updates."),
                 ("negation", f"{c} does not want order updates by {ch}."),
                 ("subject", f"Customer {c2} prefers {ch} for all order updates.")])

    @fam
    def residence(r):
        n, n2 = _name(r), _name(r)
        city, city2 = _two(r, CITIES)
        return (f"{n} lives in {city}.", [f"{n} resides in {city}.", f"{n}'s home is in {city}.", f"{n} is living in {city}."],
                [("value", f"{n} lives in {city2}."), ("negation", f"{n} does not live in {city}."),
                 ("subject", f"{n2} lives in {city}.")])

    @fam
    def allergy(r):
        n, n2 = _name(r), _name(r)
        x, x2 = _two(r, ["peanuts", "shellfish", "penicillin", "pollen", "latex"])
        adj = {"peanuts": "peanut", "shellfish": "shellfish", "penicillin": "penicillin", "pollen": "pollen", "latex": "latex"}
        return (f"{n} is allergic to {x}.", [f"{n} has an allergy to {x}.", f"{n} has a {adj[x]} allergy."],
                [("value", f"{n} is allergic to {x2}."), ("negation", f"{n} is not allergic to {x}."),
                 ("subject", f"{n2} is allergic to {x}.")])

    @fam
    def refund_approval(r):
        a, b = _two(r, FIRST)
        o = r.randint(1000, 9999)
        return (f"{a} approved the refund for order {o}.",
                [f"The refund for order {o} was approved by {a}.", f"The refund for order {o} got {a}'s approval."],
                [("value", f"{b} approved the refund for order {o}."), ("number", f"{a} approved the refund for order {o + r.randint(1, 50)}."),
                 ("negation", f"{a} did not approve the refund for order {o}.")])

    @fam
    def pays(r):
        a, b, c = r.sample(COMPANIES, 3)
        return (f"{a} pays {b} every month.", [f"Every month, {a} pays {b}.", f"{b} is paid by {a} every month.",
                                               f"{a} makes a monthly payment to {b}."],
                [("roles", f"{b} pays {a} every month."), ("value", f"{a} pays {b} every week."),
                 ("subject", f"{c} pays {b} every month.")])

    @fam
    def shipped(r):
        o = r.randint(1000, 9999)
        d = _date(r)
        d2 = d + dt.timedelta(days=r.randint(1, 20))
        return (f"Order {o} shipped on {fmt_date(d, 'dmy')}.",
                [f"Order {o} was shipped on {fmt_date(d, 'iso')}.", f"On {fmt_date(d, 'mdy')}, order {o} shipped.",
                 f"Order {o} went out on {fmt_date(d, 'dmy')}."],
                [("number", f"Order {o} shipped on {fmt_date(d2, 'dmy')}."),
                 ("subject", f"Order {o + r.randint(1, 90)} shipped on {fmt_date(d, 'dmy')}."),
                 ("negation", f"Order {o} has not shipped yet.")])

    @fam
    def route(r):
        p = r.randint(10000, 99999)
        c1, c2, c3 = r.sample(CITIES, 3)
        return (f"Parcel P-{p} was sent from {c1} to {c2}.",
                [f"Parcel P-{p} went from {c1} to {c2}.", f"Parcel P-{p} travelled from {c1} to {c2}."],
                [("roles", f"Parcel P-{p} was sent from {c2} to {c1}."), ("value", f"Parcel P-{p} was sent from {c1} to {c3}.")])

    @fam
    def referral(r):
        a, b, c = r.sample(FIRST, 3)
        return (f"{a} referred {b} to the shop.", [f"{b} was referred to the shop by {a}."],
                [("roles", f"{b} referred {a} to the shop."), ("value", f"{a} referred {c} to the shop.")])

    @fam
    def language(r):
        n, n2 = _name(r), _name(r)
        l1, l2 = _two(r, MULTI["speaks"][0])
        return (f"{n} speaks {l1}.", [f"{n} can speak {l1}.", f"{n} is {'an' if l1[0] in 'AEIOU' else 'a'} {l1} speaker."],
                [("value", f"{n} speaks {l2}."), ("negation", f"{n} does not speak {l1}."), ("subject", f"{n2} speaks {l1}.")])

    @fam
    def employer(r):
        n, n2 = _name(r), _name(r)
        c1, c2 = _two(r, COMPANIES)
        return (f"{n} works at {c1}.", [f"{n} is employed by {c1}.", f"{n} works for {c1}.", f"{c1} employs {n}."],
                [("value", f"{n} works at {c2}."), ("negation", f"{n} does not work at {c1}."), ("subject", f"{n2} works at {c1}.")])

    @fam
    def plan(r):
        c, c2 = _cid(r), _cid(r)
        p1, p2 = _two(r, PLANS)
        return (f"Customer {c} is on the {p1} plan.",
                [f"{c} has a {p1} plan subscription.", f"{c} subscribes to the {p1} plan.", f"The {p1} plan is the one customer {c} is on."],
                [("value", f"Customer {c} is on the {p2} plan."), ("subject", f"Customer {c2} is on the {p1} plan.")])

    @fam
    def delivery(r):
        n = _name(r)
        t1, t2 = _two(r, ["morning", "afternoon", "evening"])
        return (f"{n} prefers {t1} deliveries.", [f"{n} would rather have deliveries in the {t1}.", f"{n} likes deliveries to arrive in the {t1}."],
                [("value", f"{n} prefers {t2} deliveries."), ("negation", f"{n} does not want {t1} deliveries.")])

    @fam
    def children(r):
        n = _name(r)
        k1, k2 = _two(r, ["two", "three", "four", "five"])
        return (f"{n} has {k1} children.", [f"{n} has {k1} kids.", f"{n} is the parent of {k1} children.", f"{n} is a parent of {k1} kids."],
                [("number", f"{n} has {k2} children.")])

    @fam
    def meeting(r):
        c1, c2 = _two(r, COMPANIES)
        d = _date(r)
        d2 = d + dt.timedelta(days=r.randint(1, 30))
        return (f"The quarterly review with {c1} is on {fmt_date(d, 'dmy')}.",
                [f"{c1}'s quarterly review is scheduled for {fmt_date(d, 'dmy')}.",
                 f"The quarterly review with {c1} takes place on {fmt_date(d, 'iso')}."],
                [("number", f"The quarterly review with {c1} is on {fmt_date(d2, 'dmy')}."),
                 ("subject", f"The quarterly review with {c2} is on {fmt_date(d, 'dmy')}.")])

    @fam
    def escalation(r):
        a, b = _two(r, FIRST)
        t = r.randint(1000, 9999)
        return (f"{a} escalated ticket T-{t} to tier 2.",
                [f"Ticket T-{t} was escalated to tier 2 by {a}.", f"Ticket T-{t} was moved up to tier 2 by {a}."],
                [("number", f"{a} escalated ticket T-{t} to tier 3."), ("subject", f"{a} escalated ticket T-{t + r.randint(1, 40)} to tier 2."),
                 ("value", f"{b} escalated ticket T-{t} to tier 2.")])

    @fam
    def price(r):
        n = _name(r)
        a1, a2 = _two(r, [19, 29, 39, 49, 59, 79, 99])
        return (f"{n}'s subscription costs {a1} EUR a month.",
                [f"{n} pays {a1} EUR per month for the subscription.", f"The monthly price of {n}'s subscription is {a1} EUR.",
                 f"{n}'s subscription is {a1} EUR per month."],
                [("number", f"{n}'s subscription costs {a2} EUR a month."), ("value", f"{n}'s subscription costs {a1} EUR a year.")])

    @fam
    def birthday(r):
        n, n2 = _name(r), _name(r)
        b1, b2 = _two(r, FACTS["birthday"][0])
        return (f"{n}'s birthday is on {b1}.", [f"{n} was born on {b1}.", f"{n} celebrates their birthday on {b1}."],
                [("number", f"{n}'s birthday is on {b2}."), ("subject", f"{n2}'s birthday is on {b1}.")])

    @fam
    def timezone(r):
        n = _name(r)
        z1, z2 = _two(r, TIMEZONES)
        return (f"{n} is in the {z1} time zone.", [f"{n}'s time zone is {z1}.", f"{n}'s timezone is set to {z1}."],
                [("value", f"{n} is in the {z2} time zone.")])

    @fam
    def invoices(r):
        n = _name(r)
        c1, c2 = _two(r, CITIES)
        return (f"{n} wants invoices sent by post to {c1}.",
                [f"{n} would like invoices mailed to {c1}.", f"Invoices for {n} should be posted to {c1}."],
                [("value", f"{n} wants invoices sent by post to {c2}."), ("value", f"{n} wants invoices sent by email."),
                 ("negation", f"{n} does not want invoices sent by post.")])

    @fam
    def call_time(r):
        n = _name(r)
        h, h2 = _two(r, [2, 3, 4, 5])
        return (f"{n} prefers calls after {h} pm.", [f"{n} would rather be called after {h} pm.", f"Call {n} after {h} pm, as they prefer."],
                [("value", f"{n} prefers calls before {h} pm."), ("number", f"{n} prefers calls after {h2} pm.")])

    @fam
    def discount(r):
        n = _name(r)
        o = r.randint(1000, 9999)
        p1, p2 = _two(r, [5, 10, 15, 20, 25])
        return (f"{n} received a {p1}% discount on order {o}.",
                [f"Order {o} of {n} got a {p1}% discount.", f"A {p1}% discount was applied to {n}'s order {o}."],
                [("number", f"{n} received a {p2}% discount on order {o}."), ("subject", f"{n} received a {p1}% discount on order {o + r.randint(1, 60)}.")])

    @fam
    def pet(r):
        n = _name(r)
        b1, b2 = _two(r, ["golden retriever", "labrador", "beagle", "border collie", "dachshund"])
        p1, p2 = _two(r, ["Max", "Luna", "Bella", "Rocky", "Nala", "Oscar"])
        return (f"{n} owns a {b1} called {p1}.", [f"{n} has a {b1} named {p1}.", f"{n}'s {b1} is called {p1}."],
                [("value", f"{n} owns a {b2} called {p1}."), ("value", f"{n} owns a {b1} called {p2}.")])

    @fam
    def warehouse(r):
        c1, c2 = _two(r, CITIES)
        h, h2 = _two(r, [16, 17, 18, 19, 20])
        return (f"The {c1} warehouse closes at {h}:00 on weekdays.",
                [f"On weekdays the {c1} warehouse closes at {h - 12} pm.", f"The {c1} warehouse shuts at {h}:00 from Monday to Friday."],
                [("number", f"The {c1} warehouse closes at {h2}:00 on weekdays."), ("subject", f"The {c2} warehouse closes at {h}:00 on weekdays.")])

    @fam
    def diet(r):
        n, n2 = _name(r), _name(r)
        return (f"{n} follows a vegan diet.", [f"{n} is vegan.", f"{n} eats a vegan diet."],
                [("negation", f"{n} does not follow a vegan diet."), ("value", f"{n} follows a vegetarian diet."),
                 ("subject", f"{n2} follows a vegan diet.")])

    @fam
    def job(r):
        n, n2 = _name(r), _name(r)
        t1, t2 = _two(r, TITLES)
        return (f"{n} is {t1}.", [f"{n} works as {t1}.", f"{n} is employed as {t1}."],
                [("value", f"{n} is {t2}."), ("subject", f"{n2} is {t1}.")])

    @fam
    def cancellation(r):
        n = _name(r)
        o = r.randint(1000, 9999)
        return (f"{n} cancelled order {o}.", [f"Order {o} was cancelled by {n}.", f"Order {o} got cancelled by {n}."],
                [("subject", f"{n} cancelled order {o + r.randint(1, 70)}."), ("negation", f"{n} did not cancel order {o}.")])

    @fam
    def manager(r):
        a, b = _two(r, FIRST)
        c1, c2 = _two(r, CITIES)
        return (f"{a} manages the {c1} team.", [f"The {c1} team is managed by {a}.", f"{a} is the manager of the {c1} team."],
                [("value", f"{b} manages the {c1} team."), ("subject", f"{a} manages the {c2} team.")])

    @fam
    def return_window(r):
        c, c2 = _cid(r), _cid(r)
        n1, n2 = _two(r, [14, 30, 45, 60, 90])
        return (f"Customer {c} may return items within {n1} days.",
                [f"{c} has {n1} days to return items.", f"The return window for customer {c} is {n1} days."],
                [("number", f"Customer {c} may return items within {n2} days."), ("subject", f"Customer {c2} may return items within {n1} days.")])

    return F


def gen_paraphrases():
    rng = random.Random(SEED + 4)
    out = []
    g = 0
    for rep in range(5):
        for f in families():
            g += 1
            user = f"pp_{g:03d}"
            orig, paras, nears = f(rng)
            base = f"pp-{g:03d}"
            out.append(rec(f"{base}-o", "rq_paraphrases", user, orig, "fact", f.__name__))
            for i, p in enumerate(paras):
                out.append(rec(f"{base}-p{i}", "rq_paraphrases", user, p, "paraphrase", f.__name__, same_as=f"{base}-o"))
            for i, (kind, t) in enumerate(nears):
                out.append(rec(f"{base}-n{i}", "rq_paraphrases", user, t, "near_miss", kind, near=f"{base}-o", family=f.__name__))
    return out


# ---------------------------------------------------------------------------------------------
# (v) a held-out-like stream: 40 customers, ~25 records each, in time order


def gen_stream():
    rng = random.Random(SEED + 5)
    ids = Ids(rng, order=40000, ticket=80000, parcel=300000)
    everything = []
    for subj in make_subjects(rng, "cus_", 501, 40):
        attrs = state_attrs(rng, 3)
        items = state_block(rng, subj, "st", "rq_stream", attrs, (0, 25), (70, 130))
        n = len(items)

        def rid():
            nonlocal n
            n += 1
            return f"st-{subj.cid}-{n:02d}"

        plan = dict(rng.sample([("likes", 2), ("speaks", 1), ("visited", 1), ("owns", 1), ("plays", 1), ("reads", 1)], 4))
        for attr, _, text in multi_for(rng, subj, plan):
            items.append(rec(rid(), "rq_stream", subj.cid, text, "multi", attr, rng.randint(0, 120)))
        facts = facts_for(rng, subj, rng.sample(list(FACTS), 2))
        for key, _, _, text in facts:
            items.append(rec(rid(), "rq_stream", subj.cid, text, "fact", key, rng.randint(0, 40)))
        for day, kind, text, dated in events_for(rng, subj, ids, 9, 0, 140):
            items.append(rec(rid(), "rq_stream", subj.cid, text, "event", kind, day, dated=dated))
        # paraphrases: of a state before it changes, and of a compatible fact after it
        st = next(r for r in items if r["cls"] == "state" and r.get("_form") is not None) if any(
            r["cls"] == "state" and r.get("_form") is not None for r in items) else None
        if st is not None:
            first_change = min(r["_day"] for r in items if r.get("chain") == st["chain"] and r["cls"] == "change")
            text, _ = state_text(rng, subj, st["_attr"], st["_value"], avoid=st["_form"])
            items.append(rec(rid(), "rq_stream", subj.cid, text, "paraphrase", st["_attr"],
                             rng.randint(st["_day"] + 1, max(st["_day"] + 1, first_change - 1)), same_as=st["id"],
                             chain=st["chain"]))
        key, v, i, _ = facts[0]
        orig = next(r for r in items if r["cls"] == "fact" and r["kind"] == key)
        items.append(rec(rid(), "rq_stream", subj.cid, fact_paraphrase(rng, subj, key, v, i), "paraphrase", key,
                         rng.randint(orig["_day"] + 1, orig["_day"] + 60), same_as=orig["id"]))
        everything += items
    everything.sort(key=lambda r: (r["_day"], r["user_id"], r["id"]))
    return everything


# ---------------------------------------------------------------------------------------------
# the cases, as a regression set: each case its own tenant, with what it must give


def gen_regression():
    out = []

    def case(name, user, rows):
        for i, (text, expect) in enumerate(rows):
            out.append({"id": f"rg-{name}-{i:02d}", "tenant": f"rq_reg_{name.replace('-', '_')}", "user_id": user,
                        "text": text, "cls": "regression", "kind": name, "expect": expect})

    # 32 of 33 blocked on 0.19.0
    case("events-u1", None, [(f"Order {n} of customer u1 shipped on day {n}.", "new") for n in range(1, 34)])
    case("refund-orders", "cus_1", [("cus_1 asked for a refund on order 1001.", "new"),
                                    ("cus_1 asked for a refund on order 2002.", "new")])
    case("speaks-vs-invoices", "cus_2", [("cus_2 wants invoices sent by post to Lisbon.", "new"),
                                         ("cus_2 speaks Portuguese.", "new")])
    case("tea-espresso", "cus_3", [("cus_3 likes green tea.", "new"), ("cus_3 likes espresso.", "new")])
    turns = [("Maria", "8 May 2023", "Hey Tom! I went to a pottery class yesterday and loved it."),
             ("Tom", "8 May 2023", "That's great, Maria! I've been busy with work and the kids."),
             ("Maria", "8 May 2023", "I made a little bowl. It's wonky but I'm proud of it."),
             ("Tom", "8 May 2023", "Nice! We went to the beach on Saturday, the kids loved it."),
             ("Maria", "25 May 2023", "Hi Tom! Long time. We adopted a puppy last week!"),
             ("Tom", "25 May 2023", "No way! What's the puppy called?"),
             ("Maria", "25 May 2023", "Her name is Pepper. She chews everything."),
             ("Tom", "25 May 2023", "Ha! Our cat would not be happy with a puppy around."),
             ("Maria", "9 June 2023", "I signed up for a half marathon in October."),
             ("Tom", "9 June 2023", "Wow, good luck! I only run to catch the bus."),
             ("Maria", "9 June 2023", "Training starts Monday. I'm nervous but excited."),
             ("Tom", "9 June 2023", "You'll do great. I started learning the guitar, by the way."),
             ("Maria", "30 June 2023", "How is the guitar going?"),
             ("Tom", "30 June 2023", "Slowly! My fingers hurt but I can play two songs now."),
             ("Maria", "30 June 2023", "Pepper passed her puppy class today!"),
             ("Tom", "30 June 2023", "Congrats to Pepper! We are going camping next weekend.")]
    case("dated-turns", None, [(f"{s} ({d}): {t}", "new") for s, d, t in turns])
    case("undated-turns", None, [(f"{s}: {t}", "new") for s, d, t in turns])
    # missed on 0.19.0: mem0-shaped updates, subjectless as mem0 writes them
    case("moved-to-porto", "alice", [("Lives in Lisbon", "new"), ("Moved to Porto", "contradicts:0")])
    case("no-longer-vegan", "bob", [("Follows a vegan diet", "new"), ("No longer follows a vegan diet", "contradicts:0")])
    case("changed-jobs", "carol", [("Works at Globex as a data analyst", "new"),
                                   ("Changed jobs, now works at Initech as a product manager", "contradicts:0")])
    case("now-works-at", "cus_5", [("cus_5 works at Acme Corp.", "new"), ("cus_5 now works at Globex.", "contradicts:0")])
    case("downgraded", "cus_6", [("cus_6 is on the Pro plan.", "new"), ("cus_6 downgraded from Pro to Basic.", "contradicts:0")])
    # never merged on 0.19.0
    case("paraphrase-email", "cus_1", [("Customer cus_1 prefers email for all order updates.", "new"),
                                       ("cus_1 would like order updates by email.", "duplicate:0")])
    return out


# ---------------------------------------------------------------------------------------------
# (c) a mem0-shaped export with 25 planted updates


MEM0_STATES = {
    # attribute: (initial forms, [(update form, value-changing?)], paraphrase forms); {v} old, {w} new
    "residence": (["Lives in {v}"], ["Moved to {w}", "Relocated to {w}", "Moved from {v} to {w}", "Now lives in {w}"],
                  ["Resides in {v}", "Home is in {v}"], CITIES),
    "employer": (["Works at {v}", "Works at {v} as {t}"], ["Changed jobs, now works at {w}", "Now works at {w}",
                                                           "Left {v} for {w}", "Started a new job at {w}"],
                 ["Is employed by {v}", "Employed at {v}"], COMPANIES),
    "diet": (["Follows a {v} diet", "Is {v}"], ["No longer follows a {v} diet", "Is no longer {v}", "Stopped being {v}",
                                                 "Is {w} now"], ["Eats a {v} diet"], DIETS),
    "contact": (["Prefers {v} for order updates"], ["Now prefers {w} for order updates", "Switched to {w} for order updates",
                                                     "No longer wants order updates by {v}, prefers {w}"],
                ["Would like order updates by {v}", "Wants order updates sent by {v}"], CHANNELS),
    "plan": (["Is on the {v} plan", "Subscribes to the {v} plan"], ["{D}graded from {v} to {w} plan", "{D}graded to the {w} plan",
                                                                    "Switched to the {w} plan"],
             ["Has a {v} plan subscription"], PLANS),
    "timezone": (["Time zone is {v}"], ["Time zone changed to {w}", "Now in the {w} time zone"], ["Is in the {v} time zone"], TIMEZONES),
    "nickname": (["Prefers to be called {v}"], ["Now goes by {w}", "Asked to be called {w} from now on"], ["Goes by {v}"], None),
    "relationship": (["Is {v}"], None, None, None),
}
MEM0_OTHER = ["Likes green tea", "Speaks Portuguese", "Has a dog named Max", "Allergic to peanuts", "Has visited Japan",
              "Plays tennis on weekends", "Reads science fiction", "Has two children", "Likes espresso", "Speaks French",
              "Owns an electric car", "Enjoys hiking", "Birthday is on 14 June", "Has a cat named Luna", "Plays the piano"]
MEM0_EVENTS = ["Ordered {item} on {date}", "Asked for a refund on order {o}", "Reported a damaged parcel on {date}",
               "Called support about {topic} on {date}", "Paid {amt} EUR on {date}"]


def gen_mem0():
    rng = random.Random(SEED + 6)
    users = ["alice", "bob", "carol", "dan", "eve", "frank", "grace", "heidi"]
    t0 = dt.datetime(2024, 9, 2, 9, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=-8)))
    mems, labels = [], {"updates": {}, "paraphrases": {}, "out_of_order": [], "others": []}
    n_updates = 0
    for ui, user in enumerate(users):
        per_user = 4 if ui == 0 else 3
        attrs = rng.sample([a for a in MEM0_STATES if a != "relationship"], 4)
        clock = t0 + dt.timedelta(days=ui, minutes=rng.randint(0, 600))
        recs = []

        def add(text, kind, at):
            mid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            recs.append({"id": mid, "memory": text, "_kind": kind, "_at": at})
            return mid

        originals = {}
        for attr in attrs:
            init, _, _, values = MEM0_STATES[attr]
            if attr == "nickname":
                full, a, b = rng.choice(NICKNAMES)
                v, w = a, b
            elif attr == "plan":
                v, w = rng.sample(PLANS, 2)
            else:
                v, w = rng.sample(values, 2)
            form = rng.choice(init)
            text = form.format(v=v, t=rng.choice(TITLES))
            clock += dt.timedelta(hours=rng.randint(2, 30))
            originals[attr] = (add(text, "state", clock), v, w)
        for text in rng.sample(MEM0_OTHER, 3):
            clock += dt.timedelta(hours=rng.randint(2, 30))
            labels["others"].append(add(text, "other", clock))
        for _ in range(2):
            clock += dt.timedelta(hours=rng.randint(2, 30))
            e = rng.choice(MEM0_EVENTS).format(item=rng.choice(ITEMS), date=(clock.date() - dt.timedelta(days=1)).isoformat(),
                                               o=rng.randint(1000, 9999), topic=rng.choice(TOPICS), amt=rng.choice([25, 40, 120]))
            labels["others"].append(add(e, "event", clock))
        # paraphrases of two originals (before any update of them)
        para_attrs = rng.sample([a for a in attrs if MEM0_STATES[a][2]], 2 if ui < 5 else 1)
        for attr in para_attrs:
            mid, v, w = originals[attr]
            clock += dt.timedelta(hours=rng.randint(2, 30))
            pid = add(rng.choice(MEM0_STATES[attr][2]).format(v=v), "paraphrase", clock)
            labels["paraphrases"][pid] = mid
        # the planted updates
        for attr in rng.sample(attrs, per_user):
            mid, v, w = originals[attr]
            upd = rng.choice(MEM0_STATES[attr][1])
            d = "Up" if attr == "plan" and PLANS.index(w) > PLANS.index(v) else "Down"
            clock += dt.timedelta(days=rng.randint(3, 20))
            uid = add(upd.format(v=v, w=w, D=d), "update", clock)
            labels["updates"][uid] = mid
            n_updates += 1
        for r in recs:
            r["user_id"] = user
        mems += recs
    assert n_updates == 25, n_updates
    mems.sort(key=lambda r: r["_at"])
    # six updates placed before the memory they update (their created_at stays later)
    upd_ids = [m["id"] for m in mems if m["_kind"] == "update"]
    for uid in rng.sample(upd_ids, 6):
        orig = labels["updates"][uid]
        u = next(m for m in mems if m["id"] == uid)
        mems.remove(u)
        mems.insert(next(i for i, m in enumerate(mems) if m["id"] == orig), u)
        labels["out_of_order"].append(uid)
    results = []
    for m in mems:
        at = m["_at"].isoformat(timespec="microseconds")
        results.append({"id": m["id"], "memory": m["memory"], "hash": hashlib.md5(m["memory"].encode()).hexdigest(),
                        "metadata": None, "created_at": at, "updated_at": at, "user_id": m["user_id"],
                        "agent_id": "shop-assistant", "categories": []})
    labels["out_of_order"].sort()
    return {"results": results, "count": len(results), "next": None, "previous": None}, labels


# ---------------------------------------------------------------------------------------------


def check_unique(name, records):
    seen = set()
    for r in records:
        key = (r["tenant"], r["user_id"], r["text"].lower())
        assert key not in seen, f"{name}: {r['text']!r} twice in one scope"
        seen.add(key)
    return records


def strip(records):
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in records]


def outputs():
    files = {}

    def jsonl(name, records):
        files[name] = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in strip(check_unique(name, records)))

    jsonl("events.jsonl", gen_events())
    jsonl("multi.jsonl", gen_multi())
    jsonl("states.jsonl", gen_states())
    jsonl("paraphrases.jsonl", gen_paraphrases())
    jsonl("stream.jsonl", gen_stream())
    jsonl("regression.jsonl", gen_regression())
    export, labels = gen_mem0()
    files["mem0_export.json"] = json.dumps(export, indent=1, ensure_ascii=False) + "\n"
    files["mem0_labels.json"] = json.dumps(labels, indent=1, ensure_ascii=False) + "\n"
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with data/ instead of writing")
    a = ap.parse_args()
    files = outputs()
    bad = 0
    for name, content in files.items():
        path = os.path.join(DATA, name)
        if a.check:
            try:
                same = open(path, encoding="utf-8").read() == content
            except FileNotFoundError:
                same = False
            if not same:
                print(f"{path} differs from what gen.py writes", file=sys.stderr)
                bad = 1
        else:
            os.makedirs(DATA, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(content)
            print(f"wrote {path} ({content.count(chr(10))} lines)")
    return bad


if __name__ == "__main__":
    sys.exit(main())
