"""One pass of fine-tuning over a list of pairs: AdamW, 5% linear warm-up then linear decay,
length-bucketed batches (32 pairs when the longest pair is <= 64 tokens, else 16), pairs of at
most 384 tokens. CUDA when torch sees it, else the CPU with every core."""
import math
import os
import random
import time

import torch
from tokenizers import Tokenizer
from transformers import get_linear_schedule_with_warmup

MAX_TOKENS = 384
SHORT, BATCH_SHORT, BATCH_LONG = 64, 32, 16


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


def train(model, tokenizer_path, pairs, lr=3e-5, warmup=0.05, seed=13, log=print):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    dev = device()
    if dev.type == "cpu":
        torch.set_num_threads(int(os.environ.get("NLI_THREADS", os.cpu_count() or 1)))
    tok = Tokenizer.from_file(tokenizer_path)
    t0 = time.time()
    enc = encode(tok, pairs)
    keep = [i for i, (ids, _) in enumerate(enc) if len(ids) <= MAX_TOKENS]
    dropped = len(enc) - len(keep)
    enc = [enc[i] for i in keep]
    labels = [pairs[i]["label"] for i in keep]
    plan = batches(enc, labels, rng)
    log(f"train: {len(enc)} pairs ({dropped} over {MAX_TOKENS} tokens dropped), {len(plan)} batches, "
        f"device {dev}, tokenized in {time.time() - t0:.1f}s")
    model.to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    sched = get_linear_schedule_with_warmup(opt, math.ceil(warmup * len(plan)), len(plan))
    t0, seen, loss_sum = time.time(), 0, 0.0
    every = max(1, len(plan) // 20)
    for step, b in enumerate(plan, 1):
        ids, mask, types = (x.to(dev) for x in pad([enc[i] for i in b]))
        y = torch.tensor([labels[i] for i in b], device=dev)
        out = model(input_ids=ids, attention_mask=mask, token_type_ids=types, labels=y)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        seen += len(b)
        loss_sum += out.loss.item() * len(b)
        if step % every == 0 or step == len(plan):
            el = time.time() - t0
            log(f"train: step {step}/{len(plan)}, {seen} pairs, loss {loss_sum / seen:.4f}, "
                f"{seen / el:.1f} pairs/s, {el / 60:.1f} min")
    model.eval()
    return {"pairs": len(enc), "dropped_over_max_tokens": dropped, "batches": len(plan),
            "seconds": round(time.time() - t0, 1), "device": str(dev), "mean_loss": round(loss_sum / max(1, seen), 4)}
