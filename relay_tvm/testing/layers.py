"""Layer helpers that create their own named parameters (tvm.relay.testing.layers)."""

from __future__ import annotations

from .. import op
from ..ir.expr import var


def batch_norm_infer(data, gamma=None, beta=None, moving_mean=None, moving_var=None, **kwargs):
    """``nn.batch_norm(...)[0]`` with parameters ``<name>_gamma``, ``_beta``, ``_moving_mean``,
    ``_moving_var`` (unannotated: inference gives them shape ``(C,)``)."""
    name = kwargs.pop("name")
    gamma = gamma if gamma is not None else var(name + "_gamma")
    beta = beta if beta is not None else var(name + "_beta")
    moving_mean = moving_mean if moving_mean is not None else var(name + "_moving_mean")
    moving_var = moving_var if moving_var is not None else var(name + "_moving_var")
    return op.nn.batch_norm(data, gamma, beta, moving_mean, moving_var, **kwargs)[0]


def conv2d(data, weight=None, **kwargs):
    """``nn.conv2d`` with weight ``<name>_weight`` (give ``channels`` and ``kernel_size``)."""
    name = kwargs.pop("name")
    if weight is None:
        weight = var(name + "_weight")
    return op.nn.conv2d(data, weight, **kwargs)


def conv3d(data, weight=None, **kwargs):
    """``nn.conv3d`` with weight ``<name>_weight`` (give ``channels`` and ``kernel_size``)."""
    name = kwargs.pop("name")
    if weight is None:
        weight = var(name + "_weight")
    return op.nn.conv3d(data, weight, **kwargs)


def conv2d_transpose(data, weight=None, **kwargs):
    name = kwargs.pop("name")
    if weight is None:
        weight = var(name + "_weight")
    return op.nn.conv2d_transpose(data, weight, **kwargs)


def dense_add_bias(data, weight=None, bias=None, units=None, **kwargs):
    """``nn.dense`` + ``nn.bias_add`` with parameters ``<name>_weight`` and ``<name>_bias``."""
    name = kwargs.pop("name")
    if weight is None:
        weight = var(name + "_weight")
    if bias is None:
        bias = var(name + "_bias")
    out = op.nn.dense(data, weight, units=units, **kwargs)
    return op.nn.bias_add(out, bias, axis=-1)


__all__ = ["batch_norm_infer", "conv2d", "conv3d", "conv2d_transpose", "dense_add_bias"]
