"""Pad variable-length batches to a few fixed lengths, so compiled shapes repeat.

With dynamic=False each new input shape means a new compilation (on TPU, an XLA
compile that can take seconds or minutes). Padding every batch up to one of a few
bucket lengths caps the number of compilations at the number of buckets.
"""

import torch

BUCKETS = (32, 64, 128)  # allowed sequence lengths; pick them from your data


def bucket_length(length: int) -> int:
    """The smallest bucket that holds `length` tokens."""
    for size in BUCKETS:
        if length <= size:
            return size
    raise ValueError(f"{length} tokens do not fit the largest bucket ({BUCKETS[-1]})")


def pad_batch(sequences: list[torch.Tensor], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token sequences with 0 to `length`; the mask marks the real tokens."""
    tokens = torch.zeros(len(sequences), length, dtype=torch.long)
    mask = torch.zeros(len(sequences), length, dtype=torch.bool)
    for row, seq in enumerate(sequences):
        tokens[row, : len(seq)] = seq
        mask[row, : len(seq)] = True
    return tokens, mask


compilations = 0


def counting_backend(graph_module, example_inputs):
    """Stands in for backend="tpu" here: counts compilations, then runs the graph as is."""
    global compilations
    compilations += 1
    return graph_module.forward


def masked_mean(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (tokens * mask).sum(dim=1) / mask.sum(dim=1)


torch.manual_seed(0)
lengths = [[5, 17, 30], [40, 33, 8], [90, 12, 64], [100, 3, 77], [21, 9, 2], [50, 61, 6]]
batches = [[torch.randint(1, 1000, (n,)) for n in batch] for batch in lengths]

for name, bucketed in [("pad to the batch maximum", False), ("pad to a bucket", True)]:
    torch._dynamo.reset()  # forget earlier compilations
    compilations = 0
    compiled = torch.compile(masked_mean, backend=counting_backend, dynamic=False)
    for batch in batches:
        longest = max(len(seq) for seq in batch)
        length = bucket_length(longest) if bucketed else longest
        tokens, mask = pad_batch(batch, length)
        torch.testing.assert_close(compiled(tokens, mask), masked_mean(tokens, mask))
    print(f"{name}: {len(batches)} batches, {compilations} compilations")

assert compilations <= len(BUCKETS)
print("ok")
