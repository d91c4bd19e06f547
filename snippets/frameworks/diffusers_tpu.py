"""A Diffusers pipeline on a TPU (TorchTPU), in bf16."""

import torch
from diffusers import DiffusionPipeline

pipe = DiffusionPipeline.from_pretrained(
    "stabilityai/stable-diffusion-xl-base-1.0", torch_dtype=torch.bfloat16
)
pipe.to("tpu")
image = pipe("a lighthouse at dusk, oil painting", num_inference_steps=30).images[0]
image.save("lighthouse.png")
