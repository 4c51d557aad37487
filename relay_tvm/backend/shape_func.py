"""Dynamic shapes in lowering: symbolic dimensions and shape functions (tvm.relay 0.19's
``FShapeFunc`` and the VM's ``ShapeOf``/``ReshapeTensor`` machinery, done per kernel).

A primitive function whose types hold ``Any`` dimensions is lowered with a fresh ``tir.Var`` per
``Any`` dimension of its parameters; TVM binds such a variable from the buffer passed at run
time, so one kernel serves every size. An operator's output type is then recomputed by its type
relation over the symbolic input types, so its TE compute sees symbolic (``PrimExpr``) output
dimensions. When the relation cannot say (the output shape depends on input *values*, e.g.
``dyn.reshape``), each unknown dimension becomes a fresh variable bound by the kernel's output
buffer, and the operator's registered ``shape_func`` computes its value at run time.

The *shape function* of a kernel is a second PrimFunc that takes the kernel's inputs and writes
one int64 vector per dynamic output: its shape. For shapes that follow from the input shapes
(every operator without a ``shape_func``) the vector is the output's symbolic shape, evaluated
from the input buffers' dimensions; data-dependent dimensions read the operator's shape
function. The VM runs it, allocates the outputs with the shapes it wrote, then runs the kernel.
"""

from __future__ import annotations

from ..errors import BuildError
from ..ir.types import AnyDim, TensorType, TupleType
from ..op._common import select_of as _select_of  # noqa: F401 - used by batch_loop too


def is_static_dim(d) -> bool:
    return isinstance(d, int) or type(d).__name__ == "IntImm"


def static_dims(shape) -> bool:
    return all(is_static_dim(d) for d in shape)


def dims(shape) -> list:
    """``shape`` (of a TE tensor or a type) as ints where static, PrimExprs elsewhere: what the TE
    computes take as an output shape (``[int(d) for d in out_type.shape]`` in static code)."""
    out = []
    for d in shape:
        if isinstance(d, AnyDim):
            raise BuildError(f"shape {tuple(shape)} has a dimension that is not known here")
        out.append(int(d) if is_static_dim(d) else d)
    return out


class SymbolicDims:
    """Fresh ``tir.Var`` s for the ``Any`` dimensions of one primitive function."""

    def __init__(self):
        self.vars: list = []  # bound by input buffers
        self.data_dependent: list = []  # (var, producer TE tensor of its shape vector, index)
        self.checks: list = []  # (condition, message): run-time checks of the kernel

    def fresh(self, prefix="n"):
        from tvm import tirx

        v = tirx.Var(f"{prefix}{len(self.vars) + len(self.data_dependent)}", "int64")
        return v

    def placeholder_shape(self, t: TensorType) -> tuple:
        out = []
        for d in t.shape:
            if isinstance(d, AnyDim):
                v = self.fresh("n")
                self.vars.append(v)
                out.append(v)
            else:
                out.append(d)
        return tuple(out)


def _has_any(ty) -> bool:
    if isinstance(ty, TupleType):
        return any(_has_any(f) for f in ty.fields)
    return isinstance(ty, TensorType) and any(isinstance(d, AnyDim) for d in ty.shape)


def _sym_type(val, ty):
    """The type of TE value ``val`` (tensor or nested list) with ``ty``'s dtypes."""
    if isinstance(ty, TupleType):
        return TupleType([_sym_type(v, f) for v, f in zip(val, ty.fields)])
    return TensorType(tuple(dims(val.shape)), ty.dtype)


