"""relay.op.stft against a direct NumPy evaluation of its definition (torch.stft without
centering: the window zero-padded to n_fft, centred), on the interpreter, the graph executor
and the VM (static and Any shapes)."""

import math

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError


def _stft_loops(x, n_fft, hop, window, normalized, onesided):
    """The definition, one term at a time (float64)."""
    lp = (n_fft - window.shape[0]) // 2
    w = np.pad(window.astype("float64"), (lp, n_fft - window.shape[0] - lp))
    batch = x.reshape(-1, x.shape[-1])
    rows = n_fft // 2 + 1 if onesided else n_fft
    cols = (x.shape[-1] - n_fft) // hop + 1
    out = np.zeros((batch.shape[0], rows, cols, 2))
    for b in range(batch.shape[0]):
        for r in range(rows):
            for m in range(cols):
                for k in range(n_fft):
                    v = w[k] * batch[b, m * hop + k]
                    out[b, r, m, 0] += v * math.cos(2 * math.pi * r * k / n_fft)
                    out[b, r, m, 1] -= v * math.sin(2 * math.pi * r * k / n_fft)
    if normalized:
        out /= math.sqrt(n_fft)
    return out.reshape(x.shape[:-1] + out.shape[1:])


RNG = np.random.default_rng(3)
CASES = [
    # TVM v0.19's TestSTFT cases (an int32 window on float32 data)
    (np.array([[1, 2, 3, 4, 5, 6]], "float32"), 3, 3, 3, np.array([4, 3, 2], "int32"), False,
     True),
    (np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9], [2, 5, 7, 8, 5, 6, 7, 3, 2]], "float32"), 2, 1, 2,
     np.array([1, 3], "int32"), True, False),
    # a window shorter than n_fft (padded, centred), a 1-D signal, float64
    (RNG.random((2, 40)).astype("float32"), 8, 3, 5, RNG.random(5).astype("float32"), True, True),
    (RNG.random(30), 7, 2, 4, RNG.random(4), False, False),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dynamic", [False, True])
def test_stft_against_definition(case, dynamic):
    x, n_fft, hop, wl, window, normalized, onesided = CASES[case]
    want = _stft_loops(x, n_fft, hop, window, normalized, onesided)
    dshape = tuple(relay.Any() for _ in x.shape) if dynamic else x.shape
    d = relay.var("d", shape=dshape, dtype=str(x.dtype))
    w = relay.var("w", shape=(relay.Any(),) if dynamic else window.shape, dtype=str(window.dtype))
    f = relay.Function([d, w], relay.op.stft(d, n_fft, hop, wl, w, normalized, onesided))
    mod = relay.IRModule.from_expr(f)
    for kind in ["debug", "vm"] + ([] if dynamic else ["graph"]):
        got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(x, window).numpy()
        assert got.shape == want.shape and got.dtype == x.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_stft_defaults_and_errors():
    x = RNG.random((1, 16)).astype("float32")
    d = relay.var("d", shape=x.shape)
    # hop n_fft // 4, a window of ones of n_fft samples
    f = relay.Function([d], relay.stft(d, 8))
    got = relay.create_executor("graph", mod=relay.IRModule.from_expr(f),
                                target="llvm").evaluate()(x).numpy()
    np.testing.assert_allclose(got, _stft_loops(x, 8, 2, np.ones(8), False, True),
                               rtol=1e-4, atol=1e-4)

    def infer(data_shape, n_fft, win, **kw):
        e = relay.op.stft(relay.var("d", shape=data_shape), n_fft,
                          window=relay.var("w", shape=(win,)), **kw)
        return relay.transform.InferTypeLocal(e)

    assert infer((3, 20), 8, 6, hop_length=4).concrete_shape == (3, 5, 4, 2)
    with pytest.raises(TypeInferenceError, match="fewer samples than n_fft=8"):
        infer((3, 5), 8, 8)
    with pytest.raises(TypeInferenceError, match="window has 6 samples; expected win_length=5"):
        infer((3, 20), 8, 6, win_length=5)
    with pytest.raises(TypeInferenceError, match="1 <= win_length <= n_fft"):
        infer((3, 20), 4, 6)
    with pytest.raises(TypeInferenceError, match="data must be 1-D .* or 2-D"):
        infer((1, 3, 20), 8, 8)


def test_stft_sizes_must_be_ints():
    """From a fresh-user trial: a float n_fft of 16.7 was read as 16, and the default hop of
    n_fft // 4 = 0 was reported as if the user had given hop_length=0."""
    x = relay.var("x", shape=(64,))
    for kw, name in (({"n_fft": 16.7}, "n_fft"), ({"n_fft": 16, "hop_length": 2.0}, "hop_length"),
                     ({"n_fft": 16, "win_length": True}, "win_length")):
        with pytest.raises(TypeError, match=f"stft: {name} must be an int"):
            relay.op.stft(x, **kw)
    with pytest.raises(TypeError, match=r"default hop_length n_fft // 4 is 0 for n_fft=3"):
        relay.op.stft(x, 3)
