"""The research behind the shipped agents, beside the product: the experiments' entry points (``python -m
training.research.NAME``) and configs (``configs/``), the research-only search options and kernels, the policy-file
surgery (:mod:`training.research.surgery`), the recordings (``recordings/``), the retired policy files
(``policies/``) and the research log (``NOTES.md``)."""
