"""Site profiles and run blocks: the three example sites plan and emit, every diagnostic of their
own is produced where it is written, and a Kubernetes site validates with Kueue's LocalQueue."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import attrs
import pytest
import yaml

from primus_lang.check import legal_points
from primus_lang.diagnostics import CompileError
from primus_lang.emit import EmitContext, emit
from primus_lang.lower import load_space, loads_program
from primus_lang.resources import data_dir
from tests.emit.harness import SHELLCHECK, write
from tests.emit.test_k8s import KINDS, validate, validate_core
from tests.emit.test_shell import dry_run

SITES = data_dir("examples") / "sites"
EXAMPLES = {"llama3_70b_h100_pyxis": "megatron+slurm", "llama3_1_8b_mi325x_docker": "primus+slurm",
            "llama3_1_8b_h100_k8s": "megatron+k8s"}
KINDS.setdefault("LocalQueue", "localqueue.json")


def example(name: str) -> dict[str, str]:
    space = load_space(SITES / f"{name}.prx")
    cand = next(iter(legal_points(space)))
    return emit(space, cand, EXAMPLES[name], EmitContext(primusc_version="test"))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_sites_plan_and_emit(name: str, tmp_path: Path) -> None:
    out = tmp_path / "plan"
    result = subprocess.run(["primusc", "plan", str(SITES / f"{name}.prx"), "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    files = {p.name for p in out.iterdir()}
    assert {"node.sh", "manifest.json"} <= files
    scripts = [str(out / f) for f in files if f.endswith((".sh", ".sbatch"))]
    for script in scripts:
        assert subprocess.run(["bash", "-n", script], timeout=600).returncode == 0
    if SHELLCHECK:
        check = subprocess.run([SHELLCHECK, "--shell=bash", "--severity=style", *scripts], capture_output=True, text=True, timeout=600)
        assert check.returncode == 0, check.stdout


def test_pyxis_site_reaches_srun_and_megatron(tmp_path: Path) -> None:
    files = example("llama3_70b_h100_pyxis")
    srun = shlex.split(dry_run(write(files, tmp_path), "launch.sbatch")[0].split(":", 1)[1])
    mounts = next(a for a in srun if a.startswith("--container-mounts="))
    assert mounts.endswith(",/lustre/fsw/datasets:/data:ro,/lustre/fsw/checkpoints:/checkpoints")
    assert "--container-env=WANDB_API_KEY" in srun and "--container-image=nvcr.io#nvidia/nemo:25.09" in srun
    sbatch = files["launch.sbatch"]
    for line in ("--partition=batch", "--account=llm_pretrain", "--qos=normal", "--time=04:00:00", "--exclusive"):
        assert f"#SBATCH {line}\n" in sbatch
    node = files["node.sh"]
    assert "export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-ib0}" in node and "WANDB_API_KEY" not in node
    assert "WORKDIR=${MEGATRON_DIR:-/opt/megatron-lm}" in node
    assert ("--data-path 0.7 /data/redpajama/arxiv_text_document 0.3 /data/redpajama/book_text_document"
            in node)
    assert "--save /checkpoints/llama3_70b" in node and "--adam-beta2 0.95" in node


def test_kubernetes_site_validates_with_its_gang_queue() -> None:
    docs = list(yaml.safe_load_all(example("llama3_1_8b_h100_k8s")["pytorchjob.yaml"]))
    assert [d["kind"] for d in docs] == ["LocalQueue", "ConfigMap", "PyTorchJob"]
    for doc in docs:
        validate(doc)
    job = docs[2]
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == docs[0]["metadata"]["name"]
    assert job["metadata"]["namespace"] == docs[0]["metadata"]["namespace"] == "llm-training"
    pod = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["resources"]["limits"]["rdma/rdma_shared_device_a"] == 1
    # a CPU and memory request: a pod with none is BestEffort, the first a node under memory pressure evicts
    assert container["resources"]["requests"] == {"cpu": 96, "memory": "1Ti"}
    shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"]["sizeLimit"] == "64Gi"
    assert {m["mountPath"] for m in container["volumeMounts"]} >= {"/data", "/checkpoints", "/scratch", "/dev/shm"}
    claims = {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v}
    assert claims == {"llm-datasets", "llm-checkpoints"}
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    node = docs[1]["data"]["node.sh"]
    assert "--train-data-path 0.9 /data/fineweb/text_document 0.1 /data/stack/text_document" in node
    assert "--valid-data-path /data/fineweb_valid/text_document" in node


def test_localqueue_schema_refuses_a_bad_queue() -> None:
    doc = next(iter(yaml.safe_load_all(example("llama3_1_8b_h100_k8s")["pytorchjob.yaml"])))
    doc["spec"]["clusterQueue"] = "Not_A_Name"
    with pytest.raises(Exception, match="does not match"):
        validate(doc)


def test_primus_gets_the_blend_as_it_splits_it() -> None:
    overrides = yaml.safe_load(example("llama3_1_8b_mi325x_docker")["experiment.yaml"])["modules"]["pre_trainer"][
        "overrides"]
    assert overrides["train_data_path"] == "0.5 /data/fineweb/text_document 0.5 /data/stack/text_document"
    assert overrides["adam_beta2"] == 0.95 and overrides["lr_decay_style"] == "cosine"


def test_var_blend_is_separate_arguments_and_a_single_path_stays_whole(tmp_path: Path) -> None:
    from tests.emit.ir_cases import CASES

    space, cand = CASES["llama70b_mi325x"]
    for value, expected in (("0.7 /a 0.3 /b", ["0.7", "/a", "0.3", "/b"]), ("/data/my corpus", ["/data/my corpus"])):
        files = emit(space, cand, "megatron+local", EmitContext(variables={"data_path": value,
                                                                            "tokenizer_model": "t"}))
        rank = dry_run(write(files, tmp_path / str(len(expected))), "launch.sh")[-1]
        argv = shlex.split(rank.split(":", 1)[1])
        start = argv.index("--data-path") + 1
        assert argv[start:start + len(expected)] == expected
        assert argv[start + len(expected)].startswith("--")


BASE = """
import clusters.nvidia (h100_x8)
import models.llama3 (llama3_1_8b)
site s {{ {site} }}
space x on h100_x8 {{ site = s; model = llama3_1_8b; gbs = 64 {space} }}
"""

CASES = {
    "P3030": ('mounts { data { host = "lustre/data"; path = "/data" } }', "", "lustre/data"),
    "P3031": ('runtime = enroot; image = "x"', "", "enroot"),
    "P3032": ("runtime = docker", "", "runtime = docker"),
    "P3033": ('mounts { data { path = "/data" } }', "", 'data { path = "/data" }'),
    "P3034": ('env { MASTER_ADDR = "x" }', "", 'MASTER_ADDR = "x"'),
    "P3035": ('tolerations = "gpu:Sometimes"', "", '"gpu:Sometimes"'),
    "P3036": ('partition = "a b"', "", 'partition = "a b"'),
    "P3037": ("", '; run { data = "0.7 a b"; tokenizer_model = "t" }', '"0.7 a b"'),
    "P3038": ("", '; run { data = "/data/x" }', '"/data/x"'),
    "P3040": ("", '; run { checkpoint_dir = "../../etc" }', '"../../etc"'),
}


def test_a_run_text_with_a_newline_is_refused() -> None:
    """A trial's `tokenizer_model = "meta\\n--save /etc"` reached the launch as a two-line argument."""
    text = BASE.format(site="", space='; run { tokenizer_model = "meta\\n--save /etc" }')
    with pytest.raises(CompileError) as err:
        loads_program(text, "site.prx")
    assert [d.code.id for d in err.value.diagnostics] == ["P3040"]


