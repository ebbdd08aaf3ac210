"""v4's generators over the real pairs of nli-train (`make nli-v4`, README "v4"): pairs made from
real sentences, not templates.

- `off_topic`: a real hypothesis against another row's premise that shares at least two of its
  content words but never names the hypothesis' subject (its proper names): neutral. The target
  is P(e) and P(c) both low: "Copenhagen has more than 160 canals." is not decided by a passage
  about Amsterdam's canals.
- `antonyms`: WordNet 3.0's antonym pointers (Debian's `wordnet-base`, `/usr/share/wordnet`) in
  real sentences. An entailed hypothesis whose word w (also in the premise) becomes its antonym:
  contradiction. A premise sentence "X is w": "X is <antonym>" contradicts, "X is not <antonym>"
  is entailed (a negated paraphrase: w and its antonym are contraries), "X is not w" contradicts.

Every pair keeps `kind` ("off_topic:<file>", "antonym:swap|copula|negated|denied") and the
row it came from, so check_data.py can test the invariants.
"""
import collections
import os
import re

WORDNET = "/usr/share/wordnet"
NEUTRAL, ENTAILMENT, CONTRADICTION = 2, 1, 0
# Words whose WordNet antonym is mostly another sense in running text ("well", "so", "up").
SKIP = {"well", "more", "less", "most", "least", "much", "little", "all", "some", "no", "up", "down", "in", "out",
        "on", "off", "over", "under", "before", "after", "here", "there", "then", "now", "only", "even", "just",
        "right", "left", "like", "ill", "best", "worst", "better", "worse", "due", "fine", "present", "general",
        "particular", "own", "major", "minor", "early", "late", "first", "last", "above", "below", "inside", "outside",
        # past participles, which running text mostly uses as verbs ("was born", "has sold")
        "born", "known", "sold", "written", "spoken", "shown", "told", "held", "built", "made", "done", "seen", "given",
        "taken", "drawn", "grown", "thrown", "worn", "sworn", "bound", "found", "lost", "won", "paid", "kept"}
STOP = set("""a an the of in on at to for from by with and or but is was are were be been being has have had
do does did not no this that these those it its he she they them his her their there which who whom whose what
when where why how as than then so such can could will would shall should may might must also into about after
before over under between during one two three more most other some any each all only its i we you our your""".split())
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
TOKEN = re.compile(r"(?<![\w-])[a-z]+(?![\w-])")  # a whole lower-case word, not part of "fast-tracked"
NAME = re.compile(r"\b[A-Z][a-zA-Z'-]+|\b\d{3,4}\b")
SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(])")


def wordnet_antonyms(root=WORDNET):
    """word -> sorted antonyms, from the adjective file's lexical '!' pointers
    (single lower-case words of at least three letters, SKIP left out)."""
    if not os.path.exists(os.path.join(root, "data.adj")):
        raise SystemExit(f"v4's antonyms read WordNet from {root}: apt-get install wordnet-base "
                         "(models/nli/env.sh does it)")
    out = collections.defaultdict(set)
    for pos in ("adj",):
        words, ptrs = {}, []
        for line in open(os.path.join(root, f"data.{pos}"), encoding="latin-1"):
            if line.startswith("  "):
                continue
            f = line.split(" | ")[0].split()
            off, n = f[0], int(f[3], 16)
            ws = [re.sub(r"\(.*\)$", "", f[4 + 2 * i]) for i in range(n)]
            words[off] = ws
            k = 4 + 2 * n
            for j in range(int(f[k])):
                sym, toff, _, st = f[k + 1 + 4 * j: k + 5 + 4 * j]
                if sym == "!" and st != "0000":
                    ptrs.append((ws[int(st[:2], 16) - 1], toff, int(st[2:], 16) - 1))
        for w, toff, ti in ptrs:
            a = words[toff][ti]
            if all(x.isalpha() and x.islower() and len(x) >= 3 and x not in SKIP and not x.endswith("ed") for x in (w, a)):
                out[w].add(a)
    return {w: sorted(a) for w, a in out.items()}


