"""Writes ``primus_lang/emit/bridge_fields.txt``: the dataclass fields of the ConfigContainer sections the
``bridge`` framework emits, read with ``ast`` from Megatron-Bridge at 067f987 and the Megatron-LM
commit it pins as its 3rdparty submodule (2a75ac1). Not run by the tests; rerun it against two git
checkouts to refresh the list:

    python tests/emit/bridge_fields/generate.py BRIDGE_GIT_DIR MEGATRON_GIT_DIR > primus_lang/emit/bridge_fields.txt

A section's fields are its class's annotated assignments plus its bases', in the order named below
(the bases are written out rather than resolved from imports, so the list says what it reads).
"""

from __future__ import annotations

import ast
import subprocess
import sys

BRIDGE = "067f987df03b8355b03192d88d70f1709fedf51a"
MEGATRON = "2a75ac12c54ba6a42b34024756820bf819a2e25f"  # Megatron-Bridge's 3rdparty/Megatron-LM at BRIDGE

# section -> the classes whose fields it has: (repository, path, class)
SECTIONS: dict[str, list[tuple[str, str, str]]] = {
    "model": [("bridge", "src/megatron/bridge/models/gpt_provider.py", "GPTModelProvider"),
              ("megatron", "megatron/core/transformer/transformer_config.py", "TransformerConfig"),
              ("megatron", "megatron/core/model_parallel_config.py", "ModelParallelConfig")],
    "train": [("bridge", "src/megatron/bridge/training/config.py", "TrainingConfig"),
              ("megatron", "megatron/training/config/training_config.py", "TrainingConfig")],
    "validation": [("megatron", "megatron/training/config/training_config.py", "ValidationConfig")],
    "optimizer": [("bridge", "src/megatron/bridge/training/config.py", "OptimizerConfig"),
                  ("megatron", "megatron/core/optimizer/optimizer_config.py", "OptimizerConfig")],
    "scheduler": [("bridge", "src/megatron/bridge/training/config.py", "SchedulerConfig"),
                  ("megatron", "megatron/training/config/training_config.py", "SchedulerConfig")],
    "ddp": [("bridge", "src/megatron/bridge/training/config.py", "DistributedDataParallelConfig"),
            ("megatron", "megatron/core/distributed/distributed_data_parallel_config.py",
             "DistributedDataParallelConfig")],
    "dataset": [("bridge", "src/megatron/bridge/training/config.py", "GPTDatasetConfig"),
                ("megatron", "megatron/core/datasets/gpt_dataset.py", "GPTDatasetConfig"),
                ("megatron", "megatron/core/datasets/blended_megatron_dataset_config.py",
                 "BlendedMegatronDatasetConfig"),
                ("bridge", "src/megatron/bridge/data/base.py", "DataloaderConfig")],
    "logger": [("bridge", "src/megatron/bridge/training/config.py", "LoggerConfig"),
               ("megatron", "megatron/training/config/training_config.py", "LoggerConfig")],
    "tokenizer": [("bridge", "src/megatron/bridge/training/tokenizers/config.py", "TokenizerConfig"),
                  ("megatron", "megatron/training/config/training_config.py", "TokenizerConfig")],
    "checkpoint": [("bridge", "src/megatron/bridge/training/config.py", "CheckpointConfig"),
                   ("megatron", "megatron/training/config/training_config.py", "CheckpointConfig")],
    "comm_overlap": [("bridge", "src/megatron/bridge/training/comm_overlap.py", "CommOverlapConfig")],
    "rng": [("megatron", "megatron/training/config/common_config.py", "RNGConfig")],
    "rerun_state_machine": [("bridge", "src/megatron/bridge/training/config.py", "RerunStateMachineConfig"),
                            ("megatron", "megatron/training/config/resilience_config.py", "RerunStateMachineConfig")],
    "mixed_precision": [("bridge", "src/megatron/bridge/training/mixed_precision.py", "MixedPrecisionConfig")],
}


def source(repo: str, path: str, dirs: dict[str, str]) -> str:
    commit = BRIDGE if repo == "bridge" else MEGATRON
    return subprocess.run(["git", "--git-dir", dirs[repo], "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def fields(text: str, name: str) -> list[tuple[str, str]]:
    tree = ast.parse(text)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    out = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotation = ast.unparse(node.annotation)
            if annotation.startswith(("ClassVar", "InitVar")):
                continue
            out.append((node.target.id, annotation.replace(" ", "")))
    return out


def mixed_precision_recipes(text: str) -> list[str]:
    """The names ``mixed_precision=NAME`` takes: the functions decorated ``@register``."""
    tree = ast.parse(text)
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
            and any(isinstance(d, ast.Name) and d.id == "register" for d in n.decorator_list)]


def main(bridge_dir: str, megatron_dir: str) -> None:
    dirs = {"bridge": bridge_dir, "megatron": megatron_dir}
    print(f"# Megatron-Bridge's ConfigContainer fields at NVIDIA-NeMo/Megatron-Bridge {BRIDGE}, with")
    print(f"# megatron-core's base classes at NVIDIA/Megatron-LM {MEGATRON} (Bridge's pinned submodule).")
    print("# One `section.field annotation` a line (the first class that declares a field wins), then")
    print("# `mixed_precision=NAME` for each registered precision recipe. Written by tests/emit/bridge_fields/generate.py.")
    for section, classes in SECTIONS.items():
        seen: set[str] = set()
        for repo, path, name in classes:
            for field, annotation in fields(source(repo, path, dirs), name):
                if field not in seen:
                    seen.add(field)
                    print(f"{section}.{field} {annotation}")
    for name in mixed_precision_recipes(source("bridge", "src/megatron/bridge/training/mixed_precision.py", dirs)):
        print(f"mixed_precision={name}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
