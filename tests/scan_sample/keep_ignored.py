import torch_xla  # kept: the .gitignore negates this name
