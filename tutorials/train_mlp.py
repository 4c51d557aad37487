"""Training an MLP with Relay's automatic differentiation.

Relay differentiates programs by transforming them (the Relay paper, section 4.2):
``relay.transform.gradient`` turns ``fn(x1..xn) -> loss`` into ``fn(x1..xn) -> (loss, (dx1..dxn))``.
This tutorial

1. builds a two-layer perceptron with a softmax cross-entropy loss,
2. differentiates it two ways: ``higher_order`` (closures and references, any program) cleaned up
   by ``PartialEvaluate`` + ``LazyGradientInit`` + ``DeadCodeElimination``, and ``first_order``
   (dataflow programs), and checks they agree,
3. trains it with plain SGD on synthetic data using the compiled gradient
   (``relay_tvm.testing.train_sgd``) and prints the loss as it falls.

Run: ``python tutorials/train_mlp.py`` (8 epochs; ``--small`` / ``RELAY_TVM_TUTORIAL_SMALL=1``: 3).
What you should see: ``same gradients as first_order`` and a mean loss per epoch that falls.
"""

import os
import sys

import numpy as np

import relay_tvm as relay
from relay_tvm.testing import mlp_loss, run_infer_type, synthetic_classification, train_sgd


def kinds(expr):
    seen = set()
    relay.analysis.post_order_visit(expr, lambda e: seen.add(type(e).__name__))
    return seen


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
