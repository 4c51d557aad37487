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
static memory plan, or with its own arguments, which ``main`` checks first (type, ndim, dtype
and shape of each, TVM's ``vm.builtin.check_tensor_info`` / ``vm.builtin.match_shape``, an
error naming the argument); ``GraphModule`` checks device and layout of what it is given
(``set_input`` copies into its own tensors). So the wrappers' asserts are dropped there:
:func:`drop` removes every ``AssertStmt`` of a packed function outside its
``compute_scope`` (the kernel's own body, where asserts of operators, e.g. an index range,
stay). Kernels of ``relay.vm.compile`` (whose functions take run-time shapes) and device
targets keep them.
"""

from __future__ import annotations


def drop(func):
    """``func`` (a PrimFunc after ``MakePackedAPI``) without the asserts outside its
    ``compute_scope``; ``func`` itself when it has no ``compute_scope`` (then nothing tells
    the wrapper's asserts from the kernel's)."""
    import tvm_ffi
    from tvm import tirx

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


__all__ = ["drop"]
