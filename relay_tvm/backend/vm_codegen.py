"""The VM compiler: Relay functions with control flow → Relax VM bytecode + kernels.

Supported: the whole language, dynamic shapes included. Every global function of the module
becomes a VM function (calls between them, recursion included, are VM calls); ``let``, ``if``
(the condition is a boolean scalar tensor), tuples of any nesting, constants, calls of primitive
functions (fused kernels) and of operators (each wrapped into its own primitive function).
Values live in registers; a kernel's outputs get fresh storage from the VM's pooled allocator
(no static plan: the set of live values depends on the path taken). An output of dynamic shape
(``Any``) is allocated from the shape its kernel's shape function computes at run time: the
shape function writes an int64 vector, ``vm.builtin.tensor_to_shape`` makes it a shape, and
``alloc_storage``/``alloc_tensor`` take it (see :mod:`relay_tvm.backend.shape_func` and
:mod:`relay_tvm.backend.batch_loop`).

Run-time representation of the values that are not tensors (:mod:`relay_tvm.runtime.vm` turns
them back into the interpreter's values):

- a tuple is an ``ffi.Array`` of its fields;
- an ADT value is an ``ffi.Array`` ``[tag, field0, field1, ...]`` whose first element is the
  constructor's integer tag (Relay tuples never hold integers, which tells them apart when
  results are handed back to the user); ``match`` compares tags with ``ffi.ArrayContains``;
- a reference is a one-element ``ffi.List`` (mutable, shared by every holder);
- a function value is a Relax ``VMClosure``: a local function is lambda-lifted into a VM
  function whose parameters are its own followed by its free variables, and
  ``vm.builtin.make_closure`` binds the free variables' values (the VM binds them last);
  calls of unknown functions go through ``vm.builtin.invoke_closure``. A local function that
  is only called and not recursive is inlined instead; a recursive one (``let f = fn ...
  f(...)``) calls its lifted VM function directly and rebuilds its own closure when it is
  used as a value.

Polymorphic functions are compiled once, type-erased: registers are untyped and the kernels,
the only code that needs concrete types, only ever see tensors of known shapes, so every use
of ``@map[A, B]`` shares one VM function (what specialisation per use would give, without
the code growth).

Code for ``if`` and ``match`` is generated into instruction lists first so jump offsets are
known: ``If(cond, false_offset)`` falls through into the true branch, which ends with
``Goto(past the false branch)``; each ``match`` clause is a list of tag tests that jump to the
next clause, the bindings, the body and a ``Goto`` past the remaining clauses. A call of the
function itself in tail position (through ``let`` bodies, ``if`` branches and ``match``
clauses) moves its arguments into the parameter registers and jumps back to the first
instruction, so loops written as recursion run in constant stack; other recursion nests C++
calls in the Relax VM, which :class:`relay_tvm.runtime.vm.VirtualMachine` runs on a thread
with a 1 GiB stack. A program whose VM calls nest a bounded depth
(:func:`relay_tvm.backend.vm_emit.call_depth`, kept in the executable's metadata) runs on the
caller's thread instead.
"""

from __future__ import annotations

from ..errors import BuildError
from ..ir.adt import Constructor, Match, PatternConstructor, PatternTuple, PatternVar
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.types import GlobalTypeVar, TensorType, TupleType, type_str
from .lower import LowerCache
from .partition import make_primitive
from .vm_emit import (
    _CALL,
    _FAIL,
    _GOTO,
    _IF,
    _LOOP,
    _RET,
    _emit,
    _nbytes,
    _post_order,
    _tail_positions,
    _where,
    call_depth,
    insert_kills,
)

# codes of vm.builtin.match_shape / make_shape (TVM's MatchShapeCode / MakeShapeCode)
_STORE_TO_HEAP, _NO_OP, _USE_IMM, _LOAD_SHAPE = 1, 2, 0, 1


