"""nn.conv2d_backward_weight (tvm.relay 0.19's) against direct NumPy sums and against the
weight gradient of nn.conv2d, through the interpreter and compiled."""

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError

RNG = np.random.default_rng(5)


def _dw_numpy(dy, x, k, s, pad, groups):
    """dw[o, i, p, q] = sum_{n,y,z} dy[n,o,y,z] * xpad[n, grp*C/g + i, y*s + p, z*s + q]."""
    n, c, h, w = x.shape
    o_n, oh, ow = dy.shape[1], dy.shape[2], dy.shape[3]
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    ci = c // groups
    out = np.zeros((o_n, ci, k[0], k[1]))
    for o in range(o_n):
        base = (o // (o_n // groups)) * ci
        for i in range(ci):
            for p in range(k[0]):
                for q in range(k[1]):
                    win = xp[:, base + i, p:p + s[0] * (oh - 1) + 1:s[0],
                             q:q + s[1] * (ow - 1) + 1:s[1]]
                    out[o, i, p, q] = np.sum(dy[:, o].astype("float64") * win)
    return out.astype("float32")


@pytest.mark.parametrize(
    "dy_shape,x_shape,k,s,pad,groups,channels",
    [
        ((2, 8, 9, 9), (2, 4, 9, 9), (3, 3), (1, 1), (1, 1), 1, None),
        ((2, 6, 7, 7), (2, 3, 16, 16), (3, 3), (2, 2), (0, 0), 1, None),
        ((1, 5, 8, 8), (1, 5, 8, 8), (3, 3), (1, 1), (1, 1), 5, 5),
        ((1, 4, 6, 5), (1, 6, 7, 6), (2, 2), (1, 1), (0, 0), 2, None),
    ],
)
def test_conv2d_backward_weight(dy_shape, x_shape, k, s, pad, groups, channels):
    dy = RNG.standard_normal(dy_shape).astype("float32")
    x = RNG.standard_normal(x_shape).astype("float32")
    vdy = relay.var("dy", shape=dy_shape)
    vx = relay.var("x", shape=x_shape)
    y = relay.nn.conv2d_backward_weight(vdy, vx, strides=s, padding=pad, kernel_size=k,
                                        groups=groups, channels=channels, out_dtype="float32")
    check_op(y, [dy, x], _dw_numpy(dy, x, k, s, pad, groups), rtol=1e-4, atol=1e-4)


def test_matches_conv2d_weight_gradient():
    x = RNG.standard_normal((2, 3, 8, 8)).astype("float32")
    w = RNG.standard_normal((4, 3, 3, 3)).astype("float32")
    vx = relay.var("x", shape=x.shape)
    vw = relay.var("w", shape=w.shape)
    f = relay.Function([vx, vw], relay.sum(relay.nn.conv2d(vx, vw, strides=(2, 2),
                                                           padding=(1, 1))))
    gf = relay.transform.gradient(relay.transform.InferType()(relay.IRModule.from_expr(f))["main"])
    _, (_, gw) = relay.create_executor("debug").evaluate(gf)(x, w)
    dy = np.ones((2, 4, 4, 4), "float32")  # d sum / d conv output
    vdy = relay.var("dy", shape=dy.shape)
    y = relay.nn.conv2d_backward_weight(vdy, vx, strides=(2, 2), padding=(1, 1),
                                        kernel_size=(3, 3))
    check_op(y, [dy, x], gw.numpy(), rtol=1e-4, atol=1e-4)


def test_conv2d_backward_weight_errors():
    dy = relay.var("dy", shape=(1, 2, 6, 6))
    x = relay.var("x", shape=(1, 3, 6, 6))
    with pytest.raises(TypeInferenceError, match="kernel_size must be given"):
        infer(relay.nn.conv2d_backward_weight(dy, x))
    with pytest.raises(TypeInferenceError, match="larger than the forward convolution"):
        infer(relay.nn.conv2d_backward_weight(dy, x, kernel_size=(3, 3)))
    with pytest.raises(TypeInferenceError, match="only grad_layout NCHW"):
        infer(relay.nn.conv2d_backward_weight(dy, x, kernel_size=(1, 1), data_layout="NHWC"))
    assert infer(relay.nn.conv2d_backward_weight(dy, x, kernel_size=(1, 1))).concrete_shape == (
        2, 3, 1, 1)
