"""Kernels over a dynamic batch: the scheduled batch-1 kernel inside a loop over the batch.

The schedule templates (:mod:`relay_tvm.backend.schedule.cpu`) need static extents; a kernel
with a symbolic dimension gets the generic schedule, which for a convolution is orders of
magnitude slower. Most kernels of a model with a dynamic batch (``relay.Any()`` as the first
dimension of the input) are *batch-wise*: every output row ``b`` depends only on input rows
``b`` (convolutions, pooling, dense, elementwise operators, flattening that keeps the rows).
Such a kernel is compiled once for batch 1 with the full template, then wrapped into a PrimFunc
whose dynamic buffers have a symbolic first dimension ``n``: a loop over ``b < n`` declares the
batch-1 buffers as views of row ``b`` (``DeclBuffer`` with ``address_of(buf[b, 0, ...])``) and
runs the batch-1 body. Batch 1 then runs exactly the static kernel; batch ``n`` runs it ``n``
times (per-shape buckets with one bucket, made general by the loop). Such a kernel needs no
shape function: every output is ``(n, static...)``, and the VM builds that shape from its
input's first dimension (``vm.builtin.match_shape`` / ``make_shape``).

A kernel with several dynamic inputs follows Relay's (NumPy's) broadcasting along the batch
axis: an input whose first dimension is 1 at run time gives its row 0 to every ``b``. Such a
kernel is looped only when that is what its operators mean (:func:`broadcasts_rows`: every
operator that meets two dynamic values broadcasts them, and its one output depends on every
dynamic input); each dynamic input then has its own row count ``n_i``, the output's ``n`` is
their broadcast (a tiny shape function the VM runs, :func:`batch_shape_func`), and the kernel
and its shape function check that every ``n_i`` is ``n`` or 1, naming the operator.

Whether a kernel is batch-wise is decided per operator from its attributes
(:func:`batch_wise`): anything not known to be batch-wise keeps the symbolic kernel.
"""

from __future__ import annotations

from ..ir.expr import Call, Function, Var
from ..ir.types import AnyDim, TensorType, TupleType
from .partition import post_order

# operators with a data layout whose first axis is the batch when the layout starts with "N"
_WINDOW = {"nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.contrib_conv2d_NCHWc",
           "nn.contrib_depthwise_conv2d_NCHWc", "nn.max_pool1d", "nn.max_pool2d",
           "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d",
           "nn.global_max_pool2d", "nn.global_avg_pool2d", "nn.adaptive_avg_pool2d",
           "nn.adaptive_max_pool2d", "nn.upsampling", "nn.lrn", "nn.conv2d_transpose",
           "nn.contrib_conv2d_winograd_without_weight_transform"}
_ROWS = {"reshape", "nn.batch_flatten", "squeeze", "expand_dims", "reshape_like"}
_REDUCE = {"sum", "mean", "max", "min", "prod", "argmax", "argmin", "variance", "all", "any"}
_AXIS = {"nn.softmax", "nn.log_softmax"}


def _flat(ty) -> list:
    if isinstance(ty, TupleType):
        out = []
        for f in ty.fields:
            out.extend(_flat(f))
        return out
    return [ty]


def _batch_dynamic(t) -> bool:
    """``t`` is ``(Any, static...)``."""
    return (isinstance(t, TensorType) and len(t.shape) >= 1 and isinstance(t.shape[0], AnyDim)
            and all(isinstance(d, int) for d in t.shape[1:]))


def _static(t) -> bool:
    return isinstance(t, TensorType) and all(isinstance(d, int) for d in t.shape)


def _prod(shape) -> int:
    p = 1
    for d in shape:
        p *= int(d)
    return p


def _axes(attrs, ndim):
    axis = getattr(attrs, "axis", None)
    if axis is None:
        return None
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    return [int(a) % ndim if ndim else 0 for a in axes]


