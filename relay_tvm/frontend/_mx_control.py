"""MXNet control flow: ``_cond``, ``_foreach``, ``_while_loop`` to Relay ``If`` and recursion.

These are the subgraph operators that ``mx.sym.contrib.cond / foreach / while_loop`` (and
``F.contrib.*`` in hybridized Gluon blocks) put into a symbol; their bodies are the node's
``subgraphs``. Semantics are MXNet 1.9.1's (``src/operator/control_flow.cc`` and the
``mxnet.symbol.contrib`` docs):

- a node's inputs are matched to its subgraphs' variables by the ``*_locs`` attributes;
- ``_cond``: subgraph 0 (the predicate) yields a one-element tensor, true when non-zero; then
  subgraph 1 or 2 runs;
- ``_foreach``: inputs are ``[data..., states..., remaining...]``; the body runs once per slice
  of the data along axis 0 and yields ``num_out_data`` outputs (stacked on a new axis 0) and the
  new states; the node outputs the stacked outputs then the final states;
- ``_while_loop``: the body runs while ``step < max_iterations`` and the predicate holds;
  its per-step outputs are stacked into tensors of ``max_iterations`` rows. MXNet leaves the
  rows after the last step uninitialized (``ndarray.empty``); here they are zeros.

Each node becomes ``(fn (inputs...) { ... })(inputs...)``: the bodies see only that function's
parameters, and a loop is a recursive local function (``let %loop = fn (i, state..., buffers...)
{ if (...) { %loop(i + 1, ...) } else { (buffers..., state...) } }``) whose step counter ``i``
indexes the data (``take``) and selects the row of each output buffer written at that step
(``where(arange == i, output, buffer)``). These programs run on the interpreter and the VM.
With ``from_mxnet(..., unroll_foreach=True)`` a ``_foreach`` (whose length is static) becomes
one copy of its body per step instead, plain dataflow that the graph executor also runs.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Function, If, Let, Tuple, TupleGetItem, Var, const
from ..ir.types import TensorType, TupleType
from ._mx_util import R
from .common import type_of


def _locs(a, key):
    return list(a.get_tuple(key, ()) or ())


def _params(ins, c):
    """One typed parameter per node input (the function the node becomes)."""
    out = []
    for k, x in enumerate(ins):
        t = type_of(x)
        if not isinstance(t, TensorType):
            raise c.error(f"input {k} is a {t}, expected a tensor")
        out.append(Var(f"{c.node_name}_in{k}", t))
    return out


def _as_bool(x, c, what):
    """MXNet's ``as_bool_scalar``: a one-element tensor, true when it is non-zero."""
    t = type_of(x)
    shape = tuple(int(d) for d in t.shape)
    if int(np.prod(shape)) != 1:
        raise c.error(f"the {what} must be a one-element tensor, got shape {shape}")
    x = R("reshape")(x, newshape=())
    if t.dtype == "bool":
        return x
    return R("not_equal")(x, const(np.zeros((), t.dtype), t.dtype))


def _tensor_type(e, c, what):
    t = type_of(e)
    if not isinstance(t, TensorType):
        raise c.error(f"{what} is a {t}, expected a tensor")
    return t


def _same_type(new, old, c, what):
    tn, to = _tensor_type(new, c, what), old
    if tuple(tn.shape) != tuple(to.shape) or tn.dtype != to.dtype:
        raise c.error(f"{what} changes from {tuple(to.shape)} {to.dtype} to "
                      f"{tuple(tn.shape)} {tn.dtype}; MXNet requires the same shape and dtype "
                      f"in every iteration")


def _wrap(params, body, ins, n):
    """``(fn (params) { body })(ins)`` split into its ``n`` outputs."""
    call = Call(Function(params, body), list(ins))
    return [call] if n == 1 else [TupleGetItem(call, k) for k in range(n)]


def _tuple(xs):
    return xs[0] if len(xs) == 1 else Tuple(list(xs))


