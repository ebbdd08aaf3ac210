"""One pass of fine-tuning over a list of pairs: AdamW, 5% linear warm-up then linear decay,
length-bucketed batches (32 pairs when the longest pair is <= 64 tokens, else 16), pairs of at
most 384 tokens (`max_tokens`). CUDA when torch sees it, else the CPU with every core.

With a `teacher` (distillation, `make nli-fast`): the teacher runs on the same batch without
gradients, and the loss is alpha * T^2 * KL(softmax(teacher / T) || softmax(student / T)) +
(1 - alpha) * cross-entropy with the hard labels (Hinton et al. 2015).

With a `teacher` and `kd_kinds` (v4, `make nli-v4`): the distillation term applies only to the
rows whose `source` (data.train_set) is in `kd_kinds` (v2's own sources), each such row's loss alpha * T^2 * KL +
(1 - alpha) * cross-entropy, the other rows' cross-entropy alone: the model keeps v2's answers
where the new data is silent. The teacher runs on those rows only.

Two-class rows (label NOT_ENTAILMENT) are trained against P(entailment) (`nli_loss`)."""
import math
import os
import random
import time

import torch
from tokenizers import Tokenizer
from transformers import get_linear_schedule_with_warmup

MAX_TOKENS = 384
SHORT, BATCH_SHORT, BATCH_LONG = 64, 32, 16
NOT_ENTAILMENT = 3  # the label of a two-class row (nli_loss)


def device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def encode(tokenizer, pairs):
    """(input_ids, token_type_ids) of each pair, `[CLS] premise [SEP] hypothesis [SEP]`, untruncated."""
    enc = tokenizer.encode_batch([(r["premise"], r["hypothesis"]) for r in pairs])
    return [(e.ids, e.type_ids) for e in enc]


def pad(batch):
    n = max(len(ids) for ids, _ in batch)
    ids = torch.zeros(len(batch), n, dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for i, (a, t) in enumerate(batch):
        ids[i, :len(a)] = torch.tensor(a)
        types[i, :len(t)] = torch.tensor(t)
        mask[i, :len(a)] = 1
    return ids, mask, types


def batches(encoded, labels, rng):
    """Length buckets: sort by length, cut into batches by the rule above, shuffle the batches."""
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i][0]), rng.random()))
    out, cur = [], []
    for i in order:
        cur.append(i)
        size = BATCH_SHORT if len(encoded[i][0]) <= SHORT else BATCH_LONG
        if len(cur) >= size:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def nli_loss(logits, y, reduce=True):
    """Cross-entropy with the labels (0 contradiction, 1 entailment, 2 neutral); a two-class row
    (NOT_ENTAILMENT, 3: "does not follow", contradiction or neutral) is trained against
    P(entailment): -log(P(contradiction) + P(neutral))."""
    logp = torch.log_softmax(logits, -1)
    three = logp.gather(1, y.clamp(max=2).unsqueeze(1)).squeeze(1)
    two = torch.logsumexp(logp[:, [0, 2]], -1)
    per_row = -torch.where(y == NOT_ENTAILMENT, two, three)
    return per_row.mean() if reduce else per_row


