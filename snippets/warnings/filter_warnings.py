import warnings

# Before the first `import torch`: it loads torch-tpu, which warns while it loads.
warnings.filterwarnings("ignore", message="<TorchTpu/Performance/")  # tcmalloc, unoptimised build
warnings.filterwarnings("error", message="<TorchTpu/Correctness/")  # stop at a correctness warning
warnings.filterwarnings("default", message="<TorchTpu/ApiStage/DeprecatedApi/")  # show every deprecation

import torch  # noqa: E402
