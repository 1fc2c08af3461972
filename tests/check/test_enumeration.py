"""Enumeration and counting agree with brute force; the fast path matches the slow one."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.check import (
    environment,
    legal_mask,
    legal_points,
    legality,
    parse_point,
    raw_points,
    raw_size,
    require_legal,
    summarize,
)
from primus_lang.diagnostics import CompileError
from primus_lang.ir import Space
from primus_lang.lower import load_space, loads_program
from primus_lang.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.prx"))
HEADER = """
model m { num_layers = 24; hidden = 2048; ffn_hidden = 8192; heads = 16; kv_heads = 4; vocab = 32000; seq_len = 4096
  moe { num_experts = 8; top_k = 2; ffn_hidden = 1024 } }
gpu g { vendor = amd; peak_bf16 = 1000 TFLOP/s; hbm_capacity = 192 GiB; hbm_bandwidth = 5 TB/s
  scale_up_bandwidth = 400 GB/s }
cluster c { gpu = g; nodes = 4; gpus_per_node = 8 }
"""


def space_of(body: str) -> Space:
    return loads_program(HEADER + "space s on c { model = m\n" + body + "\n}", "t.prx").spaces[0]


def brute(space: Space) -> tuple[int, Counter[str], int]:
    points = list(raw_points(space))
    removed: Counter[str] = Counter()
    legal = 0
    for c in points:
        codes = {v.code + (v.message if v.code == "P4100" else "") for v in legality(space, c)}
        removed.update(codes)
        legal += not codes
    return len(points), removed, legal


def test_conditional_axes_contribute_their_default_once() -> None:
    space = space_of(
        "gbs = 64\npp : 1 | 2 | 4\nvpp : 1 | 2 | 3 when pp > 1\nschedule : 1f1b | interleaved when vpp > 1"
    )
    points = list(raw_points(space))
    assert len(points) == len(set(points)) == raw_size(space)
    # pp=1: vpp default only (1 point); pp=2,4: vpp 1 -> schedule default; vpp 2,3 -> 2 schedules
    assert raw_size(space) == 1 + 2 * (1 + 2 * 2)
    assert all(p.vpp == 1 for p in points if p.pp == 1)


@pytest.mark.slow
def test_counts_match_brute_force() -> None:
    space = space_of(
        "gbs = 64\ntp : 1 | 2 | 8\npp : 1 | 2 | 3\nvpp : 1 | 2 when pp > 1\n"
        "schedule : 1f1b | interleaved | zbv when pp > 1\ncp : 1 | 3\nmbs : 1 | 4\nep : 1 | 3 | 4\n"
        "recompute : none | full(layers: 0 .. 8 step 4) when schedule == 1f1b\nsharding : dist_opt | fsdp\n"
        'tp_comm_overlap : true | false when tp > 1\nlet mp = tp * pp\nrequire mp <= 8 "small"'
    )
    n, removed, legal = brute(space)
    s = summarize(space)
    assert s.raw == n
    assert s.legal == legal
    per_code: Counter[str] = Counter()
    for r in s.rules:
        per_code[r.code] += r.removed
    brute_codes: Counter[str] = Counter()
    for k, v in removed.items():
        brute_codes[k[:5]] += v
    assert +per_code == +brute_codes
    points = list(raw_points(space))
    assert [c for c in points if not legality(space, c)] == list(legal_points(space))
    mask = legal_mask(space, points)
    assert [c for c, ok in zip(points, mask, strict=True) if ok] == list(legal_points(space))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 3, 4, 8]), min_size=1, max_size=3, unique=True),
    st.lists(st.sampled_from([1, 2, 3, 4, 6]), min_size=1, max_size=3, unique=True),
    st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=3, unique=True),
    st.sampled_from(["", " when pp > 1", " when tp < 4 and pp != 3", " when dp > 2"]),
    st.sampled_from([8, 24, 96]),
)
def test_random_spaces(tps: list[int], pps: list[int], vpps: list[int], when: str, gbs: int) -> None:
    space = space_of(
        f"gbs = {gbs}\ntp : {' | '.join(map(str, tps))}\npp : {' | '.join(map(str, pps))}\n"
        f"vpp : {' | '.join(map(str, vpps))}{when}\nschedule : 1f1b | interleaved\nmbs : 1 | 2"
    )
    n, _, legal = brute(space)
    assert raw_size(space) == n
    assert summarize(space).legal == legal


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_enumerate_consistently(path: object) -> None:
    space = load_space(path)  # type: ignore[arg-type]
    s = summarize(space)
    if s.raw <= 50_000:
        assert sum(1 for _ in raw_points(space)) == s.raw
        assert sum(1 for _ in legal_points(space)) == s.legal


def test_hundred_million_points_are_counted_without_enumerating(monkeypatch: pytest.MonkeyPatch) -> None:
    space = space_of(
        "gbs : 256 | 512 | 1024 | 2048\ntp : 1 | 2 | 4 | 8\npp : 1 .. 8\nvpp : 1 | 2 | 3 | 4 when pp > 1\n"
        "cp : 1 | 2 | 4\nep : 1 | 2 | 4 | 8\nmbs : pow2(1 .. 16)\nprecision : bf16 | fp8\n"
        "recompute : none | selective | full(layers: 1 .. 12)\nsharding : dist_opt | fsdp | none\n"
        "schedule : 1f1b | interleaved | zero_bubble | zbv\ntp_comm_overlap : true | false\n"
        "attention : flash | unfused\ncp_comm : p2p | a2a | allgather\nmoe_dispatcher : alltoall | allgather | flex\n"
        "overlap_param_gather : true | false\nrequire tp * cp <= gpus_per_node"
    )
    import primus_lang.check.enumerate as enumerate_module

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("summarize enumerated points")

    # counting must never visit points one by one (how fast it is: benchmarks/, not a timed test)
    for name in ("raw_points", "legal_points", "legality", "_candidates"):
        monkeypatch.setattr(enumerate_module, name, refuse)
    s = summarize(space)
    assert s.raw >= 10**8
    assert 0 < s.legal < s.raw


def test_parse_point_fills_the_rest() -> None:
    space = space_of(
        "gbs = 64\nsharding = fsdp\ntp : 2 | 4\npp : 1 | 2\nrecompute : none | full(layers: 1 .. 4)"
    )
    c = parse_point(space, "pp=2,recompute=full(layers: 3, method: uniform)")
    assert (c.tp, c.pp, c.gbs, c.sharding, c.seq_len) == (2, 2, 64, "fsdp", 4096)
    assert (c.recompute.kind, c.recompute.layers, c.recompute.method) == ("full", 3, "uniform")
    assert parse_point(space, "recompute=full(2)").recompute.layers == 2
    assert parse_point(space, "").cp == 1
    cond = space_of(
        "gbs = 64\npp : 1 | 2\nschedule : interleaved | 1f1b when pp > 1\nvpp : 2 | 4 when schedule == interleaved"
    )
    assert (parse_point(cond, "").vpp, parse_point(cond, "").schedule) == (1, "1f1b")
    # left out, a knob takes its default where its axis allows it (1f1b), else the axis's first value
    assert (parse_point(cond, "pp=2").vpp, parse_point(cond, "pp=2").schedule) == (1, "1f1b")
    assert parse_point(cond, "pp=2,schedule=interleaved").vpp == 2
    assert parse_point(cond, "pp=2,schedule=1f1b").vpp == 1
    for bad in ["tpp=2", "tp", "precision=fp9", "tp=2,tp=4", "recompute=full"]:
        with pytest.raises(CompileError):
            parse_point(space, bad)


def test_a_layout_with_commas_reads_back_from_its_label() -> None:
    space = space_of("gbs = 64\npp : 2\nvpp : 2\nschedule = interleaved")
    # Megatron's commas are cosmetic; quoted, they stay inside the value instead of splitting the pairs
    c = parse_point(space, 'pipeline_layout="Et*8,|t*8|t*8|t*8L",tp=2')
    assert (c.pipeline_layout, c.tp) == ("Et*8,|t*8|t*8|t*8L", 2)
    assert 'pipeline_layout="Et*8,|t*8|t*8|t*8L"' in c.label()
    assert parse_point(space, c.label()) == c
    plain = parse_point(space, "pipeline_layout=Et*8|(t*8|)*2t*8L,tp=2")
    assert (plain.pipeline_layout, plain.tp) == ("Et*8|(t*8|)*2t*8L", 2)
    assert parse_point(space, plain.label()) == plain


def test_environment_and_messages() -> None:
    space = space_of('gbs = 64\ntp : 1 | 3\nlet mp = tp * pp\nrequire mp <= 2 "keep it small"')
    c = parse_point(space, "tp=3")
    env = environment(space, c)
    assert (env["world"], env["dp"], env["mp"], env["num_experts"], env["layers_per_stage"]) == (
        32,
        10,
        3,
        8,
        24,
    )
    found = {v.code: v for v in legality(space, c)}
    assert "3·1·1 = 3 does not divide the 32 GPUs" in found["P4001"].message
    assert found["P4003"].help.startswith("use a TP among 1, 2, 4, 8, 16")
    assert found["P4100"].message == "keep it small (`mp <= 2`)"
    assert "mp = 3" in found["P4100"].help


def test_each_require_that_empties_a_space_is_said_at_its_own_line() -> None:
    """Two `require`s that each remove every point: one diagnostic each, with its own message and line
    (both came out as the second, at its line, since the requires share P4100)."""
    space = space_of('gbs = 64\ntp : 16\nrequire tp <= 8 "TP inside a node"\nrequire tp * 2 <= 8 "TP x 2 inside a node"')
    with pytest.raises(CompileError) as err:
        require_legal(space, summarize(space))
    said = [(d.message.split(": ", 1)[1], d.span.line if d.span else 0) for d in err.value.diagnostics
            if d.code.id == "P4100"]
    lines = [c.span.line for c in space.constraints if c.span]
    assert said == [("TP inside a node (`tp <= 8`)", lines[0]), ("TP x 2 inside a node (`tp * 2 <= 8`)", lines[1])]


def test_a_rule_that_empties_a_space_names_every_value_the_space_lists_for_it() -> None:
    """``tp : 3 | 5`` on 32 GPUs: the message named TP 3 alone, as if 5 were fine."""
    space = space_of("gbs = 64\ntp : 3 | 5\npp : 1 | 2")
    with pytest.raises(CompileError) as err:
        require_legal(space, summarize(space))
    world = next(d.message for d in err.value.diagnostics if d.code.id == "P4001")
    assert world.endswith("the space's other values fail it too: tp 5; pp 2")
    heads = next(d.message for d in err.value.diagnostics if d.code.id == "P4003")
    assert heads.endswith("the space's other values fail it too: tp 5")


def test_uniform_recompute_groups_over_uneven_splits_match_brute_force() -> None:
    """The uniform-groups rule (P4013) reads each row's pipeline split; its distinct splits are found
    as arrays (a trial's MoE space spent 120 s reading them row by row): the same verdicts as point by point."""
    space = space_of(
        "gbs = 64\npp : 1 | 2 | 4\nvpp : 1 | 2 when pp > 1\nschedule : 1f1b | interleaved | zbv when pp > 1\n"
        "first_stage_layers : 0 | 5 when pp > 1\nlast_stage_layers : 0 | 3 when pp > 2\n"
        "recompute : none | full(layers: 1 | 2 | 3 | 5, method: uniform | block)"
    )
    n, removed, legal = brute(space)
    assert summarize(space).legal == legal and raw_size(space) == n
    assert any(k.startswith("P4013") for k in removed)
    points = list(raw_points(space))
    assert [c for c in points if not legality(space, c)] == list(legal_points(space))


def test_a_walk_too_large_for_its_points_says_how_many_points_it_holds() -> None:
    """A new user's MoE space of 653,184 points was refused for a walk of 10,077,696 combinations, a
    number it could not find in its own counts: the walk visits every conditional axis's values."""
    from primus_lang.check.enumerate import MAX_WALK, require_walkable, walk_size

    space = space_of("gbs = 64\n" + "\n".join(f"{k} : 1 | 2 | 4 | 8 when tp > 4" for k in ("pp", "cp", "ep", "mbs"))
                     + "\ntp : 1 | 2 | 4 | 8\nrecompute : none | selective | full(layers: 1 .. 24) when tp > 4\n"
                     "attention : flash | unfused when tp > 4\nschedule : 1f1b | interleaved | zbv when tp > 4\n"
                     "sharding : dist_opt | fsdp | none when tp > 4\nvpp : 1 | 2 | 3 | 4 when tp > 4")
    assert walk_size(space) > MAX_WALK > raw_size(space)
    with pytest.raises(CompileError) as err:
        require_walkable(space)
    assert f"{raw_size(space):,} of them are points" in err.value.diagnostics[0].message