def output_type(node, args_te, symbols: SymbolicDims, where: str):
    """The output type of call ``node`` whose arguments are the TE values ``args_te``.

    Static types are taken as checked; a dynamic one comes from the operator's type relation
    over the symbolic argument types. Dimensions it leaves unknown (data-dependent) become fresh
    variables whose run-time values the operator's ``shape_func`` computes.

    Returns:
        ``(out_type, fresh)``: ``fresh`` lists the data-dependent dimensions' variables.
    """
    ty = node.checked_type
    args_dynamic = any(_has_any(a.checked_type) for a in node.args)
    if not ty.is_dynamic() and not args_dynamic:
        return ty, []
    op = node.op
    from ..op import _common

    res = None
    _common.LOWERING[0] = True
    _common.LOWERING_WHERE[0] = where
    del _common.LOWERING_CHECKS[:]
    try:
        arg_types = [_sym_type(v, a.checked_type) for v, a in zip(args_te, node.args)]
        res = op.type_rel(arg_types, node.attrs) if op.type_rel is not None else None
    except Exception:  # the relation cannot work on symbolic dimensions: data-dependent
        res = None
    finally:
        _common.LOWERING[0] = False
        _common.LOWERING_WHERE[0] = ""
        if res is not None:
            symbols.checks.extend(_common.LOWERING_CHECKS)
        del _common.LOWERING_CHECKS[:]
    if not ty.is_dynamic():  # a static output of dynamic inputs: only the checks were wanted
        return ty, []
    if isinstance(res, tuple):
        res = res[0]
    if res is None or not isinstance(res, (TensorType, TupleType)):
        res = ty
    fresh = []

    def fill(t):
        if isinstance(t, TupleType):
            return TupleType([fill(f) for f in t.fields])
        shape = []
        for d in t.shape:
            if isinstance(d, AnyDim):
                v = symbols.fresh("d")
                fresh.append(v)
                shape.append(v)
            else:
                shape.append(d)
        return TensorType(tuple(shape), t.dtype)

    out = fill(res)
    if fresh and op.shape_func is None:
        raise BuildError(f"{where}: the output shape {ty} of {op.name} is only known at run time "
                         f"and {op.name} has no shape function")
    return out, fresh


def bind_data_dependent(symbols: SymbolicDims, op, attrs, flat_in, out_type, fresh, where):
    """Run ``op``'s shape function and record which vector entry each fresh dimension of
    ``out_type`` is."""
    try:
        shapes = op.shape_func(attrs, flat_in, out_type)
    except BuildError:
        raise
    except Exception as e:
        raise BuildError(f"{where}: shape function of {op.name} failed: {type(e).__name__}: "
                         f"{e}") from e
    shapes = list(shapes) if isinstance(shapes, (list, tuple)) else [shapes]
    flat_types = [out_type] if isinstance(out_type, TensorType) else list(out_type.fields)
    for t, vec in zip(flat_types, shapes):
        for k, d in enumerate(t.shape):
            if any(d is v or (not is_static_dim(d) and d.same_as(v)) for v in fresh):
                symbols.data_dependent.append((d, vec, k))


def shape_vectors(outputs, symbols: SymbolicDims) -> list:
    """One TE int64 vector per output of dynamic shape (None for static ones): the shape
    function's outputs."""
    from tvm import te, tirx

    dd = symbols.data_dependent
    out = []
    for o in outputs:
        ds = list(o.shape)
        if static_dims(ds):
            out.append(None)
            continue
        exprs = []
        for d in ds:
            hit = [vec[k].astype("int64") for v, vec, k in dd if d.same_as(v)]
            if hit:
                exprs.append(hit[0])
            elif is_static_dim(d):
                exprs.append(tirx.const(int(d), "int64"))
            else:
                exprs.append(d.astype("int64"))

        out.append(te.compute((len(ds),), _select_of(exprs), name="shape"))
    return out


def with_checks(prim, checks):
    """``prim`` with ``assert`` s of ``checks`` ((condition, message) pairs) before its body."""
    import tvm
    from tvm import tirx

    conds = [(c, m) for c, m in checks if not (hasattr(c, "value") and bool(c.value))]
    if not conds:
        return prim
    # the FFI constructor takes (condition, kind, message parts); TVM 0.27's Python wrapper
    # names them in another order but passes them through positionally
    stmts = [tirx.AssertStmt(c, tvm.ir.StringImm("ValueError"),
                             [tvm.ir.StringImm(f"{SHAPE_CHECK}: {m}")])
             for c, m in conds]
    return _prepend_to_root(prim, stmts)


