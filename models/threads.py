"""The process's intra-op thread count for torch, which models.entmax's compiled kernels follow
too. Whoever owns the setting calls this once at start-up: app.serving (from
$PAPERTRACE_TORCH_THREADS), so the web layer never touches torch itself."""

from __future__ import annotations

import torch


def set_intra_op_threads(threads: int) -> None:
    torch.set_num_threads(threads)
