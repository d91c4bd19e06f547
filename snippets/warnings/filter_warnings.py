import warnings

# Set these before the first `import torch`: it loads torch-tpu, which warns as it loads.
warnings.filterwarnings("ignore", message="<TorchTpu/Performance/")  # tcmalloc, build
warnings.filterwarnings("error", message="<TorchTpu/Correctness/")  # stop at one
warnings.filterwarnings("default", message="<TorchTpu/ApiStage/DeprecatedApi/")  # show all

import torch  # noqa: E402, F401  (on a TPU host, this loads torch-tpu)
