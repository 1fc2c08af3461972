from primus_lang.ir.candidate import Candidate
from primus_lang.search.explain import explain
from primus_lang.search.trial import EVALUATED, Evaluation, Trial


def trial(cand: Candidate, step: float, peak: int, bubble: float = 0.0) -> Trial:
    ev = Evaluation(step, 1000.0 / step, 1.0, 0.5, bubble / step, 0.0, (("compute", step - bubble), ("bubble", bubble)))
    return Trial(number=1, source="t", verdict=EVALUATED, candidate=cand, evaluation=ev, score=1000.0 / step,
                 memory_peak=peak, memory_limit=10**12)


def test_explains_knobs_gain_and_breakdown() -> None:
    win = trial(Candidate(pp=4, vpp=2), 1.0, 50 * 10**9, bubble=0.1)
    base = trial(Candidate(pp=4), 1.3, 40 * 10**9, bubble=0.4)
    lines = explain(win, None, base, ("pp", "vpp"), "tokens_per_gpu")
    assert lines == [
        "Over the baseline: vpp 1 -> 2: +30.0% tokens/s/GPU (769 -> 1,000), step 1.30 s -> 1.00 s; "
        "where the time went: pipeline bubble -300 ms; memory peak 37.3 GiB -> 46.6 GiB."
    ]


def test_ties_are_called_ties() -> None:
    a = trial(Candidate(cp=1, mbs=2), 1.0, 50 * 10**9)
    b = trial(Candidate(cp=2, mbs=4), 1.0, 50 * 10**9)
    c = trial(Candidate(cp=2, mbs=4), 1.0, 60 * 10**9)
    assert "a tie" in explain(a, b, None, ("cp", "mbs"), "tokens_per_gpu")[0]
    assert "9.3 GiB more memory free" in explain(a, c, None, ("cp", "mbs"), "tokens_per_gpu")[0]
    assert "already the best found" in explain(a, None, a, ("cp",), "tokens_per_gpu")[0]


def test_host_launches_leading_the_gain_are_said_to_be_the_least_measured_part() -> None:
    def hosted(cand: Candidate, step: float, host: float) -> Trial:
        ev = Evaluation(step, 1000.0 / step, 1.0, 0.5, 0.0, 0.0, (("compute", step - host), ("host", host)))
        return Trial(number=1, source="t", verdict=EVALUATED, candidate=cand, evaluation=ev, score=1000.0 / step,
                     memory_peak=10**9, memory_limit=10**12)

    win, base = hosted(Candidate(mbs=4), 1.0, 0.1), hosted(Candidate(mbs=1), 1.4, 0.5)
    (line,) = explain(win, None, base, ("mbs",), "tokens_per_gpu")
    assert "host launches -400 ms (host launches lead: the least measured part" in line
    # a gain led by anything else says nothing of it
    (other,) = explain(trial(Candidate(pp=4, vpp=2), 1.0, 10**9, 0.1), None,
                       trial(Candidate(pp=4), 1.3, 10**9, 0.4), ("pp", "vpp"), "tokens_per_gpu")
    assert "least measured" not in other
