"""LoRA fine-tuning with PEFT and TRL's SFTTrainer on NVIDIA GPUs, then loading the adapter."""

from datasets import load_dataset
from peft import LoraConfig, PeftModel
from transformers import AutoModelForCausalLM
from trl import SFTConfig, SFTTrainer

base = "Qwen/Qwen3-0.6B"
dataset = load_dataset("trl-lib/Capybara", split="train")
args = SFTConfig(output_dir="out", fp16=True, activation_offloading=True)
lora = LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM")
trainer = SFTTrainer(model=base, args=args, train_dataset=dataset, peft_config=lora)
trainer.train()
trainer.save_model("adapter")

model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), "adapter")
