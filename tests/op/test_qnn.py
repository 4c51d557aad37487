"""qnn operators against NumPy: rounding ties, saturation, zero points, per-channel parameters,
through the reference interpreter and the compiled graph executor (which runs the
canonicalized integer code)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from tests.op.op_check import _to_numpy, as_function, check_op, infer, run_compiled, run_interpreter

qnn = relay.qnn.op
C = relay.const


def f32(v):
    return C(np.asarray(v, "float32"))


def i32(v):
    return C(np.asarray(v, "int32"))


def both(expr, inputs):
    """(interpreter result, compiled result) as NumPy."""
    func = as_function(expr)
    return _to_numpy(run_interpreter(func, inputs)), _to_numpy(run_compiled(func, inputs))


# ---- quantize / dequantize ---------------------------------------------------------------------


def test_quantize_ties_to_even_and_saturation():
    # x / 0.5 gives exact ties; round half to even (TVM's round), then + zp, then saturate
    xv = np.array([0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 100.0, -100.0, 63.0, -64.25],
                  "float32")
    x = relay.var("x", shape=xv.shape)
    q8 = qnn.quantize(x, f32(0.5), i32(0), out_dtype="int8")
    qu8 = qnn.quantize(x, f32(0.5), i32(128), out_dtype="uint8")
    exp8 = np.array([0, 2, 2, 0, -2, -2, 127, -128, 126, -128], "int8")
    expu8 = np.array([128, 130, 130, 128, 126, 126, 255, 0, 254, 0], "uint8")
    check_op(relay.Tuple([q8, qu8]), [xv], (exp8, expu8))


def test_quantize_per_channel_axis1():
    rng = np.random.default_rng(0)
    xv = rng.uniform(-3, 3, (2, 3, 4)).astype("float32")
    scales = np.array([0.01, 0.1, 0.05], "float32")
    zps = np.array([0, 5, -7], "int32")
    x = relay.var("x", shape=xv.shape)
    y = qnn.quantize(x, f32(scales), i32(zps), axis=1, out_dtype="int8")
    exp = np.clip(np.round(xv / scales[:, None]) + zps[:, None], -128, 127).astype("int8")
    check_op(y, [xv], exp)


def test_quantize_to_int32_saturates_at_both_ends():
    """float32 cannot hold 2**31 - 1: clipped there it rounded up to 2**31, which the compiled
    cast wrapped to -2**31 (a fresh-user trial: 3e9 gave -2147483648 compiled, 2147483647 in
    the interpreter)."""
    xv = np.array([3e9, -3e9, 2147483520.0, 2147483648.0, -2147483648.0, 7.5, 1e10],
                  "float32")
    x = relay.var("x", shape=xv.shape)
    q = qnn.quantize(x, f32(1.0), i32(0), out_dtype="int32")
    exp = np.array([2147483647, -2147483648, 2147483520, 2147483647, -2147483648, 8,
                    2147483647], "int32")
    check_op(q, [xv], exp)


def test_dequantize_int8_uint8_per_channel():
    qv = np.array([[-128, -1, 0, 127], [0, 1, 200, 255]], "int32")
    x8 = relay.var("a", shape=(4,), dtype="int8")
    xu = relay.var("b", shape=(2, 4), dtype="uint8")
    d8 = qnn.dequantize(x8, f32(0.25), i32(-3))
    du = qnn.dequantize(xu, f32([0.5, 2.0]), i32([128, 1]), axis=0)
    a = qv[0].astype("int8")
    b = np.abs(qv).astype("uint8")
    e8 = ((a.astype("int64") + 3) * 0.25).astype("float32")
    eu = ((b.astype("int64") - np.array([[128], [1]])) * np.array([[0.5], [2.0]])).astype("float32")
    check_op(relay.Tuple([d8, du]), [a, b], (e8, eu))


# ---- requantize --------------------------------------------------------------------------------


def _exact_round(fr: Fraction, mode: str) -> int:
    fl = fr.numerator // fr.denominator
    rem = fr - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and (mode == "UPWARD" or fr > 0)):
        return fl + 1
    return fl


@pytest.mark.parametrize("compute_dtype", ["int64", "float64"])
def test_requantize_rounding_ties(compute_dtype):
    xv = np.array([-7, -5, -3, -1, 1, 3, 5, 7, 0, -2], "int32")
    x = relay.var("x", shape=xv.shape, dtype="int32")
    outs, exps = [], []
    for mode in ("UPWARD", "TONEAREST"):
        outs.append(qnn.requantize(x, f32(0.5), i32(0), f32(1.0), i32(0), rounding=mode,
                                   compute_dtype=compute_dtype, out_dtype="int32"))
        exps.append(np.array([_exact_round(Fraction(int(v), 2), mode) for v in xv], "int32"))
    # UPWARD: -2.5 -> -2, TONEAREST: -2.5 -> -3
    assert exps[0][1] == -2 and exps[1][1] == -3
    check_op(relay.Tuple(outs), [xv], tuple(exps))


def test_requantize_zero_points_saturation_and_dtypes():
    xv = np.array([-1000, -300, -129, 0, 1, 77, 128, 255, 1000], "int32")
    x = relay.var("x", shape=xv.shape, dtype="int32")
    cases = [("int8", 0.75, 3, 1.5, -10), ("uint8", 1.0, -5, 0.25, 100), ("int16", 2.0, 0, 0.125, 0)]
    outs, exps = [], []
    for dt, si, zi, so, zo in cases:
        outs.append(qnn.requantize(x, f32(si), i32(zi), f32(so), i32(zo), out_dtype=dt))
        m = Fraction(np.float32(si).item()) / Fraction(np.float32(so).item())
        vals = [_exact_round(m * (int(v) - zi), "UPWARD") + zo for v in xv]
        info = np.iinfo(dt)
        exps.append(np.clip(vals, info.min, info.max).astype(dt))
    check_op(relay.Tuple(outs), [xv], tuple(exps))


def test_requantize_per_channel_and_random_multiplier():
    rng = np.random.default_rng(1)
    xv = rng.integers(-20000, 20000, (2, 3, 5)).astype("int32")
    iscale = np.array([0.013, 0.0021, 0.5], "float32")
    oscale = np.float32(0.07)
    x = relay.var("x", shape=xv.shape, dtype="int32")
    y = qnn.requantize(x, f32(iscale), i32(0), f32(oscale), i32(4), axis=1, out_dtype="int8")
    real = xv * (iscale.astype("float64")[:, None] / np.float64(oscale))
    exp = np.clip(np.floor(real + 0.5) + 4, -128, 127)
    got_i, got_c = both(y, [xv])
    np.testing.assert_array_equal(got_i, got_c)
    assert got_i.dtype == np.int8
    # the 31-bit fixed-point multiplier may only move a value that is within 1e-6 of a tie
    near_tie = np.abs(real - np.floor(real) - 0.5) < 1e-6
    np.testing.assert_array_equal(got_i[~near_tie], exp[~near_tie].astype("int8"))


def test_requantize_config_and_float32_compute():
    x = relay.var("x", shape=(3,), dtype="int32")
    with qnn.requantize_config(rounding="TONEAREST", compute_dtype="float32"):
        y = qnn.requantize(x, f32(0.5), i32(0), f32(1.0), i32(0), out_dtype="int8")
    assert y.attrs.rounding == "TONEAREST" and y.attrs.compute_dtype == "float32"
    check_op(y, [np.array([-5, 5, 300], "int32")], np.array([-3, 3, 127], "int8"))


# ---- conv2d / dense / batch_matmul ---------------------------------------------------------------


def _np_conv(x, w, xzp, wzp, pad, stride, groups=1):
    """Direct NumPy convolution of zero-point-shifted int64 operands; padding = the input zp."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype("int64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                constant_values=xzp) - xzp
    ws = w.astype("int64") - np.asarray(wzp).reshape(-1, 1, 1, 1)
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), "int64")
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh,
                           j * stride:j * stride + kw]
                out[:, oc, i, j] = (patch * ws[oc]).sum(axis=(1, 2, 3))
    return out.astype("int32")


