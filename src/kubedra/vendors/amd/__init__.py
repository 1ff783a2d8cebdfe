"""AMD GPUs: the ROCm device plugin's resource names (``amd.com/gpu``, ``amd.com/cpx_nps4``) and AMD's DRA driver
(``gpu.amd.com``), from ``kubedra/data/amd-gpu.yaml``. The package itself imports nothing."""