@pytest.mark.parametrize("value", ['"/data/a\\n--save /etc"', '"x\\ty"'])
def test_a_passthrough_text_with_a_control_character_is_refused(value: str) -> None:
    """The run block's texts were checked and a passthrough's were carried to the launch as they were."""
    text = BASE.format(site="", space=f"; passthrough {{ data_cache_path = {value} }}")
    with pytest.raises(CompileError) as err:
        loads_program(text, "site.prx")
    (diag,) = err.value.diagnostics
    assert diag.code.id == "P3040" and "data_cache_path" in diag.message and diag.span is not None
    assert value in text.splitlines()[diag.span.line - 1][diag.span.column - 1:]


@pytest.mark.parametrize("code", sorted(CASES))
def test_site_diagnostics_point_at_what_is_written(code: str) -> None:
    site, space, written = CASES[code]
    text = BASE.format(site=site, space=space)
    with pytest.raises(CompileError) as err:
        loads_program(text, "site.prx")
    diags = [d for d in err.value.diagnostics if d.code.id == code]
    assert diags, [str(d.message) for d in err.value.diagnostics]
    span = diags[0].span
    assert span is not None
    line = text.splitlines()[span.line - 1]
    assert written in line[span.column - 1:] or written in line


@pytest.mark.parametrize("image", ["rocm/primus v26.5", "-v/:/host"])
def test_a_site_image_no_runtime_can_start_is_refused_where_it_is_written(image: str) -> None:
    text = BASE.format(site=f'runtime = docker; image = "{image}"', space="")
    with pytest.raises(CompileError) as err:
        loads_program(text, "site.prx")
    (diag,) = err.value.diagnostics
    assert diag.code.id == "P3036" and "image" in diag.message and diag.span is not None
    assert f'image = "{image}"' in text.splitlines()[diag.span.line - 1]