@pytest.mark.parametrize("ddt,kdt,xzp,wzp,groups", [
    ("int8", "int8", 0, 0, 1),          # the plain int8 path (no shift)
    ("uint8", "int8", 0, 0, 1),         # MKLDNN's uint8 x int8
    ("uint8", "uint8", 128, [3, -2, 0, 1], 2),  # zero points, per-channel kernel zp, groups
])
def test_conv2d(ddt, kdt, xzp, wzp, groups):
    rng = np.random.default_rng(2)
    lo, hi = (0, 256) if ddt == "uint8" else (-128, 128)
    xv = rng.integers(lo, hi, (1, 4, 6, 6)).astype(ddt)
    klo, khi = (0, 256) if kdt == "uint8" else (-128, 128)
    wv = rng.integers(klo, khi, (4, 4 // groups, 3, 3)).astype(kdt)
    x = relay.var("x", shape=xv.shape, dtype=ddt)
    w = relay.var("w", shape=wv.shape, dtype=kdt)
    y = qnn.conv2d(x, w, i32(xzp), i32(wzp), f32(0.1), f32(0.2), kernel_size=(3, 3), channels=4,
                   padding=(1, 1), strides=(2, 2) if groups == 1 else (1, 1), groups=groups)
    exp = _np_conv(xv, wv, xzp, np.asarray(wzp), 1, 2 if groups == 1 else 1, groups)
    check_op(y, [xv, wv], exp)


def test_dense_and_batch_matmul():
    rng = np.random.default_rng(3)
    xv = rng.integers(0, 256, (3, 7)).astype("uint8")
    wv = rng.integers(-128, 128, (5, 7)).astype("int8")
    wzp = np.array([1, -2, 3, 0, 5], "int32")
    av = rng.integers(-128, 128, (2, 3, 4)).astype("int8")
    bv = rng.integers(-128, 128, (2, 5, 4)).astype("int8")
    x = relay.var("x", shape=xv.shape, dtype="uint8")
    w = relay.var("w", shape=wv.shape, dtype="int8")
    a = relay.var("a", shape=av.shape, dtype="int8")
    b = relay.var("b", shape=bv.shape, dtype="int8")
    d = qnn.dense(x, w, i32(100), i32(wzp), f32(0.5), f32(np.ones(5)), units=5)
    m = qnn.batch_matmul(a, b, i32(-3), i32(7), f32(0.1), f32(0.1))
    ed = ((xv.astype("int64") - 100) @ (wv.astype("int64") - wzp[:, None]).T).astype("int32")
    em = ((av.astype("int64") + 3) @ (bv.astype("int64") - 7).transpose(0, 2, 1)).astype("int32")
    check_op(relay.Tuple([d, m]), [xv, wv, av, bv], (ed, em))


# ---- add / subtract / mul / concatenate / avg_pool2d ---------------------------------------------


def test_add_subtract_same_params_exact_saturation():
    # with the output's own parameters the operands are not rescaled: l + r - zo, saturated
    lv = np.array([100, -100, 50, 127, -128, 0], "int8")
    rv = np.array([100, -100, -60, 1, -1, 0], "int8")
    l_ = relay.var("l", shape=(6,), dtype="int8")
    r_ = relay.var("r", shape=(6,), dtype="int8")
    p = [f32(0.5), i32(2)]
    s = qnn.add(l_, r_, *p, *p, *p)
    d = qnn.subtract(l_, r_, *p, *p, *p)
    es = np.clip(lv.astype(int) + rv.astype(int) - 2, -128, 127).astype("int8")
    ed = np.clip(lv.astype(int) - rv.astype(int) + 2, -128, 127).astype("int8")
    check_op(relay.Tuple([s, d]), [lv, rv], (es, ed))


def test_add_mul_rescaled_within_one_of_real():
    rng = np.random.default_rng(4)
    lv = rng.integers(0, 256, (2, 3, 4)).astype("uint8")
    rv = rng.integers(0, 256, (3, 1)).astype("uint8")  # broadcasts
    l_ = relay.var("l", shape=lv.shape, dtype="uint8")
    r_ = relay.var("r", shape=rv.shape, dtype="uint8")
    ls, lz, rs, rz, os_, oz = 0.03, 120, 0.05, 10, 0.09, 128
    args = [f32(ls), i32(lz), f32(rs), i32(rz), f32(os_), i32(oz)]
    s = qnn.add(l_, r_, *args)
    m = qnn.mul(l_, r_, *args[:4], f32(1.7), i32(oz))
    lr = (lv.astype("float64") - lz) * np.float32(ls)
    rr = (rv.astype("float64") - rz) * np.float32(rs)
    es = np.clip(np.round((lr + rr) / np.float32(os_)) + oz, 0, 255)
    em = np.clip(np.round(lr * rr / np.float32(1.7)) + oz, 0, 255)
    gi, gc = both(relay.Tuple([s, m]), [lv, rv])
    # add rounds each operand then the sum; mul rounds once: at most 1 off the real value
    assert gi[0].dtype == np.uint8 and gi[1].dtype == np.uint8
    assert np.abs(gi[0].astype(int) - es).max() <= 1
    assert np.abs(gi[1].astype(int) - em).max() <= 1
    np.testing.assert_array_equal(gi[0], gc[0])
    np.testing.assert_array_equal(gi[1], gc[1])


def test_concatenate_requantizes_inputs():
    av = np.array([[10, -20, 127]], "int8")
    bv = np.array([[10, -21, 127]], "int8")
    a = relay.var("a", shape=(1, 3), dtype="int8")
    b = relay.var("b", shape=(1, 3), dtype="int8")
    y = qnn.concatenate([a, b], [f32(0.5), f32(2.0)], [i32(0), i32(1)], f32(1.0), i32(0), axis=0)
    # a: x*0.5 rounded half up (-10), b: (x-1)*2, saturated
    exp = np.array([[5, -10, 64], [18, -44, 127]], "int8")
    check_op(y, [av, bv], exp)


def test_avg_pool2d_truncates_and_saturates():
    xv = np.array([[[[-3, -2, 5, 6], [-1, -1, 7, 7], [0, 1, 2, 3], [-128, -128, 127, 127]]]],
                  "int8")
    x = relay.var("x", shape=xv.shape, dtype="int8")
    same = qnn.avg_pool2d(x, f32(1.0), i32(0), f32(1.0), i32(0), pool_size=(2, 2),
                          strides=(2, 2), padding=(0, 0), dilation=(1, 1), layout="NCHW")
    half = qnn.avg_pool2d(x, f32(1.0), i32(0), f32(0.5), i32(0), pool_size=(2, 2),
                          strides=(2, 2), padding=(0, 0), dilation=(1, 1), layout="NCHW")
    s = xv.astype("int64").reshape(1, 1, 2, 2, 2, 2).sum(axis=(3, 5))
    e1 = np.trunc(s / 4).astype("int8")              # -7/4 -> -1 (toward zero)
    e2 = np.clip(np.trunc(2 * s / 4), -128, 127).astype("int8")
    check_op(relay.Tuple([same, half]), [xv], (e1, e2))


def test_simulated_quantize_and_dequantize():
    xv = np.array([[0.26, -1.3, 9.0], [0.5, -0.5, -9.0]], "float32")
    x = relay.var("x", shape=xv.shape)
    sq = qnn.simulated_quantize(x, f32([0.5, 0.05]), i32([1, 0]), axis=0, out_dtype="int8")
    sd = qnn.simulated_dequantize(x, f32(2.0), i32(3), in_dtype="uint8")
    off = qnn.simulated_quantize(x, f32(0.5), i32(0), out_dtype="disable")
    e = np.clip(np.round(xv / np.array([[0.5], [0.05]], "float32")) + [[1], [0]], -128, 127)
    check_op(relay.Tuple([sq, sd, off]), [xv],
             (e.astype("float32"), ((xv - 3) * 2).astype("float32"), xv))


# ---- type errors and text ------------------------------------------------------------------------


def test_type_errors_name_the_parameter():
    x = relay.var("x", shape=(2, 3))
    with pytest.raises(TypeInferenceError, match="output_scale must have dtype float32"):
        infer(qnn.quantize(x, C(np.asarray(0.1, "float64"), "float64"), i32(0)))
    with pytest.raises(TypeInferenceError, match="2 values but data shape"):
        infer(qnn.quantize(x, f32([0.1, 0.2]), i32(0), axis=1))
    xi = relay.var("xi", shape=(2, 3), dtype="int32")
    with pytest.raises(TypeInferenceError, match="rounding"):
        infer(qnn.requantize(xi, f32(1), i32(0), f32(1), i32(0), rounding="DOWN"))
    with pytest.raises(TypeInferenceError, match="out_dtype"):
        infer(qnn.quantize(x, f32(0.1), i32(0), out_dtype="float32"))


def test_text_round_trip():
    x = relay.var("x", shape=(2, 3), dtype="int32")
    y = qnn.requantize(x, f32(0.5), i32(1), f32(0.25), i32(0), rounding="TONEAREST",
                       out_dtype="uint8")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    back = relay.parse(str(mod))
    assert relay.analysis.structural_equal(back["main"], mod["main"])


@pytest.mark.parametrize("kernel,pad,stride", [(3, 1, 1), (1, 0, 2)])
def test_conv2d_x86_int16_template(kernel, pad, stride):
    # 16 output / 6 input channels: the AVX2 vpmaddwd template (packed NCHW2c data, OIHW8o2i
    # weight), with the padded input materialized (3x3) or read through a packing copy (1x1)
    rng = np.random.default_rng(5)
    xv = rng.integers(0, 256, (1, 6, 9, 9)).astype("uint8")
    wv = rng.integers(-128, 128, (16, 6, kernel, kernel)).astype("int8")
    x = relay.var("x", shape=xv.shape, dtype="uint8")
    w = relay.var("w", shape=wv.shape, dtype="int8")
    acc = qnn.conv2d(x, w, i32(7), i32(0), f32(0.1), f32(0.2), kernel_size=(kernel, kernel),
                     channels=16, padding=(pad, pad), strides=(stride, stride))
    y = qnn.requantize(acc, f32(0.02), i32(0), f32(1.5), i32(3), out_dtype="int8")
    exp_acc = _np_conv(xv, wv, 7, np.zeros(16, "int64"), pad, stride)
    real = exp_acc.astype("float64") * (np.float64(np.float32(0.02)) / np.float64(np.float32(1.5)))
    exp = np.clip(np.floor(real + 0.5) + 3, -128, 127).astype("int8")
    check_op(relay.Tuple([acc, y]), [xv, wv], (exp_acc, exp))


def test_vm_runs_qnn_program():
    # the VM compiler runs the same qnn lowering as relay.build
    xv = np.array([[-1.26, 0.74, 3.0, -3.0]], "float32")
    x = relay.var("x", shape=xv.shape)
    q = qnn.quantize(x, f32(0.5), i32(0), out_dtype="int8")
    d = qnn.dense(q, relay.const(np.array([[1, -2, 3, 4]], "int8"), "int8"), i32(1), i32(0),
                  f32(0.5), f32(1.0), units=1)
    y = qnn.dequantize(qnn.requantize(d, f32(0.5), i32(0), f32(0.25), i32(0)), f32(0.25), i32(0))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(xv).numpy()
    qv = np.array([-3, 1, 6, -6])  # round half to even of x / 0.5
    acc = int(((qv - 1) * np.array([1, -2, 3, 4])).sum())  # -4 + 0 + 15 - 28 = -17
    exp = np.array([[np.clip(np.floor(acc * 2 + 0.5), -128, 127) * 0.25]], "float32")
    np.testing.assert_array_equal(got, exp)
    np.testing.assert_array_equal(relay.create_executor("debug", mod=mod).evaluate()(xv).numpy(),
                                  exp)


def test_qnn_legalize_runs_user_hooks():
    from relay_tvm.op.op_attrs import temp_op_attr

    x = relay.var("x", shape=(3,), dtype="int32")
    y = qnn.requantize(x, f32(1.0), i32(0), f32(1.0), i32(0), out_dtype="int32")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    seen = []

    def hook(attrs, inputs, types):
        seen.append([t.dtype for t in types])
        return relay.add(inputs[0], i32(1))

    with temp_op_attr("qnn.requantize", "FTVMQnnLegalize", hook):
        out = relay.qnn.transform.Legalize()(mod)
    assert seen == [["int32", "float32", "int32", "float32", "int32", "int32"]]
    assert "qnn.requantize" not in str(out) and "add" in str(out)