class _FuncCompiler:
    """Compiles one VM function: a global function, or a lifted local one whose parameters are
    its own followed by the ``captured`` free variables (``self_var`` names the function
    itself inside a recursive one)."""

    def __init__(self, owner, func: Function, name: str, captured=(), self_var=None):
        self.owner = owner
        self.func = func
        self.name = name
        self.captured = list(captured)
        self.self_var = self_var
        self.nreg = len(func.params) + len(self.captured)
        self.let_vals = {}  # let-bound Var -> value expression, over the whole function
        self.inlining = set()  # ids of local functions being inlined
        self.tail = set()  # ids of the expressions in tail position (see _tail_positions)
        self.heap_reg = None  # see shape_heap

    def reg(self) -> int:
        r = self.nreg
        self.nreg += 1
        return r

    def shape_heap(self) -> int:
        """The register of this function's one-slot shape heap (``vm.builtin.match_shape``
        stores a batch size there, ``make_shape`` reads it back), allocated on entry."""
        if self.heap_reg is None:
            self.heap_reg = self.reg()
        return self.heap_reg

    def compile(self):
        memo = {}
        for i, p in enumerate(self.func.params):
            memo[id(p)] = ("r", i)
        n = len(self.func.params)
        caps = [("r", n + j) for j in range(len(self.captured))]
        for v, c in zip(self.captured, caps):
            memo[id(v)] = c
        if self.self_var is not None:
            memo[id(self.self_var)] = ("self", self.name, caps)
        self.tail = _tail_positions(self.func.body)
        code, res = self.expr(self.func.body, memo)
        code.append((_RET, self.as_reg(code, res)))
        if self.heap_reg is not None:
            # first, so every path finds it (a self tail call jumps back here and allocates
            # it again); jump offsets are relative, so they stay valid
            code.insert(0, (_CALL, "vm.builtin.alloc_shape_heap", [("state",), ("imm", 1)],
                            self.heap_reg))
        return insert_kills(code, n + len(self.captured))

    # An operand is ("r", reg), ("c", tvm value) for constants, ("f", VM function name),
    # ("fn", local Function, its scope's memo) or ("self", lifted name, captured operands).
    def operand(self, code, opnd):
        """``opnd`` as something an instruction can take: local functions become closures."""
        kind = opnd[0]
        if kind == "fn":
            name, caps = self.lift(code, opnd[1], opnd[2])
            r = self.reg()
            code.append((_CALL, "vm.builtin.make_closure", [("f", name), *caps], r))
            return ("r", r)
        if kind == "self":
            r = self.reg()
            code.append((_CALL, "vm.builtin.make_closure", [("f", opnd[1]), *opnd[2]], r))
            return ("r", r)
        return opnd

    def as_reg(self, code, opnd):
        opnd = self.operand(code, opnd)
        if opnd[0] == "r":
            return opnd[1]
        r = self.reg()
        code.append((_CALL, "vm.builtin.copy", [opnd], r))
        return r

    def lookup(self, v, memo):
        val = memo.get(id(v))
        if val is None and v in self.let_vals:
            val = memo.get(id(self.let_vals[v]))
        if val is None:
            raise BuildError(f"VM compiler: free variable %{v.name_hint} in @{self.name}"
                             f"{_where(v)}")
        return val

    def lift(self, code, fn, memo):
        """The lifted VM function of local function ``fn`` and the operands of its captured
        variables in the current scope."""
        info = self.owner.lifted.get(id(fn))
        if info is None:
            from ..analysis.free import free_vars

            fv = free_vars(fn)
            self_var = next((v for v in fv if self.let_vals.get(v) is fn), None)
            captured = [v for v in fv if v is not self_var]
            info = (self.owner.fresh(f"{self.name}_lifted"), captured)
            self.owner.lifted[id(fn)] = info
            self.owner.pending_lifted.append((info[0], fn, captured, self_var))
        name, captured = info
        return name, [self.operand(code, self.lookup(v, memo)) for v in captured]

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
                    raise BuildError(f"VM compiler: free variable %{node.name_hint} in "
                                     f"@{self.name}{_where(node)}")
            elif t is Function:
                # a local function value: inlined where it is only called, else lifted
                memo[id(node)] = ("fn", node, memo)
            elif t is GlobalVar:
                self.owner.need_function(node)
                memo[id(node)] = ("f", node.name_hint)
            elif t is Constructor:
                memo[id(node)] = self.constructor_value(code, node)
            elif t is Constant:
                memo[id(node)] = ("c", tvm.runtime.tensor(node.data.numpy()))
            elif t is Let:
                memo[id(node)] = memo[id(node.body)]
            elif t is Tuple:
                memo[id(node)] = self.call(code, "vm.builtin.make_tuple",
                                           [memo[id(f)] for f in node.fields])
            elif t is TupleGetItem:
                src = self.as_reg(code, memo[id(node.tuple_value)])
                memo[id(node)] = self.call(code, "vm.builtin.tuple_getitem",
                                           [("r", src), ("imm", node.index)])
            elif t is If:
                memo[id(node)] = self.emit_if(code, node, memo)
            elif t is Match:
                memo[id(node)] = self.emit_match(code, node, memo)
            elif t is RefCreate:
                memo[id(node)] = self.call(code, "ffi.List", [memo[id(node.value)]])
            elif t is RefRead:
                memo[id(node)] = self.call(code, "ffi.ListGetItem",
                                           [memo[id(node.ref)], ("imm", 0)])
            elif t is RefWrite:
                code.append((_CALL, "ffi.ListSetItem",
                             [self.operand(code, memo[id(node.ref)]), ("imm", 0),
                              self.operand(code, memo[id(node.value)])], None))
                memo[id(node)] = self.call(code, "vm.builtin.make_tuple", [])
            elif t is Call:
                memo[id(node)] = self.emit_call(code, node, memo)
            else:
                raise BuildError(f"VM compiler: {t.__name__} is not supported{_where(node)}",
                                 getattr(node, "span", None))
        return code, memo[id(expr)]

    def call(self, code, func, args):
        """``func(args)`` into a fresh register (function values among ``args`` become
        closures)."""
        args = [self.operand(code, a) for a in args]
        r = self.reg()
        code.append((_CALL, func, args, r))
        return ("r", r)

    def constructor_value(self, code, ctor):
        """A constructor used as a value: a nullary one is its value, others a closure."""
        if not ctor.inputs:
            return self.call(code, "vm.builtin.make_tuple", [("imm", ctor.tag)])
        return ("f", self.owner.constructor_function(ctor))

    def emit_if(self, code, node, memo):
        cond = self.as_reg(code, memo[id(node.cond)])
        c = self.reg()
        code.append((_CALL, "vm.builtin.read_if_cond", [("r", cond)], c))
        res = self.reg()
        tcode, tval = self.expr(node.true_branch, dict(memo))
        tcode.append((_CALL, "vm.builtin.copy", [self.operand(tcode, tval)], res))
        fcode, fval = self.expr(node.false_branch, dict(memo))
        fcode.append((_CALL, "vm.builtin.copy", [self.operand(fcode, fval)], res))
        tcode.append((_GOTO, len(fcode) + 1))
        code.append((_IF, c, len(tcode) + 1))
        code.extend(tcode)
        code.extend(fcode)
        return ("r", res)

    def emit_match(self, code, node, memo):
        """Clauses in order; the first whose pattern matches binds its variables and runs.
        When none matches (only possible for ``match?``) the VM raises an error naming the
        match (see ``VirtualMachine.invoke``)."""
        data = self.as_reg(code, memo[id(node.data)])
        res = self.reg()
        clauses = []
        for cl in node.clauses:
            cc = []
            inner = dict(memo)
            self.emit_pattern(cc, cl.lhs, data, inner)
            body, val = self.expr(cl.rhs, inner)
            cc.extend(body)
            cc.append((_CALL, "vm.builtin.copy", [self.operand(cc, val)], res))
            cc.append((_GOTO, None))
            clauses.append([(_IF, ins[1], len(cc) - k) if ins[0] == _FAIL else ins
                            for k, ins in enumerate(cc)])
        fail = self.match_failure(node, data)
        rest = len(fail)
        for cc in reversed(clauses):
            cc[-1] = (_GOTO, 1 + rest)
            rest += len(cc)
        for cc in clauses:
            code.extend(cc)
        code.extend(fail)
        return ("r", res)

    def match_failure(self, node, data) -> list:
        """The code after the last clause of ``node``: raises the VM's error (the message up to
        its ``;`` is what ``VirtualMachine.invoke`` reports). For ``match?`` over a value of an
        algebraic data type, it first tests the value's tag against each constructor of the
        type, so the message names the constructor of the value no clause matched (as the
        interpreter's does); a complete ``match`` cannot get there (type inference checked it
        covers every value), so it gets only the generic message."""
        import tvm

        base = (f"relay_tvm VM: no clause of the match{_where(node)} in @{self.name} matches "
                f"the value")

        def raise_(msg):
            return (_CALL, "vm.builtin.check_tensor_info",
                    [("r", data), ("imm", -1), ("c", tvm.DataType("float32")), ("c", msg + ";")],
                    None)

        fail = []
        ctors = self.scrutinee_constructors(node)
        if ctors and not node.complete:
            tag = self.call(fail, "vm.builtin.tuple_getitem", [("r", data), ("imm", 0)])
            for c in ctors:
                want = self.call(fail, "vm.builtin.make_tuple", [("imm", c.tag)])
                ok = self.call(fail, "ffi.ArrayContains", [want, tag])
                fail.append((_IF, ok[1], 2))  # not this constructor: skip its raise
                fail.append(raise_(f"{base} {c.name_hint}{'(...)' if c.inputs else ''}"))
        # what is known without looking at the value (the VM cannot format it at run time)
        ty = getattr(node.data, "_checked_type", None)
        if ctors:
            names = ", ".join(c.name_hint for c in ctors)
            what = (f" of another type: its constructor is none of "
                    f"{ctors[0].belong_to.name_hint}'s ({names})")
        elif ty is not None:
            what = f" of type {type_str(ty)}"
        else:
            what = ""
        fail.append(raise_(base + what))
        return fail

    def scrutinee_constructors(self, node) -> tuple:
        """The constructors of the algebraic data type ``node`` (a Match) matches on (from its
        scrutinee's type, else from its clauses' patterns); ``()`` for a tuple or tensor."""
        ty = getattr(node.data, "_checked_type", None)  # set by type inference
        gtv = getattr(ty, "func", ty)  # List[A] (a TypeCall) or the GlobalTypeVar itself
        if not isinstance(gtv, GlobalTypeVar):
            gtv = next((cl.lhs.constructor.belong_to for cl in node.clauses
                        if isinstance(cl.lhs, PatternConstructor)), None)
        if gtv is None:
            return ()
        try:
            return tuple(self.owner.mod[gtv].constructors)
        except KeyError:  # a type not in the module: the generic message
            return ()

    def emit_pattern(self, cc, pattern, reg, memo):
        """Tests (``_FAIL`` jumps) and bindings of ``pattern`` against register ``reg``."""
        stack = [(pattern, reg)]
        while stack:
            p, r = stack.pop()
            if isinstance(p, PatternVar):
                memo[id(p.var)] = ("r", r)
            elif isinstance(p, (PatternConstructor, PatternTuple)):
                base = 0
                if isinstance(p, PatternConstructor):
                    tag = self.call(cc, "vm.builtin.tuple_getitem", [("r", r), ("imm", 0)])
                    want = self.call(cc, "vm.builtin.make_tuple", [("imm", p.constructor.tag)])
                    ok = self.call(cc, "ffi.ArrayContains", [want, tag])
                    cc.append((_FAIL, ok[1]))
                    base = 1
                subs = []
                for k, q in enumerate(p.patterns):
                    if isinstance(q, (PatternVar, PatternConstructor, PatternTuple)):
                        f = self.call(cc, "vm.builtin.tuple_getitem", [("r", r), ("imm", base + k)])
                        subs.append((q, f[1]))
                stack.extend(reversed(subs))

    def inline(self, code, fn, node, memo, scope):
        """A call of a local function that is only called: its body is compiled at the call
        site with the parameters bound to the arguments (beta reduction; arguments are already
        evaluated, so evaluation order is Relay's)."""
        if len(fn.params) != len(node.args):
            raise BuildError(f"VM compiler: local function of {len(fn.params)} parameters "
                             f"called with {len(node.args)} arguments{_where(node)}", node.span)
        inner = dict(scope)  # the function's free variables are those of where it was made
        for p, a in zip(fn.params, node.args):
            inner[id(p)] = memo[id(a)]
        self.inlining.add(id(fn))
        try:
            sub, res = self.expr(fn.body, inner)
        finally:
            self.inlining.discard(id(fn))
        code.extend(sub)
        return res

    def recursive(self, fn) -> bool:
        from ..analysis.free import free_vars

        return any(self.let_vals.get(v) is fn for v in free_vars(fn))

    def flat_args(self, code, opnd, ty) -> list:
        if isinstance(ty, TensorType):
            return [opnd]
        src = self.as_reg(code, opnd)
        out = []
        for i, ft in enumerate(ty.fields):
            r = self.reg()
            code.append((_CALL, "vm.builtin.tuple_getitem", [("r", src), ("imm", i)], r))
            out.extend(self.flat_args(code, ("r", r), ft))
        return out

    def emit_call(self, code, node, memo):
        from ..op.registry import Op

        op = node.op
        args = [memo[id(a)] for a in node.args]
        if isinstance(op, Constructor):
            return self.call(code, "vm.builtin.make_tuple", [("imm", op.tag), *args])
        if isinstance(op, GlobalVar):
            self.owner.need_function(op)
            if op.name_hint == self.name and id(node) in self.tail:
                return self.tail_call(code, args)
            return self.call(code, op.name_hint, args)
        if isinstance(op, Op):
            node = make_primitive(node, list(node.args))
            from ..typing.infer import infer_expr

            infer_expr(node.op)
            return self.emit_kernel(code, node, memo)
        if isinstance(op, Function) and op.is_primitive:
            return self.emit_kernel(code, node, memo)
        val = ("fn", op, memo) if isinstance(op, Function) else (
            self.lookup(op, memo) if isinstance(op, Var) else memo[id(op)])
        kind = val[0]
        if kind == "fn":
            fn = val[1]
            if fn.is_primitive:
                return self.emit_kernel(code, node, memo, fn)
            if id(fn) not in self.inlining and not self.recursive(fn):
                return self.inline(code, fn, node, memo, val[2])
            name, caps = self.lift(code, fn, val[2])
            return self.call(code, name, args + caps)
        if kind == "self":
            if id(node) in self.tail:
                return self.tail_call(code, args)
            return self.call(code, val[1], args + list(val[2]))
        if kind == "f":
            return self.call(code, val[1], args)
        return self.call(code, "vm.builtin.invoke_closure", [("state",), val, *args])

    def tail_call(self, code, args):
        """A self call in tail position is a jump: the arguments move into the parameter
        registers (through temporaries, as they may read them) and control goes back to the
        first instruction, so loops written as recursion run in constant stack."""
        tmp = [self.as_reg(code, a) for a in args]
        if any(t < len(tmp) for t in tmp):  # an argument reads a parameter register
            tmp = [self.call(code, "vm.builtin.copy", [("r", t)])[1] for t in tmp]
        for i, t in enumerate(tmp):
            code.append((_CALL, "vm.builtin.copy", [("r", t)], i))
        code.append((_LOOP,))
        return ("r", tmp[0]) if tmp else self.call(code, "vm.builtin.make_tuple", [])

    def emit_kernel(self, code, node, memo, op=None):
        """A call of a primitive function (a fused kernel)."""
        import tvm

        fn = op if op is not None else node.op
        lowered = self.owner.cache.lower(fn)
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
        outs = self.alloc_outputs(code, lowered, ins)
        code.append((_CALL, lowered.name, ins + outs, None))
        ty = node.checked_type
        if isinstance(ty, TupleType):
            return self.pack_tuple(code, outs, ty)
        return outs[0]

    def alloc_and_call(self, code, lowered, ins):
        outs = self.alloc_outputs(code, lowered, ins)
        code.append((_CALL, lowered.name, list(ins) + outs, None))
        return outs

    def alloc_outputs(self, code, lowered, ins=()):
        """Storage for the kernel's outputs: static shapes are constants; dynamic ones are
        computed at run time by the kernel's shape function from ``ins`` (see
        :mod:`relay_tvm.backend.shape_func`)."""
        shapes = {}
        if lowered.batch_rows_input is not None:
            # a batch-loop kernel of one dynamic input: every output is (n, static...) with n
            # that input's first dimension (with several, n is their broadcast, which a shape
            # function computes: batch_loop.batch_shape_func)
            heap = ("r", self.shape_heap())
            src = ins[lowered.batch_rows_input]
            rank = len(lowered.input_types[lowered.batch_rows_input].shape)
            codes = [("imm", _STORE_TO_HEAP), ("imm", 0)]
            codes += [("imm", _NO_OP), ("imm", 0)] * (rank - 1)
            code.append((_CALL, "vm.builtin.match_shape",
                         [src, heap, ("imm", rank), *codes, ("str", lowered.name)], None))
            for i in lowered.dynamic_outputs:
                dims = [("imm", _LOAD_SHAPE), ("imm", 0)]
                for d in lowered.output_types[i].shape[1:]:
                    dims += [("imm", _USE_IMM), ("imm", int(d))]
                shapes[i] = self.call(code, "vm.builtin.make_shape",
                                      [heap, ("imm", len(dims) // 2), *dims])
        elif lowered.dynamic_outputs:
            vecs = []
            for i in lowered.dynamic_outputs:
                n = len(lowered.output_types[i].shape)
                vecs.append(self.alloc_static(code, (n,), "int64"))
            code.append((_CALL, lowered.shape_func_name,
                         [ins[i] for i in lowered.shape_func_inputs] + vecs, None))
            for i, v in zip(lowered.dynamic_outputs, vecs):
                shapes[i] = self.call(code, "vm.builtin.tensor_to_shape", [v])
        outs = []
        for i, t in enumerate(lowered.output_types):
            if i in shapes:
                s = self.reg()
                code.append((_CALL, "vm.builtin.alloc_storage",
                             [("state",), shapes[i], ("i", 0), ("dt", t.dtype),
                              ("str", "global")], s))
                r = self.reg()
                code.append((_CALL, "vm.builtin.alloc_tensor",
                             [("r", s), ("imm", 0), shapes[i], ("dt", t.dtype)], r))
                outs.append(("r", r))
                continue
            outs.append(self.alloc_static(code, tuple(int(d) for d in t.shape), t.dtype, t))
        return outs

    def alloc_static(self, code, shape, dtype, t=None):
        """A tensor of static ``shape`` from the VM's pooled allocator."""
        t = t if t is not None else TensorType(tuple(shape), dtype)
        s = self.reg()
        code.append((_CALL, "vm.builtin.alloc_storage",
                     [("state",), ("shape", (max(1, _nbytes(t)),)), ("i", 0), ("dt", "uint8"),
                      ("str", "global")], s))
        r = self.reg()
        code.append((_CALL, "vm.builtin.alloc_tensor",
                     [("r", s), ("imm", 0), ("shape", tuple(shape)), ("dt", dtype)], r))
        return ("r", r)

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


class VMCompiler:
    """Compiles the global functions of a typed, fused module reachable from ``main``, the
    local functions they lift, and wrappers of constructors used as function values.

    ``compile()`` returns the ``ExecBuilder`` and ``name -> (params, code)`` of the global
    functions (``params`` are the Relay parameters).
    """

    def __init__(self, mod, target, mod_name="vm", database=None):
        self.mod = mod
        self.cache = LowerCache(target, mod_name, database)
        self.pending = []
        self.done = set()
        self.lifted = {}  # id(local Function) -> (VM function name, captured Vars)
        self.pending_lifted = []
        self.ctor_funcs = {}  # constructor tag -> (VM function name, arity)
        self.names = set()
        self.call_depth = None
        self.stats = None

    def need_function(self, gv):
        if gv.name_hint not in self.done:
            self.done.add(gv.name_hint)
            self.names.add(gv.name_hint)
            self.pending.append(gv)

    def fresh(self, base) -> str:
        k = 0
        while f"{base}{k}" in self.names or f"{base}{k}" in self.mod:
            k += 1
        self.names.add(f"{base}{k}")
        return f"{base}{k}"

    def constructor_function(self, ctor) -> str:
        """A VM function ``(fields...) -> ctor(fields...)`` for a constructor used as a
        function value (e.g. ``@foldr(Cons, Nil, xs)``)."""
        if ctor.tag not in self.ctor_funcs:
            self.ctor_funcs[ctor.tag] = (self.fresh(f"ctor_{ctor.name_hint}_"), len(ctor.inputs))
        return self.ctor_funcs[ctor.tag][0]

    def compile(self):
        from tvm import relax
        from tvm.relax.exec_builder import VMFuncKind

        self.need_function(self.mod.get_global_var("main"))
        funcs, lifted = {}, {}
        while self.pending or self.pending_lifted:
            if self.pending:
                gv = self.pending.pop()
                f = self.mod[gv]
                funcs[gv.name_hint] = (f.params, _FuncCompiler(self, f, gv.name_hint).compile())
            else:
                name, fn, captured, self_var = self.pending_lifted.pop()
                code = _FuncCompiler(self, fn, name, captured, self_var).compile()
                lifted[name] = (len(fn.params) + len(captured), code)
        for tag, (name, arity) in self.ctor_funcs.items():
            lifted[name] = (arity, [(_CALL, "vm.builtin.make_tuple",
                                     [("imm", tag)] + [("r", i) for i in range(arity)], arity),
                                    (_RET, arity)])
        codes = {name: code for name, (_, code) in funcs.items()}
        codes.update((name, code) for name, (_, code) in lifted.items())
        #: how deep VM calls nest at run time (None: unbounded; see vm_emit.call_depth)
        self.call_depth = call_depth(codes)
        self.stats = _stats(codes, list(funcs) + list(lifted), self.cache.funcs)
        #: the tensor constants the code loads (``__relay_vm_consts`` returns them: the runtime
        #: copies an output that is one of them, see runtime.vm)
        self.constants = list(_tensor_constants(codes).values())
        ib = relax.ExecBuilder()
        for k in self.cache.funcs:
            ib.declare_function(k.name)
            if k.shape_func is not None:
                ib.declare_function(k.shape_func_name)
        for name in list(funcs) + list(lifted):
            ib.declare_function(name, VMFuncKind.VM_FUNC)
        for name, (params, code) in funcs.items():
            with ib.function(name, num_inputs=len(params),
                             param_names=[p.name_hint for p in params]):
                _emit(ib, code)
        for name, (n, code) in lifted.items():
            with ib.function(name, num_inputs=n):
                _emit(ib, code)
        return ib, {k: (v[0],) for k, v in funcs.items()}


def _tensor_constants(codes: dict) -> dict:
    """``id -> tensor``: the tensor constants the VM code loads, in order of first use."""
    found = {}
    for code in codes.values():
        for ins in code:
            if ins[0] != _CALL:
                continue
            for a in ins[2]:
                if a[0] == "c" and not isinstance(a[1], str) and hasattr(a[1], "shape"):
                    found.setdefault(id(a[1]), a[1])
    return found


def _stats(codes: dict, functions: list, kernels) -> dict:
    """What tvm.relay 0.19's ``Executable.stats`` listed: the shapes of the tensor constants
    the VM code loads, the VM functions (Relay globals and lifted closures) and the kernels
    (primitive functions and shape functions), in the order they are declared."""
    shapes = [[int(d) for d in c.shape] for c in _tensor_constants(codes).values()]
    prims = []
    for k in kernels:
        prims.append(k.name)
        if k.shape_func is not None:
            prims.append(k.shape_func_name)
    return {"constants": shapes, "globals": functions, "primitives": prims}


__all__ = ["VMCompiler"]
