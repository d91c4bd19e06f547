"""Measure training tokens/s, peak memory and (optionally) cost and MFU on any device."""

import argparse
import time

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=8)
parser.add_argument("--seq-len", type=int, default=128)
parser.add_argument("--warmup", type=int, default=3)  # untimed steps: compilation happens here
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--chips", type=int, default=1)
parser.add_argument("--price-per-chip-hour", type=float)  # your own price, in your currency
parser.add_argument("--peak-tflops", type=float)  # bf16 peak of one device, from the hardware table
args = parser.parse_args()

device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
on_accelerator = device.type != "cpu"


def sync() -> None:
    """Wait for queued device work, so the clock measures work done, not work dispatched."""
    if on_accelerator:
        torch.accelerator.synchronize()


vocab, width = 1000, 128
torch.manual_seed(0)
with torch.device(device):
    model = nn.Sequential(
        nn.Embedding(vocab, width), nn.Linear(width, width), nn.GELU(), nn.Linear(width, vocab)
    )
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, vocab, (args.batch, args.seq_len + 1), device=device)
inputs, targets = tokens[:, :-1], tokens[:, 1:]  # fixed shapes: no recompilation per step


def train_step() -> None:
    optimizer.zero_grad()
    logits = model(inputs)
    loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    loss.backward()
    optimizer.step()


start = time.perf_counter()
for _ in range(args.warmup):
    train_step()
sync()
warmup_s = time.perf_counter() - start
print(f"warm-up: {args.warmup} steps in {warmup_s:.3f} s (includes any compilation)")

if on_accelerator:
    torch.accelerator.reset_peak_memory_stats()
start = time.perf_counter()
for _ in range(args.steps):
    train_step()
sync()
elapsed = time.perf_counter() - start

tokens_per_s = args.batch * args.seq_len * args.steps / elapsed
print(
    f"device {device.type}: {tokens_per_s:,.0f} tokens/s over {args.steps} steps "
    f"(batch {args.batch}, sequence length {args.seq_len}, compilation excluded)"
)
if on_accelerator:
    print(f"peak memory: {torch.accelerator.max_memory_allocated() / 2**30:.2f} GiB")
if args.price_per_chip_hour is not None:  # tokens/s must be what all the chips produce together
    cost = args.price_per_chip_hour * args.chips / (tokens_per_s * 3600) * 1e6
    print(f"cost per million tokens: {cost:.4f} (price per chip-hour x {args.chips} chip(s))")
if args.peak_tflops is not None:
    params = sum(p.numel() for p in model.parameters())
    mfu = 6 * params * tokens_per_s / (args.peak_tflops * 1e12)  # ~6 FLOPs per parameter per token
    print(f"MFU: {mfu:.2%} of {args.peak_tflops:g} TFLOP/s")
print("ok")