def cond(ins, a, c):
    """``_cond``: ``if (pred(...) != 0) { then(...) } else { else(...) }``."""
    n = a.get_int("num_outputs")
    p = _params(ins, c)
    locs = [_locs(a, k) for k in ("cond_input_locs", "then_input_locs", "else_input_locs")]
    for key, ls in zip(("cond", "then", "else"), locs):
        if any(not 0 <= i < len(ins) for i in ls):
            raise c.error(f"{key}_input_locs={ls} refers past the node's {len(ins)} inputs")
    if len(c.subgraphs) != 3:
        raise c.error(f"expected 3 subgraphs (condition, then, else), got {len(c.subgraphs)}")
    pred = c.convert_subgraph(0, [p[i] for i in locs[0]])
    if len(pred) != 1:
        raise c.error(f"the condition subgraph has {len(pred)} outputs, expected 1")
    then = c.convert_subgraph(1, [p[i] for i in locs[1]])
    other = c.convert_subgraph(2, [p[i] for i in locs[2]])
    for what, outs in (("then", then), ("else", other)):
        if len(outs) != n:
            raise c.error(f"the {what} branch has {len(outs)} outputs, num_outputs={n}")
    for k, (x, y) in enumerate(zip(then, other)):
        tx, ty = _tensor_type(x, c, f"then output {k}"), _tensor_type(y, c, f"else output {k}")
        if tuple(tx.shape) != tuple(ty.shape) or tx.dtype != ty.dtype:
            raise c.error(f"output {k} is {tuple(tx.shape)} {tx.dtype} in the then branch but "
                          f"{tuple(ty.shape)} {ty.dtype} in the else branch")
    body = If(_as_bool(pred[0], c, "condition"), _tuple(then), _tuple(other))
    return _wrap(p, body, ins, n)


def _write_row(buf, row, i, rows):
    """``buf`` with row ``i`` (an int32 scalar expression) replaced by ``row``."""
    ndim = len(type_of(row).shape)
    idx = np.arange(rows, dtype="int32").reshape((rows,) + (1,) * ndim)
    mask = R("equal")(const(idx, "int32"), i)
    return R("where")(mask, R("expand_dims")(row, axis=0), buf)


def _loop(name, i0, state0, out_rows, step, test):
    """A counted loop as a recursive local function.

    ``step(i, state) -> (outputs, new_state)`` is one iteration; ``test(i, state)`` returns
    a list of boolean scalar conditions that must all hold to run it (tested in order, each
    only when the ones before hold). Outputs of each step go to row ``i`` of zero-initialized
    buffers of ``out_rows`` rows. Returns ``Tuple(buffers..., final state...)``.
    """
    i = Var(f"{name}_i", TensorType((), "int32"))
    state = [Var(f"{name}_s{k}", type_of(s)) for k, s in enumerate(state0)]
    outs, new_state = step(i, state)
    bufs_t = []
    for o in outs:
        t = type_of(o)
        bufs_t.append(TensorType((out_rows,) + tuple(t.shape), t.dtype))
    bufs = [Var(f"{name}_out{k}", t) for k, t in enumerate(bufs_t)]
    new_bufs = [_write_row(b, o, i, out_rows) for b, o in zip(bufs, outs)]
    loop = Var(f"{name}_loop")
    one = const(np.int32(1), "int32")
    body = Call(loop, [R("add")(i, one)] + list(new_state) + new_bufs)
    for cnd in reversed(test(i, state)):
        body = If(cnd, body, Tuple(bufs + state))
    ret = TupleType(bufs_t + [s.type_annotation for s in state])
    fn = Function([i] + state + bufs, body, ret)
    init = [i0] + list(state0) + [R("zeros")(tuple(t.shape), t.dtype) for t in bufs_t]
    return Let(loop, fn, Call(loop, init))


