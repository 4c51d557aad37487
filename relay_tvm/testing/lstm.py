"""An unrolled LSTM (Hochreiter & Schmidhuber 1997) as tvm.relay.testing.lstm builds it: per
step ``gates = W_i x + b_i + W_h h + b_h``, split into input / forget / transform / output
gates; ``c' = f*c + i*tanh(t)``, ``h' = o*tanh(c')``. The output is the last hidden state."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..ir.expr import Function, var
from .init import create_workload
from .layers import dense_add_bias


def lstm_cell(x, h, c, num_hidden, name):
    i2h = dense_add_bias(x, units=4 * num_hidden, name=name + "_i2h")
    h2h = dense_add_bias(h, units=4 * num_hidden, name=name + "_h2h")
    gates = op.split(op.add(i2h, h2h), 4, axis=1)
    in_gate = op.sigmoid(gates[0])
    forget_gate = op.sigmoid(gates[1])
    in_transform = op.tanh(gates[2])
    out_gate = op.sigmoid(gates[3])
    next_c = op.add(op.multiply(forget_gate, c), op.multiply(in_gate, in_transform))
    next_h = op.multiply(out_gate, op.tanh(next_c))
    return next_h, next_c


def get_net(iterations, num_hidden, batch_size=1, dtype="float32"):
    data = var("data", shape=(iterations, batch_size, num_hidden), dtype=dtype)
    steps = op.split(data, iterations, axis=0)
    h = op.zeros((batch_size, num_hidden), dtype)
    c = h
    for t in range(iterations):
        x = op.reshape(steps[t], (batch_size, num_hidden))
        h, c = lstm_cell(x, h, c, num_hidden, f"lstm_t{t}")
    return Function(free_vars(h), h)


def get_workload(iterations=4, num_hidden=16, batch_size=1, dtype="float32"):
    """``(mod, params)`` of an LSTM unrolled ``iterations`` times over input ``data`` of shape
    ``(iterations, batch_size, num_hidden)``."""
    return create_workload(get_net(iterations, num_hidden, batch_size, dtype))
