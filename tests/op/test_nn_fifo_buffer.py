"""nn.fifo_buffer (tvm.relay 0.19's) against NumPy, interpreted and compiled."""

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError

RNG = np.random.default_rng(8)


@pytest.mark.parametrize(
    "dshape,bshape,axis",
    [((1, 2), (5, 2), 0), ((2, 3, 1), (2, 3, 4), -1), ((1, 3, 2, 5), (1, 3, 6, 5), 2),
     ((3, 1, 2, 2), (3, 4, 2, 2), 1), ((2, 8), (2, 9), 1)],
)
def test_fifo_buffer(dshape, bshape, axis):
    a = RNG.uniform(-1, 1, dshape).astype("float32")
    b = RNG.uniform(-1, 1, bshape).astype("float32")
    ax = axis % len(bshape)
    d, n = dshape[ax], bshape[ax]
    # oldest d entries of the buffer drop out, the new ones come in at the end
    exp = np.concatenate([np.take(b, range(d, n), axis=ax), a], axis=ax)
    x = relay.var("x", shape=dshape)
    buf = relay.var("buf", shape=bshape)
    check_op(relay.nn.fifo_buffer(x, buf, axis), [a, b], exp)


def test_fifo_buffer_errors():
    buf = relay.var("buf", shape=(4, 3))
    with pytest.raises(TypeInferenceError, match="does not fit"):
        infer(relay.nn.fifo_buffer(relay.var("x", shape=(4, 3)), buf, 0))
    with pytest.raises(TypeInferenceError, match="does not fit"):
        infer(relay.nn.fifo_buffer(relay.var("x", shape=(1, 2)), buf, 0))
    with pytest.raises(TypeInferenceError, match="same rank and dtype"):
        infer(relay.nn.fifo_buffer(relay.var("x", shape=(1, 3), dtype="int32"), buf, 0))
