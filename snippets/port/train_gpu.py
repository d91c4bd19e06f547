"""Train a small GPT on a synthetic token stream: one GPU, or several with DDP under torchrun.

    python train_gpu.py                                          # one GPU
    torchrun --standalone --nproc_per_node=8 train_gpu.py        # 8 GPUs, one process each
    python train_gpu.py --device=cpu --compile=False --max_iters=5 --n_layer=2   # CPU smoke run

Every field of Config can be overridden on the command line as --key=value.
"""

import dataclasses
import math
import os
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass

import torch
from torch import nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

# Dense bf16 peak of the GPU this script was tuned on (NVIDIA A100), for the MFU estimate.
PEAK_FLOPS = 312e12
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass
class Config:
    # where to run
    device: str = "cuda"  # "cuda", "cuda:1" or "cpu"; under torchrun each rank takes its own GPU
    compile: bool = True
    seed: int = 1337
    out_dir: str = "out"
    resume: bool = False
    save_checkpoint: bool = True
    # how long, and how often to evaluate and log
    max_iters: int = 2000
    eval_interval: int = 250
    eval_iters: int = 20
    log_interval: int = 10
    # data: a synthetic token stream, built in memory
    vocab_size: int = 512
    stream_tokens: int = 2_000_000
    block_size: int = 256
    batch_size: int = 16  # sequences per micro-step in each process
    grad_accum_steps: int = 8  # micro-steps per optimizer step, summed over all processes
    # model
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    dropout: float = 0.0
    # optimizer
    learning_rate: float = 6e-4
    min_lr: float = 6e-5
    warmup_iters: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    # mixed precision: "" picks bf16 where the GPU has it, else fp16 with a gradient scaler
    dtype: str = ""


def parse_config(argv: list[str]) -> Config:
    """Apply --key=value overrides to the defaults; a bad argument stops with a clear message."""
    cfg = Config()
    for arg in argv:
        key, sep, text = arg.removeprefix("--").partition("=")
        if not arg.startswith("--") or not sep or not hasattr(cfg, key):
            names = ", ".join(f.name for f in dataclasses.fields(cfg))
            sys.exit(f"bad argument {arg!r}: expected --key=value with a key among {names}")
        default = getattr(cfg, key)
        if isinstance(default, bool):
            if text not in ("True", "False", "1", "0"):
                sys.exit(f"bad argument {arg!r}: expected True or False")
            value: object = text in ("True", "1")
        else:
            try:
                value = type(default)(text)
            except ValueError:
                sys.exit(f"bad argument {arg!r}: expected a value of type {type(default).__name__}")
        setattr(cfg, key, value)
    return cfg


# ---- model --------------------------------------------------------------------------------


class SelfAttention(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.n_head, self.dropout = cfg.n_head, cfg.dropout
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=False)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        heads = [
            z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
            for z in self.qkv(x).split(c, 2)
        ]
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(*heads, is_causal=True, dropout_p=p)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.n_embd), nn.LayerNorm(cfg.n_embd)
        self.attn = SelfAttention(cfg)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.GELU(), nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        )
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.mlp(self.ln2(x)))


class GPT(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.pos = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.tok.weight  # tied input and output embeddings
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        loss = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())
        return logits, loss

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def estimate_mfu(n_params: int, cfg: Config, tokens_per_s: float, peak_flops: float) -> float:
    """Model FLOPs utilisation: 6 FLOPs per parameter per token, plus attention (PaLM, app. B)."""
    flops_per_token = 6 * n_params + 12 * cfg.n_layer * cfg.n_embd * cfg.block_size
    return tokens_per_s * flops_per_token / peak_flops


# ---- data ---------------------------------------------------------------------------------


