"""Training an MLP with Relay's automatic differentiation.

Relay differentiates programs by transforming them (the Relay paper, section 4.2):
``relay.transform.gradient`` turns ``fn(x1..xn) -> loss`` into ``fn(x1..xn) -> (loss, (dx1..dxn))``.
This tutorial

1. writes a two-layer perceptron with a softmax cross-entropy loss in Relay
   (``dense -> bias_add -> relu -> dense -> bias_add -> log_softmax``, the mean over the batch
   of ``-sum(label * log_softmax(logits))``, labels one-hot),
2. differentiates it two ways: ``higher_order`` (closures and references, any program) cleaned up
   by ``PartialEvaluate`` + ``LazyGradientInit`` + ``DeadCodeElimination``, and ``first_order``
   (dataflow programs), checks they agree, and checks a few gradient entries against central
   finite differences of the compiled loss (in float64),
3. trains it with plain SGD on synthetic data using the compiled gradient
   (``relay_tvm.testing.train_sgd``) and prints the loss as it falls.

Run: ``python tutorials/train_mlp.py`` (8 epochs; ``--small`` / ``RELAY_TVM_TUTORIAL_SMALL=1``: 3).
What you should see: ``same gradients as first_order``, the largest relative difference to
finite differences (about 1e-8), and a mean loss per epoch that falls.
"""

import os
import sys

import numpy as np

import relay_tvm as relay
from relay_tvm.testing import run_infer_type, synthetic_classification, train_sgd


def kinds(expr):
    seen = set()
    relay.analysis.post_order_visit(expr, lambda e: seen.add(type(e).__name__))
    return seen


def mlp_loss(batch, in_dim, hidden, classes, dtype="float32", seed=0):
    """``fn(data (batch, in_dim), label (batch, classes) one-hot, w1 (hidden, in_dim), b1,
    w2 (classes, hidden), b2) -> mean cross-entropy`` and Xavier-initialized weights."""
    data = relay.var("data", shape=(batch, in_dim), dtype=dtype)
    label = relay.var("label", shape=(batch, classes), dtype=dtype)
    shapes = {"w1": (hidden, in_dim), "b1": (hidden,), "w2": (classes, hidden), "b2": (classes,)}
    w = {n: relay.var(n, shape=s, dtype=dtype) for n, s in shapes.items()}
    h = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(data, w["w1"]), w["b1"]))
    logits = relay.nn.bias_add(relay.nn.dense(h, w["w2"]), w["b2"])
    nll = relay.negative(relay.sum(label * relay.nn.log_softmax(logits)))
    loss = relay.Function([data, label, *w.values()], nll / relay.const(float(batch), dtype))
    rng = np.random.default_rng(seed)
    weights = {n: (rng.uniform(-1, 1, s) * np.sqrt(6 / sum(s)) if n[0] == "w"
                   else np.zeros(s)).astype(dtype) for n, s in shapes.items()}
    return loss, weights


def finite_difference_check(batch, in_dim, hidden, classes, x, y, picks=6, eps=1e-6):
    """The largest relative difference between the first-order gradient and central finite
    differences of the loss, over ``picks`` entries of each weight (float64 throughout)."""
    loss, weights = mlp_loss(batch, in_dim, hidden, classes, dtype="float64", seed=1)
    weights = {n: v + 0.1 for n, v in weights.items()}  # nonzero biases: every entry matters
    data, label = x[:batch].astype("float64"), y[:batch].astype("float64")
    grad = relay.transform.gradient(run_infer_type(loss), mode="first_order")
    run_grad = relay.create_executor("graph", mod=relay.IRModule.from_expr(grad)).evaluate()
    run_loss = relay.create_executor("graph", mod=relay.IRModule.from_expr(loss)).evaluate()
    _, grads = run_grad(data, label, *weights.values())
    rng, worst = np.random.default_rng(2), 0.0
    for k, name in enumerate(weights):
        g = grads[2 + k].numpy()  # the gradients of (data, label, w1, b1, w2, b2), in order
        for i in rng.choice(g.size, size=min(picks, g.size), replace=False):
            moved = []
            for sign in (1, -1):
                w = {n: v.copy() for n, v in weights.items()}
                w[name].flat[i] += sign * eps
                moved.append(float(run_loss(data, label, *w.values()).numpy()))
            fd = (moved[0] - moved[1]) / (2 * eps)
            worst = max(worst, abs(fd - g.flat[i]) / max(abs(fd), 1e-3))
    return worst


def main(epochs=8, verbose=True):
    batch, in_dim, hidden, classes = 32, 10, 16, 3
    loss, weights = mlp_loss(batch, in_dim, hidden, classes, seed=0)
    loss = run_infer_type(loss)

    # 1. the higher-order gradient: backpropagators live in closures stored in references
    ho = relay.transform.gradient(loss)
    assert {"RefCreate", "Function"} <= kinds(ho.body)
    # 2. partial evaluation runs the static part (every closure call and reference access),
    #    leaving the first-order program; the zero-filled accumulators go too
    cleaned = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.PartialEvaluate(),
        relay.transform.LazyGradientInit(), relay.transform.DeadCodeElimination(),
        relay.transform.InferType()])(relay.IRModule.from_expr(ho))["main"]
    assert not {"RefCreate", "Function"} & kinds(cleaned.body)
    fo = relay.transform.gradient(loss, mode="first_order")

    x, y = synthetic_classification(256, (in_dim,), classes, seed=0)
    args = [x[:batch], y[:batch], *weights.values()]
    a = relay.create_executor("graph", mod=relay.IRModule.from_expr(cleaned)).evaluate()(*args)
    b = relay.create_executor("graph", mod=relay.IRModule.from_expr(fo)).evaluate()(*args)
    for ga, gb in zip(a[1], b[1], strict=True):
        np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-4, atol=1e-6)
    if verbose:
        print(f"higher-order gradient after PartialEvaluate: {len(str(cleaned).splitlines())} "
              f"lines, same gradients as first_order")
    worst = finite_difference_check(batch, in_dim, hidden, classes, x, y)
    assert worst < 1e-6, worst
    if verbose:
        print(f"first_order vs central finite differences (float64): largest relative "
              f"difference {worst:.1e}")

    # 3. SGD on the compiled first-order gradient
    batches = [{"data": x[i:i + batch], "label": y[i:i + batch]} for i in range(0, 256, batch)]
    trained, losses = train_sgd(loss, weights, batches, lr=0.5, epochs=epochs)
    if verbose:
        for e in range(epochs):
            print(f"epoch {e}: mean loss {np.mean(losses[e * 8:(e + 1) * 8]):.4f}")
    return losses


if __name__ == "__main__":
    small = "--small" in sys.argv or os.environ.get("RELAY_TVM_TUTORIAL_SMALL") == "1"
    main(epochs=3 if small else 8)