def content(text):
    return {w.lower() for w in WORD.findall(text) if w.lower() not in STOP and len(w) > 2}


def names(text):
    """Proper names and years of `text` (capitalised words not at a sentence's start, 3-4 digit numbers)."""
    out = set()
    for m in NAME.finditer(text):
        start = m.start() == 0 or text[:m.start()].rstrip().endswith((".", "!", "?", '"'))
        if not start or m.group().lower() not in STOP:
            out.add(m.group().lower())
    return out


def off_topic(rows, n, rng, max_posting=400):
    """`n` neutral pairs: row i's hypothesis against row j's premise (j of another premise) that
    shares >= 2 content words with it, names none of its proper names and has one of its own."""
    premises = sorted({r["premise"] for r in rows if 40 <= len(r["premise"]) <= 900})
    rng.shuffle(premises)
    premises = premises[:40_000]
    index = collections.defaultdict(list)
    for k, p in enumerate(premises):
        for w in content(p):
            index[w].append(k)
    order = list(range(len(rows)))
    rng.shuffle(order)
    out, used = [], set()
    for i in order:
        if len(out) >= n:
            break
        r = rows[i]
        h_names = names(r["hypothesis"])
        if not h_names:
            continue
        votes = collections.Counter()
        for w in content(r["hypothesis"]):
            post = index.get(w, ())
            if 0 < len(post) <= max_posting:
                votes.update(post)
        cands = [k for k, c in votes.most_common(20) if c >= 2 and k not in used]
        rng.shuffle(cands)
        for k in cands:
            p = premises[k]
            low = p.lower()
            if p == r["premise"] or any(re.search(r"\b" + re.escape(x) + r"\b", low) for x in h_names) or not names(p):
                continue
            used.add(k)
            out.append({"premise": p, "hypothesis": r["hypothesis"], "label": NEUTRAL,
                        "kind": "off_topic:" + r["kind"].split(":")[-1], "from": r["hypothesis"]})
            break
    return out


def _swap(text, w, a):
    """`text` with its first whole-word, lower-case `w` replaced by `a`."""
    return re.sub(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", a, text, count=1)


def antonyms(rows, n, rng, ants):
    """`n` pairs: about half swaps in entailed hypotheses (contradiction), half copula forms of
    premise sentences (contradiction, negated paraphrase as entailment, denial as contradiction)."""
    order = list(range(len(rows)))
    rng.shuffle(order)
    swaps, copulas = [], []
    cop = re.compile(r"\b(is|was|are|were)\s+(" + "|".join(sorted(map(re.escape, ants), key=len, reverse=True)) + r")(?![\w-])")
    for i in order:
        if len(swaps) >= n // 2 and len(copulas) >= n - n // 2:
            break
        r = rows[i]
        if len(swaps) < n // 2 and r["label"] == ENTAILMENT:
            hw = [w for w in TOKEN.findall(r["hypothesis"]) if w in ants]
            pw = set(TOKEN.findall(r["premise"]))
            hw = [w for w in hw if w in pw]
            if hw:
                w = rng.choice(hw)
                swaps.append({"premise": r["premise"], "hypothesis": _swap(r["hypothesis"], w, rng.choice(ants[w])),
                              "label": CONTRADICTION, "kind": "antonym:swap", "word": w})
                continue
        if len(copulas) < n - n // 2 and len(r["premise"]) <= 900:
            for s in SENT.split(r["premise"]):
                m = cop.search(s)
                if not m or len(s) > 300:
                    continue
                w, a = m.group(2), rng.choice(ants[m.group(2)])
                form = rng.random()
                if form < 0.4:
                    h, lab, k = s[:m.start(2)] + a + s[m.end(2):], CONTRADICTION, "copula"
                elif form < 0.8:
                    h, lab, k = s[:m.start(2)] + "not " + a + s[m.end(2):], ENTAILMENT, "negated"
                else:
                    h, lab, k = s[:m.start(2)] + "not " + w + s[m.end(2):], CONTRADICTION, "denied"
                copulas.append({"premise": r["premise"], "hypothesis": h, "label": lab, "kind": "antonym:" + k, "word": w})
                break
    return swaps + copulas
