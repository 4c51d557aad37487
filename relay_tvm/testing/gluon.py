"""Gluon model-zoo networks with seeded random weights, for benchmarks and tests that compare
relay_tvm with MXNet (no download: ``pretrained=False``).

Weights: MXNet's Xavier initializer (``magnitude=2``) after ``mx.random.seed(seed)``; the
BatchNorm statistics and affine parameters are then drawn from NumPy (running variances and
gammas uniform in [0.5, 1.5], running means and betas in [-0.2, 0.2]) so that the folded
batch norms are not identities and comparisons mean something.
"""

from __future__ import annotations

import numpy as np


def zoo_image_size(name: str) -> int:
    """The input height and width a Gluon model-zoo network ``name`` is built for: 299 for
    Inception-v3 (any name containing ``"inception"``, case-insensitive), else 224."""
    return 299 if "inception" in name.lower() else 224


def random_batch_norm(net, seed: int = 0) -> None:
    """Draw the BatchNorm statistics and affine parameters of Gluon block ``net`` (its
    parameters must be initialized) as described in the module docstring."""
    import mxnet as mx

    rng = np.random.default_rng(seed)
    for name, p in net.collect_params().items():
        if name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape).astype("float32")))
        elif name.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.2, 0.2, p.shape).astype("float32")))


def random_zoo_model(name: str, shape: tuple, seed: int = 0):
    """``(net, x)``: Gluon model-zoo network ``name`` (e.g. ``"resnet18_v1"``), not hybridized,
    with seeded random weights, and an input ``x`` of ``shape`` (NCHW float32, uniform in
    [-1, 1], seeded) it has run once on (which fixes the deferred parameter shapes).

    Raises:
        ValueError: MXNet's, for a name the model zoo lacks.
    """
    import mxnet as mx

    mx.random.seed(seed)
    net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    x = np.random.default_rng(seed).uniform(-1, 1, shape).astype("float32")
    net(mx.nd.array(x))
    random_batch_norm(net, seed)
    return net, x


__all__ = ["random_zoo_model", "random_batch_norm", "zoo_image_size"]
