"""nn.dense, nn.matmul, nn.batch_matmul against NumPy einsum, through the interpreter and the
compiled graph executor; inference of unannotated weights; errors."""

import numpy as np
import pytest
from nn_util import check_op, infer, rand

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import TensorType


@pytest.mark.parametrize("dshape,units,dtype", [
    ((2, 3), 4, "float32"),
    ((5, 2, 3), 4, "float32"),
    ((1, 16), 8, "float16"),
])
def test_dense(dshape, units, dtype):
    x, w = rand(dshape, dtype), rand((units, dshape[-1]), dtype, seed=1)
    want = np.einsum("...k,uk->...u", x.astype("float64"), w.astype("float64")).astype(dtype)
    tol = 1e-2 if dtype == "float16" else 1e-5
    check_op(lambda a, b: relay.nn.dense(a, b), {"x": x, "w": w}, want, rtol=tol, atol=tol)


def test_dense_int8_out_dtype():
    x = np.arange(-6, 6, dtype="int8").reshape(2, 6)
    w = np.arange(18, dtype="int8").reshape(3, 6) - 9
    want = np.einsum("nk,uk->nu", x.astype("int64"), w.astype("int64")).astype("int32")
    check_op(lambda a, b: relay.nn.dense(a, b, out_dtype="int32"), {"x": x, "w": w}, want)


def test_dense_and_batch_matmul_uint8_by_int8_to_int32():
    x = np.random.default_rng(2).integers(0, 256, (2, 16)).astype("uint8")
    w = np.random.default_rng(3).integers(-128, 128, (8, 16)).astype("int8")
    want = (x.astype("int64") @ w.astype("int64").T).astype("int32")
    check_op(lambda a, b: relay.nn.dense(a, b, out_dtype="int32"), {"x": x, "w": w}, want)
    want_b = np.einsum("bmk,bnk->bmn", x[None].astype("int64"),
                       w[None].astype("int64")).astype("int32")
    check_op(lambda a, b: relay.nn.batch_matmul(a, b, out_dtype="int32"),
             {"x": x[None], "w": w[None]}, want_b)
    with pytest.raises(TypeInferenceError, match="data dtype uint8 and weight dtype int8"):
        infer(lambda a, b: relay.nn.dense(a, b), {"x": ((2, 16), "uint8"),
                                                 "w": ((8, 16), "int8")})


@pytest.mark.parametrize("ashape,bshape,ta,tb", [
    ((3, 4), (4, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True),
    ((2, 3, 4), (4, 5), False, False),
])
def test_matmul(ashape, bshape, ta, tb):
    a, b = rand(ashape), rand(bshape, seed=1)
    a64 = np.swapaxes(a, -1, -2) if ta else a
    b64 = b.T if tb else b
    want = np.einsum("...mk,kn->...mn", a64.astype("float64"), b64.astype("float64"))
    check_op(lambda x, y: relay.nn.matmul(x, y, transpose_a=ta, transpose_b=tb),
             {"a": a, "b": b}, want.astype("float32"))


@pytest.mark.parametrize("ashape,bshape,ta,tb", [
    ((2, 3, 4), (2, 5, 4), False, True),
    ((2, 4, 3), (2, 4, 5), True, False),
    ((1, 3, 4), (3, 5, 4), False, True),
    ((3, 3, 4), (1, 4, 5), False, False),
    ((2, 4, 3), (2, 5, 4), True, True),
])
def test_batch_matmul(ashape, bshape, ta, tb):
    a, b = rand(ashape), rand(bshape, seed=1)
    a2 = np.swapaxes(a, 1, 2) if ta else a
    b2 = np.swapaxes(b, 1, 2) if tb else b
    batch = max(a.shape[0], b.shape[0])
    a2 = np.broadcast_to(a2, (batch, *a2.shape[1:]))
    b2 = np.broadcast_to(b2, (batch, *b2.shape[1:]))
    want = np.einsum("bmk,bkn->bmn", a2.astype("float64"), b2.astype("float64"))
    check_op(lambda x, y: relay.nn.batch_matmul(x, y, transpose_a=ta, transpose_b=tb),
             {"a": a, "b": b}, want.astype("float32"))


def test_dense_and_matmul_infer_weight():
    x = relay.var("x", shape=(2, 7))
    w = relay.var("w")
    mod = relay.transform.InferType()(
        relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w, units=3))))
    assert mod["main"].params[1].checked_type == TensorType((3, 7), "float32")
    w2 = relay.var("w2")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x, w2], relay.nn.matmul(x, w2, units=4, transpose_b=True))))
    assert mod["main"].params[1].checked_type == TensorType((4, 7), "float32")
    assert mod["main"].body.checked_type == TensorType((2, 4), "float32")


def test_batch_matmul_defaults_follow_relay():
    call = relay.nn.batch_matmul(relay.var("a"), relay.var("b"))
    assert call.attrs.type_key == "relay.attrs.BatchMatmulAttrs"
    assert call.attrs.transpose_a is False and call.attrs.transpose_b is True
    assert relay.op.get("nn.dense").get_attr("TOpPattern") == 4


ERRORS = [
    (lambda a, b: relay.nn.dense(a, b), ((2, 3), "float32"), ((4, 5), "float32"),
     r"nn.dense: data shape \(2, 3\) and weight shape \(4, 5\) disagree on the reduction axis"),
    (lambda a, b: relay.nn.dense(a, b), ((2, 3), "float32"), ((4, 3), "float16"),
     r"nn.dense: data dtype float32 and weight dtype float16 differ"),
    (lambda a, b: relay.nn.dense(a, b, units=5), ((2, 3), "float32"), ((4, 3), "float32"),
     r"units=5 but weight shape \(4, 3\)"),
    (lambda a, b: relay.nn.matmul(a, b), ((2, 3), "float32"), ((4, 5), "float32"),
     r"nn.matmul: tensor_a shape \(2, 3\) and tensor_b shape \(4, 5\) disagree"),
    (lambda a, b: relay.nn.batch_matmul(a, b), ((2, 3, 4), "float32"), ((3, 5, 4), "float32"),
     r"nn.batch_matmul: batch sizes 2 and 3 differ.*\(2, 3, 4\).*\(3, 5, 4\)"),
    (lambda a, b: relay.nn.batch_matmul(a, b), ((2, 3, 4), "float32"), ((2, 5, 3), "float32"),
     r"nn.batch_matmul: reduction axes differ \(4 vs 3\)"),
    (lambda a, b: relay.nn.batch_matmul(a, b), ((3, 4), "float32"), ((2, 5, 4), "float32"),
     r"nn.batch_matmul: tensor_a must be 3-d, got shape \(3, 4\)"),
]


@pytest.mark.parametrize("make,a,b,match", ERRORS)
def test_errors(make, a, b, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make, {"a": a, "b": b})
