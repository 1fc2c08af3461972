"""A space's training run: data, tokenizer, schedule, optimizer, logging and checkpoints.

Without a ``run`` block the launch files measure throughput (mock data, Megatron's optimizer
defaults, as before). A ``run`` block makes them a training run; what it leaves out takes the
published recipe's value: Megatron-LM's ``examples/gpt3/train_gpt3_175b_distributed.sh`` for the
optimizer (AdamW β 0.9/0.95, weight decay 0.1, clipping 1.0, cosine decay to a tenth of the peak)
and Megatron's own default initialisation (``--init-method-std 0.02``, the Llama and Qwen cards'
``initializer_range``).
"""

from __future__ import annotations

import math

from attrs import field, frozen

from primus_lang.ir.quantity import Kind, q
from primus_lang.ir.span import Span

TOKENIZERS = ("HuggingFaceTokenizer", "SentencePieceTokenizer", "GPT2BPETokenizer", "TikTokenizer",
              "Llama2Tokenizer", "NullTokenizer")
# the knob's names -> Megatron's --lr-decay-style; WSD is left out: it needs its own decay phase
DECAY_STYLES = {"constant": "constant", "linear": "linear", "cosine": "cosine",
                "inverse_square_root": "inverse-square-root"}
CKPT_FORMATS = ("torch_dist", "torch", "torch_dcp", "fsdp_dtensor")
# Megatron-LM's argument -> the run field that sets it, where the names differ: a Megatron user's
# name (`lr_decay_style`) is nearer another field (`decay_iters`) than its own (`decay`)
MEGATRON_NAMES: dict[str, str] = {
    "lr_decay_style": "decay", "lr_decay_iters": "decay_iters", "lr_warmup_iters": "warmup_iters",
    "init_method_std": "init_std", "data_path": "data", "train_data_path": "train_data",
    "valid_data_path": "valid_data", "test_data_path": "test_data", "tokenizer_type": "tokenizer",
    "save": "checkpoint_dir", "load": "checkpoint_dir",
}


@frozen
class Run:
    data: str = field(default="", metadata=q(
        Kind.TEXT, "Megatron data prefix or weighted blend `0.7 a 0.3 b` (empty: mock data)"))
    train_data: str = field(default="", metadata=q(Kind.TEXT, "training split's prefix or blend (instead of `data`)"))
    valid_data: str = field(default="", metadata=q(Kind.TEXT, "validation split's prefix or blend"))
    test_data: str = field(default="", metadata=q(Kind.TEXT, "test split's prefix or blend"))
    split: str = field(default="", metadata=q(Kind.TEXT, "train,valid,test shares of `data`, e.g. `99,1,0`"))
    tokenizer: str = field(default="", metadata=q(
        Kind.ENUM, "Megatron tokenizer type (empty: HuggingFaceTokenizer with a model)", TOKENIZERS))
    tokenizer_model: str = field(default="", metadata=q(Kind.TEXT, "tokenizer name or path"))
    train_iters: int = field(default=0, metadata=q(Kind.COUNT, "training iterations (0: --var train_iters)"))
    lr: float = field(default=0.0, metadata=q(Kind.NUMBER, "peak learning rate (0: --var lr)"))
    min_lr: float = field(default=0.0, metadata=q(Kind.NUMBER, "learning rate at the end of decay (0: lr / 10)"))
    warmup_iters: int = field(default=0, metadata=q(Kind.COUNT, "linear warm-up iterations"))
    decay: str = field(default="cosine", metadata=q(Kind.ENUM, "learning-rate decay", tuple(DECAY_STYLES)))
    decay_iters: int = field(default=0, metadata=q(Kind.COUNT, "iterations of decay (0: train_iters)"))
    weight_decay: float = field(default=0.1, metadata=q(Kind.NUMBER, "AdamW weight decay", zero_ok=True))
    adam_beta1: float = field(default=0.9, metadata=q(Kind.NUMBER, "Adam β1"))
    adam_beta2: float = field(default=0.95, metadata=q(Kind.NUMBER, "Adam β2"))
    adam_eps: float = field(default=1e-8, metadata=q(Kind.NUMBER, "Adam ε"))
    clip_grad: float = field(default=1.0, metadata=q(Kind.NUMBER, "gradient-norm clipping (0: none)", zero_ok=True))
    init_std: float = field(default=0.02, metadata=q(Kind.NUMBER, "standard deviation of weight initialisation"))
    log_interval: int = field(default=0, metadata=q(Kind.COUNT, "iterations between log lines (0: --var)"))
    log_throughput: bool = field(default=True, metadata=q(Kind.FLAG, "log tokens/s and TFLOP/s per GPU"))
    tensorboard_dir: str = field(default="", metadata=q(Kind.TEXT, "TensorBoard folder (empty: none)"))
    wandb_project: str = field(default="", metadata=q(Kind.TEXT, "Weights & Biases project (empty: none)"))
    checkpoint_dir: str = field(default="", metadata=q(
        Kind.TEXT, "--save/--load folder; relative: under the site's checkpoint_root (empty: none)"))
    save_interval: int = field(default=0, metadata=q(Kind.COUNT, "iterations between checkpoints (0: train_iters)"))
    ckpt_format: str = field(default="torch_dist", metadata=q(Kind.ENUM, "checkpoint format", CKPT_FORMATS))
    span: Span | None = field(default=None, eq=False, repr=False, metadata=q(Kind.TEXT, "definition site"))


def blend_problem(text: str) -> str | None:
    """Why ``text`` is not a Megatron data prefix or weighted blend (None: it is)."""
    words = text.split()
    if len(words) <= 1:
        return None
    if len(words) % 2:
        return "a blend is pairs of `WEIGHT PREFIX`; this has an odd number of words"
    for weight in words[::2]:
        try:
            ok = math.isfinite(float(weight)) and float(weight) > 0
        except ValueError:
            ok = False
        if not ok:
            return f"`{weight}` is not a positive weight"
    return None
