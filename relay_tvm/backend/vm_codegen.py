"""The VM compiler: Relay functions with control flow → Relax VM bytecode + kernels.

Supported: every global function of the module (each becomes a VM function; calls between them,
recursion included, are VM calls), ``let``, ``if`` (the condition is a boolean scalar tensor),
tuples and projections, constants, calls of primitive functions (fused kernels) and of operators
(each wrapped into its own primitive function), and calls of local functions (inlined at the
call site, closures over outer variables included). Values live in registers; a kernel's outputs
get fresh storage from the VM's pooled allocator (no static plan: the set of live values depends
on the path taken).

Not supported (clear ``BuildError``): function values that escape (stored in tuples, passed,
returned), recursive local functions, ADTs and ``match``, references, and dynamic shapes.

Code for ``if`` is generated into instruction lists first so jump offsets are known:
``If(cond, false_offset)`` falls through into the true branch, which ends with
``Goto(past the false branch)``.
"""

from __future__ import annotations

from ..errors import BuildError
from ..ir.expr import Call, Constant, Function, GlobalVar, If, Let, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.types import TensorType, TupleType
from .lower import LowerCache, flatten_type
from .partition import make_primitive

_CALL, _IF, _GOTO, _RET, _RESTART = range(5)


def _tail_calls(func: Function, self_name: str) -> set:
    """Ids of the calls of ``@self_name`` in tail position of ``func``'s body (through ``let``
    bodies and ``if`` branches): each becomes a jump to the function's start."""
    out, stack = set(), [func.body]
    while stack:
        e = stack.pop()
        if type(e) is Let:
            stack.append(e.body)
        elif type(e) is If:
            stack.extend((e.true_branch, e.false_branch))
        elif (type(e) is Call and isinstance(e.op, GlobalVar) and e.op.name_hint == self_name
              and len(e.args) == len(func.params)):
            out.add(id(e))
    return out


def _children(e) -> tuple:
    t = type(e)
    if t is Call:
        return e.args
    if t is Tuple:
        return e.fields
    if t is TupleGetItem:
        return (e.tuple_value,)
    if t is Let:
        return (e.value, e.body)
    if t is If:
        return (e.cond,)  # branches are compiled in their own scopes
    return ()


def _post_order(expr, memo) -> list:
    return post_order(expr, _children, skip=memo.keys())