@pytest.mark.parametrize("name", ["SHELLOPTS", "BASH_ENV", "IFS", "PS4"])
def test_a_site_cannot_set_what_changes_how_bash_reads_the_script(name: str) -> None:
    # `export SHELLOPTS=v` passes bash -n and fails when the job starts; IFS re-splits every line
    with pytest.raises(CompileError) as err:
        loads_program(BASE.format(site=f'env {{ {name} = "v" }}', space=""), "site.prx")
    assert [(d.code.id, name in d.message) for d in err.value.diagnostics] == [("P3034", True)]


def test_launcher_refuses_what_it_cannot_do_of_a_site() -> None:
    space = load_space(SITES / "llama3_1_8b_h100_k8s.prx")
    cand = next(iter(legal_points(space)))
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm")
    assert {d.code.id for d in err.value.diagnostics} == {"P7013"}
    pyxis = load_space(SITES / "llama3_70b_h100_pyxis.prx")
    with pytest.raises(CompileError) as err:
        emit(pyxis, next(iter(legal_points(pyxis))), "megatron+k8s")
    assert {d.code.id for d in err.value.diagnostics} == {"P7013"}  # the forwarded WANDB_API_KEY


def test_real_data_with_a_null_tokenizer_is_refused() -> None:
    from tests.emit.ir_cases import CASES as IR

    space, cand = IR["llama70b_mi325x"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+local", EmitContext(variables={"data_path": "/data/x"}))
    assert [d.code.id for d in err.value.diagnostics] == ["P7014"]


def test_a_tokenizer_without_what_it_reads_is_refused() -> None:
    # Megatron-LM's build_tokenizer asserts each type's files: a type given alone would stop the launch at start
    from tests.emit.ir_cases import CASES as IR

    space, cand = IR["llama70b_mi325x"]
    for variables, reads in [({"tokenizer_type": "Llama2Tokenizer"}, "reads `tokenizer_model`"),
                             ({"tokenizer_type": "GPT2BPETokenizer"}, "reads `vocab_file` and `merge_file`")]:
        with pytest.raises(CompileError) as err:
            emit(space, cand, "megatron+local", EmitContext(variables=variables))
        [d] = err.value.diagnostics
        assert d.code.id == "P7001" and reads in d.message and "build_tokenizer" in d.message
    given = {"tokenizer_type": "Llama2Tokenizer", "tokenizer_model": "/t/tokenizer.model"}
    sh = emit(space, cand, "megatron+local", EmitContext(variables=given))["node.sh"]
    assert "--tokenizer-type Llama2Tokenizer" in sh and "--tokenizer-model /t/tokenizer.model" in sh


def test_var_overrides_the_site_and_a_space_without_one_is_unchanged() -> None:
    space = load_space(SITES / "llama3_70b_h100_pyxis.prx")
    cand = next(iter(legal_points(space)))
    files = emit(space, cand, "megatron+slurm", EmitContext(variables={"partition": "debug"}))
    assert "#SBATCH --partition=debug\n" in files["launch.sbatch"]
    bare = attrs.evolve(space, site=None, run=None)
    assert "#SBATCH --partition" not in emit(bare, cand, "megatron+slurm")["launch.sbatch"]


def test_a_site_says_where_each_framework_lives() -> None:
    """megatron_dir, primus_dir and bridge_dir are one mechanism: the site's value is the launch's
    default working folder, `--var` overrides it, and the environment variable overrides both."""
    base = load_space(SITES / "llama3_70b_h100_pyxis.prx")
    cand = next(iter(legal_points(base)))
    assert base.site is not None
    space = attrs.evolve(base, site=attrs.evolve(base.site, bridge_dir="/opt/bridge checkout"))
    node = emit(space, cand, "bridge+slurm")["node.sh"]
    assert "WORKDIR=${BRIDGE_DIR:-'/opt/bridge checkout'}\n" in node
    node = emit(space, cand, "bridge+slurm", EmitContext(variables={"bridge_dir": "/elsewhere"}))["node.sh"]
    assert "WORKDIR=${BRIDGE_DIR:-/elsewhere}\n" in node
    assert "WORKDIR=${MEGATRON_DIR:-/opt/megatron-lm}\n" in emit(space, cand, "megatron+slurm")["node.sh"]
    with pytest.raises(CompileError) as err:
        loads_program(BASE.format(site='bridge_dir = "Megatron-Bridge"', space=""), "site.prx")
    assert [d.code.id for d in err.value.diagnostics] == ["P3030"]


SITE_OPTIONS = ('constraint = "h100&ib"; sbatch_args = "--mail-type=END --gres-flags=enforce-binding"; '
                'srun_args = "--mpi=pmix --container-writable"; preamble = "/shared/env/setup.sh"')


def test_a_site_gives_its_own_slurm_options_and_setup(tmp_path: Path) -> None:
    """Issue 31: sites could not say `--constraint`, extra sbatch/srun options or a setup script."""
    space = loads_program(BASE.format(site=SITE_OPTIONS, space=""), "site.prx").spaces[0]
    files = emit(space, next(iter(legal_points(space))), "megatron+slurm", EmitContext(primusc_version="test"))
    batch = files["launch.sbatch"]
    for line in ("#SBATCH --constraint=h100&ib", "#SBATCH --mail-type=END", "#SBATCH --gres-flags=enforce-binding",
                 "source /shared/env/setup.sh"):
        assert line in batch.splitlines() or f"  {line}" in batch.splitlines(), line
    folder = write(files, tmp_path / "out")
    lines = dry_run(folder, "launch.sbatch")
    assert lines[0] == "source /shared/env/setup.sh"  # a dry run sources nothing
    assert any(line.startswith("srun:") and "--mpi=pmix --container-writable" in line for line in lines)
    if SHELLCHECK:
        subprocess.run([SHELLCHECK, str(folder / "launch.sbatch")], check=True, capture_output=True, timeout=600)


@pytest.mark.parametrize("site", ['srun_args = "--mpi=pmix; rm -rf x"', 'sbatch_args = "mail"',
                                  'constraint = "a b"', 'preamble = "setup.sh"', "sbatch_args = \"--x=$(id)\""])
def test_site_options_that_would_reach_a_shell_or_sbatch_unread_are_refused(site: str) -> None:
    with pytest.raises(CompileError) as err:
        loads_program(BASE.format(site=site, space=""), "site.prx")
    assert {d.code.id for d in err.value.diagnostics} <= {"P3036", "P3030"}


@pytest.mark.parametrize(("image", "written"), [
    ("nvcr.io/nvidia/nemo:25.09", "nvcr.io#nvidia/nemo:25.09"), ("nvcr.io#nvidia/nemo:25.09", "nvcr.io#nvidia/nemo:25.09"),
    ("localhost:5000/team/img:1", "localhost:5000#team/img:1"), ("rocm/megatron-lm:v25.9", "rocm/megatron-lm:v25.9"),
    ("/images/nemo.sqsh", "/images/nemo.sqsh"),
])
def test_pyxis_names_the_registry_as_every_enroot_reads_it(image: str, written: str) -> None:
    """enroot before 4.0 reads `nvcr.io/nvidia/nemo` as a Docker Hub image of that name."""
    site = f'runtime = pyxis; image = "{image}"'
    space = loads_program(BASE.format(site=site, space=""), "site.prx").spaces[0]
    batch = emit(space, next(iter(legal_points(space))), "megatron+slurm", EmitContext())["launch.sbatch"]
    assert f"--container-image={shlex.quote(written)}" in batch


def test_a_site_path_holding_a_shell_variable_is_warned() -> None:
    from primus_lang.emit import target_warnings

    site = 'mounts { data { host = "/lustre/$USER/data"; path = "/data" } }; data_root = "/data"'
    space = loads_program(BASE.format(site=site, space=""), "site.prx").spaces[0]
    [warning] = target_warnings(space, "megatron+slurm")
    assert warning.code.id == "W7023" and "/lustre/$USER/data" in warning.message


def test_the_exit_before_the_limit_leaves_a_tenth_of_it_for_a_checkpoint() -> None:
    from primus_lang.emit.sites import exit_minutes

    assert [exit_minutes(t) for t in ("00:01:00", "00:05:00", "01:00:00", "02:00:00", "1-00:00:00")] == \
        [1, 4, 54, 108, 1425]


K8S_SITE = ('namespace = "llm"; annotations = "k8s.v1.cni.cncf.io/networks=rdma-net,example.com/team=a=b"; '
            'image_pull_secret = "regcred"; service_account = "trainer"; secrets = "HF_TOKEN=hf-token/token"; '
            'image = "nvcr.io/nvidia/nemo:25.09"')


def test_a_kubernetes_site_gives_annotations_pull_secrets_its_account_and_secret_variables() -> None:
    """Issue 31: a forwarded HF_TOKEN was P7013 with nothing to say instead; Multus needs pod annotations."""
    space = loads_program(BASE.format(site=K8S_SITE, space=""), "site.prx").spaces[0]
    files = emit(space, next(iter(legal_points(space))), "megatron+k8s", EmitContext())
    docs = [d for d in yaml.safe_load_all(files["pytorchjob.yaml"]) if d]
    job = next(d for d in docs if d["kind"] == "PyTorchJob")
    for d in docs:
        validate(d)
        validate_core(d)
    pod = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
    assert pod["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "rdma-net", "example.com/team": "a=b"}
    assert pod["spec"]["serviceAccountName"] == "trainer" and pod["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "hf-token", "key": "token"}


@pytest.mark.parametrize("site", ['secrets = "HF_TOKEN=hf-token"', 'secrets = "IFS=s/k"', 'annotations = "x"',
                                  'service_account = "Trainer"'])
def test_kubernetes_site_fields_of_the_wrong_form_are_refused(site: str) -> None:
    with pytest.raises(CompileError):
        loads_program(BASE.format(site=site, space=""), "site.prx")


def test_secrets_on_slurm_are_refused_with_the_way_slurm_forwards() -> None:
    space = loads_program(BASE.format(site='secrets = "HF_TOKEN=hf-token/token"', space=""), "site.prx").spaces[0]
    with pytest.raises(CompileError) as err:
        emit(space, next(iter(legal_points(space))), "megatron+slurm", EmitContext())
    assert "P7013" in {d.code.id for d in err.value.diagnostics} and "forward" in str(err.value.diagnostics)


@pytest.mark.parametrize(("site", "tokenizer", "target", "warned"), [
    ('namespace = "n"; image = "i"', "meta-llama/Llama-3.1-8B", "megatron+k8s", True),
    ('namespace = "n"; image = "i"; secrets = "HF_TOKEN=hf/token"', "meta-llama/Llama-3.1-8B", "megatron+k8s", False),
    ('namespace = "n"; image = "i"; env { HF_HUB_OFFLINE = 1 }', "meta-llama/Llama-3.1-8B", "megatron+k8s", False),
    ('namespace = "n"; image = "i"', "/data/tokenizers/llama3", "megatron+k8s", False),
    ('runtime = docker; image = "i"', "meta-llama/Llama-3.1-8B", "megatron+slurm", True),
    ('runtime = docker; image = "i"; env { HF_TOKEN = forward }', "meta-llama/Llama-3.1-8B", "megatron+slurm", False),
    ('partition = "p"', "meta-llama/Llama-3.1-8B", "megatron+slurm", False),  # sbatch passes the environment
])
def test_a_hub_tokenizer_the_launch_cannot_fetch_is_warned(site: str, tokenizer: str, target: str, warned: bool) -> None:
    """W7027: a pod, or a Docker container, that fetches a (possibly gated) Hub tokenizer with no token."""
    from primus_lang.emit import tokenizer_warnings

    space = loads_program(BASE.format(site=site, space=f'; run {{ tokenizer_model = "{tokenizer}" }}'), "s.prx").spaces[0]
    codes = [d.code.id for d in tokenizer_warnings(space, target, {})]
    assert codes == (["W7027"] if warned else [])


NODES = """
import clusters.nvidia (h100_x8)
import models.llama3 (llama3_1_8b)
cluster four = h100_x8 {{ nodes = {nodes} }}
{site}
space x on four {{ {uses} model = llama3_1_8b; gbs = 64 }}
"""


@pytest.mark.parametrize(("site", "target", "nodes", "warned"), [
    ("", "megatron+k8s", 4, True),
    ('site s { namespace = "n" }', "megatron+k8s", 4, True),
    ('site s { rdma_resource = "rdma/rdma_shared_device_a" }', "megatron+k8s", 4, False),
    ('site s { annotations = "k8s.v1.cni.cncf.io/networks=rdma-net" }', "megatron+k8s", 4, False),
    ("", "megatron+k8s", 1, False),
    ("", "megatron+slurm", 4, False),
])
def test_a_multi_node_kubernetes_job_without_rdma_is_warned(site: str, target: str, nodes: int, warned: bool) -> None:
    """W7029: a trial's 8-node primus+k8s launch without a site asked for no RDMA device, and its pods would
    have reduced gradients between nodes over TCP sockets."""
    from primus_lang.emit import target_warnings

    text = NODES.format(nodes=nodes, site=site, uses="site = s;" if site else "")
    space = loads_program(text, "s.prx").spaces[0]
    codes = [d.code.id for d in target_warnings(space, target)]
    assert codes.count("W7029") == (1 if warned else 0), codes