def _prepend_to_root(prim, stmts):
    """``prim`` with ``stmts`` run before the body of its root block."""
    import tvm
    from tvm import tirx

    root = prim.body
    blk = root.block
    new_blk = tvm.s_tir.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint,
                               tirx.SeqStmt(list(stmts) + [blk.body]), blk.init,
                               blk.alloc_buffers, blk.match_buffers, blk.annotations)
    return prim.with_body(tvm.s_tir.SBlockRealize(root.iter_values, root.predicate, new_blk))


SHAPE_CHECK = "relay_tvm shape check"
#: the prefix of a kernel's check of its input index values (:func:`with_index_checks`)
INDEX_CHECK = "relay_tvm index check"


def failed_check(message: str):
    """The first line of a relay_tvm run-time check's failure (shape or index check) found in
    a TVM error ``message``, or None when the error is no such check."""
    for prefix in (SHAPE_CHECK, INDEX_CHECK):
        if prefix in message:
            return message[message.index(prefix):].splitlines()[0]
    return None


#: the packed function a CPU kernel calls with an index value its check refused
#: (:func:`with_index_checks`); registered by :func:`register_index_failure`
INDEX_FAILURE = "relay_tvm.index_out_of_range"


def index_failure_message(message: str, value, lower, upper, *position) -> str:
    """The error of a kernel's index check that refused ``value`` (valid: ``[lower,
    upper)``) at ``position`` of the index tensor: ``message`` (which names the operator and
    the data shape) with the value and where it is."""
    at = f" at position {tuple(int(i) for i in position)}" if position else ""
    return (f"{message}: got {int(value)}{at} of the indices, outside "
            f"[{int(lower)}, {int(upper)})")


def register_index_failure() -> None:
    """Register :data:`INDEX_FAILURE` (raising a ``ValueError`` of
    :func:`index_failure_message`, which the executors turn into an ``InputError``) in this
    process, once; ``import relay_tvm`` does (``runtime/deploy.py`` registers its own copy)."""
    import tvm_ffi

    if tvm_ffi.get_global_func(INDEX_FAILURE, allow_missing=True) is not None:
        return

    def fail(message, value, lower, upper, *position):
        raise ValueError(index_failure_message(str(message), value, lower, upper, *position))

    tvm_ffi.register_global_func(INDEX_FAILURE, fail)


def with_index_checks(prim, inputs, checks, report_values: bool = True):
    """``prim`` with loops of ``assert`` s before its body that check index values (see
    :func:`relay_tvm.op._common.require_indices_in_range`); checks of tensors that are not kernel
    inputs (``inputs``, the TE placeholders in parameter order) are dropped. With
    ``report_values`` (CPU kernels: a GPU kernel cannot call back into the host), a refused
    value first calls :data:`INDEX_FAILURE` with it and its position, so the error names them
    (a constant ``assert`` message cannot); the ``assert`` stays as the check of last resort."""
    import tvm
    from tvm import tirx

    def param(tensor):  # the kernel's buffer of a TE input, or None (not a kernel input)
        k = next((i for i, t in enumerate(inputs) if t.same_as(tensor)), None)
        return None if k is None else prim.params[k]  # TVM 0.27: params are buffers

    stmts = []
    for tensor, bounds, message, nonnegative, reads in checks:
        buf = param(tensor)
        read_bufs = [param(t) for t in reads]
        if buf is None or any(b is None for b in read_bufs):
            continue
        loop_vars = [tirx.Var(f"chk{j}", "int64") for j in range(len(buf.shape))]
        v = tirx.BufferLoad(buf, loop_vars).astype("int64")
        loads = [lambda *i, b=b: tirx.BufferLoad(b, list(i)) for b in read_bufs]
        n = bounds(loop_vars, *loads).astype("int64")
        lower = tirx.const(0, "int64") if nonnegative else -n
        ok = tirx.all(v >= lower, v < n)
        text = f"{INDEX_CHECK}: {message}"
        body = tirx.AssertStmt(ok, tvm.ir.StringImm("ValueError"), [tvm.ir.StringImm(text)])
        if report_values:
            call = tirx.call_packed(INDEX_FAILURE, tvm.ir.StringImm(text), v, lower, n,
                                    *loop_vars)
            body = tirx.SeqStmt([tirx.IfThenElse(tirx.Not(ok), tirx.Evaluate(call), None),
                                 body])
        for lv, ext in reversed(list(zip(loop_vars, buf.shape))):
            body = tirx.For(lv, tirx.const(0, "int64"), tirx.Cast("int64", ext),
                            tirx.ForKind.SERIAL, body)
        # TVM's UnrollLoop counts only stores and evaluations as a loop body's steps: loops
        # of asserts alone have none and were unrolled whole (one assert per index element: a
        # 300 x 400 gather took 89 s to build). A negative step budget keeps them loops (the
        # pass consumes the attribute).
        body = tirx.AttrStmt(tirx.const(0, "int32"), "pragma_auto_unroll_max_step",
                             tirx.const(-1, "int32"), body)
        stmts.append(body)
    if not stmts:
        return prim
    return _prepend_to_root(prim, stmts)