class _FuncCompiler:
    def __init__(self, owner, func: Function, name: str):
        self.owner = owner
        self.func = func
        self.name = name
        self.nreg = len(func.params)
        self.let_vals = {}  # let-bound Var -> value expression, over the whole function
        self.inlining = set()  # ids of local functions being inlined (no local recursion)
        self.tail = _tail_calls(func, name)  # self tail calls: loops, not VM frames

    def reg(self) -> int:
        r = self.nreg
        self.nreg += 1
        return r

    def compile(self):
        memo = {}
        for i, p in enumerate(self.func.params):
            memo[id(p)] = ("r", i)
        code, res = self.expr(self.func.body, memo)
        code.append((_RET, self.as_reg(code, res)))
        return code

    # An operand is ("r", reg) or ("c", tvm value) for constants.
    def as_reg(self, code, opnd):
        if opnd[0] == "r":
            return opnd[1]
        if opnd[0] == "fn":
            raise BuildError("VM compiler: function values that are passed around, stored or "
                             "returned (closures) are not supported yet; only calls of local "
                             "functions are", opnd[1].span)
        r = self.reg()
        code.append((_CALL, "vm.builtin.copy", [opnd], r))
        return r

    def expr(self, expr, memo):
        """Instructions computing ``expr`` and the operand holding its value."""
        import tvm

        code = []
        order = _post_order(expr, memo)
        self.let_vals.update((n.var, n.value) for n in order if type(n) is Let)
        for node in order:
            t = type(node)
            if t is Var:
                v = self.let_vals.get(node)
                if v is not None and id(v) in memo:
                    memo[id(node)] = memo[id(v)]
                elif id(node) not in memo:
                    raise BuildError(f"VM compiler: free variable %{node.name_hint}")
            elif t is Function:
                # a local function value: calls of it are inlined (see emit_call)
                memo[id(node)] = ("fn", node)
            elif t is Constant:
                memo[id(node)] = ("c", tvm.runtime.tensor(node.data.numpy()))
            elif t is Let:
                memo[id(node)] = memo[id(node.body)]
            elif t is Tuple:
                r = self.reg()
                code.append((_CALL, "vm.builtin.make_tuple", [memo[id(f)] for f in node.fields], r))
                memo[id(node)] = ("r", r)
            elif t is TupleGetItem:
                r = self.reg()
                src = self.as_reg(code, memo[id(node.tuple_value)])
                code.append((_CALL, "vm.builtin.tuple_getitem", [("r", src), ("i", node.index)], r))
                memo[id(node)] = ("r", r)
            elif t is If:
                memo[id(node)] = self.emit_if(code, node, memo)
            elif t is Call:
                memo[id(node)] = self.emit_call(code, node, memo)
            else:
                raise BuildError(f"VM compiler: {t.__name__} is not supported yet (closures, ADTs, "
                                 f"match and references run on the debug executor)",
                                 getattr(node, "span", None))
        return code, memo[id(expr)]

    def emit_if(self, code, node, memo):
        cond = self.as_reg(code, memo[id(node.cond)])
        c = self.reg()
        code.append((_CALL, "vm.builtin.read_if_cond", [("r", cond)], c))
        res = self.reg()
        tcode, tval = self.expr(node.true_branch, dict(memo))
        tcode.append((_CALL, "vm.builtin.copy", [tval], res))
        fcode, fval = self.expr(node.false_branch, dict(memo))
        fcode.append((_CALL, "vm.builtin.copy", [fval], res))
        tcode.append((_GOTO, len(fcode) + 1))
        code.append((_IF, c, len(tcode) + 1))
        code.extend(tcode)
        code.extend(fcode)
        return ("r", res)

    def inline(self, code, fn, node, memo):
        """A call of a local function (a closure that is only called): its body is compiled at
        the call site with the parameters bound to the arguments (beta reduction; arguments are
        already evaluated, so evaluation order is Relay's)."""
        if id(fn) in self.inlining:
            raise BuildError("VM compiler: recursive local functions are not supported yet; "
                             "make the function global (mod[GlobalVar(...)] = fn)", node.span)
        if len(fn.params) != len(node.args):
            raise BuildError(f"VM compiler: local function of {len(fn.params)} parameters "
                             f"called with {len(node.args)} arguments", node.span)
        inner = dict(memo)
        for p, a in zip(fn.params, node.args):
            inner[id(p)] = memo[id(a)]
        self.inlining.add(id(fn))
        try:
            sub, res = self.expr(fn.body, inner)
        finally:
            self.inlining.discard(id(fn))
        code.extend(sub)
        if res[0] == "fn":
            raise BuildError("VM compiler: a local function returning a function is not "
                             "supported yet", node.span)
        return res

    def flat_args(self, code, opnd, ty) -> list:
        if isinstance(ty, TensorType):
            return [opnd]
        src = self.as_reg(code, opnd)
        out = []
        for i, ft in enumerate(ty.fields):
            r = self.reg()
            code.append((_CALL, "vm.builtin.tuple_getitem", [("r", src), ("i", i)], r))
            out.extend(self.flat_args(code, ("r", r), ft))
        return out

    def emit_call(self, code, node, memo):
        from ..op.registry import Op

        op = node.op
        callee = None
        if isinstance(op, Function) and not op.is_primitive:
            callee = op
        elif isinstance(op, Var):
            val = memo.get(id(op))
            if val is None and op in self.let_vals:
                val = memo.get(id(self.let_vals[op]))
            if val is not None and val[0] == "fn":
                callee = val[1]
        if callee is not None and callee.is_primitive:
            op = callee
            callee = None
        if callee is not None:
            return self.inline(code, callee, node, memo)
        if isinstance(op, GlobalVar) and id(node) in self.tail:
            # a self tail call: the arguments go to the parameter registers (through fresh
            # registers, as an argument may read a parameter) and control restarts at pc 0,
            # so deep tail recursion runs in constant VM and C stack
            tmps = []
            for a in node.args:
                t = self.reg()
                code.append((_CALL, "vm.builtin.copy", [memo[id(a)]], t))
                tmps.append(t)
            for i, t in enumerate(tmps):
                code.append((_CALL, "vm.builtin.copy", [("r", t)], i))
            code.append((_RESTART,))
            return ("r", tmps[0]) if tmps else ("c", None)
        if isinstance(op, GlobalVar):
            r = self.reg()
            self.owner.need_function(op)
            code.append((_CALL, op.name_hint, [memo[id(a)] for a in node.args], r))
            return ("r", r)
        if isinstance(op, Op):
            node = make_primitive(node, list(node.args))
            op = node.op
            from ..typing.infer import infer_expr

            infer_expr(op)
        if not (isinstance(op, Function) and op.is_primitive):
            raise BuildError("VM compiler: calls of local functions (closures) are not supported "
                             "yet; use global functions or the debug executor", node.span)
        lowered = self.owner.cache.lower(op)
        import tvm

        ins = []
        for a in node.args:
            ins.extend(self.flat_args(code, memo[id(a)], a.checked_type))
        for c in lowered.lifted:
            ins.append(("c", tvm.runtime.tensor(c)))
        for i, pack in lowered.packs.items():
            # kernels read some inputs in a packed layout: constants are packed here, values
            # by a packing kernel at run time
            if ins[i][0] == "c":
                ins[i] = ("c", tvm.runtime.tensor(pack.pack_numpy(ins[i][1].numpy())))
            else:
                lk = self.owner.cache.pack_kernel(pack, lowered.input_types[i])
                ins[i] = self.alloc_and_call(code, lk, [ins[i]])[0]
        outs = self.alloc_outputs(code, lowered)
        code.append((_CALL, lowered.name, ins + outs, None))
        ty = node.checked_type
        if isinstance(ty, TupleType):
            return self.pack_tuple(code, outs, ty)
        return outs[0]

    def alloc_and_call(self, code, lowered, ins):
        outs = self.alloc_outputs(code, lowered)
        code.append((_CALL, lowered.name, list(ins) + outs, None))
        return outs

    def alloc_outputs(self, code, lowered):
        outs = []
        for t in lowered.output_types:
            s = self.reg()
            code.append((_CALL, "vm.builtin.alloc_storage",
                         [("state",), ("shape", (max(1, _nbytes(t)),)), ("i", 0), ("dt", "uint8"),
                          ("str", "global")], s))
            r = self.reg()
            code.append((_CALL, "vm.builtin.alloc_tensor",
                         [("r", s), ("imm", 0), ("shape", tuple(int(d) for d in t.shape)),
                          ("dt", t.dtype)], r))
            outs.append(("r", r))
        return outs

    def pack_tuple(self, code, flat, ty):
        it = iter(flat)

        def build(t):
            if isinstance(t, TupleType):
                fields = [build(f) for f in t.fields]
                r = self.reg()
                code.append((_CALL, "vm.builtin.make_tuple", fields, r))
                return ("r", r)
            return next(it)

        return build(ty)


