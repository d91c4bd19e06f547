# café au lait
import torch_xla
