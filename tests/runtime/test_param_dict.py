"""relay.save_param_dict / load_param_dict: round trips for every dtype, and bad blobs."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import ConversionError


def _params():
    rng = np.random.default_rng(0)
    return {
        "w": rng.standard_normal((3, 4)).astype("float32"),
        "h": rng.standard_normal((2, 2)).astype("float16"),
        "q": rng.integers(-128, 127, (5,)).astype("int8"),
        "m": np.array([[True, False], [False, True]]),
        "i64": np.array([1, -2, 1 << 40], dtype="int64"),
        "u8": np.arange(6, dtype="uint8").reshape(2, 3),
        "scalar": np.array(2.5, dtype="float64"),
        "empty": np.zeros((0, 3), dtype="float32"),
        "ünïcode": np.ones((1,), "int32"),
    }


def test_round_trip_all_dtypes():
    params = _params()
    blob = relay.save_param_dict(params)
    assert isinstance(blob, (bytes, bytearray))
    back = relay.load_param_dict(blob)
    assert list(back) == list(params)
    for k, v in params.items():
        got = back[k].numpy()
        assert got.dtype == v.dtype, k
        assert got.shape == v.shape, k
        np.testing.assert_array_equal(got, v)


def test_accepts_tvm_tensors_and_returns_numpy_on_request():
    import tvm

    t = tvm.runtime.tensor(np.arange(4, dtype="float32"))
    back = relay.load_param_dict(bytes(relay.save_param_dict({"t": t})), as_numpy=True)
    np.testing.assert_array_equal(back["t"], np.arange(4, dtype="float32"))


def test_format_is_tvms_in_both_directions():
    import tvm

    params = _params()
    blob = bytes(relay.save_param_dict(params))
    assert int.from_bytes(blob[:8], "little") == 0xF7E58D4F05049CB7  # TVM's NDArray-list magic
    theirs = tvm.runtime.load_param_dict(blob)  # TVM reads ours
    for k, v in params.items():
        np.testing.assert_array_equal(theirs[k].numpy(), v)
    ours = relay.load_param_dict(bytes(tvm.runtime.save_param_dict(  # we read TVM's
        {k: tvm.runtime.tensor(v) for k, v in params.items()})), as_numpy=True)
    for k, v in params.items():
        assert ours[k].dtype == v.dtype and ours[k].shape == v.shape, k
        np.testing.assert_array_equal(ours[k], v)


def test_the_earlier_relay_tvm_format_still_loads():
    from relay_tvm.backend.param_dict import save_param_dict_v1

    params = _params()
    blob = bytes(save_param_dict_v1(params))
    assert blob[:8] == b"RLYPARAM"
    back = relay.load_param_dict(blob, as_numpy=True)
    for k, v in params.items():
        np.testing.assert_array_equal(back[k], v)


@pytest.mark.parametrize("cut", [3, 10, 19, 25, 40, -1])
def test_truncated_blob_is_a_clear_error(cut):
    blob = bytes(relay.save_param_dict({"weight": np.ones((4, 4), "float32")}))
    with pytest.raises(ConversionError, match="truncated"):
        relay.load_param_dict(blob[:cut])


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda b: b"NOTPARAM" + b[8:], "not a parameter blob"),
        (lambda b: b + b"xx", "2 unexpected trailing bytes"),
    ],
)
def test_bad_blobs(mutate, match):
    blob = bytes(relay.save_param_dict({"weight": np.ones((2,), "float32")}))
    with pytest.raises(ConversionError, match=match):
        relay.load_param_dict(mutate(blob))


def test_bad_version_of_the_earlier_format():
    from relay_tvm.backend.param_dict import save_param_dict_v1

    b = bytes(save_param_dict_v1({"weight": np.ones((2,), "float32")}))
    with pytest.raises(ConversionError, match="unsupported format version 7"):
        relay.load_param_dict(b[:8] + (7).to_bytes(4, "little") + b[12:])


def test_bad_dtype_in_blob():
    from relay_tvm.backend.param_dict import save_param_dict_v1

    blob = bytearray(save_param_dict_v1({"a": np.ones((2,), "int32")}))
    i = blob.index(b"int32")
    blob[i:i + 5] = b"inx32"
    with pytest.raises(ConversionError, match="unknown dtype 'inx32'"):
        relay.load_param_dict(bytes(blob))


def test_save_rejects_non_arrays():
    with pytest.raises(relay.RelayError, match="must be a NumPy array"):
        relay.save_param_dict({"a": [1, 2]})
    with pytest.raises(relay.RelayError, match="names must be strings"):
        relay.save_param_dict({1: np.ones(1)})


def test_load_params_into_graph_module():
    x = relay.var("x", shape=(3,))
    w = relay.var("w", shape=(3,))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x, w], relay.multiply(x, w))))
    m = relay.runtime.GraphModule(lib["default"]())
    w_val = np.array([1, 2, 3], "float32")
    m.load_params(relay.save_param_dict({"w": w_val}))
    m.set_input("x", np.ones(3, "float32"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), w_val)
