"""Writes tests/golden/white_box/uqlm_0.6.7.json: uqlm 0.6.7's white-box scores on fixed,
seeded log-probability arrays, for core/tests/pure/white_box_parity.rs.

Made once with uqlm's own modules, which need only numpy and scipy for these scorers:
  python3 -m venv V && V/bin/pip install --no-deps uqlm==0.6.7 && V/bin/pip install 'numpy<2' scipy
  V/bin/python scripts/uqlm/white_box_parity.py > tests/golden/white_box/uqlm_0.6.7.json
Scores from uqlm's classes: SingleLogprobsScorer (min_probability, sequence_probability with
and without length_normalize), TopLogprobsScorer (mean/min_token_negentropy, probability_margin;
top_k_logprobs = K), and uqlm.nli.entropy_utils for the token-probability-weighted semantic
entropy (compute_cluster_probabilities, compute_semantic_entropy, normalize_entropy on given
clusters). SampledLogprobsScorer.monte_carlo_probability and SemanticDensity's
_semantic_density_process live in modules that import langchain and torch: their function
bodies are read from uqlm's files (ast) and run unchanged on a stand-in `self` (uqlm's own
LogprobsScorer methods; for the density, an NLI stand-in that returns the fixture's
probabilities in uqlm's label order)."""
import ast
import json
import os
import math
import random
import sys

import importlib.util
import types

import numpy as np

# uqlm's package __init__ files import langchain and torch: register the packages bare (their
# directories only) so that the numpy-only modules below import without them.
_root = os.path.dirname(importlib.util.find_spec("uqlm").origin)
for _pkg in ("uqlm", "uqlm.white_box", "uqlm.nli"):
    _m = types.ModuleType(_pkg)
    _m.__path__ = [os.path.join(_root, *_pkg.split(".")[1:])]
    sys.modules[_pkg] = _m
from uqlm.nli import entropy_utils  # noqa: E402
from uqlm.white_box.baseclass.logprobs_scorer import LogprobsScorer  # noqa: E402
from uqlm.white_box.single_logprobs import SingleLogprobsScorer  # noqa: E402
from uqlm.white_box.top_logprobs import TopLogprobsScorer  # noqa: E402

K = 5
rng = random.Random(7)


def token(k):
    """One position: k alternatives whose probabilities sum to at most 1, the chosen among them."""
    raw = sorted((rng.random() ** 3 for _ in range(k + 1)), reverse=True)
    z = sum(raw)
    lps = [math.log(x / z) for x in raw[:k]]
    chosen = rng.choice(lps[:3])
    return {"token": "t", "logprob": chosen,
            "top_logprobs": [{"token": f"a{i}", "logprob": lp} for i, lp in enumerate(lps)]}


def answer():
    n = rng.randint(1, 12)
    toks = [token(K if rng.random() > 0.15 else rng.randint(1, K - 1)) for _ in range(n)]
    return toks



def uqlm_function(module_file, cls, name, extra):
    """Function `name` of class `cls` in uqlm's `module_file`, compiled from its source."""
    path = os.path.join(_root, module_file)
    tree = ast.parse(open(path).read())
    node = next(f for c in tree.body if isinstance(c, ast.ClassDef) and c.name == cls
                for f in c.body if isinstance(f, ast.FunctionDef) and f.name == name)
    ns = {"np": np, "List": list, "Dict": dict, "Any": object, "Optional": object, **extra}
    exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), ns)
    return ns[name]


monte_carlo = uqlm_function("white_box/sampled_logprobs.py", "SampledLogprobsScorer", "monte_carlo_probability", {})
density = uqlm_function("scorers/shortform/density.py", "SemanticDensity", "_semantic_density_process",
                        {"compute_response_probabilities": entropy_utils.compute_response_probabilities})


class Stand(LogprobsScorer):
    def __init__(self, length_normalize=True):
        self.length_normalize = length_normalize
        self.verbose = False


class StandNli:
    label_mapping = ["contradiction", "neutral", "entailment"]

    def __init__(self, probs):
        self.probabilities = probs

    def predict_batch(self, pairs):
        raise AssertionError("every pair is given")


def nli_probs():
    raw = [rng.random() for _ in range(3)]
    z = sum(raw)
    return [x / z for x in raw]


cases = []
for c in range(16):
    ans = answer()
    samples = [answer() for _ in range(rng.randint(1, 5))]
    m = len(samples)
    row = {"tokens": ans, "samples": samples, "k": K}
    single = SingleLogprobsScorer(length_normalize=True).evaluate([ans])
    row["min_probability"] = float(single["min_probability"][0])
    row["sequence_probability"] = float(single["sequence_probability"][0])
    row["sequence_probability_not_normalized"] = float(
        SingleLogprobsScorer(length_normalize=False).evaluate([ans])["sequence_probability"][0])
    top = TopLogprobsScorer(top_k_logprobs=K).evaluate([ans])
    for k, v in top.items():
        row[k] = None if np.isnan(v[0]) else float(v[0])
    row["monte_carlo_probability"] = float(monte_carlo(Stand(), ["y"], [ans], [samples])[0])
    # Clusters of the m + 1 answers (original first), possibly overlapping as uqlm's.
    clusters, left = [], list(range(m + 1))
    while left:
        size = rng.randint(1, len(left))
        clusters.append(left[:size])
        left = left[size:]
    if len(clusters) > 1 and rng.random() < 0.3:
        clusters[1] = clusters[1] + [clusters[0][0]]
    row["clusters"] = clusters
    probs, _ = entropy_utils.compute_response_probabilities([ans] + samples, m + 1, True)
    se = entropy_utils.compute_semantic_entropy(entropy_utils.compute_cluster_probabilities(probs, clusters))
    row["semantic_negentropy"] = 1 - entropy_utils.normalize_entropy([se], m)[0]
    # Semantic density: NLI(prompt + answer, prompt + sample j), [contradiction, neutral, entailment].
    nli = [nli_probs() for _ in samples]
    row["nli"] = nli
    cands = [f"s{j}" for j in range(m)]
    table = {(f"q\ny", f"q\n{c}"): np.array([p]) for c, p in zip(cands, nli)}
    stand = Stand()
    stand.nli = StandNli(table)
    row["semantic_density"] = float(density(stand, "q", "y", cands, None, samples)[0])
    cases.append(row)

json.dump({"made_by": "scripts/uqlm/white_box_parity.py with uqlm 0.6.7 (numpy "
                      + np.__version__ + ")", "cases": cases}, sys.stdout, indent=1)
print()
