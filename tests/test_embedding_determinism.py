"""An embedding never depends on its batch-mates: every encoder call runs at one fixed shape.

Regression: two cold main-job runs on one machine gave text scores up to 9e-7 apart, because a
text encoded in a batch of 1 or 2 differs in its last float bits from the same text in a batch
of 32 (CPU matrix kernels choose their code path by the batch dimension), and how many texts a
call still has to encode depends on what the caches hold.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.evaluators._torch import fixed_shape


@given(st.lists(st.integers(0, 99), max_size=12), st.integers(1, 8))
def test_every_call_has_the_fixed_shape_and_rows_come_back_in_order(items, size) -> None:
    calls: list[int] = []

    def encode(batch: list[int]) -> np.ndarray:
        calls.append(len(batch))
        return np.asarray(batch, dtype=np.float32)[:, None] * 2

    if len(items) > size:  # callers batch first; a longer batch is encoded as it is
        assert fixed_shape(encode, items, size).shape == (len(items), 1)
        return
    out = fixed_shape(encode, items, size)
    assert out[:, 0].tolist() == [2.0 * i for i in items]
    assert calls == ([size] if items else [0])


@pytest.mark.slow
@pytest.mark.parametrize("evaluator_id", ["ref-vit-clip", "ref-siglip"])
def test_a_text_embeds_bitwise_alike_alone_and_in_a_full_batch(evaluator_id: str) -> None:
    from harness.evaluators.registry import get

    ev = get(evaluator_id).build(device="cpu", batch_size=32)
    texts = [f"A top-down view of a bedroom with {i} chairs and a lamp" for i in range(33)]

    def fresh(batch: list[str]) -> np.ndarray:
        ev.text_cache._memory.clear()
        emb, rows = ev.text_embeddings(batch)
        return emb[rows]

    full = fresh(texts)
    for n in (1, 2, 5):
        assert np.array_equal(fresh(texts[:n]), full[:n]), n
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (64, 64, 3), dtype=np.uint8) for _ in range(33)]
    emb, rows = ev.image_embeddings(images)
    alone, rows1 = ev.image_embeddings(images[:1])
    assert np.array_equal(alone[rows1][0], emb[rows][0])
