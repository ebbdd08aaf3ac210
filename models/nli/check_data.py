"""Invariants of the synthetic generators (domains.py, bios.py), run by `make nli-smoke`: every
pair well formed, labels in range and balanced, an off-topic claim's subject never named in its
premise, a supported claim's figures all stated in its premise, and training and dev seeds
disjoint; and v4's generators over the real pairs (real_aug.py): an off-topic neutral shares two
content words with its premise and names none of the hypothesis' names, an antonym pair differs
from its real sentence by one WordNet antonym (or "not" and one). Exits non-zero with the first
pairs that break a rule.

  python check_data.py [N] [--data DIR]   (N domain pairs, default 3000; DIR holds nli-train/)
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bios  # noqa: E402
import data  # noqa: E402
import domains  # noqa: E402
import real_aug  # noqa: E402

NUM = re.compile(r"\d[\d,]*")


def check(n):
    bad = collections.defaultdict(list)
    rows = [domains.example(data.SEED_BASE["dom"] + i) for i in range(n)]
    labels = collections.Counter(r["label"] for r in rows)
    for r in rows:
        kind = r["kind"].split(":")[1]
        if not r["premise"].strip() or not r["hypothesis"].strip() or r["label"] not in (0, 1, 2):
            bad["malformed"].append(r)
        if kind == "off_topic" and (r["other"].lower() in r["premise"].lower() or r["other"].lower() not in r["hypothesis"].lower()):
            bad["off_topic names its subject in the premise"].append(r)
        if kind in ("off_topic", "specific", "absent") and r["label"] != 2:
            bad["neutral kind not neutral"].append(r)
        if kind == "support":
            missing = [x for x in NUM.findall(r["hypothesis"]) if x.rstrip(",") not in r["premise"]
                       and not (int(x.replace(",", "")) < len(domains.WORDS) and domains.WORDS[int(x.replace(",", ""))] in r["premise"])]
            if missing or r["subject"].lower() not in r["hypothesis"].lower():
                bad["support claim not stated"].append(r)
    for lab, c in labels.items():
        if not 0.15 <= c / n <= 0.55:
            bad[f"label {lab} share {c / n:.2f} outside 0.15-0.55"].append({})
    for i in range(min(n, 300)):  # the biographies' kinds stay well formed too
        for kind in ("long_v3", "short_v3", "v3"):
            r = bios.example(data.SEED_BASE[kind] + i, kind)
            if not r["premise"].strip() or not r["hypothesis"].strip() or r["label"] not in (0, 1, 2):
                bad["malformed biography"].append(r)
    ranges = sorted((base, base + max(v.get(k, 0) for v in data.MIXES.values()), k) for k, base in data.SEED_BASE.items())
    for (a0, a1, ka), (b0, _, kb) in zip(ranges, ranges[1:]):
        if a1 > b0:
            bad[f"seed ranges of {ka} and {kb} overlap"].append({})
    if ranges[-1][1] > data.DEV_SEED_BASE:
        bad["training seeds reach the dev set's"].append({})
    return rows, labels, bad


def check_real_aug(data_dir, n=600):
    """v4's off-topic neutrals and antonym pairs (real_aug.py) from the real pairs: their rules."""
    import random
    bad = collections.defaultdict(list)
    rows = data.real_derived(data_dir, {"off_topic": n, "antonym": n}, random.Random(7))
    ants = real_aug.wordnet_antonyms()
    kinds = collections.Counter(r["kind"].split(":")[0] + ":" + r["kind"].split(":")[1].split("_")[0] for r in rows)
    for r in rows:
        kind, sub = r["kind"].split(":")
        if kind == "off_topic":
            low = r["premise"].lower()
            if r["label"] != 2 or len(real_aug.content(r["hypothesis"]) & real_aug.content(r["premise"])) < 2:
                bad["off_topic not neutral or sharing fewer than two words"].append(r)
            if any(re.search(r"\b" + re.escape(x) + r"\b", low) for x in real_aug.names(r["hypothesis"])):
                bad["off_topic names the hypothesis' subject in its premise"].append(r)
        elif kind == "antonym":
            w, h = r["word"], r["hypothesis"]
            swapped = any(re.search(r"(?<![\w-])" + re.escape(a) + r"(?![\w-])", h) for a in ants.get(w, ()))
            want = {"swap": 0, "copula": 0, "negated": 1, "denied": 0}[sub]
            if r["label"] != want or w not in ants:
                bad[f"antonym {sub}: label {r['label']} (want {want}) or word without antonym"].append(r)
            if sub in ("swap", "copula") and not swapped:
                bad[f"antonym {sub}: no antonym of {w!r} in the hypothesis"].append(r)
            if sub == "negated" and not (swapped and " not " in h):
                bad["antonym negated: not 'not <antonym>'"].append(r)
            if sub == "denied" and "not " + w not in h:
                bad["antonym denied: not 'not <word>'"].append(r)
    if kinds.get("off_topic:fever", 0) + kinds.get("off_topic:vitaminc", 0) == 0 or len(rows) < n:
        bad[f"too few pairs: {len(rows)} for {2 * n} asked, kinds {dict(kinds)}"].append({})
    return rows, kinds, bad


if __name__ == "__main__":
    args = sys.argv[1:]
    data_dir = args[args.index("--data") + 1] if "--data" in args else "../shared/data"
    nums = [a for a in args if a.isdigit()]
    n = int(nums[0]) if nums else 3000
    rows, labels, bad = check(n)
    kinds = collections.Counter(r["kind"].split(":")[1] for r in rows)
    print(f"check_data: {n} domain pairs, labels {dict(sorted(labels.items()))}, kinds {dict(kinds)}")
    aug, aug_kinds, aug_bad = check_real_aug(data_dir)
    print(f"check_data: {len(aug)} pairs of v4's real_aug.py, kinds {dict(aug_kinds)}")
    bad.update(aug_bad)
    for rule, rs in bad.items():
        print(f"check_data: FAILED {rule}: {len(rs)} pairs, e.g. {rs[:2]}", file=sys.stderr)
    sys.exit(1 if bad else 0)
