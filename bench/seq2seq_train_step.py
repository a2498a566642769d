"""Training-step time of the translation model at α = 1, 1.5 and 2, on both entmax paths.

    .venv/bin/python bench/seq2seq_train_step.py [--steps 30] [--threads 1]

Builds the shipped translation configuration (4,000-piece vocabularies, the recipe's sizes) on
random token batches shaped like the corpus (64 sentences of 6–20 pieces), and times whole
optimiser steps (forward, Fenchel–Young loss, backward, Adam) with the process CPU clock, so
that other load on a shared machine is mostly left out. Prints the median step time per α and
path, and each α's ratio to α = 1 in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from models.entmax import set_backend, warm_up
from models.seq2seq import Config, Seq2Seq, pad_batch

VOCAB = 4000


def batch(generator: torch.Generator, size: int = 64) -> tuple[torch.Tensor, ...]:
    def sentence() -> list[int]:
        length = int(torch.randint(6, 21, (1,), generator=generator))
        return torch.randint(4, VOCAB, (length,), generator=generator).tolist()

    src, lengths = pad_batch([sentence() for _ in range(size)])
    tgt, _ = pad_batch([sentence() + [2] for _ in range(size)])
    return src, lengths, tgt


def step_times(alpha: float, steps: int, hidden: int, emb: int) -> list[float]:
    torch.manual_seed(0)
    config = Config(VOCAB, VOCAB, emb_dim=emb, hidden=hidden, attn_alpha=alpha, out_alpha=alpha)
    model = Seq2Seq(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    generator = torch.Generator().manual_seed(1)
    batches = [batch(generator) for _ in range(steps + 3)]
    times = []
    for i, (src, lengths, tgt) in enumerate(batches):
        start = time.process_time()
        optimizer.zero_grad()
        model(src, lengths, tgt).backward()
        optimizer.step()
        if i >= 3:  # the first steps warm caches and the allocator
            times.append(time.process_time() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--emb", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warm_up()
    print(f"hidden {args.hidden}, emb {args.emb}, batch 64, {args.threads} thread(s), CPU clock\n")
    print("| α | entmax path | median step | × α = 1 |")
    print("|---|---|---|---|")
    baseline = None
    for backend in ("compiled", "torch"):
        set_backend(backend)
        for alpha in (1.0, 1.5, 2.0):
            median = statistics.median(step_times(alpha, args.steps, args.hidden, args.emb))
            if alpha == 1.0 and baseline is None:
                baseline = median
            print(
                f"| {alpha:g} | {backend} | {median * 1e3:.1f} ms | {median / baseline:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
