"""Merging campaign files: provenance judged before anything is written, refusals that name both
sides, idempotence, and the hybrid oracle reading a merged device by its target name."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from primus_lang.bench.database import CollectiveRow, KernelRow, ProfileDB
from primus_lang.bench.kernels import KernelSpec
from primus_lang.bench.merge import merge
from primus_lang.bench.oracle import BenchmarkOracle, make_oracle
from primus_lang.bench.provenance import key_of
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.ir import Cluster
from tests.emit.ir_cases import H100, cluster

H200 = {"device_name": "NVIDIA H200", "kind": "cuda", "runtime": "cuda 12.8", "driver": "driver 570.124",
        "torch": "2.7.1+cu128", "backend": "nccl", "primusc": "0.1.0"}
GEMM = KernelSpec("gemm", (512, 512, 512, 1), "bf16")


def campaign(path: Path, facts: dict[str, str], target: str = "h200", seconds: float = 1e-4) -> Path:
    """A campaign file as a job writes one: provenance, a target, a kernel and a collective."""
    db = ProfileDB(path)
    key = key_of(facts)
    db.put_provenance(key, facts)
    db.add_target(target, key)
    db.put_kernel(key, KernelRow(GEMM, seconds, seconds, 5))
    db.put_collectives(key, facts["backend"], [CollectiveRow("all_reduce", 2, 4096, 2e-5)])
    db.close()
    return path


def counts(path: Path) -> tuple[int, int, int]:
    with sqlite3.connect(path) as conn:
        return tuple(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # type: ignore[return-value]
                     for t in ("kernels", "collectives", "provenance"))


def refusal(db: ProfileDB, paths: list[Path]) -> str:
    with pytest.raises(CompileError) as err:
        merge(db, [str(p) for p in paths])
    d = err.value.diagnostics[0]
    return f"{d.code.id} {d.message} {' '.join(d.notes)}"


def test_merging_twice_adds_nothing_and_keeps_what_was_there(tmp_path: Path) -> None:
    file = campaign(tmp_path / "a.sqlite", H200)
    db = ProfileDB(tmp_path / "local.sqlite")
    first = merge(db, [str(file)])[0]
    assert first.added == {"kernels": 1, "collectives": 1, "blocks": 0}
    again = merge(db, [str(file), str(file)])
    assert all(m.added == {"kernels": 0, "collectives": 0, "blocks": 0} for m in again)
    assert db.provenance(key_of(H200)) == H200 and ("h200", key_of(H200)) in db.targets()
    # a re-run of the campaign measured other values: the ones already merged stay
    rerun = campaign(tmp_path / "b.sqlite", H200, seconds=3e-4)
    assert merge(db, [str(rerun)])[0].present["kernels"] == 1
    row = db.kernel(key_of(H200), GEMM)
    assert row is not None and row.seconds == 1e-4


def test_another_driver_is_compatible_and_kept_apart(tmp_path: Path) -> None:
    db = ProfileDB(tmp_path / "local.sqlite")
    other = {**H200, "driver": "driver 580.1", "torch": "2.7.0+cu128"}
    merge(db, [str(campaign(tmp_path / "a.sqlite", H200)), str(campaign(tmp_path / "b.sqlite", other))])
    assert {d for t, d in db.targets() if t == "h200"} == {key_of(H200), key_of(other)}
    # then `--device h200` is ambiguous and lists both keys
    with pytest.raises(CompileError) as err:
        make_oracle("hybrid", "h200", db.path, cluster=cluster(H100, 1, 8))
    d = err.value.diagnostics[0]
    assert d.code.id == "P6812" and any(key_of(other) in n for n in d.notes)
    assert make_oracle("hybrid", key_of(other), db.path, cluster=cluster(H100, 1, 8)) is not None


def test_another_device_for_the_same_target_is_refused_naming_both(tmp_path: Path) -> None:
    db = ProfileDB(tmp_path / "local.sqlite")
    merge(db, [str(campaign(tmp_path / "a.sqlite", H200))])
    before = counts(tmp_path / "local.sqlite")
    h100 = campaign(tmp_path / "h100.sqlite", {**H200, "device_name": "NVIDIA H100 80GB HBM3"})
    text = refusal(db, [h100])
    assert text.startswith("P6810") and "NVIDIA H200" in text and "NVIDIA H100 80GB HBM3" in text
    assert "local.sqlite" in text and "h100.sqlite" in text
    assert counts(tmp_path / "local.sqlite") == before  # nothing of the refused merge was written
    # between two files of one merge as well, and the first of them is not written either
    fresh = ProfileDB(tmp_path / "fresh.sqlite")
    assert refusal(fresh, [campaign(tmp_path / "c.sqlite", H200), h100]).startswith("P6810")
    assert counts(tmp_path / "fresh.sqlite") == (0, 0, 0)
    # under a target of its own it merges
    assert merge(fresh, [str(campaign(tmp_path / "d.sqlite", {**H200, "device_name": "NVIDIA H100"}, "h100"))])


@pytest.mark.parametrize("change", [{"runtime": "cuda 13.0"}, {"torch": "2.8.0+cu128"}])
def test_another_runtime_major_or_torch_release_is_refused(tmp_path: Path, change: dict[str, str]) -> None:
    db = ProfileDB(tmp_path / "local.sqlite")
    merge(db, [str(campaign(tmp_path / "a.sqlite", H200))])
    text = refusal(db, [campaign(tmp_path / "b.sqlite", {**H200, **change})])
    new = next(iter(change.values()))
    assert text.startswith("P6811") and new in text and H200[next(iter(change))] in text


def test_rows_without_provenance_or_with_a_false_one_are_refused(tmp_path: Path) -> None:
    db = ProfileDB(tmp_path / "local.sqlite")
    bare = ProfileDB(tmp_path / "bare.sqlite")
    bare.put_kernel("NVIDIA H200|cuda 12.8|x|torch 2.7.1", KernelRow(GEMM, 1e-4, 1e-4, 3))
    bare.close()
    assert refusal(db, [tmp_path / "bare.sqlite"]).startswith("P6808")
    forged = campaign(tmp_path / "forged.sqlite", H200)
    with sqlite3.connect(forged) as conn:
        conn.execute("UPDATE provenance SET value='NVIDIA B200' WHERE fact='device_name'")
    text = refusal(db, [forged])
    assert text.startswith("P6809") and "NVIDIA B200" in text


def test_a_file_that_is_not_a_profile_database_is_refused(tmp_path: Path) -> None:
    db = ProfileDB(tmp_path / "local.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not sqlite at all" * 100)
    assert refusal(db, [junk]).startswith("P6807")
    assert refusal(db, [tmp_path / "missing.sqlite"]).startswith("P6807")
    old = campaign(tmp_path / "old.sqlite", H200)
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE meta SET value='0' WHERE key='schema'")
    assert "schema version 0" in refusal(db, [old])
    nan = campaign(tmp_path / "nan.sqlite", H200)
    with sqlite3.connect(nan) as conn:
        conn.execute("UPDATE kernels SET seconds=-1")
    assert "not a positive finite time" in refusal(db, [nan])
    huge = campaign(tmp_path / "huge.sqlite", H200)
    with sqlite3.connect(huge) as conn:
        conn.execute("UPDATE collectives SET ranks=9223372036854775807")
    assert "collectives row has ranks 9223372036854775807, not a whole number from 1 to 1,048,576" in refusal(db, [huge])


def test_merge_command_prints_and_refuses_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = campaign(tmp_path / "a.sqlite", H200)
    local = tmp_path / "local.sqlite"
    assert main(["bench", "--merge", str(file), "--db", str(local)]) == 0
    assert "added 1 kernels, 1 collectives, 0 blocks (0 already present)" in capsys.readouterr().out
    assert main(["bench", "--merge", str(local), "--db", str(local)]) == 1
    assert "P8012" in capsys.readouterr().err  # the shared same-file refusal


def test_hybrid_reads_a_merged_device_by_target_and_refuses_unknown_names(tmp_path: Path) -> None:
    db = ProfileDB(tmp_path / "local.sqlite")
    merge(db, [str(campaign(tmp_path / "a.sqlite", H200))])
    c: Cluster = cluster(H100, 1, 8)
    oracle = make_oracle("hybrid", "h200", db.path, cluster=c)
    assert isinstance(oracle, BenchmarkOracle) and oracle.device.name == "NVIDIA H200"
    assert make_oracle("hybrid", "NVIDIA H200", db.path, cluster=c) is not None
    for kind, name in (("hybrid", "mi355x"), ("benchmark", "h200")):
        with pytest.raises(CompileError) as err:
            make_oracle(kind, name, db.path, cluster=c)
        assert err.value.diagnostics[0].code.id == "P6813"


def test_collectives_measured_between_nodes_replace_the_nic_spec_across_domains(tmp_path: Path) -> None:
    file = campaign(tmp_path / "a.sqlite", H200)
    db = ProfileDB(file)
    net = [CollectiveRow("all_reduce", 2, size, 1e-5 + size / 20e9) for size in (4096, 65536, 1 << 20)]
    db.put_collectives(key_of(H200), "nccl+net", net)
    db.close()
    local = ProfileDB(tmp_path / "local.sqlite")
    assert merge(local, [str(file)])[0].added["collectives"] == 4
    oracle = make_oracle("hybrid", "h200", local.path, cluster=cluster(H100, 2, 8))
    assert isinstance(oracle, BenchmarkOracle) and oracle.net is not None
    assert 15e9 < oracle.net.bandwidth < 25e9  # the link the rows were made with, 20 GB/s
