"""Runs the handbook's code spans on torch (CPU) for tests/pages/test_recommended_calls.py.

Reads a JSON list of jobs from the file named by argv[1] and prints one JSON result per job:
  {"kind": "run", "code": ...}        exec the code in a fresh namespace (aliases and placeholders bound)
  {"kind": "resolve", "name": ...}    import and getattr the dotted name
  {"kind": "bind", "name": ..., "positional": n, "keywords": [...]}
                                      bind that many arguments and those keywords to the signature
A gloo process group of one rank is up for every job, so torch.distributed calls run.
torch.accelerator calls on a machine without an accelerator end in torch's own
"Cannot access accelerator device when none is available." error: reported as "no-accelerator".
An op torch's CPU build has no kernel for is reported as "no-cpu-kernel:aten::op.overload" (the
test then requires the wheel to register a TPU kernel for it).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import socket
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

NO_ACCELERATOR = "Cannot access accelerator device when none is available"
NO_CPU_KERNEL = re.compile(r"Could not run '(aten::[\w.]+)' with arguments from the 'CPU' backend")
SCRATCH = Path(tempfile.mkdtemp(prefix="recommended-"))


def resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    obj: Any = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[: i + 1]))
    return obj


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_group() -> None:
    if not dist.is_initialized():
        dist.init_process_group("gloo")


def namespace(aliases: dict[str, str]) -> dict[str, Any]:
    ns: dict[str, Any] = {"torch": torch}
    for local, target in aliases.items():
        try:
            ns[local] = resolve(target)
        except (ImportError, AttributeError):
            pass  # a TorchTPU alias (Precision, EagerMode): no TPU span runs here
    model = torch.nn.Linear(4, 4)
    tensor = torch.ones(2, 4)
    path = SCRATCH / "checkpoint.pt"
    torch.save(model.state_dict(), path)
    ns.update(
        model=model,
        module=model,
        tensor=tensor,
        x=tensor,
        t=tensor,
        inputs=tensor,
        a=torch.ones(2, 3, 3),
        b=torch.ones(2, 3, 3),
        i=0,
        s=0,
        seed=0,
        dim=0,
        N=8,
        device=torch.device("cpu"),
        path=str(path),
        state_dict=model.state_dict(),
        mesh_shape=(1,),
        fn=lambda v: v * 2,
        args=(tensor,),
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
    )
    return ns


def run(code: str, aliases: dict[str, str]) -> Any:
    if "init_process_group" in code and dist.is_initialized():
        dist.destroy_process_group()
    ns = namespace(aliases)
    tree = compile(code, "<span>", "exec")
    try:
        result = eval(code, ns) if _is_expression(code) else exec(tree, ns)
        if code.startswith("torch.compile(") and callable(result):
            compiled = result if "(model" in code or "(fn" in code else result(ns["fn"])
            compiled(ns["tensor"])
        compile_marked(ns)
        return result
    finally:
        ensure_group()


def compile_marked(ns: dict[str, Any]) -> None:
    """A span that marks a placeholder tensor (``torch._dynamo.mark_dynamic(x, ...)``) only shows
    its effect under torch.compile: compile a small function (dynamic=False, what torch-tpu
    defaults to) and call it on the marked tensor, as the reader's code would."""
    for value in ns.values():
        if isinstance(value, torch.Tensor) and getattr(value, "_dynamo_dynamic_indices", None):
            torch._dynamo.reset()
            torch.compile(lambda v: v * 2, backend="eager", dynamic=False)(value)
            return


def _is_expression(code: str) -> bool:
    try:
        compile(code, "<span>", "eval")
    except SyntaxError:
        return False
    return True


def bind(name: str, positional: int | None, keywords: list[str] | None) -> str:
    target = resolve(name)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return bind_op(name.rsplit(".", 1)[-1], keywords)
    args = [None] * (positional or 0)
    kwargs = {k: None for k in keywords or []}
    sig.bind_partial(*args, **kwargs)
    return "bound"


def bind_op(leaf: str, keywords: list[str] | None) -> str:
    """A C builtin (``torch.randn``): its keywords must be arguments of one of the ATen schemas."""
    schemas = torch._C._jit_get_schemas_for_operator(f"aten::{leaf}")
    if not schemas:
        return "no-signature"  # not an operator (torch.device, torch.Generator): resolved only
    names = {arg.name for schema in schemas for arg in schema.arguments}
    unknown = sorted(set(keywords or []) - names)
    if unknown:
        raise TypeError(f"no overload of aten::{leaf} takes the keyword(s) {unknown}")
    return "schema-bound"


def main() -> None:
    jobs = json.loads(Path(sys.argv[1]).read_text())
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1")
    os.environ.setdefault("LOCAL_RANK", "0")
    ensure_group()
    warnings.simplefilter("ignore")
    for job in jobs["jobs"]:
        result: dict[str, Any] = {"ok": True, "note": ""}
        try:
            if job["kind"] == "run":
                run(job["code"], jobs["aliases"])
            elif job["kind"] == "resolve":
                resolve(job["name"])
            else:
                result["note"] = bind(job["name"], job["positional"], job["keywords"])
        except Exception as exc:  # noqa: BLE001 - every failure is reported back with its type
            no_kernel = NO_CPU_KERNEL.search(str(exc))
            if isinstance(exc, RuntimeError) and NO_ACCELERATOR in str(exc):
                result["note"] = "no-accelerator"
            elif isinstance(exc, NotImplementedError) and no_kernel:
                result["note"] = f"no-cpu-kernel:{no_kernel.group(1)}"
            else:
                result = {"ok": False, "note": f"{type(exc).__name__}: {exc}".splitlines()[0][:300]}
                result["trace"] = traceback.format_exc(limit=3)[-600:]
        print(json.dumps(result), flush=True)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
