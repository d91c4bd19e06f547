"""Benchmarks, printed rather than asserted (timings vary by machine).

  python benchmarks/bench.py sitecheck [--pages 1000]   built-site check on a generated site
  python benchmarks/bench.py overhead                    KB validation + rendering vs mkdocs build
  python benchmarks/bench.py scan [--files 10000]        python -m kb scan over generated training scripts
  python benchmarks/bench.py weight [--site DIR] [--print]  each built page's HTML size against its limit
  python benchmarks/bench.py scale [--sizes 40,1000,3000] [--profile] [--keep DIR]
                                                         the handbook grown to N pages, built as published
  python benchmarks/bench.py glossary [--terms 10000,100000] [--floor] [--build [--runs 3] [--write]]
                                                         a glossary of N terms: what it costs
  python benchmarks/bench.py glossary --stages --terms 10000   where a build spends what the terms add
  python benchmarks/bench.py kbedit [--tables figures,claims]  pages rendered again under serve per table edit

Run with the project's venv and PYTHONPATH=scripts (./dev test sets both; or see README).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gen_site import generate  # noqa: E402
from kb.mkdocs.project import validate_project  # noqa: E402
from kb.site.sitecheck import check_site  # noqa: E402

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "scripts")}


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def build(config: Path, site: Path, strict: bool = True) -> None:
    args = [sys.executable, "-m", "mkdocs", "build", "-f", str(config), "-d", str(site)] + (
        ["--strict"] if strict else []
    )
    result = subprocess.run(args, env=ENV, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"build of {config} failed:\n{result.stderr[-3000:]}")


def bench_sitecheck(pages: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = generate(Path(tmp) / "p", pages)
        start = time.perf_counter()
        build(project / "mkdocs.yml", project / "site")
        html = list((project / "site").rglob("*.html"))
        size = sum(p.stat().st_size for p in html)
        print(
            f"generated and built {len(html)} HTML pages ({size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s"
        )
        times = timed(lambda: check_site(project / "site"), runs)
        problems = check_site(project / "site")
        print(
            f"kb check-site: median {statistics.median(times):.3f} s over {runs} runs "
            f"(min {min(times):.3f}, max {max(times):.3f}); {len(problems)} problem(s)"
        )


def bench_overhead(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "mkdocs-nohook.yml"
        text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
        # Without the hook, shortcodes stay comments and KB anchors are missing: build it non-strict.
        text = text.replace("hooks:\n  - scripts/hooks.py\n", "").replace("strict: true", "strict: false")
        bare.write_text(text, encoding="utf-8")
        shutil.copy(bare, ROOT / ".bench-nohook.yml")
        try:
            plain = timed(lambda: build(ROOT / ".bench-nohook.yml", Path(tmp) / "a", strict=False), runs)
        finally:
            (ROOT / ".bench-nohook.yml").unlink()
        full = timed(lambda: build(ROOT / "mkdocs.yml", Path(tmp) / "b"), runs)
        kb = timed(lambda: validate_project(ROOT), runs * 3)
        project = validate_project(ROOT)
        site = timed(lambda: check_site(Path(tmp) / "b"), runs * 3)
        p, f, k, s = (statistics.median(x) for x in (plain, full, kb, site))
        print(f"mkdocs build without the hook: median {p:.2f} s; with the hook: {f:.2f} s ({runs} runs each)")
        print(
            f"KB validation + shortcode rendering of {len(project.pages)} pages: median {k * 1000:.0f} ms "
            f"= {100 * k / p:.1f}% of the plain build"
        )
        print(f"built-site check of the real site: median {s * 1000:.0f} ms = {100 * s / p:.1f}% of the plain build")


SCAN_HEADER = """\
\"\"\"Training script {i}: a model, a data loader and a loop (generated for the scan benchmark).\"\"\"

import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
"""
SCAN_CUDA = """\
import torch.distributed as dist

BACKEND = "nccl"
DEVICE = "cuda"