def make_token_stream(cfg: Config) -> torch.Tensor:
    """A stream of 64 random 'words' of 8 tokens in random order: learnable, and no download."""
    gen = torch.Generator().manual_seed(cfg.seed)
    words = torch.randint(cfg.vocab_size, (64, 8), generator=gen, dtype=torch.int32)
    order = torch.randint(64, (cfg.stream_tokens // 8,), generator=gen)
    return words[order].flatten()


class TokenBatches:
    """Random windows of the stream, copied to the device; train on 90%, validate on the rest."""

    def __init__(
        self, stream: torch.Tensor, cfg: Config, device: str, device_type: str, seed: int
    ) -> None:
        split = int(len(stream) * 0.9)
        self.data = {"train": stream[:split], "val": stream[split:]}
        self.cfg, self.device, self.device_type = cfg, device, device_type
        self.gen = torch.Generator().manual_seed(seed)

    def get(self, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        data, block = self.data[split], self.cfg.block_size
        starts = torch.randint(len(data) - block - 1, (self.cfg.batch_size, 1), generator=self.gen)
        window = data[starts + torch.arange(block + 1)].long()
        x, y = window[:, :-1], window[:, 1:]
        if self.device_type == "cuda":
            # page-locked host memory lets the copy overlap with the GPU's work
            x = x.pin_memory().to(self.device, non_blocking=True)
            y = y.pin_memory().to(self.device, non_blocking=True)
        else:
            x, y = x.to(self.device), y.to(self.device)
        return x, y


# ---- training -----------------------------------------------------------------------------


def lr_at(it: int, cfg: Config) -> float:
    """Linear warm-up, then cosine decay to min_lr at max_iters."""
    if it < cfg.warmup_iters:
        return cfg.learning_rate * (it + 1) / cfg.warmup_iters
    progress = min(1.0, (it - cfg.warmup_iters) / max(1, cfg.max_iters - cfg.warmup_iters))
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (cfg.learning_rate - cfg.min_lr)


def pick_dtype(cfg: Config) -> str:
    """bf16 where the GPU supports it, else fp16, which needs the gradient scaler."""
    if cfg.dtype:
        return cfg.dtype
    return "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"


def make_optimizer(model: nn.Module, cfg: Config) -> torch.optim.Optimizer:
    """AdamW with weight decay on matrices only (not on biases and LayerNorm weights)."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.learning_rate, betas=(0.9, 0.95))


@torch.no_grad()
def evaluate(model: nn.Module, batches: TokenBatches, cfg: Config, ctx) -> dict[str, float]:
    model.eval()
    out = {}
    for split in ("train", "val"):
        losses = torch.zeros(cfg.eval_iters)
        for k in range(cfg.eval_iters):
            x, y = batches.get(split)
            with ctx:
                _, loss = model(x, y)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out


def sync_device(device_type: str) -> None:
    """Wait for the GPU's queued work, so the wall clock measures work done."""
    if device_type == "cuda":
        torch.cuda.synchronize()


def peak_memory_mib(device_type: str) -> float:
    if device_type != "cuda":
        return 0.0
    return torch.cuda.max_memory_allocated() / 2**20


def main() -> None:
    cfg = parse_config(sys.argv[1:])
    ddp = int(os.environ.get("RANK", -1)) != -1  # torchrun sets RANK, LOCAL_RANK, WORLD_SIZE
    if ddp:
        init_process_group(backend="nccl")
        rank = int(os.environ["RANK"])
        local_rank = int(os.environ["LOCAL_RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        device = f"cuda:{local_rank}"
        torch.cuda.set_device(device)
    else:
        rank, local_rank, world_size = 0, 0, 1
        device = cfg.device
    master_process = rank == 0
    if cfg.grad_accum_steps % world_size:
        sys.exit(
            f"grad_accum_steps={cfg.grad_accum_steps} must be a multiple of {world_size} processes"
        )
    accum_steps = cfg.grad_accum_steps // world_size
    print(f"rank {rank} (local {local_rank}) of {world_size} on {device}", flush=True)
    torch.manual_seed(cfg.seed + rank)
    # TF32 on Ampere and later: faster fp32 matmuls and convolutions, 10-bit mantissa
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    model = GPT(cfg)
    iter_num = 0
    ckpt_path = os.path.join(cfg.out_dir, "ckpt.pt")
    checkpoint = None
    if cfg.resume:
        checkpoint = torch.load(ckpt_path)
        model.load_state_dict(checkpoint["model"])
        iter_num = checkpoint["iter_num"]
    model.to(device)
    optimizer = make_optimizer(model, cfg)
    if checkpoint is not None:
        optimizer.load_state_dict(checkpoint["optimizer"])
    checkpoint = None  # free the host copy

    device_type = "cuda" if "cuda" in device else "cpu"
    dtype = pick_dtype(cfg)
    ptdtype = DTYPES[dtype]
    ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type, dtype=ptdtype)
    scaler = torch.amp.GradScaler(enabled=(dtype == "float16"))

    raw_model = model  # the plain module: checkpoints and parameter counts
    if cfg.compile:
        model = torch.compile(model)
    if ddp:
        model = DDP(model, device_ids=[local_rank])

    batches = TokenBatches(make_token_stream(cfg), cfg, device, device_type, seed=cfg.seed + rank)
    x, y = batches.get("train")
    n_params = raw_model.num_params()
    if master_process:
        print(f"{n_params / 1e6:.2f}M parameters, {accum_steps} micro-steps/step, dtype {dtype}")
        os.makedirs(cfg.out_dir, exist_ok=True)
    t0 = time.time()
    while True:
        lr = lr_at(iter_num, cfg)
        for group in optimizer.param_groups:
            group["lr"] = lr

        last_iter = iter_num >= cfg.max_iters
        if (iter_num % cfg.eval_interval == 0 or last_iter) and master_process:
            losses = evaluate(model, batches, cfg, ctx)
            print(f"eval {iter_num}: train {losses['train']:.4f}, val {losses['val']:.4f}")
            if cfg.save_checkpoint and iter_num > 0:
                state = {"model": raw_model.state_dict(), "optimizer": optimizer.state_dict()}
                state |= {"iter_num": iter_num, "config": dataclasses.asdict(cfg)}
                torch.save(state, ckpt_path)
                print(f"saved checkpoint to {ckpt_path}")
        if last_iter:
            break

        loss_accum = torch.zeros((), device=device)
        for micro_step in range(accum_steps):
            # all-reduce the gradients once, in the backward pass of the last micro-step
            last_micro = micro_step == accum_steps - 1
            with model.no_sync() if ddp and not last_micro else nullcontext():
                with ctx:
                    _, loss = model(x, y)
                    loss = loss / accum_steps
                x, y = batches.get("train")  # prepare the next batch while the device works
                scaler.scale(loss).backward()
            loss_accum += loss.detach()

        if cfg.grad_clip > 0:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

        sync_device(device_type)
        t1 = time.time()
        dt, t0 = t1 - t0, t1
        if iter_num % cfg.log_interval == 0 and master_process:
            lossf = loss_accum.item()
            tokens_per_s = cfg.batch_size * cfg.block_size * accum_steps / dt
            mfu = estimate_mfu(n_params, cfg, tokens_per_s, PEAK_FLOPS)
            mem = peak_memory_mib(device_type)
            print(
                f"iter {iter_num}: loss {lossf:.4f}, {dt * 1000:.1f} ms, {tokens_per_s:.0f} tok/s, "
                f"mfu {mfu * 100:.2f}%, peak memory {mem:.0f} MiB"
            )
        iter_num += 1

    if ddp:
        destroy_process_group()


if __name__ == "__main__":
    main()
