"""Megatron-LM command lines as Megatron-LM's parser and megatron-core read them, and their launches:
one argument per value the recipe quoted, gated activations, the stdlib card a tokenizer hides, block
recomputation beyond a model chunk. Each line is written in the shape of Megatron-LM's examples."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from primus_lang.check import baseline_point, legal_points
from primus_lang.cli import main
from primus_lang.emit import emit
from primus_lang.ir import Candidate, Space
from primus_lang.lower import load_space

LLAMA3_8B = ("--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
             "--group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm "
             "--position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear "
             "--seq-length 8192 --max-position-embeddings 8192 --micro-batch-size 1 --bf16")


def imported(tmp_path: Path, flags: str, nodes: int = 1) -> tuple[Path, Space, Candidate]:
    """A torchrun launch of pretrain_gpt.py with ``flags``, imported for H100s: the space and its baseline."""
    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 --nnodes {nodes} pretrain_gpt.py {flags}\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    return out, space, cand


def imported_at(tmp_path: Path, flags: str, release: str) -> Space:
    """A torchrun launch of pretrain_gpt.py with ``flags``, imported for H100s as read at Megatron-LM ``release``."""
    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py {flags}\n")
    out = tmp_path / f"{release}.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--megatron-version", release, "--out", str(out)]) == 0
    return load_space(out)


def test_a_multi_word_value_stays_one_argument_unless_its_flag_takes_a_list(tmp_path: Path) -> None:
    # a run name with spaces is one word; a data blend is --data-path's several (nargs='*')
    _out, space, cand = imported(tmp_path, f"{LLAMA3_8B} --global-batch-size 128 --tensor-model-parallel-size 2 "
                                 "--tokenizer-type NullTokenizer --vocab-size 128256 --wandb-exp-name \"my run 1\" "
                                 "--data-path \"0.5 /data/a 0.5 /data/b\"")
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "--wandb-exp-name 'my run 1'" in sh
    assert "--data-path 0.5 /data/a 0.5 /data/b" in sh


def test_quick_geglu_reads_as_a_gated_mlp_and_is_written_back(tmp_path: Path) -> None:
    # Megatron-LM's gpt-oss example (examples/gptoss): --quick-geglu gates the MLP as --swiglu does
    _out, space, cand = imported(
        tmp_path, "--num-layers 8 --hidden-size 2880 --ffn-hidden-size 2880 --num-attention-heads 64 --kv-channels 64 "
        "--group-query-attention --num-query-groups 8 --quick-geglu --glu-linear-offset 1.0 "
        "--activation-func-clamp-value 7.0 --normalization RMSNorm --position-embedding-type rope "
        "--untie-embeddings-and-output-weights --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
        "--global-batch-size 64 --bf16 --tokenizer-type NullTokenizer --vocab-size 201088")
    m = space.model
    assert (m.activation, m.glu_offset, m.activation_clamp) == ("quick_geglu", 1.0, 7.0) and m.gated
    assert not any(k in ("quick_geglu", "glu_linear_offset", "activation_func_clamp_value")
                   for k, _ in space.passthrough)  # read into the card, not carried beside it
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "--quick-geglu" in sh and "--swiglu" not in sh and sh.count("--no-bias-gelu-fusion") == 1
    assert "--glu-linear-offset 1.0" in sh and "--activation-func-clamp-value 7.0" in sh


def test_of_cards_of_one_shape_the_one_agreeing_in_rope_base_is_taken(tmp_path: Path) -> None:
    # a command line of Llama 3 70B's shape whose tokenizer hides the vocabulary: its RoPE base is Llama 3's
    _out, space, _cand = imported(
        tmp_path, "--num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 --num-attention-heads 64 "
        "--group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm --position-embedding-type rope "
        "--rotary-base 500000 --untie-embeddings-and-output-weights --disable-bias-linear --seq-length 8192 "
        "--max-position-embeddings 8192 --micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 8 "
        "--bf16 --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-70B")
    assert space.model.vocab == 128256


def test_block_recomputation_beyond_a_chunk_reads_as_the_chunk(tmp_path: Path) -> None:
    # Primus's grok examples: 64 layers on PP 4 x VPP 4 (chunks of 4), full block recomputation of 8
    # layers, which megatron-core takes and runs as all 4 of each chunk
    out, _space, cand = imported(
        tmp_path, LLAMA3_8B.replace("--num-layers 32", "--num-layers 64") + " --global-batch-size 64 "
        "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 4 --recompute-granularity full "
        "--recompute-method block --recompute-num-layers 8 --tokenizer-type NullTokenizer --vocab-size 32000", nodes=2)
    assert (cand.recompute.layers, cand.recompute.method) == (4, "block")
    assert "model chunks of at most 4 recomputes all of them" in out.read_text()


def test_the_cross_entropy_kernel_is_read_and_written_back(tmp_path: Path) -> None:
    # Megatron reads --cross-entropy-fusion-impl only with --cross-entropy-loss-fusion (language_module.py)
    flags = f"{LLAMA3_8B} --global-batch-size 64 --tokenizer-type NullTokenizer --vocab-size 128256"
    for n, (extra, kernel) in enumerate((("", "unfused"), ("--cross-entropy-fusion-impl te", "unfused"),
                                         ("--cross-entropy-loss-fusion", "native"),
                                         ("--cross-entropy-loss-fusion --cross-entropy-fusion-impl te", "te"))):
        (tmp_path / str(n)).mkdir()
        _out, space, cand = imported(tmp_path / str(n), f"{flags} {extra}")
        assert cand.cross_entropy == kernel, extra
        assert not any(k.startswith("cross_entropy") for k, _ in space.passthrough)  # a knob, not carried
        sh = emit(space, cand, "megatron+slurm")["node.sh"]
        assert ("--cross-entropy-loss-fusion" in sh) == (kernel != "unfused")
        assert ("--cross-entropy-fusion-impl te" in sh) == (kernel == "te")


def test_megatron_llama2_tokenizer_is_megatrons_own(tmp_path: Path) -> None:
    # Megatron-LM's Mixtral example runs its SentencePiece Llama2Tokenizer over `tokenizer.model`; Primus reads
    # the same name as a Hugging Face tokenizer (its CUSTOM_TOKENIZER_TYPES): written as the recipe wrote it
    # for Megatron, and refused for Primus rather than launched to fail loading the file
    from primus_lang.emit import unsupported

    _out, space, cand = imported(tmp_path, f"{LLAMA3_8B} --global-batch-size 128 --tokenizer-type Llama2Tokenizer "
                                 "--tokenizer-model /tokenizers/mixtral/tokenizer.model --data-path /data/a")
    assert "--tokenizer-type Llama2Tokenizer" in emit(space, cand, "megatron+slurm")["node.sh"]
    [why] = [w for w in unsupported(space, cand, "primus+slurm") if "tokenizer_type" in w]
    assert "Primus reads as a Hugging Face tokenizer" in why


def test_megatron_fsdp_bf16_main_grads_by_release(tmp_path: Path, capsys: object) -> None:
    """Megatron-LM's examples/megatron_fsdp DeepSeek-V3 script sets --megatron-fsdp-main-grads-dtype bf16, which
    was carried unread (its account 13 GiB over the GPU; a new user's trial). From the commit Bridge v0.6 pins
    Megatron-FSDP takes it as given; before it, BF16 training's FP32 accumulation set FP32 over it
    (mcore_fsdp_adapter.py at core_v0.17.1 and core_v0.19.0)."""
    flags = (f"{LLAMA3_8B} --global-batch-size 128 --tokenizer-type NullTokenizer --vocab-size 128256 "
             "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --no-gradient-accumulation-fusion "
             "--ckpt-format fsdp_dtensor --megatron-fsdp-main-grads-dtype bf16")
    grads = {}
    for release in ("core_v0.17", "core_v0.19"):
        cand = baseline_point(imported_at(tmp_path, flags, release))
        assert cand is not None and cand.sharding == "fsdp"
        grads[release] = cand.main_grad_dtype
    assert grads == {"core_v0.17": "fp32", "core_v0.19": "bf16"}
    # read at the default (the oldest release with its flags), the import says the newest reads it otherwise
    out, _space, cand = imported(tmp_path, flags)
    assert cand.main_grad_dtype == "fp32"
    assert ("read at Megatron-LM core_v0.17; core_v0.19 reads the command line otherwise: `main_grad_dtype` bf16"
            in " ".join(out.read_text().split()))


def test_megatron_fsdp_main_grads_default_and_fp32_round_trip(tmp_path: Path) -> None:
    """From the commit Bridge v0.6 pins, Megatron-FSDP's `--megatron-fsdp-main-grads-dtype` defaults to `auto`,
    the parameters' dtype (BF16), whatever FP32 accumulation says (MixedPrecisionPolicy at core_v0.19.0): a
    script without it runs BF16 gradients, and a launch of FP32 ones must write the flag. A round-trip trial's
    `--megatron-fsdp-main-grads-dtype fp32` had come back without it, training in BF16."""
    flags = (f"{LLAMA3_8B} --global-batch-size 128 --tokenizer-type NullTokenizer --vocab-size 128256 "
             "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --no-gradient-accumulation-fusion "
             "--ckpt-format fsdp_dtensor")
    for sub in ("core_v0.17", "core_v0.19", "fp32", "bf16"):
        (tmp_path / sub).mkdir()
    read = {release: baseline_point(imported_at(tmp_path / release, flags, release)) for release in
            ("core_v0.17", "core_v0.19")}
    assert {r: c.main_grad_dtype for r, c in read.items() if c is not None} == {"core_v0.17": "fp32", "core_v0.19": "bf16"}
    for dtype in ("fp32", "bf16"):
        space = imported_at(tmp_path / dtype, f"{flags} --megatron-fsdp-main-grads-dtype {dtype}", "core_v0.19")
        cand = baseline_point(space)
        assert cand is not None and cand.main_grad_dtype == dtype
        assert f"--megatron-fsdp-main-grads-dtype {dtype}" in emit(space, cand, "megatron+local")["node.sh"]
    # its own flag wins over --grad-reduce-in-bf16, which Megatron-FSDP no longer reads (a re-trial's FP32 run
    # had been read, and launched, as BF16)
    (tmp_path / "both").mkdir()
    both = baseline_point(imported_at(tmp_path / "both", f"{flags} --megatron-fsdp-main-grads-dtype fp32 "
                                      "--grad-reduce-in-bf16", "core_v0.19"))
    assert both is not None and both.main_grad_dtype == "fp32"


def test_the_null_tokenizers_end_of_document_token_is_in_the_card_and_out_of_the_launch(tmp_path: Path) -> None:
    """megatron-core's null tokenizer counted its end-of-document token past `--vocab-size`
    (null_tokenizer.py: ``vocab_size + 1``) before core_v0.18: the recipe's model is one token larger
    than the flag there, and a launch of a card's vocabulary gives the flag one less. From core_v0.18
    (and at Megatron-Bridge's pins) the vocabulary is the size given."""
    out, space, cand = imported(tmp_path, f"{LLAMA3_8B} --global-batch-size 64 --tokenizer-type NullTokenizer "
                                "--vocab-size 128256")
    assert space.model.vocab == 128257
    text = out.read_text()
    assert "import models.llama3 (llama3_8b)" in text and "vocab = 128257" in text
    assert "builds a model of 128257 tokens" in text
    assert "--vocab-size 128256" in emit(space, cand, "megatron+local")["node.sh"]  # the recipe's own flag
    stdlib = tmp_path / "stdlib.prx"
    stdlib.write_text("import models.llama3 (llama3_8b)\nimport clusters.nvidia (h100_x8)\n"
                      "space s on h100_x8 {\n  model = llama3_8b\n  seq_len = 8192\n  gbs = 64\n  tp : 2\n}\n")
    plain = load_space(stdlib)
    point = next(iter(legal_points(plain)))
    assert "--vocab-size 128255" in emit(plain, point, "megatron+local")["node.sh"]  # core_v0.16, the default
    newer = attrs.evolve(plain, settings=attrs.evolve(plain.settings, megatron_version="core_v0.19"))
    assert "--vocab-size 128256" in emit(newer, point, "megatron+local")["node.sh"]
    assert "tokenizer.vocab_size=128256" in emit(plain, point, "bridge+local")["node.sh"]
    # a core_v0.19 script's null tokenizer of 128256 is the stdlib card's vocabulary itself
    script = tmp_path / "new.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {LLAMA3_8B} --global-batch-size 64 "
                      "--tokenizer-type NullTokenizer --vocab-size 128256\n")
    assert main(["import-recipe", str(script), "--gpu", "h100", "--megatron-version", "core_v0.19",
                 "--out", str(tmp_path / "new.prx")]) == 0
    assert load_space(tmp_path / "new.prx").model.vocab == 128256


def test_tp_past_the_key_value_heads_is_offered_where_the_release_takes_it(tmp_path: Path) -> None:
    """NVIDIA's Nemotron 3 Super recipe runs TP 8 over 2 key/value heads, which megatron-core takes from
    Megatron-LM f7dfb99 (core_v0.16) on; the import refused it (a new user's trial of Bridge's scripts)."""
    flags = (LLAMA3_8B.replace("--num-query-groups 8", "--num-query-groups 2")
             + " --global-batch-size 128 --tokenizer-type NullTokenizer --vocab-size 128256")
    tps = {}
    for release in ("core_v0.15", "core_v0.16"):
        tps[release] = sorted({c.tp for c in legal_points(imported_at(tmp_path, f"{flags} --tensor-model-parallel-size 2",
                                                                       release))})
    assert tps == {"core_v0.15": [1, 2], "core_v0.16": [1, 2, 4, 8]}
    _out, _space, cand = imported(tmp_path, f"{flags} --tensor-model-parallel-size 8")  # at the default release
    assert cand.tp == 8



def test_a_pre_softmax_beside_sigmoid_scores_is_left_out_with_a_note(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """NVIDIA's DeepSeek-V3 Megatron-FSDP example sets `--moe-router-pre-softmax` beside sigmoid scores, which
    megatron-core reads on the softmax path alone: its import stopped at P3009 on a setting Megatron accepts."""
    flags = (f"{LLAMA3_8B.replace('--num-layers 32', '--num-layers 4')} --global-batch-size 64 --num-experts 8 "
             "--moe-router-topk 2 --moe-router-score-function sigmoid --moe-router-pre-softmax "
             "--moe-router-enable-expert-bias --expert-model-parallel-size 8 --moe-grouped-gemm "
             "--tokenizer-type NullTokenizer --vocab-size 32000")
    _out, space, cand = imported(tmp_path, flags)
    assert "`--moe-router-pre-softmax` is not carried" in capsys.readouterr().err
    assert space.model.moe is not None and space.model.moe.router_score == "sigmoid"
    assert not space.model.moe.router_pre_softmax
    assert "--moe-router-pre-softmax" not in emit(space, cand, "megatron+slurm")["node.sh"]


def test_an_unset_variable_after_a_list_flags_values_is_no_word(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """`--data-path $1 ${EXTRA_ARGS}`: bash hands --data-path the first argument alone where EXTRA_ARGS is
    unset; the import read the unset variable as one of its values and dropped the data path (W3133)."""
    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {LLAMA3_8B} --global-batch-size 128 "
                      "--tokenizer-type NullTokenizer --vocab-size 128256 --data-path $1 ${EXTRA_ARGS}\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--set", "1=/data/my_text_document",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "W3135" in err and "W3133" not in err
    assert dict(load_space(out).passthrough)["data_path"] == "/data/my_text_document"