def setup(rank):
    dist.init_process_group(BACKEND, rank=rank)
    torch.cuda.set_device(rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    return torch.device(f"cuda:{rank}")
"""
SCAN_BODY = """\

class Block{i}(nn.Module):
    def __init__(self, dim={dim}, hidden={hidden}):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        h = self.up(self.norm(x))
        h = F.gelu(h)
        return x + self.dropout(self.down(h))


class Data{i}(Dataset):
    def __init__(self, n={n}):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        x = torch.randn({dim})
        return x, x.sum() > 0


def evaluate(model, loader, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device)
            logits = model(x).mean(dim=-1)
            correct += ((logits > 0) == y.to(device)).sum().item()
    return correct / max(1, len(loader.dataset))


def train(args):
    device = {device}
    model = Block{i}().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loader = DataLoader(Data{i}(), batch_size=args.batch, num_workers={workers}, shuffle=True)
    for epoch in range(args.epochs):
        model.train()
        for step, (x, y) in enumerate(loader):
            x = x.to(device)
            loss = model(x).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 100 == 0:
                print(f"epoch {{epoch}} step {{step}} loss {{loss.item():.4f}} lr {{args.lr}}")
        print("eval", evaluate(model, loader, device), math.sqrt(epoch + 1))
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=int(os.environ.get("EPOCHS", 1)))
    train(parser.parse_args())
