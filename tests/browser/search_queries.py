"""What readers type into the search box mid-migration, and the page that must be in the top 3.

Each row: (query, page), the page as its docs/ source path. tests/browser/test_search.py types
every query into the real search box and fails on any row whose page is not among the first three
results, naming the query, the page and the three it got. Add a row when a reader's question
should land on a page; change a row's page only when the answer moved to another page.
"""

from __future__ import annotations

from typing import NamedTuple


class Query(NamedTuple):
    text: str
    page: str  # docs/ source path of the page that must be in the top 3 results


QUERIES: list[Query] = [
    # Device code
    Query("current_accelerator", "migrate/device-code.md"),
    Query("torch.accelerator", "migrate/device-code.md"),
    Query("map_location", "migrate/device-code.md"),
    Query("checkpoint", "migrate/device-code.md"),
    # "7. Count devices, not chips: ... why a v7 chip shows up as two devices"
    Query("TPU v7 two devices", "migrate/device-code.md"),
    # Distributed
    Query("nccl", "migrate/distributed.md"),
    Query("tpu_dist", "migrate/distributed.md"),
    Query("FSDP2", "migrate/distributed.md"),
    Query("singlehost_wrapper", "migrate/distributed.md"),
    # Execution modes and compile
    Query("DeferAndFuse", "understand/execution-modes.md"),
    Query("Strict Eager", "understand/execution-modes.md"),
    # "Make Fused Eager the default: TORCH_TPU_DEFER_AND_FUSE"
    Query("TORCH_TPU_DEFER_AND_FUSE", "understand/execution-modes.md"),
    Query("buffer donation", "understand/execution-modes.md"),
    Query("recompile", "migrate/torch-compile.md"),
    Query("capturable", "migrate/torch-compile.md"),
    # Precision
    Query("HIGHEST precision", "understand/precision-modes.md"),
    Query("set_float32_matmul_precision", "migrate/precision.md"),
    # From PyTorch/XLA
    Query("mark_step", "migrate/from-pytorch-xla.md"),
    # Kernels
    Query("jax_op", "migrate/custom-kernels.md"),
    Query("Helion", "migrate/custom-kernels.md"),
    Query("Pallas", "migrate/custom-kernels.md"),
    # Frameworks
    Query("Hugging Face Trainer TPU", "frameworks/transformers.md"),
    Query("TrainingArguments bf16", "frameworks/transformers.md"),
    Query("accelerate fp16 tpu", "frameworks/accelerate.md"),
    Query("accelerate launch", "frameworks/accelerate.md"),
    Query("DistributedType", "frameworks/accelerate.md"),
    Query("Lightning accelerator tpu", "frameworks/lightning.md"),
    Query("Ray Train ScalingConfig use_tpu", "frameworks/ray-train.md"),
    Query("torchtitan", "frameworks/torchtitan.md"),
    Query("diffusers pipeline", "frameworks/diffusers.md"),
    Query("LoRA PEFT", "frameworks/peft-trl.md"),
    # Attention
    Query("FlexAttention", "migrate/attention.md"),
    Query("packed sequences", "migrate/attention.md"),
    Query("sliding window attention", "migrate/attention.md"),
    Query("ReduceOp.AVG", "migrate/distributed.md"),
    Query("async_op", "migrate/distributed.md"),
    # Serving
    Query("vLLM", "migrate/serving.md"),
    # Limits and roadmap
    Query("dynamic shapes", "limits/index.md"),
    Query("RL colocation", "limits/index.md"),
    Query("quantization", "limits/index.md"),
    # Architecture and peers
    Query("PrivateUse1", "understand/architecture.md"),
    Query("TorchNeuron", "understand/compared-with-peers.md"),
    # Figures and hardware
    Query("25,700", "figures/index.md"),
    Query("MFU", "figures/measure-your-own.md"),
    # Reference
    Query("TORCH_TPU_TOPOLOGY", "reference/environment-variables.md"),
    # each variable is a heading there (kb:entries), so exact names land on it
    Query("TPU_VISIBLE_CHIPS", "reference/environment-variables.md"),
    Query("TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT", "reference/environment-variables.md"),
    Query("glossary", "reference/glossary.md"),
    # The FAQ: its questions are headings, so a question typed as a reader asks it lands there
    Query("FAQ", "reference/faq.md"),
    Query("Do I still need GradScaler", "reference/faq.md"),
    Query("Can two processes share one TPU device", "reference/faq.md"),
    Query("Does DDP no_sync still work", "reference/faq.md"),
    Query("Which peak FLOP/s for MFU", "reference/faq.md"),
    Query("Why does autocast do nothing", "reference/faq.md"),
    Query("what the reports got wrong", "reference/what-reports-got-wrong.md"),
    # The 15 questions of the research ledger (§4) not covered above, by their key terms
    Query("install torch_tpu libtpu", "migrate/quickstart.md"),  # Q3
    Query("torch.tpu.device_count RuntimeError", "migrate/troubleshooting.md"),  # Q5
    Query("torch_xla JAX installed", "understand/architecture.md"),  # Q6
    Query(".item() print slow", "migrate/troubleshooting.md"),  # Q8
    Query("NaN", "migrate/troubleshooting.md"),  # Q11
    Query("compilation cache", "migrate/torch-compile.md"),  # Q12
    Query("DTensor device mesh", "migrate/distributed.md"),  # Q13
    Query("SGLang llm-d", "migrate/serving.md"),  # Q14
    Query("Triton kernel", "migrate/custom-kernels.md"),  # Q15
    Query("fp32 matmul differs from GPU", "migrate/troubleshooting.md"),  # Q10
    # Error messages as a reader pastes them (headings of the troubleshooting page)
    Query("NotImplementedError: TPU backend: does not support dynamic shape", "migrate/troubleshooting.md"),
    Query(
        "RuntimeError: Expected one of cpu, cuda, ... device type at start of device string: tpu",
        "migrate/troubleshooting.md",
    ),
    # More pasted errors: colons, quotes, brackets, dots and a lone '-' (which lunr would read as
    # "must not contain" if Material did not drop it)
    Query(
        "TypeError: to() received an invalid combination of arguments - got (function)", "migrate/troubleshooting.md"
    ),
    Query(
        "NotImplementedError: TPU backend does not support torch.compile(..., dynamic=True, ...)",
        "migrate/troubleshooting.md",
    ),
    Query("No module named 'torch_xla'", "migrate/troubleshooting.md"),
    Query(
        "Could not run 'aten::empty.memory_format' with arguments from the 'XLA' backend", "migrate/troubleshooting.md"
    ),
    # Hyphenated product names: lunr's query lexer always splits at '-' (its own default separator,
    # whatever plugins.search.separator says), so 'torch-tpu' searches the exact word 'torch' OR the
    # prefix 'tpu*', and both are on most pages. What finds the right page is a heading that spells
    # the name as readers type it (the quickstart's and the serving page's h1, the llm-d heading),
    # with no punctuation-glued variant ("TPU's") outranking it (see the comment in mkdocs.yml).
    # A page's tags must not outweigh its headings (plugins.search.fields in mkdocs.yml).
    Query("llm-d", "migrate/serving.md"),
    Query("tpu-inference", "migrate/serving.md"),
    Query("vllm-torchtpu", "migrate/serving.md"),
    Query("torch-tpu", "migrate/quickstart.md"),  # the package: its name, install order, versions
    # No page names 'vllm-tpu'; a reader who types it wants vLLM on TPU, which the serving page explains
    Query("vllm-tpu", "migrate/serving.md"),
    # A bare peer name asks how TorchTPU relates to it. JAX is no peer (the comparison page names it
    # only in passing): the answer is "Do I need torch_xla or JAX installed?". A PyTorch/XLA user's
    # question is how to move off it; "PyTorch/XLA vs TorchTPU" (below) asks for the comparison.
    Query("JAX", "understand/architecture.md"),
    Query("PyTorch/XLA", "migrate/from-pytorch-xla.md"),
    # Peer products: the comparison page (search boost 2) ranks above pages that name them in passing
    Query("Gaudi", "understand/compared-with-peers.md"),
    Query("Intel Gaudi", "understand/compared-with-peers.md"),
    Query("Trainium", "understand/compared-with-peers.md"),
    Query("AWS Trainium", "understand/compared-with-peers.md"),
    Query("hpu", "understand/compared-with-peers.md"),
    Query("neuron", "understand/compared-with-peers.md"),
    Query("PyTorch/XLA vs TorchTPU", "understand/compared-with-peers.md"),
    # What readers paste (issue 37; docs/assets/javascripts/search-worker.js rewrites the query):
    # flags, whose leading '-' lunr reads as "exclude this word"; a name typed up to an underscore,
    # whose parts are whole words (not the prefix torch*, which ranks torchrun and torchcomms);
    # and word forms, searched by their stem.
    Query("torchrun --nproc_per_node", "migrate/distributed.md"),
    Query("--fix", "migrate/scan-your-code.md"),
    Query("TORCH_TPU_", "reference/environment-variables.md"),
    Query("recompilation", "migrate/torch-compile.md"),
    Query("recompiles", "migrate/torch-compile.md"),
]
