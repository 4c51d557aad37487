"""nn.fifo_buffer and nn.contrib_dense_pack (tvm.relay 0.19's) against NumPy,
interpreted and compiled."""

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


@pytest.mark.parametrize("m,k,n,tile,dtype,out_dtype",
                         [(3, 5, 8, 4, "float32", ""), (1, 7, 6, 6, "float32", ""),
                          (4, 3, 4, 2, "int8", "int32")])
def test_contrib_dense_pack(m, k, n, tile, dtype, out_dtype):
    if dtype == "int8":
        a = RNG.integers(-100, 100, (m, k)).astype(dtype)
        w = RNG.integers(-100, 100, (n, k)).astype(dtype)
    else:
        a = RNG.uniform(-1, 1, (m, k)).astype(dtype)
        w = RNG.uniform(-1, 1, (n, k)).astype(dtype)
    packed = np.ascontiguousarray(w.reshape(n // tile, tile, k).transpose(0, 2, 1))
    exp = (a.astype("float64") @ w.astype("float64").T).astype(out_dtype or dtype)
    x = relay.var("x", shape=a.shape, dtype=dtype)
    wp = relay.var("w", shape=packed.shape, dtype=dtype)
    y = relay.nn.contrib_dense_pack(x, wp, f"NC{tile}n", units=n, out_dtype=out_dtype)
    check_op(y, [a, packed], exp, rtol=1e-5, atol=1e-5)


def test_contrib_dense_pack_errors():
    x = relay.var("x", shape=(2, 5))
    with pytest.raises(TypeInferenceError, match="expected 'NC4n'"):
        infer(relay.nn.contrib_dense_pack(x, relay.var("w", shape=(2, 5, 4)), "NC8n"))
    with pytest.raises(TypeInferenceError, match="has 4 inputs"):
        infer(relay.nn.contrib_dense_pack(x, relay.var("w", shape=(2, 4, 4))))
    with pytest.raises(TypeInferenceError, match="units=9"):
        infer(relay.nn.contrib_dense_pack(x, relay.var("w", shape=(2, 5, 4)), units=9))
