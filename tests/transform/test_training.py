"""Training end to end with relay_tvm.testing.train_sgd: the compiled gradient of an MLP and a
LeNet on synthetic data; the loss falls and the first step's gradient matches the interpreter."""

import numpy as np

import relay_tvm as relay
from relay_tvm.testing import lenet_loss, mlp_loss, synthetic_classification, train_sgd


def _batches(x, y, batch):
    return [{"data": x[i:i + batch], "label": y[i:i + batch]} for i in range(0, len(x), batch)]


def test_mlp_sgd_loss_falls():
    x, y = synthetic_classification(256, (10,), 3, seed=1)
    func, w0 = mlp_loss(32, 10, 16, 3, seed=1)
    w, losses = train_sgd(func, w0, _batches(x, y, 32), lr=0.5, epochs=6)
    first, last = np.mean(losses[:8]), np.mean(losses[-8:])
    assert last < 0.6 * first, losses
    # the trained weights classify the training data better than chance (1/3)
    h = np.maximum(x @ w["w1"].T + w["b1"], 0)
    acc = np.mean(np.argmax(h @ w["w2"].T + w["b2"], 1) == np.argmax(y, 1))
    assert acc > 0.7, acc


def test_mlp_first_step_matches_interpreter_and_numpy_loss():
    x, y = synthetic_classification(8, (5,), 4, seed=2)
    func, w0 = mlp_loss(8, 5, 6, 4, seed=2)
    batch = {"data": x, "label": y}
    _, graph_losses = train_sgd(func, w0, [batch], lr=0.0)
    _, debug_losses = train_sgd(func, w0, [batch], lr=0.0, executor="debug",
                                mode="higher_order")
    logits = np.maximum(x @ w0["w1"].T + w0["b1"], 0) @ w0["w2"].T + w0["b2"]
    lsm = logits - np.log(np.sum(np.exp(logits - logits.max(1, keepdims=True)), 1,
                                 keepdims=True)) - logits.max(1, keepdims=True)
    want = -np.sum(y * lsm) / 8
    np.testing.assert_allclose(graph_losses[0], want, rtol=1e-5)
    np.testing.assert_allclose(debug_losses[0], want, rtol=1e-5)


def test_lenet_sgd_loss_falls():
    x, y = synthetic_classification(64, (1, 12, 12), 4, seed=3)
    func, w0 = lenet_loss(16, classes=4, image=12, seed=3)
    _, losses = train_sgd(func, w0, _batches(x, y, 16), lr=0.2, epochs=5)
    assert np.mean(losses[-4:]) < 0.8 * np.mean(losses[:4]), losses


def test_unknown_weight_is_an_error():
    func, w0 = mlp_loss(4, 3, 2, 2)
    w0["w9"] = np.zeros(1, "float32")
    try:
        train_sgd(func, w0, [])
    except relay.errors.RelayError as e:
        assert "w9" in str(e)
    else:
        raise AssertionError("expected a RelayError")


def test_tutorial_runs_and_loss_falls():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "tutorials" / "train_mlp.py"
    spec = importlib.util.spec_from_file_location("train_mlp_tutorial", path)
    tut = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tut)
    losses = tut.main(epochs=3, verbose=False)
    assert np.mean(losses[-8:]) < 0.7 * np.mean(losses[:8]), losses