def checks_on_input_shapes(symbols: SymbolicDims) -> list:
    """The kernel's checks that read only dimensions of its inputs (not data-dependent ones):
    those its shape function can run too."""
    from tvm import tirx

    bound = list(symbols.vars)
    out = []
    for cond, msg in symbols.checks:
        seen = tirx.analysis.undefined_vars(cond, [])
        if all(any(v.same_as(b) for b in bound) for v in seen):
            out.append((cond, msg))
    return out


def with_nonnegative_check(sprim, n_vectors: int, what: str, why: str | None = None):
    """``sprim`` (a shape function whose last ``n_vectors`` parameters are its shape vectors)
    with an ``assert`` after the body that every computed dimension is >= 0.

    The ``dyn.*`` shape functions give a negative dimension for a value that makes no output (a
    negative size, pad width or scale given as a tensor); the VM then stops with this message
    (turned into an :class:`relay_tvm.errors.InputError`) instead of allocating. ``why`` (the
    operator's ``shape_error``) says what such values mean for that operator."""
    import tvm
    from tvm import tirx

    stmts = []
    params = list(sprim.params)[len(sprim.params) - n_vectors:]
    for k, p in enumerate(params):
        buf = p  # TVM 0.27: a PrimFunc's params are its buffers
        for j in range(int(buf.shape[0])):
            if why:
                msg = f"{SHAPE_CHECK}: {what}: {why}"
            else:
                msg = (f"{SHAPE_CHECK}: {what}: the values of its tensor arguments give no "
                       f"valid shape for output {k} (dimension {j}): an invalid size, shape, "
                       f"pad width, scale, stride or axis given as a tensor")
            stmts.append(tirx.AssertStmt(tirx.BufferLoad(buf, [tirx.const(j, "int64")]) >= 0,
                                         tvm.ir.StringImm("ValueError"), [tvm.ir.StringImm(msg)]))
    if not stmts:
        return sprim
    root = sprim.body
    blk = root.block
    new_blk = tvm.s_tir.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint,
                               tirx.SeqStmt([blk.body] + stmts), blk.init, blk.alloc_buffers,
                               blk.match_buffers, blk.annotations)
    return sprim.with_body(tvm.s_tir.SBlockRealize(root.iter_values, root.predicate, new_blk))


def symbolic_type(t) -> TensorType:
    """A TE tensor's type for the VM's signatures: static dims as ints, others ``Any``."""
    return TensorType(tuple(int(d) if is_static_dim(d) else AnyDim() for d in t.shape),
                      str(t.dtype))


__all__ = ["SymbolicDims", "output_type", "bind_data_dependent", "shape_vectors", "dims",
           "static_dims", "symbolic_type"]