"""


def generate_scripts(folder: Path, files: int) -> int:
    """``files`` training scripts in nested folders, one in three with CUDA/NCCL code; their total lines."""
    lines = 0
    for i in range(files):
        cuda = i % 3 == 0
        text = SCAN_HEADER.format(i=i) + (SCAN_CUDA if cuda else "")
        text += SCAN_BODY.format(
            i=i,
            dim=64 + i % 7 * 32,
            hidden=256 + i % 5 * 64,
            n=1000 + i,
            device='"cuda" if torch.cuda.is_available() else "cpu"' if cuda else '"cpu"',
            workers=i % 4,
        )
        path = folder / f"team{i % 20}" / f"proj{i % 97}" / f"train_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        lines += text.count("\n")
    return lines


def bench_scan(files: int, runs: int) -> None:
    rules = ROOT / "docs" / "data" / "migration_rules.yml"
    if not rules.is_file():
        rules = ROOT / "tests" / "scan_rules.yml"
    with tempfile.TemporaryDirectory() as tmp:
        lines = generate_scripts(Path(tmp) / "repo", files)
        print(f"generated {files} files, {lines} lines ({lines / files:.0f} lines per file); rules: {rules.name}")
        cmd = [sys.executable, "-m", "kb", "--root", str(ROOT), "scan", "--rules", str(rules), "--format", "json"]
        cmd.append("repo")

        def scan() -> None:
            result = subprocess.run(cmd, cwd=tmp, env=ENV, capture_output=True, text=True)
            if result.returncode not in (0, 1):
                sys.exit(f"scan failed ({result.returncode}):\n{result.stderr[-3000:]}")

        times = timed(scan, runs)
        result = subprocess.run(cmd, cwd=tmp, env=ENV, capture_output=True, text=True)
        found = len(json.loads(result.stdout)["findings"])
        median = statistics.median(times)
        print(
            f"python -m kb scan: median {median:.2f} s over {runs} runs (min {min(times):.2f}, max {max(times):.2f}) "
            f"= {files / median:,.0f} files/s, {lines / median:,.0f} lines/s on {os.cpu_count()} cores; "
            f"{found} findings"
        )


def bench_weight(site: Path | None, top: int, with_print: bool, write: bool = False) -> None:
    import pageweight
    import speedrecord

    command = f"{WEIGHT_COMMAND}{'' if site is None else ' --site site'} --write"
    with tempfile.TemporaryDirectory() as tmp:
        if site is None:
            site = Path(tmp) / "site"
            build(ROOT / "mkdocs.yml", site)
        over = pageweight.weigh(site, top)
        if with_print:
            pageweight.print_times(site)
        if write:
            speedrecord.write(speedrecord.weight_records(site, *pageweight.heaviest(site), command))
    if over:
        sys.exit(1)


def bench_scale(sizes: list[int], limit: float, profile: bool, keep: Path | None, write: bool = False) -> None:
    import scalebench
    import speedrecord

    if write and sizes != [40, 1000]:
        sys.exit("scale --write: expected --sizes 40,1000 (the speed table records 1,000 pages over 40)")
    times = scalebench.run(sizes, limit, profile, keep)
    if write:
        extra = "" if limit == SCALE_LIMIT else f" --limit {limit:g}"
        speedrecord.write([speedrecord.scale_record(times, f"{SCALE_COMMAND}{extra} --write")])


def bench_glossary(
    terms: list[int], limit: float, whole_build: bool, runs: int, write: bool, floor: bool = False
) -> None:
    import glossfloor
    import scalebench

    if write and (not whole_build or terms != [10_000]):
        sys.exit("glossary --write: expected --build --terms 10000 (the speed table records 10,000 terms)")
    if floor:
        floors = {n: glossfloor.floor(n, runs, limit) for n in terms}
    if not whole_build:
        if not floor:
            scalebench.glossary(terms, limit)
        return
    added = scalebench.glossary_build(terms, limit, runs)
    if write:
        record_glossary(added[10_000], runs, floors[10_000] if floor else {})


def record_glossary(added: list[float], runs: int, floors: dict[str, float] | None = None) -> None:
    """The CPU 10,000 terms added, run by run, as the glossary-build record of docs/data/speed.yml."""
    import datetime

    import editbench
    import scalebench
    from peers import machine

    if not added:
        sys.exit("glossary --write: no build with the terms finished, so nothing was recorded")
    floors = floors or {}
    command = f"{GLOSSARY_COMMAND} --runs {runs}{' --floor' if floors else ''} --write"
    record = scalebench.glossary_speed_record(added, command, datetime.date.today().isoformat(), machine(), floors)
    editbench.write_run(editbench.SPEED_FILE, record)
    print(f"recorded in {editbench.SPEED_FILE.relative_to(ROOT)}")


SCALE_LIMIT = 900.0  # seconds
SCALE_COMMAND = "PYTHONPATH=scripts .venv/bin/python benchmarks/bench.py scale --sizes 40,1000"
WEIGHT_COMMAND = "PYTHONPATH=scripts .venv/bin/python benchmarks/bench.py weight"
GLOSSARY_COMMAND = "PYTHONPATH=scripts .venv/bin/python benchmarks/bench.py glossary --build --terms 10000"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    a = sub.add_parser("sitecheck")
    a.add_argument("--pages", type=int, default=1000)
    a.add_argument("--runs", type=int, default=5)
    b = sub.add_parser("overhead")
    b.add_argument("--runs", type=int, default=3)
    c = sub.add_parser("scan")
    c.add_argument("--files", type=int, default=10_000)
    c.add_argument("--runs", type=int, default=3)
    d = sub.add_parser("weight")
    d.add_argument("--site", type=Path, help="a built site (default: build the project into a temporary folder)")
    d.add_argument("--top", type=int, default=15)
    d.add_argument("--print", action="store_true", help="also time Chromium's load and print to PDF of each print page")
    d.add_argument("--write", action="store_true", help="record the three heaviest figures in docs/data/speed.yml")
    e = sub.add_parser("scale")
    e.add_argument("--sizes", default="40,1000,3000", help="site sizes in pages, comma-separated")
    e.add_argument("--limit", type=float, default=SCALE_LIMIT, help="stop a build after this many seconds")
    e.add_argument("--profile", action="store_true", help="also print each build's cProfile proportions")
    e.add_argument("--keep", type=Path, help="keep the largest project here (for editbench.py --project)")
    e.add_argument("--write", action="store_true", help="with --sizes 40,1000: record the ratio in docs/data/speed.yml")
    f = sub.add_parser("glossary")
    f.add_argument("--terms", default="2000,10000,100000", help="glossary sizes, comma-separated")
    f.add_argument("--limit", type=float, default=240, help="stop a size after this many seconds")
    f.add_argument("--build", action="store_true", help="time whole builds of the handbook with the terms added")
    f.add_argument("--runs", type=int, default=1, help="with --build: pairs of builds (plain, with the terms) per size")
    f.add_argument("--write", action="store_true", help="with --build --terms 10000: record in docs/data/speed.yml")
    f.add_argument("--floor", action="store_true", help="also time what plain MkDocs pays for the rows (glossfloor.py)")
    f.add_argument("--stages", action="store_true", help="only: the CPU the terms add, stage by stage (buildstages.py)")
    g = sub.add_parser("kbedit")
    g.add_argument("--tables", default="figures,claims,glossary,sources", help="tables to edit, comma-separated")
    args = parser.parse_args()
    if args.what == "kbedit":
        import scalebench

        scalebench.kb_edit(args.tables.split(","))
    elif args.what == "scale":
        bench_scale([int(n) for n in args.sizes.split(",")], args.limit, args.profile, args.keep, args.write)
    elif args.what == "glossary":
        terms = [int(n) for n in args.terms.split(",")]
        if args.stages:
            import buildstages

            for n in terms:
                buildstages.glossary_stages(n)
            return
        bench_glossary(terms, args.limit, args.build, args.runs, args.write, args.floor)
    elif args.what == "sitecheck":
        bench_sitecheck(args.pages, args.runs)
    elif args.what == "scan":
        bench_scan(args.files, args.runs)
    elif args.what == "weight":
        bench_weight(args.site, args.top, args.print, args.write)
    else:
        bench_overhead(args.runs)


if __name__ == "__main__":
    main()