def _call_batch_wise(node) -> bool:
    args = [t for a in node.args for t in _flat(a.checked_type)]
    outs = _flat(node.checked_type)
    if not all(_static(t) or _batch_dynamic(t) for t in args + outs):
        return False
    dyn_args = [t for t in args if not _static(t)]
    if not dyn_args:
        return True  # constants only
    if not all(_batch_dynamic(t) for t in outs):
        return False  # a dynamic input reduced to a static output mixes the rows
    op = node.op
    name = getattr(op, "name", "")
    a = node.attrs
    rank = len(outs[0].shape)
    # declared by the operator at registration (``register_op(batch_rows=...)``): being
    # elementwise or broadcasting is not enough (a loop of the batch-1 kernel gave wrong values
    # for repeat / tile along axis 0 and trilu's mask, a type error for bias_add / prelu on
    # axis 0, whose per-channel operand has one value per row)
    rows = getattr(op, "batch_rows", None)
    if callable(rows):
        rows = rows(a, rank)
    if rows:
        # a static operand must broadcast along the batch axis: of lower rank, or size 1 there
        static_ok = all(len(t.shape) < rank or t.shape[0] == 1 for t in args if _static(t))
        return static_ok and all(len(t.shape) == rank for t in dyn_args)
    if name in _WINDOW:
        layout = getattr(a, "data_layout", None) or getattr(a, "layout", None) or "NCHW"
        return str(layout).startswith("N") and len(dyn_args) == 1 and \
            node.args[0].checked_type is dyn_args[0]
    if name == "nn.dense" or name == "nn.matmul":
        return len(dyn_args) == 1 and node.args[0].checked_type is dyn_args[0]
    if name in _ROWS:
        return len(dyn_args) == 1 and _prod(dyn_args[0].shape[1:]) == _prod(outs[0].shape[1:])
    if name in _REDUCE or name in _AXIS:
        axes = _axes(a, len(dyn_args[0].shape))
        return axes is not None and 0 not in axes and len(dyn_args) == 1
    if name == "layout_transform":
        return str(a.src_layout).startswith("N") and str(a.dst_layout).startswith("N")
    if name == "nn.pad":
        return tuple(int(x) for x in a.pad_width[0]) == (0, 0) and len(dyn_args) == 1
    return False


def _dynamic(ty) -> bool:
    return any(not _static(t) for t in _flat(ty))


def broadcasts_rows(func: Function) -> bool:
    """Whether the batch loop of ``func`` (several dynamic parameters) may broadcast a
    parameter whose batch size is 1 against the others and stay what its operators mean: its
    output is one tensor, every dynamic parameter is used, and every operator that meets two
    or more dynamic values broadcasts them (pattern kBroadcast, not a ``*_like`` operator,
    whose output takes one operand's shape: ``cast_like((1, 4), (5, 4))`` is (1, 4))."""
    from ..op.registry import Op, OpPattern

    if not all(isinstance(p.checked_type, TensorType) for p in func.params):
        return False
    if not isinstance(func.body.checked_type, TensorType):
        return False
    seen = set()
    for node in post_order(func.body):
        seen.add(id(node))
        if isinstance(node, Call) and isinstance(node.op, Op):
            if sum(_dynamic(a.checked_type) for a in node.args) < 2:
                continue
            name = node.op.name
            if int(node.op.pattern) != int(OpPattern.BROADCAST) or name.endswith("_like"):
                return False
    return all(id(p) in seen for p in func.params if _dynamic(p.checked_type))


def batch_wise(func: Function) -> bool:
    """Whether primitive function ``func`` can run as its batch-1 kernel in a loop: every
    dynamic type is ``(Any, static...)``, at least one output is dynamic, every operator
    keeps the rows of the batch apart, and with several dynamic parameters, the kernel may
    broadcast a batch of 1 (:func:`broadcasts_rows`; otherwise the symbolic kernel, whose
    shape function follows each operator's own rule, serves it)."""
    params = [t for p in func.params for t in _flat(p.checked_type)]
    outs = _flat(func.body.checked_type)
    if not all(_static(t) or _batch_dynamic(t) for t in params + outs):
        return False
    if not any(_batch_dynamic(t) for t in outs) or not any(_batch_dynamic(t) for t in params):
        return False
    if not all(_batch_dynamic(t) for t in outs):
        return False
    for node in post_order(func.body):
        if isinstance(node, Call) and not isinstance(node.op, (Function, Var)):
            if not _call_batch_wise(node):
                return False
        elif isinstance(node, Call):
            return False
    if sum(_batch_dynamic(t) for t in params) > 1:
        return broadcasts_rows(func)
    return True


def batch_one(func: Function) -> Function:
    """``func`` with every dynamic batch dimension of its parameters set to 1, re-typed."""
    from ..ir.expr import bind, var
    from ..typing.infer import infer_expr

    def one(t):
        if isinstance(t, TupleType):
            return TupleType([one(f) for f in t.fields])
        if _batch_dynamic(t):
            return TensorType((1, *t.shape[1:]), t.dtype)
        return t

    new_params = [var(p.name_hint, one(p.checked_type)) for p in func.params]
    body = bind(func.body, dict(zip(func.params, new_params)))
    out = Function(new_params, body, None, func.type_params, func.attrs)
    infer_expr(out)
    return out


