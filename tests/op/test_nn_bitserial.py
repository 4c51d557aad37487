"""nn.bitserial_dense against NumPy: the lowest data_bits / weight_bits bits of each operand,
multiplied as integers (unipolar: a clear weight bit counts -1), through the interpreter and
compiled code; type inference with symbolic shapes; errors."""

import numpy as np
import pytest
import tvm
from nn_util import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import TensorType


def _want(d, w, data_bits, weight_bits, unipolar, out_dtype):
    # the low bits as unsigned numbers; unipolar maps each weight bit b to 2b - 1, so a
    # weight of weight_bits bits counts 2 * w - (2**weight_bits - 1)
    dd = d.astype(np.int64) & ((1 << data_bits) - 1)
    ww = w.astype(np.int64) & ((1 << weight_bits) - 1)
    if unipolar:
        ww = 2 * ww - ((1 << weight_bits) - 1)
    return np.einsum("...k,uk->...u", dd, ww).astype(out_dtype)


@pytest.mark.parametrize("dshape,units,bits,unipolar,pack,out_dtype", [
    ((3, 32), 4, (1, 1), True, "uint32", "int16"),
    ((2, 64), 5, (2, 3), True, "uint32", "int16"),
    ((2, 16), 3, (2, 2), False, "uint8", "int32"),
    ((2, 3, 8), 2, (3, 1), False, "uint8", "int16"),
])
def test_bitserial_dense_matches_numpy(dshape, units, bits, unipolar, pack, out_dtype):
    rng = np.random.default_rng(sum(dshape) + units)
    d = rng.integers(-8, 8, dshape).astype("int16")
    w = rng.integers(-8, 8, (units, dshape[-1])).astype("int16")
    want = _want(d, w, *bits, unipolar, out_dtype)
    check_op(lambda a, b: relay.nn.bitserial_dense(
        a, b, units=units, data_bits=bits[0], weight_bits=bits[1], pack_dtype=pack,
        out_dtype=out_dtype, unipolar=unipolar), {"x": d, "w": w}, want, rtol=0, atol=0)


def test_bitserial_dense_types():
    m, k = tvm.te.size_var("m"), tvm.te.size_var("k")
    got = infer(lambda a, b: relay.nn.bitserial_dense(a, b, units=32),
                {"x": ((m, k), "int16"), "w": ((32, k), "int16")})
    assert got == TensorType((m, 32), "int16")
    # units from the weight's rows; out_dtype as given
    got = infer(lambda a, b: relay.nn.bitserial_dense(a, b, out_dtype="int32"),
                {"x": ((4, 64), "uint8"), "w": ((6, 64), "uint8")})
    assert got == TensorType((4, 6), "int32")
    assert "units=32" in relay.nn.bitserial_dense(relay.var("x"), relay.var("w"),
                                                  units=32).astext()


@pytest.mark.parametrize("inputs,kw,match", [
    ({"x": ((2, 30), "int16"), "w": ((4, 30), "int16")}, {}, "multiple of the packing width 32"),
    ({"x": ((2, 32), "int16"), "w": ((4, 32), "int16")}, {"units": 5}, r"rows and units \(4 vs 5\)"),
    ({"x": ((2, 32), "int16"), "w": ((4, 64), "int16")}, {}, r"reduction axis \(64 vs 32\)"),
    ({"x": ((2, 32), "float32"), "w": ((4, 32), "int16")}, {}, "data has dtype float32"),
    ({"x": ((2, 32), "int16"), "w": ((4, 32), "int16")}, {"pack_dtype": "int32"}, "pack_dtype"),
])
def test_bitserial_dense_errors(inputs, kw, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(lambda a, b: relay.nn.bitserial_dense(a, b, **kw), inputs)



_DENSE = {"nn.dense": relay.nn.dense, "nn.bitserial_dense": relay.nn.bitserial_dense}


@pytest.mark.parametrize("op", list(_DENSE))
@pytest.mark.parametrize("inputs,match", [
    ({"x": ((), "int16"), "w": ((4, 32), "int16")}, r"data must have rank >= 1, got a scalar\n"),
    ({"x": ((2, 32), "int16"), "w": ((4, 32, 1), "int16")},
     r"weight must be 2-d \(units, in\), got shape \(4, 32, 1\)\n"),
    ({"x": ((2, 32), "int16"), "w": ((32,), "int16")},
     r"weight must be 2-d \(units, in\), got shape \(32,\)\n"),
])
def test_dense_and_bitserial_dense_share_the_operand_checks(op, inputs, match):
    # one helper (op/_nn_common.dense_operands) checks both relations' operands
    with pytest.raises(TypeInferenceError, match=rf"^{op}: {match}  in expression: {op}\("):
        infer(lambda a, b: _DENSE[op](a, b), inputs)
