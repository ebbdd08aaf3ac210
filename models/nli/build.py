"""The NLI model recipe: start model (ONNX -> PyTorch, checked against ONNX Runtime), training
mix, one pass of fine-tuning, ONNX export (checked against PyTorch), `uqd models optimize`, and
the evaluation (evaluate.py), printed as a table and written to OUT/recipe.json.

  python build.py --variant v2 --out DIR            the full v2-class rebuild (from v1)
  python build.py --variant v3 --out DIR            v3: a further pass from v2 on v3's mix
  python build.py --variant v4 --out DIR            v4: a further pass from v2 on every nli-train file,
                                                    off-topic neutrals and antonyms made from them and
                                                    v2's biography mix, distilled toward v2 on v2's rows
                                                    (--pairs N scales it; --interpolate L exports the
                                                    weights (1 - L) v2 + L v4 beside it)
  python build.py --variant fast --out DIR          the student: v2's layers 0, 2, 4 distilled from
                                                    v2's logits on v2's mix (--pairs N scales it)
  python build.py --variant v2 --smoke --out DIR    a few hundred pairs: checks that the whole
                                                    recipe runs and that uqd loads and scores
                                                    with what it exports
Run it through `make nli-model` / `make nli-v3` / `make nli-v4` / `make nli-fast` / `make nli-smoke` (models/nli/README.md).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import convert  # noqa: E402
import data  # noqa: E402
import evaluate  # noqa: E402
import export  # noqa: E402
import train  # noqa: E402

START = {"v2": "nli-minilm-l6", "v3": "nli-minilm-l6-v2", "v4": "nli-minilm-l6-v2", "fast": "nli-minilm-l6-v2"}
# The student's defaults (`--variant fast`): which of the teacher's layers it keeps, its data and
# the distillation loss (train.train).
FAST = {"layers": (0, 2, 4), "pairs": sum(data.MIXES["fast"].values()), "max_tokens": 256, "lr": 1e-4, "temperature": 2.0,
        "alpha": 0.9, "frozen": ("bert.embeddings.word_embeddings.weight",)}
# v4's training (train.train): the pilot's learning rate and length limit (issue 47: 2e-5, 256
# tokens), the distillation term toward v2 on v2's own rows (data.V2_KINDS) at half weight.
V4 = {"lr": 2e-5, "max_tokens": 256, "temperature": 2.0, "alpha": 0.5}


def log(msg):
    print(f"nli: {msg}", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=["v2", "v3", "v4", "fast"], default="v2")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="../shared/models")
    ap.add_argument("--start", help="start model directory (default: v1 for v2, the shipped v2 for v3; "
                                    "for fast the teacher, the shipped v2)")
    ap.add_argument("--layers", default=",".join(map(str, FAST["layers"])),
                    help="fast: the teacher's encoder layers the student keeps (default %(default)s)")
    ap.add_argument("--pairs", type=int, default=FAST["pairs"],
                    help="fast: training pairs, v2's mix scaled to this size (default %(default)s, v2's full mix); "
                         "v4: its mix scaled to this size (default: the whole mix)")
    ap.add_argument("--interpolate", default="",
                    help="v4: comma-separated L in (0, 1): also export (1 - L) * start + L * trained into OUT-mixL")
    ap.add_argument("--max-tokens", type=int, default=None,
                    help=f"pairs longer than this are dropped (default {train.MAX_TOKENS}; fast {FAST['max_tokens']})")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--cache", default=".cache/nli-data")
    ap.add_argument("--uqd", default="dist/uqd")
    ap.add_argument("--baseline", action="append", default=None,
                    help="model directories evaluated beside the new one in the same run "
                         "(default: the shipped v2 in a full run, none in smoke mode)")
    ap.add_argument("--no-eval", action="store_true")
    ap.add_argument("--seed", type=int, default=13,
                    help="seed of the SNLI draw, the shuffle, the batch order and the classifier's dropout "
                         "(the synthetic pairs keep their own per-pair seeds)")
    a = ap.parse_args()
    t_all = time.time()
    start = a.start or os.path.join(a.models, START[a.variant])
    mix = ({"v3": "smoke-v3", "v4": "smoke-v4"}.get(a.variant, "smoke")) if a.smoke else a.variant
    scale = not a.smoke and (a.variant == "fast" or (a.variant == "v4" and "--pairs" in sys.argv))
    sizes = data.scaled(data.MIXES[mix], a.pairs) if scale else data.MIXES[mix]
    info = {"variant": a.variant, "smoke": a.smoke, "start": start, "mix": sizes, "seed": a.seed,
            "versions": versions()}

    t0 = time.time()
    model = convert.load(start)
    info["start_check_max_abs_logit_diff"] = convert.check(model, start)
    log(f"start {start}: PyTorch vs ONNX Runtime max |logit diff| {info['start_check_max_abs_logit_diff']:.1e} "
        f"({time.time() - t0:.1f}s)")
    kw = {"max_tokens": a.max_tokens or {"fast": FAST["max_tokens"], "v4": V4["max_tokens"]}.get(a.variant, train.MAX_TOKENS)}
    if a.variant == "v4":
        kw.update(teacher=convert.load(start), lr=V4["lr"], temperature=V4["temperature"], alpha=V4["alpha"],
                  kd_kinds=data.V2_KINDS)
        info["distillation"] = {"teacher": start, "kinds": sorted(data.V2_KINDS), **V4}
        log(f"v4: distilled toward {start} on its own sources {sorted(data.V2_KINDS)} (T {V4['temperature']}, "
            f"alpha {V4['alpha']}), lr {V4['lr']}")
    if a.variant == "fast":
        layers = tuple(int(x) for x in a.layers.split(","))
        teacher, model = model, convert.student(model, layers)
        kw.update(teacher=teacher, lr=FAST["lr"], temperature=FAST["temperature"], alpha=FAST["alpha"],
                  frozen=FAST["frozen"])
        info["student"] = {"teacher": start, "layers": list(layers), "lr": FAST["lr"], "temperature": FAST["temperature"],
                           "alpha": FAST["alpha"], "frozen": list(FAST["frozen"])}
        log(f"student: the teacher's layers {list(layers)} of {teacher.config.num_hidden_layers}, its embeddings, "
            f"pooler and classifier")

    t0 = time.time()
    pairs = data.train_set(mix, a.cache, seed=a.seed, sizes=sizes, data_dir=a.data)
    info["data_seconds"] = round(time.time() - t0, 1)
    log(f"training mix {mix}: {len(pairs)} pairs {sizes} ({info['data_seconds']}s)")

    info["train"] = train.train(model, os.path.join(start, "tokenizer.json"), pairs, seed=a.seed,
                                log=lambda m: log(m), **kw)

    t0 = time.time()
    if a.variant == "fast":
        name = (f"uqlite models/nli recipe, fast{' smoke' if a.smoke else ''}: layers {a.layers} of "
                f"{os.path.basename(start)} distilled from its logits (T {FAST['temperature']}, alpha {FAST['alpha']}) "
                f"1 pass on {info['train']['pairs']} pairs {json.dumps(sizes)}")
    else:
        name = (f"uqlite models/nli recipe, {a.variant}{' smoke' if a.smoke else ''}: {os.path.basename(start)} "
                f"fine-tuned 1 pass on {len(pairs)} pairs {json.dumps(sizes)}")
    info["export_check_max_abs_logit_diff"] = export.export(model, start, a.out, name)
    log(f"exported {a.out}/model.onnx: PyTorch vs ONNX Runtime max |logit diff| "
        f"{info['export_check_max_abs_logit_diff']:.1e} ({time.time() - t0:.1f}s)")
    info["interpolated"] = interpolate(model, start, a.out, [float(x) for x in a.interpolate.split(",") if x], name)

    t0 = time.time()
    opt = subprocess.run([a.uqd, "models", "optimize", a.out], capture_output=True, text=True)
    if opt.returncode != 0:
        raise SystemExit(f"nli: {a.uqd} models optimize {a.out} failed:\n{opt.stderr[-3000:]}")
    info["optimize"] = json.loads(opt.stdout.strip().splitlines()[-1])
    log(f"uqd models optimize: {time.time() - t0:.1f}s")

    if not a.no_eval:
        baselines = a.baseline if a.baseline is not None else ([] if a.smoke else
                                                               [os.path.join(a.models, "nli-minilm-l6-v2")])
        rep = evaluate.evaluate([a.out] + baselines, a.uqd, a.data, a.cache, "smoke" if a.smoke else "full",
                                snli_limit=200 if a.smoke else None, wikibio_limit=3 if a.smoke else None,
                                log=log, optimized=(a.out,), with_verdicts=True)
        info["evaluation"] = rep
        print(evaluate.table(rep))
    info["seconds"] = round(time.time() - t_all, 1)
    with open(os.path.join(a.out, "recipe.json"), "w") as f:
        json.dump(info, f, indent=2)
    log(f"done in {info['seconds']}s: {a.out} (recipe.json)")


def interpolate(model, start, out, weights, name):
    """Weight-space interpolation toward the start model (against forgetting): for each L, the
    parameters (1 - L) * start + L * trained, exported into OUT-mixL. Returns {dir: check}."""
    import torch
    if not weights:
        return {}
    base = convert.load(start).state_dict()
    trained = {k: v.detach().clone() for k, v in model.state_dict().items()}
    done = {}
    for w in weights:
        if not 0 < w < 1:
            raise SystemExit(f"--interpolate: each weight must lie in (0, 1), got {w}")
        model.load_state_dict({k: (1 - w) * base[k] + w * v if v.is_floating_point() else v
                               for k, v in trained.items()})
        d = f"{out}-mix{w:g}"
        with torch.no_grad():
            done[d] = export.export(model, start, d, f"{name}; interpolated {w:g} toward it from the start model")
        log(f"exported {d}: (1 - {w:g}) start + {w:g} trained, check {done[d]:.1e}")
    model.load_state_dict(trained)
    return done


def versions():
    import onnx
    import onnxruntime
    import tokenizers
    import torch
    import transformers
    import faker  # noqa: F401
    from importlib.metadata import version
    return {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
            "faker": version("faker"), "cpu_threads": torch.get_num_threads()}


if __name__ == "__main__":
    main()
