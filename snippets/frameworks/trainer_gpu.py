"""Fine-tune a small causal language model with the Hugging Face Trainer on NVIDIA GPUs."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class RandomTokens(torch.utils.data.Dataset):
    """Fixed random token sequences: stands in for a tokenised corpus."""

    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = torch.randint(0, 256, (32,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": ids, "labels": ids.clone()}


config = GPT2Config(
    vocab_size=256, n_positions=32, n_embd=64, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0
)
model = GPT2LMHeadModel(config)
args = TrainingArguments(
    output_dir="out",
    max_steps=2,
    per_device_train_batch_size=4,
    learning_rate=3e-4,
    fp16=True,
    torch_compile=True,
    ddp_backend="nccl",
    dataloader_num_workers=4,
    logging_steps=1,
    report_to="none",
)
trainer = Trainer(model=model, args=args, train_dataset=RandomTokens())
result = trainer.train()
print(f"device {args.device}, {result.global_step} steps, loss {result.training_loss:.3f}")
