"""Kernels without TVM's per-argument checks, for libraries whose host program checks its own
arguments (``relay.build``'s graph libraries).

TVM's ``MakePackedAPI`` gives every kernel a wrapper that unpacks its packed arguments and
asserts, for each tensor argument, its type, ndim, dtype, device, strides, byte offset and
every dimension, each assert with an error message of its own: on ResNet-50's 29 kernels the
wrappers were about half of the machine code (a 1x1 convolution's 1,240 of 3,570 assembly
lines; the kernel itself is 700) and 1.5 of the 5.7 CPU seconds TVM and LLVM took to compile
the kernels (2-core Zen 1 VM, one thread: TIR passes and LLVM's optimizer 3.41 -> 2.97 s,
machine code 2.29 -> 1.23 s).

In a graph library, a kernel is called only by the library's own ``main``
(:func:`relay_tvm.backend.graph_codegen.emit_vm`), with tensors it allocated itself from the
static memory plan, or with its own arguments, which ``main`` checks first: type, ndim, dtype
and shape of each with TVM's ``vm.builtin.check_tensor_info`` / ``vm.builtin.match_shape`` (an
error naming the argument), then device, strides and byte offset by calling a kernel of the
library that does nothing but TVM's checks, one for each dtype and rank among the arguments
(:func:`layout_check`; a fresh-user trial found that without it a strided NumPy array or a
view at a byte offset passed to ``main`` gave wrong numbers). So the wrappers' asserts are
dropped there:
:func:`drop` removes every ``AssertStmt`` of a packed function outside its
``compute_scope`` (the kernel's own body, where asserts of operators, e.g. an index range,
stay). Kernels of ``relay.vm.compile`` (whose functions take run-time shapes) and device
targets keep them.
"""

from __future__ import annotations


def drop(func):
    """``func`` (a PrimFunc after ``MakePackedAPI``) without the asserts outside its
    ``compute_scope``; ``func`` itself when it has no ``compute_scope`` (then nothing tells
    the wrapper's asserts from the kernel's) or has the attribute :data:`KEEP`."""
    import tvm_ffi
    from tvm import tirx

    if func.attrs is not None and KEEP in func.attrs:
        return func

    bodies = []

    def hide(attr):  # the kernel's body out of reach: a numbered placeholder
        if attr.attr_key != "compute_scope":
            return attr
        bodies.append(attr.body)
        return tirx.AttrStmt(attr.node, attr.attr_key, attr.value,
                             tirx.Evaluate(tirx.IntImm("int32", -len(bodies))))

    body = tvm_ffi.structural_map(func.body, [(tirx.AttrStmt, hide)])
    if not bodies:
        return func
    body = tvm_ffi.structural_map(
        body, [(tirx.AssertStmt, lambda _: tirx.Evaluate(tirx.IntImm("int32", 0)))])

    def restore(stmt):
        v = stmt.value
        if isinstance(v, tirx.IntImm) and -len(bodies) <= int(v.value) < 0:
            return bodies[-int(v.value) - 1]
        return stmt

    return func.with_body(tvm_ffi.structural_map(body, [(tirx.Evaluate, restore)]))


#: function attribute of a kernel whose packed-function checks :func:`drop` keeps
KEEP = "relay_tvm.argument_checks"


def layout_check_name(dtype: str, ndim: int) -> str:
    """The symbol of :func:`layout_check`'s kernel for ``dtype`` and rank ``ndim``."""
    return f"__relay_check_layout_{dtype}_{ndim}"


def layout_check(dtype: str, ndim: int):
    """``(name, PrimFunc)``: a kernel of one tensor argument ``arg`` of ``dtype``, rank
    ``ndim`` and any shape that does nothing: its packed wrapper (kept, :data:`KEEP`) checks
    that ``arg`` is a tensor of that rank and dtype on the target's device, compact (row-major
    strides) and at byte offset 0, raising TVM's ``ValueError`` / ``TypeError`` naming
    ``arg`` otherwise."""
    from tvm import tirx

    shape = [tirx.Var(f"n{i}", "int64") for i in range(ndim)]
    buf = tirx.decl_buffer(shape, dtype, name="arg")
    name = layout_check_name(dtype, ndim)
    func = tirx.PrimFunc([buf], tirx.Evaluate(tirx.IntImm("int32", 0)))
    return name, func.with_attr("global_symbol", name).with_attr(KEEP, True)


__all__ = ["drop", "KEEP", "layout_check", "layout_check_name"]