def train(model, tokenizer_path, pairs, lr=3e-5, warmup=0.05, seed=13, log=print, max_tokens=MAX_TOKENS,
          teacher=None, temperature=2.0, alpha=0.9, frozen=(), kd_kinds=None):
    """`frozen`: names of parameters left as they are (not trained); `kd_kinds`: the sources the
    teacher's term applies to (None: every row)."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    dev = device()
    if dev.type == "cpu":
        torch.set_num_threads(int(os.environ.get("NLI_THREADS", os.cpu_count() or 1)))
    tok = Tokenizer.from_file(tokenizer_path)
    t0 = time.time()
    enc = encode(tok, pairs)
    keep = [i for i, (ids, _) in enumerate(enc) if len(ids) <= max_tokens]
    dropped = len(enc) - len(keep)
    enc = [enc[i] for i in keep]
    labels = [pairs[i]["label"] for i in keep]
    kd_row = [kd_kinds is None or pairs[i].get("source") in kd_kinds for i in keep]
    plan = batches(enc, labels, rng)
    log(f"train: {len(enc)} pairs ({dropped} over {max_tokens} tokens dropped), {len(plan)} batches, "
        f"device {dev}, tokenized in {time.time() - t0:.1f}s")
    model.to(dev).train()
    for name, p in model.named_parameters():
        p.requires_grad_(name not in frozen)
    params = [p for p in model.parameters() if p.requires_grad]
    if teacher is not None:
        teacher.to(dev).eval()
        log(f"train: distilling from a {teacher.config.num_hidden_layers}-layer teacher, T {temperature}, "
            f"alpha {alpha} (soft) / {1 - alpha:.2f} (hard labels), lr {lr}; {sum(p.numel() for p in params)} of "
            f"{sum(p.numel() for p in model.parameters())} parameters trained")
    opt = torch.optim.AdamW(params, lr=lr)
    sched = get_linear_schedule_with_warmup(opt, math.ceil(warmup * len(plan)), len(plan))
    t0, seen, loss_sum, kd_sum, kd_seen, agree = time.time(), 0, 0.0, 0.0, 0, 0
    every = max(1, len(plan) // 20)
    for step, b in enumerate(plan, 1):
        ids, mask, types = (x.to(dev) for x in pad([enc[i] for i in b]))
        y = torch.tensor([labels[i] for i in b], device=dev)
        out = model(input_ids=ids, attention_mask=mask, token_type_ids=types)
        ce = nli_loss(out.logits, y, reduce=False)
        out.loss = ce.mean()
        loss = out.loss
        sel = torch.tensor([kd_row[i] for i in b], device=dev)
        if teacher is not None and bool(sel.any()):
            with torch.no_grad():
                t_logits = teacher(input_ids=ids[sel], attention_mask=mask[sel], token_type_ids=types[sel]).logits
            s_logits = out.logits[sel]
            kd = torch.nn.functional.kl_div(torch.log_softmax(s_logits / temperature, -1),
                                            torch.log_softmax(t_logits / temperature, -1),
                                            reduction="none", log_target=True).sum(-1) * temperature ** 2
            per_row = ce.clone()
            per_row[sel] = alpha * kd + (1 - alpha) * ce[sel]
            loss = per_row.mean()
            kd_sum += kd.sum().item()
            kd_seen += int(sel.sum())
            agree += int((s_logits.argmax(-1) == t_logits.argmax(-1)).sum())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        seen += len(b)
        loss_sum += out.loss.item() * len(b)
        if step % every == 0 or step == len(plan):
            el = time.time() - t0
            kd_note = (f", KD {kd_sum / max(1, kd_seen):.4f} on {kd_seen} rows, agrees with the teacher "
                       f"{100 * agree / max(1, kd_seen):.1f}%") if teacher else ""
            log(f"train: step {step}/{len(plan)}, {seen} pairs, loss {loss_sum / seen:.4f}{kd_note}, "
                f"{seen / el:.1f} pairs/s, {el / 60:.1f} min")
    model.eval()
    for p in model.parameters():
        p.requires_grad_(True)
    res = {"pairs": len(enc), "dropped_over_max_tokens": dropped, "max_tokens": max_tokens, "batches": len(plan),
           "seconds": round(time.time() - t0, 1), "device": str(dev), "mean_loss": round(loss_sum / max(1, seen), 4)}
    if teacher is not None:
        res.update({"teacher_layers": teacher.config.num_hidden_layers, "temperature": temperature, "alpha": alpha,
                    "frozen": list(frozen), "kd_kinds": sorted(kd_kinds) if kd_kinds else "all", "kd_rows": kd_seen,
                    "mean_kd_loss": round(kd_sum / max(1, kd_seen), 4),
                    "agreement_with_teacher": round(100 * agree / max(1, kd_seen), 1)})
    return res
