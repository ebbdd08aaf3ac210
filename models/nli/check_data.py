"""Invariants of the synthetic generators (domains.py, bios.py), run by `make nli-smoke`: every
pair well formed, labels in range and balanced, an off-topic claim's subject never named in its
premise, a supported claim's figures all stated in its premise, and training and dev seeds
disjoint. Exits non-zero with the first pairs that break a rule.

  python check_data.py [N]   (N domain pairs, default 3000)
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bios  # noqa: E402
import data  # noqa: E402
import domains  # noqa: E402

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


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rows, labels, bad = check(n)
    kinds = collections.Counter(r["kind"].split(":")[1] for r in rows)
    print(f"check_data: {n} domain pairs, labels {dict(sorted(labels.items()))}, kinds {dict(kinds)}")
    for rule, rs in bad.items():
        print(f"check_data: FAILED {rule}: {len(rs)} pairs, e.g. {rs[:2]}", file=sys.stderr)
    sys.exit(1 if bad else 0)