def foreach(ins, a, c):
    """``_foreach``: a scan over axis 0 of the data with a loop state."""
    data_locs, state_locs = _locs(a, "in_data_locs"), _locs(a, "in_state_locs")
    remain_locs = _locs(a, "remain_locs")
    n_out, n = a.get_int("num_out_data"), a.get_int("num_outputs")
    nd, ns = len(data_locs), len(state_locs)
    if len(ins) != nd + ns + len(remain_locs):
        raise c.error(f"has {len(ins)} inputs, but its attributes describe {nd} data, {ns} "
                      f"states and {len(remain_locs)} other inputs")
    if n != n_out + ns:
        raise c.error(f"num_outputs={n} is not num_out_data={n_out} + {ns} states")
    if nd == 0:
        raise c.error("has no data to iterate over")
    p = _params(ins, c)
    lengths = {int(p[k].type_annotation.shape[0]) if p[k].type_annotation.shape else None
               for k in range(nd)}
    if len(lengths) != 1 or None in lengths or 0 in lengths:
        raise c.error(f"the data inputs must have the same non-zero length along axis 0, got "
                      f"shapes {[tuple(p[k].type_annotation.shape) for k in range(nd)]}")
    steps = lengths.pop()
    n_args = nd + ns + len(remain_locs)

    def step(i, state, src=p):
        args = [None] * n_args
        for k, loc in enumerate(data_locs):
            args[loc] = R("take")(src[k], i, axis=0)
        for k, loc in enumerate(state_locs):
            args[loc] = state[k]
        for k, loc in enumerate(remain_locs):
            args[loc] = src[nd + ns + k]
        if any(x is None for x in args) or len(set(data_locs + state_locs + remain_locs)) != n_args:
            raise c.error(f"in_data_locs={data_locs}, in_state_locs={state_locs} and "
                          f"remain_locs={remain_locs} are not a permutation of 0..{n_args - 1}")
        heads = c.convert_subgraph(0, args)
        if len(heads) != n:
            raise c.error(f"the body has {len(heads)} outputs, num_outputs={n}")
        for k, (new, old) in enumerate(zip(heads[n_out:], state)):
            _same_type(new, type_of(old), c, f"loop state {k}")
        return heads[:n_out], heads[n_out:]

    if c.options.get("unroll_foreach"):
        return _unrolled(ins, nd, ns, steps, n_out, step)

    def test(i, state):
        return [R("less")(i, const(np.int32(steps), "int32"))]

    res = _loop(c.node_name, const(np.int32(0), "int32"), p[nd:nd + ns], steps, step, test)
    return _wrap(p, _tuple([TupleGetItem(res, k) for k in range(n)]), ins, n)


def _unrolled(ins, nd, ns, steps, n_out, step):
    """``_foreach`` as dataflow: the body converted once per step on the node's inputs
    directly, the step index a constant; outputs stacked along a new axis 0."""
    state = list(ins[nd:nd + ns])
    outs = []
    for t in range(steps):
        o, state = step(const(np.int32(t), "int32"), state, list(ins))
        outs.append(o)
    return [R("stack")([o[k] for o in outs], axis=0) for k in range(n_out)] + list(state)


def while_loop(ins, a, c):
    """``_while_loop``: ``while step < max_iterations and cond(vars): outs, vars = func(vars)``."""
    cond_locs, func_locs = _locs(a, "cond_input_locs"), _locs(a, "func_input_locs")
    var_locs = _locs(a, "func_var_locs")
    max_it = a.get_int("max_iterations")
    n_out, n = a.get_int("num_out_data"), a.get_int("num_outputs")
    if max_it is None or max_it < 1:
        raise c.error(f"max_iterations={max_it}: expected a positive number")
    if n != n_out + len(var_locs):
        raise c.error(f"num_outputs={n} is not num_out_data={n_out} + {len(var_locs)} loop "
                      f"variables")
    if any(not 0 <= k < len(func_locs) for k in var_locs):
        raise c.error(f"func_var_locs={var_locs} refers past func_input_locs={func_locs}")
    var_inputs = [func_locs[k] for k in var_locs]
    if len(set(var_inputs)) != len(var_inputs):
        raise c.error(f"two loop variables are the same input ({var_inputs}); pass copies")
    for key, ls in (("cond", cond_locs), ("func", func_locs)):
        if any(not 0 <= k < len(ins) for k in ls):
            raise c.error(f"{key}_input_locs={ls} refers past the node's {len(ins)} inputs")
    p = _params(ins, c)

    def env(state):
        return lambda k: state[var_inputs.index(k)] if k in var_inputs else p[k]

    def step(i, state):
        heads = c.convert_subgraph(1, [env(state)(k) for k in func_locs])
        if len(heads) != n:
            raise c.error(f"the body has {len(heads)} outputs, num_outputs={n}")
        for k, (new, old) in enumerate(zip(heads[n_out:], state)):
            _same_type(new, old.type_annotation, c, f"loop variable {k}")
        return heads[:n_out], heads[n_out:]

    def test(i, state):
        pred = c.convert_subgraph(0, [env(state)(k) for k in cond_locs])
        if len(pred) != 1:
            raise c.error(f"the condition subgraph has {len(pred)} outputs, expected 1")
        return [R("less")(i, const(np.int32(max_it), "int32")),
                _as_bool(pred[0], c, "loop condition")]

    res = _loop(c.node_name, const(np.int32(0), "int32"), [p[k] for k in var_inputs], max_it,
                step, test)
    return _wrap(p, _tuple([TupleGetItem(res, k) for k in range(n)]), ins, n)


CONTROL_CONVERTERS = {"_cond": cond, "_foreach": foreach, "_while_loop": while_loop}

__all__ = ["CONTROL_CONVERTERS"]
