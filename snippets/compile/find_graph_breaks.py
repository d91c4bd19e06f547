"""Find graph breaks before you compile for TPU: torch._dynamo.explain, on the CPU.

Each graph break ends one compiled graph and starts another, with a trip back to
Python in between. Aim for one graph per function.
"""

import torch
import torch._dynamo


def step_with_break(x: torch.Tensor) -> torch.Tensor:
    x = torch.relu(x) * 2
    print("mean:", x.mean().item())  # .item() needs the value in Python: graph break
    return x.sum()


def step_without_break(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.relu(x) * 2
    return x.sum(), x.mean()  # return the statistic; print it outside the compiled code


x = torch.randn(8, 8)
counts = {}
for fn in (step_with_break, step_without_break):
    report = torch._dynamo.explain(fn)(x)  # runs fn once under Dynamo; compiles nothing
    counts[fn.__name__] = (report.graph_count, report.graph_break_count)
    print(f"{fn.__name__}: {report.graph_count} graph(s), {report.graph_break_count} break(s)")
    for info in report.break_reasons:
        print("  reason:", info.reason.splitlines()[0])

assert counts["step_with_break"][1] >= 1 and counts["step_without_break"] == (1, 0)
print("ok")
