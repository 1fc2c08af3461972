import numpy as np

from primus_lang.search.strategies.evolutionary import crowding, fronts


def test_fronts_rank_by_domination() -> None:
    objs = np.array([[3.0, 1.0], [1.0, 3.0], [2.0, 2.0], [1.0, 1.0], [0.5, 0.5]])
    assert fronts(objs) == [[0, 1, 2], [3], [4]]


def test_crowding_keeps_the_extremes() -> None:
    objs = np.array([[0.0, 4.0], [1.0, 3.0], [2.0, 2.0], [4.0, 0.0]])
    dist = crowding(objs)
    assert np.isinf(dist[0]) and np.isinf(dist[3])
    assert dist[1] > 0 and dist[2] > 0
