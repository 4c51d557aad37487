"""Training end to end: stochastic gradient descent on a Relay loss function, its gradient built by
``transform.gradient`` and compiled once.

``train_sgd`` takes any loss function ``fn(inputs..., weights...) -> scalar``; ``mlp_loss`` and
``lenet_loss`` build the two classic examples (softmax cross-entropy over one-hot labels) and
``synthetic_classification`` makes a learnable data set (labels from a fixed random linear map).
"""

from __future__ import annotations

import numpy as np

from ..errors import RelayError


def _xavier(shape, rng):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    fan_out = shape[0]
    bound = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-bound, bound, shape)


def _cross_entropy(logits, labels, batch, dtype):
    """Mean softmax cross-entropy: ``-sum(labels * log_softmax(logits)) / batch``."""
    from .. import op
    from ..ir.expr import const

    ll = op.nn.log_softmax(logits)
    return op.negative(op.divide(op.sum(op.multiply(labels, ll)), const(float(batch), dtype)))


def mlp_loss(batch, in_dim, hidden, classes, dtype="float32", seed=0):
    """A two-layer perceptron with a softmax cross-entropy loss.

    Returns:
        ``(func, weights)``: ``func(data: (batch, in_dim), label: (batch, classes) one-hot,
        w1: (hidden, in_dim), b1: (hidden,), w2: (classes, hidden), b2: (classes,)) -> loss``
        (a scalar of ``dtype``) and Xavier-initialized ``weights`` by name.
    """
    from .. import op
    from ..ir.expr import Function, var

    rng = np.random.default_rng(seed)
    data, label = var("data", shape=(batch, in_dim), dtype=dtype), var(
        "label", shape=(batch, classes), dtype=dtype)
    shapes = {"w1": (hidden, in_dim), "b1": (hidden,), "w2": (classes, hidden), "b2": (classes,)}
    w = {n: var(n, shape=s, dtype=dtype) for n, s in shapes.items()}
    h = op.nn.relu(op.nn.bias_add(op.nn.dense(data, w["w1"]), w["b1"]))
    logits = op.nn.bias_add(op.nn.dense(h, w["w2"]), w["b2"])
    func = Function([data, label, *w.values()], _cross_entropy(logits, label, batch, dtype))
    weights = {n: (_xavier(s, rng) if n.startswith("w") else np.zeros(s)).astype(dtype)
               for n, s in shapes.items()}
    return func, weights


def lenet_loss(batch, classes=10, image=12, dtype="float32", seed=0):
    """A small LeNet (conv 5x5 ×6 → relu → max-pool 2 → conv 3x3 ×8 → relu → dense) on
    ``(batch, 1, image, image)`` NCHW images with a softmax cross-entropy loss.

    Returns:
        ``(func, weights)`` as :func:`mlp_loss`; ``func(data, label, c1, c2, w, b)``.
    """
    from .. import op
    from ..ir.expr import Function, var

    rng = np.random.default_rng(seed)
    s1 = (image - 4) // 2
    s2 = s1 - 2
    shapes = {"c1": (6, 1, 5, 5), "c2": (8, 6, 3, 3), "w": (classes, 8 * s2 * s2),
              "b": (classes,)}
    data = var("data", shape=(batch, 1, image, image), dtype=dtype)
    label = var("label", shape=(batch, classes), dtype=dtype)
    w = {n: var(n, shape=s, dtype=dtype) for n, s in shapes.items()}
    y = op.nn.relu(op.nn.conv2d(data, w["c1"], channels=6, kernel_size=(5, 5)))
    y = op.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    y = op.nn.relu(op.nn.conv2d(y, w["c2"], channels=8, kernel_size=(3, 3)))
    logits = op.nn.bias_add(op.nn.dense(op.nn.batch_flatten(y), w["w"]), w["b"])
    func = Function([data, label, *w.values()], _cross_entropy(logits, label, batch, dtype))
    weights = {n: (_xavier(s, rng) if n != "b" else np.zeros(s)).astype(dtype)
               for n, s in shapes.items()}
    return func, weights


def synthetic_classification(n, shape, classes, dtype="float32", seed=0):
    """``(inputs (n, *shape), one-hot labels (n, classes))``: Gaussian inputs labelled by the
    argmax of a fixed random linear map, so a model can learn them."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, *shape)).astype(dtype)
    proj = rng.standard_normal((int(np.prod(shape)), classes))
    labels = np.argmax(x.reshape(n, -1) @ proj, axis=1)
    return x, np.eye(classes, dtype=dtype)[labels]


def train_sgd(loss_func, weights, inputs, lr=0.1, epochs=1, mode="first_order",
              executor="graph", target="llvm"):
    """Minimize ``loss_func`` by plain SGD: ``w -= lr * dloss/dw`` after each batch.

    Args:
        loss_func: ``fn(inputs..., weights...) -> scalar``; parameters named in ``weights`` are
            trained, the others are fed from ``inputs``.
        weights: initial values by parameter name (NumPy arrays; not modified).
        inputs: a list of batches, each a dict from input parameter name to array.
        lr: the learning rate; epochs: passes over ``inputs``.
        mode: the ``gradient`` mode; executor: ``"graph"`` (first_order), ``"vm"`` or
            ``"debug"``.

    Returns:
        ``(weights, losses)``: the trained weights and the loss of every step (before its
        update).

    Raises:
        RelayError: a batch lacks an input, or a weight name is not a parameter.
    """
    from ..ir.module import IRModule
    from ..runtime.executor import create_executor
    from ..transform.gradient import gradient
    from . import run_infer_type

    func = run_infer_type(loss_func)
    names = [p.name_hint for p in func.params]
    unknown = sorted(set(weights) - set(names))
    if unknown:
        raise RelayError(f"train_sgd: weights {unknown} are not parameters of the loss {names}")
    grad = gradient(func, mode=mode)
    run = create_executor(executor, mod=IRModule.from_expr(grad), target=target).evaluate()
    w = {k: np.array(v) for k, v in weights.items()}
    losses = []
    for _ in range(epochs):
        for batch in inputs:
            missing = [n for n in names if n not in w and n not in batch]
            if missing:
                raise RelayError(f"train_sgd: batch lacks inputs {missing}")
            args = [w[n] if n in w else batch[n] for n in names]
            loss, grads = run(*args)
            losses.append(float(np.asarray(loss.numpy())))
            for n, g in zip(names, grads):
                if n in w:
                    w[n] = (w[n] - lr * g.numpy()).astype(w[n].dtype)
    return w, losses


__all__ = ["train_sgd", "mlp_loss", "lenet_loss", "synthetic_classification"]