def wrap_batch(prim, dynamic: list, n=None, broadcast=()):
    """The batch-1 PrimFunc ``prim`` (scheduled) as a kernel over ``n`` rows of the buffers at
    the parameter indices ``dynamic`` (see the module docstring).

    Args:
        prim: the scheduled batch-1 kernel.
        dynamic: indices of its parameters (inputs and outputs) that get a batch dimension.
        n: the batch variable (a fresh ``int64`` var when None).
        broadcast: indices in ``dynamic`` of inputs with their own row count ``n_i``, which
            must be ``n`` or 1 at run time (row ``b`` reads row 0 when it is 1); the caller
            adds the check (:func:`broadcast_checks`).

    Returns:
        ``(PrimFunc, n, rows)``: the wrapped kernel, its batch variable, and ``index ->
        n_i`` for the ``broadcast`` inputs.
    """
    import tvm
    from tvm import tirx

    n = n if n is not None else tirx.Var("n", "int64")
    b = tirx.Var("b", "int64")
    zero = tirx.const(0, "int64")
    params, decls, own = [], [], {}
    for i, buf in enumerate(prim.params):
        if i not in dynamic:
            params.append(buf)
            continue
        rows_n, row = n, b
        if i in broadcast:
            rows_n = own[i] = tirx.Var(f"n_{i}", "int64")
            row = tirx.Select(rows_n == tirx.const(1, "int64"), zero, b)
        rows = tirx.decl_buffer((rows_n, *buf.shape[1:]), buf.dtype, name=f"{buf}_rows")
        params.append(rows)
        idx = [row] + [zero] * (len(buf.shape) - 1)
        decls.append(tirx.DeclBuffer(buf, data=tirx.address_of(tirx.BufferLoad(rows, idx))))
    root = prim.body
    blk = root.block
    loop = tirx.For(b, zero, n, tirx.ForKind.SERIAL, tirx.SeqStmt(decls + [blk.body]))
    new_blk = tvm.s_tir.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, loop,
                               blk.init, blk.alloc_buffers, blk.match_buffers, blk.annotations)
    new_root = tvm.s_tir.SBlockRealize(root.iter_values, root.predicate, new_blk)
    return tirx.PrimFunc(params, new_root, prim.ret_type, prim.attrs), n, own


def broadcast_rows_message(what: str, types) -> str:
    """The message of the check that broadcast row counts agree (``what``: the operator and
    kernel; ``types``: the dynamic inputs' types)."""
    shown = ", ".join(str(t) for t in types)
    return (f"{what}: the first (Any) dimensions of its operands {shown} must be equal or 1 "
            f"(NumPy broadcasting: a size of 1 is repeated along the batch)")


def broadcast_checks(rows: list, n, message: str) -> list:
    """``(condition, message)`` pairs: every row count in ``rows`` is ``n`` or 1."""
    from tvm import tirx

    one = tirx.const(1, "int64")
    return [(tirx.Or(r == one, r == n), message) for r in rows]


def broadcast_size(rows: list):
    """The broadcast of the row counts ``rows`` (NumPy's rule along one axis: a count of 1
    takes the other; (1, 0) gives 0), as a ``PrimExpr``."""
    from tvm import tirx

    one = tirx.const(1, "int64")
    out = rows[0]
    for r in rows[1:]:
        out = tirx.Select(r == one, out, r)
    return out


def batch_shape_func(in_types: list, out_types: list, message: str):
    """The shape function of a broadcasting batch-loop kernel: a PrimFunc taking its dynamic
    inputs (``in_types``, each ``(Any, static...)``) then one int64 vector per output
    (``out_types``) that it fills with ``(broadcast of the inputs' first dimensions,
    static...)``, after checking the first dimensions agree (``message``).

    Returns:
        the PrimFunc (without a global symbol).
    """
    from tvm import te, tirx

    from ..op._common import select_of
    from .shape_func import with_checks

    rows = [tirx.Var(f"n_{k}", "int64") for k in range(len(in_types))]
    ins = [te.placeholder((r, *t.shape[1:]), t.dtype, name=f"in{k}")
           for k, (r, t) in enumerate(zip(rows, in_types))]
    n = broadcast_size(rows)
    vecs = []
    for t in out_types:
        exprs = [n] + [tirx.const(int(d), "int64") for d in t.shape[1:]]
        vecs.append(te.compute((len(exprs),), select_of(exprs), name="shape"))
    sprim = te.create_prim_func(ins + vecs)
    return with_checks(sprim, broadcast_checks(rows, n, message))


__all__ = ["batch_wise", "batch_one", "wrap_batch", "broadcasts_rows", "batch_shape_func",
           "broadcast_checks"]
