"""A Diffusers pipeline on an NVIDIA GPU, in fp16."""

import torch
from diffusers import DiffusionPipeline

pipe = DiffusionPipeline.from_pretrained(
    "stabilityai/stable-diffusion-xl-base-1.0", torch_dtype=torch.float16
)
pipe.to("cuda")
image = pipe("a lighthouse at dusk, oil painting", num_inference_steps=30).images[0]
image.save("lighthouse.png")