def _nbytes(t) -> int:
    from .memory_plan import tensor_bytes

    return tensor_bytes(t)


class VMCompiler:
    """Compiles the global functions of a typed, fused module reachable from ``main``."""

    def __init__(self, mod, target, mod_name="vm", database=None):
        self.mod = mod
        self.cache = LowerCache(target, mod_name, database)
        self.pending = []
        self.done = set()

    def need_function(self, gv):
        if gv.name_hint not in self.done:
            self.done.add(gv.name_hint)
            self.pending.append(gv)

    def compile(self):
        from tvm import relax
        from tvm.relax.exec_builder import VMFuncKind

        self.need_function(self.mod.get_global_var("main"))
        funcs = {}
        while self.pending:
            gv = self.pending.pop()
            f = self.mod[gv]
            for p in f.params:
                for t in flatten_type(p.checked_type):
                    if not all(isinstance(d, int) for d in t.shape):
                        raise BuildError(f"VM compiler: @{gv.name_hint} parameter %{p.name_hint} "
                                         f"has a dynamic shape {t.shape}; not supported yet")
            funcs[gv.name_hint] = (f, _FuncCompiler(self, f, gv.name_hint).compile())
        ib = relax.ExecBuilder()
        for k in self.cache.funcs:
            ib.declare_function(k.name)
        for name in funcs:
            ib.declare_function(name, VMFuncKind.VM_FUNC)
        for name, (f, code) in funcs.items():
            with ib.function(name, num_inputs=len(f.params),
                             param_names=[p.name_hint for p in f.params]):
                _emit(ib, code)
        return ib, funcs


def _emit(ib, code):
    import tvm

    def arg(a):
        kind = a[0]
        if kind == "fn":
            raise BuildError("VM compiler: function values that are passed around, stored or "
                             "returned (closures) are not supported yet; only calls of local "
                             "functions are", a[1].span)
        if kind == "r":
            return ib.r(a[1])
        if kind == "c":
            return ib.convert_constant(a[1])
        if kind == "i":
            return ib.convert_constant(a[1])
        if kind == "imm":
            return ib.imm(a[1])
        if kind == "state":
            return ib.vm_state()
        if kind == "shape":
            return a[1]
        if kind == "dt":
            return tvm.DataType(a[1])
        if kind == "str":
            return ib.convert_constant(a[1])
        raise AssertionError(a)

    for pc, ins in enumerate(code):
        if ins[0] == _RESTART:
            ib.emit_goto(-pc)
        elif ins[0] == _CALL:
            _, name, args, dst = ins
            ib.emit_call(name, args=[arg(a) for a in args],
                         dst=ib.r(dst) if dst is not None else None)
        elif ins[0] == _IF:
            ib.emit_if(ib.r(ins[1]), ins[2])
        elif ins[0] == _GOTO:
            ib.emit_goto(ins[1])
        elif ins[0] == _RET:
            ib.emit_ret(ib.r(ins[1]))


__all__ = ["VMCompiler"]
