"""``GraphModule``: run a module built by ``relay.build`` (tvm.contrib.graph_executor's API).

The host program is bytecode on TVM's VM runtime (see ``relay_tvm.backend.graph_codegen``);
``GraphModule`` keeps the inputs, runs ``main`` and keeps the outputs::

    lib = relay.build(mod, target="llvm", params=params)
    m = GraphModule(lib["default"](tvm.cpu()))
    m.set_input("data", x)
    m.run()
    y = m.get_output(0).numpy()

Inputs are checked on ``set_input``: an unknown name, a wrong shape or a wrong dtype raises
:class:`relay_tvm.errors.BuildError`; nothing is cast.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import BuildError, InputError, did_you_mean, no_implicit_cast
from .interpreter import host_tensor, native_order
from .pyargs import check_plain_layout, plain_tensor, python_arg


def _dtype_of(value) -> str:
    if isinstance(value, np.ndarray):
        return "bool" if value.dtype == np.bool_ else value.dtype.name
    return str(value.dtype)


def _shape_dtype(value) -> tuple:
    """``(shape, dtype)`` of a NumPy array or tvm Tensor, as the graph's input types are kept."""
    return tuple(int(d) for d in value.shape), _dtype_of(value)


#: kind of a device-code runtime module -> the ``tvm.<name>(0)`` device its kernels run on
_GPU_DEVICE = {"cuda": "cuda", "opencl": "opencl", "vulkan": "vulkan", "metal": "metal",
               "rocm": "rocm", "hip": "rocm", "webgpu": "webgpu"}


def _gpu_kinds(lib) -> list:
    """Kinds of the GPU kernel modules under ``lib`` (a relax VM executable or runtime module),
    sorted; empty for a CPU library."""
    # the import graph is a small DAG (host module -> kernel modules): no visited set, whose
    # id()s of transient FFI wrappers could be reused
    stack, kinds = [getattr(lib, "mod", lib)], set()
    while stack:
        m = stack.pop()
        kind = getattr(m, "kind", None)
        if kind in _GPU_DEVICE:
            kinds.add(kind)
        stack.extend(getattr(m, "imports", ()))
    return sorted(kinds)


def check_device(lib, dev, who: str, what: str):
    """The device ``dev`` (CPU when None; the first of a list) after checking that the
    compiled ``lib`` can run there: GPU kernels on a local CPU, or a device this machine / TVM
    runtime does not have, raise instead of failing inside TVM's runtime.

    Raises:
        InputError: a GPU-built ``lib`` and a CPU device.
        BuildError: not a device, or a device that does not exist.
    """
    import tvm

    dev = dev if dev is not None else tvm.cpu(0)
    if isinstance(dev, (list, tuple)):
        dev = dev[0]
    if not isinstance(dev, tvm.runtime.Device):
        raise BuildError(f"{who}: expected a device such as tvm.cpu(0) or tvm.cuda(0), got "
                         f"{type(dev).__name__} {dev!r}")
    if dev.device_type == 1:  # a local CPU (an RPC session's devices are numbered above)
        gpu = _gpu_kinds(lib)
        if gpu:
            kind = gpu[0]
            raise InputError(f"{who}: the {what} was built for target {kind} and cannot run "
                             f"on device {dev} (its kernels are {kind} code); give "
                             f"tvm.{_GPU_DEVICE[kind]}(0), or build for 'llvm' to run on the "
                             f"CPU")
    if not dev.exist:
        raise BuildError(f"{who}: device {dev} does not exist on this machine (or this TVM "
                         f"runtime was built without its support)")
    return dev


class GraphModule:
    """Wrapper of a compiled graph module (tvm.contrib.graph_executor.GraphModule).

    Args:
        module: what ``lib["default"](dev)`` returns (a ``GraphModule``), or another
            ``GraphModule``.
    """

    def __init__(self, module):
        if not isinstance(module, GraphModule):
            raise BuildError(f"GraphModule: expected lib['default'](dev), got "
                             f"{type(module).__name__}")
        # one executor behind both objects, as 0.19's GraphModule wrapped the executor itself:
        # an input set through either is the other's too (a copy of the state made them two
        # executors that each lacked the other's inputs; fresh-user trial)
        self.__dict__ = module.__dict__

    @property
    def num_threads(self) -> int:
        """Threads a kernel runs on (TVM's pool: every usable core unless ``TVM_NUM_THREADS``
        or ``OMP_NUM_THREADS`` says otherwise; see ``relay_tvm._threads``)."""
        from .._threads import num_threads

        return num_threads()

    @classmethod
    def _from_executable(cls, lib, dev, meta=None, params=None):
        import tvm
        from tvm import relax

        self = cls.__new__(cls)
        dev = check_device(lib, dev, "lib['default'](dev)", "library")
        self.device = dev
        devices = [dev] if dev.dlpack_device_type() == 1 else [dev, tvm.cpu(0)]
        from ..backend.link import generate_machine_code

        generate_machine_code(lib)  # an in-process build's kernels, on every build thread
        self._vm = relax.VirtualMachine(lib, devices)
        self._lib = lib
        if meta is None:
            meta = json.loads(self._vm["__relay_meta"]())
        self._meta = meta
        graph = json.loads(meta["graph_json"])
        self._graph = graph
        self._aliased_outputs = None  # outputs that are inputs or views of one (_own_outputs)
        shapes = graph["attrs"]["shape"][1]
        dtypes = graph["attrs"]["dltype"][1]
        row = graph["node_row_ptr"]
        self._input_names = [graph["nodes"][n]["name"] for n in graph["arg_nodes"]]
        self._input_index = {}
        for i, n in enumerate(self._input_names):
            self._input_index.setdefault(n, i)  # duplicate names: the first one, as in Relay
        self._input_types = [(tuple(shapes[row[n]]), dtypes[row[n]]) for n in graph["arg_nodes"]]
        self._output_types = [(tuple(shapes[row[a] + b]), dtypes[row[a] + b])
                              for a, b, _ in graph["heads"]]
        self._num_user_inputs = len(meta["input_names"])
        self._inputs = [None] * len(self._input_names)
        self._outputs = []
        # where each set input's tensor comes from (input index -> origin), which says
        # whether set_input may write into it:
        #   "library": a parameter bound into the library on the host, one tensor for every
        #              module of the library: copied (_own) before anything can write it;
        #   "own":     allocated by this module, which alone reads it: set_input copies into
        #              it (0.19 wrote into the executor's own buffer too; a fresh tensor each
        #              run took 3x the copy's time, its pages faulted in anew);
        #   "shared":  one tensor with another module (share_params): set_input writes into
        #              it and both modules see the value, as 0.19's shared buffer;
        #   "user":    a caller's tensor (set_input_zero_copy, or shared from a module that
        #              has it so): read, never written; set_input replaces it.
        self._origin = {}
        self._output_dest = {}  # output index -> tensor it is written to (set_output_zero_copy)
        self._main = self._vm["main"]
        if params is None:
            vals = self._vm["__relay_params"]()
            params = dict(zip(meta["param_names"], list(vals)))
        for name, v in params.items():
            i = self._input_index[name]
            if dev.dlpack_device_type() == 1:
                self._inputs[i] = v
                self._origin[i] = "library"
            else:
                self._inputs[i] = tvm.runtime.tensor(v.numpy(), dev)
                self._origin[i] = "own"
        # an output that is a parameter is this module's own copy (as get_input's; a
        # reshape-only __nop node never views a graph input or parameter)
        heads = {nid for nid, _, _ in graph["heads"]}
        for i, nid in enumerate(graph["arg_nodes"]):
            if nid in heads:
                self._own(i)
        return self

    def _bound_names(self) -> set:
        """Names of the parameters bound into the library at build time (a set, made once)."""
        bound = self.__dict__.get("_bound_set")
        if bound is None:
            bound = self._bound_set = set(self._meta.get("bound_params", ()))
        return bound

    def _own(self, i: int) -> None:
        """Give input ``i`` a tensor of this module's own if it still reads the library's.

        The library's bound parameters are one set of tensors for every module made from it
        (no copy per module at load); anything that hands a parameter's tensor out
        (``get_input``, an output that is a parameter, ``share_params``) first copies it, so
        a write through it changes this module only, as each 0.19 graph executor held its own
        copy of the parameters."""
        if self._origin.get(i) == "library":
            self._inputs[i] = self._inputs[i].copyto(self.device)
            self._origin[i] = "own"

    # ---- inputs ---------------------------------------------------------------------------

    def _index(self, key, where: str = "set_input") -> int:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= key < len(self._input_names):
                k = len(self._input_names)
                raise InputError(f"{where}: input index {key} out of range; the module has "
                                 f"{k} input{'s' if k != 1 else ''} {self._input_names}")
            return int(key)
        if isinstance(key, str):
            if key not in self._input_index:
                lifted = [n for n in self._meta.get("param_names", []) if n in self._input_index]
                free = [n for n in self._input_names if n not in lifted]
                near = did_you_mean(key, self._input_names)
                if key in self._meta.get("bound_params", []):
                    hint = (" (given to relay.build's params=, it is bound into the module at "
                            "build time; to set it at run time, build without it in params=)")
                elif near:  # a misspelling: the closest name says it
                    hint = ""
                else:
                    hint = (" (an input the model never reads is not a parameter of the "
                            "compiled function)")
                held = (f"; {lifted} hold constants lifted at build time" if lifted else "")
                raise InputError(f"{where}: unknown input {key!r}{near}; the module's inputs "
                                 f"are {free}{held}{hint}")
            return self._input_index[key]
        raise InputError(f"{where}: key must be an input name or index, got {key!r}")

    def set_input(self, key=None, value=None, **params):
        """Set input ``key`` (name or index) to ``value`` (NumPy array or tvm Tensor; a Python
        number or nested list of numbers is taken in the input's dtype, as 0.19's
        ``copyfrom`` did, and refused where that dtype cannot hold it: see
        :mod:`relay_tvm.runtime.pyargs`), and each ``name=value`` of ``params``.

        The value is copied: into the tensor this module allocated for the input at an earlier
        ``set_input`` / ``get_input`` (as 0.19 wrote into the executor's input buffer, so a
        tensor from ``get_input`` shows the new value), else into a new one; never into a
        tensor given to ``set_input_zero_copy``.

        A name of ``params`` bound into the library at build time (``relay.build(params=)``)
        is skipped, as tvm.relay's ``set_input(**params)`` did, when its value has the bound
        parameter's shape and dtype.

        Raises:
            InputError: unknown name, index out of range, shape/dtype different from the
                graph's (no implicit cast or broadcast), a value without a key, or a bound
                parameter's name with a value of another shape or dtype.
        """
        items = []
        if key is not None:
            items.append((key, value))
        elif value is not None:
            raise InputError("set_input: a value without a key (give the input's name or index: "
                             "set_input('data', value))")
        for k, v in params.items():
            bound = self._bound_names()
            types = self._meta.get("bound_param_types", {})
            # tvm.relay idiom: set_input(**params) with the params given to relay.build; those
            # are bound in the library already (a name that is neither is still an error)
            if k in bound and k not in self._input_index:
                if k in types and hasattr(v, "shape"):
                    want, got = (tuple(types[k][0]), types[k][1]), _shape_dtype(v)
                    if got != want:
                        raise InputError(
                            f"set_input {k!r}: a parameter bound into the library at build "
                            f"time (relay.build(params=...)) with shape {want[0]} and dtype "
                            f"{want[1]}; this value has shape {got[0]} and dtype {got[1]} (a "
                            f"matching value is skipped: the library keeps its own)")
                continue
            items.append((k, v))
        for k, v in items:
            i = self._index(k)
            if v is None:
                raise InputError(f"set_input: no value given for input "
                                 f"{self._input_names[i]!r}")
            self._set_one(i, v, f"set_input {self._input_names[i]!r}")

    def _set_one(self, i: int, v, where: str) -> None:
        """Set input ``i`` to ``v`` (checked, copied: see :meth:`set_input`); ``where`` names
        it in messages (``create_executor("graph")`` calls it an argument of the function)."""
        import tvm

        shape, dtype = self._input_types[i]
        # a NumPy scalar as a 0-d array of its dtype, a Python number or list in the input's
        # dtype (values it cannot hold refused), as the other executors take them
        v = python_arg(v, dtype, where)
        if not isinstance(v, np.ndarray) and not hasattr(v, "numpy"):
            raise InputError(f"{where}: expected a NumPy array or tvm Tensor of shape {shape} "
                             f"and dtype {dtype}, got {type(v).__name__}")
        got_shape, got_dtype = _shape_dtype(v)
        if got_dtype != dtype:
            raise InputError(f"{where}: got dtype {got_dtype}, expected {dtype}"
                             f"{no_implicit_cast(dtype, v)}")
        if got_shape != shape:
            raise InputError(f"{where}: got shape {got_shape}, expected {shape}")
        if not isinstance(v, np.ndarray):
            # TVM copies compact tensors only (a fresh-user trial got TVM's
            # "CopyDataFromTo only support contiguous array" for a strided one)
            v = plain_tensor(v, where)
        if self._origin.get(i) in ("own", "shared"):  # written into, not replaced
            if isinstance(v, np.ndarray):
                self._inputs[i].copyfrom(native_order(v))
            else:
                v.copyto(self._inputs[i])
            return
        if isinstance(v, np.ndarray):
            t = host_tensor(v, self.device)
        elif v.device == self.device:
            t = v.copyto(self.device)
        else:
            t = tvm.runtime.tensor(v.numpy(), self.device)
        self._inputs[i] = t
        self._origin[i] = "own"

    def set_input_zero_copy(self, key, value):
        """Use the tvm Tensor ``value`` itself as input ``key`` (name or index), without a copy
        (0.19's ``set_input_zero_copy``): later changes to ``value`` are seen by later runs.

        Raises:
            InputError: unknown input; ``value`` not a tvm Tensor on the module's device, or of
                another shape or dtype.
        """
        i = self._index(key, "set_input_zero_copy")
        where = f"set_input_zero_copy {self._input_names[i]!r}"
        self._check_tensor(value, self._input_types[i], where,
                           " (a NumPy array needs a copy: use set_input)")
        check_plain_layout(value, where)
        self._inputs[i] = value
        self._origin[i] = "user"  # the caller's tensor: never written by set_input

    def share_params(self, other, params_bytes) -> None:
        """Read the parameters named in ``params_bytes`` from ``other``'s own input tensors,
        without a copy (tvm.relay 0.19's ``GraphModule.share_params``: several modules of one
        model, e.g. one per thread, hold its weights once).

        Only the names of ``params_bytes`` (a blob of :func:`relay_tvm.save_param_dict`) are
        used; a name that is not an input of this module is skipped, as in 0.19 (e.g. a
        parameter bound into the library by ``relay.build(params=...)``, which modules of one
        library hold once already). A shared input is one tensor for both modules: a later
        ``set_input`` or ``load_params`` of it on either module writes into that tensor, so
        both see the new value (as 0.19's shared buffer); ``set_input_zero_copy`` gives the
        module that calls it a tensor of its own again. A tensor a caller gave ``other`` with
        ``set_input_zero_copy`` is read by both but never written: a ``set_input`` of it on
        either module gives that module a tensor of its own. An input ``other`` has not set yet
        is shared as the zero tensor :meth:`get_input` gives, filled by a later ``set_input``.

        Args:
            other: the :class:`GraphModule` to share from (its ``module`` too), on this
                module's device.
            params_bytes: ``bytes`` / ``bytearray`` of a saved parameter dict.

        Raises:
            InputError: ``other`` is not a GraphModule or runs on another device; a name that
                is an input here is not one of ``other``'s, or has another shape or dtype
                there.
            ConversionError: ``params_bytes`` is not a saved parameter dict.
        """
        from ..backend.param_dict import load_param_dict

        if not isinstance(other, GraphModule):
            raise InputError(f"share_params: other must be a GraphModule (lib['default'](dev)), "
                             f"got {type(other).__name__}")
        if other.device != self.device:
            raise InputError(f"share_params: the other module runs on {other.device}, this one "
                             f"on {self.device}; tensors are shared on one device only")
        if isinstance(params_bytes, (bytes, bytearray, memoryview)):
            params_bytes = bytes(params_bytes)
        names = list(load_param_dict(params_bytes))
        plan = []
        for name in names:
            i = self._input_index.get(name)
            if i is None:
                continue
            j = other._input_index.get(name)
            if j is None:
                raise InputError(f"share_params: {name!r} is an input of this module but not "
                                 f"of the module shared from (its inputs are "
                                 f"{other._input_names})")
            if self._input_types[i] != other._input_types[j]:
                raise InputError(f"share_params {name!r}: {self._input_types[i][0]} "
                                 f"{self._input_types[i][1]} here, {other._input_types[j][0]} "
                                 f"{other._input_types[j][1]} in the module shared from")
            plan.append((i, j))
        for i, j in plan:  # checked first: all or nothing
            self._inputs[i] = other.get_input(j)  # the library's tensor: other's copy first
            if other._origin[j] == "user":  # the caller's tensor, shared: still never written
                self._origin[i] = "user"
            else:
                self._origin[i] = other._origin[j] = "shared"

    def get_input(self, key):
        """The tensor of input ``key`` (name or index). Before ``set_input`` it is a zero
        tensor of the input's shape and dtype that becomes the input (0.19 returned the
        executor's own input buffer, which scripts fill with ``copyfrom``). A parameter bound
        into the library is this module's own copy of it (made at the first ``get_input``):
        writing into it changes this module's runs, not the library's ``get_params()`` or
        another module's, as in 0.19."""
        import tvm

        i = self._index(key, "get_input")
        self._own(i)  # a bound parameter: this module's copy, not the library's tensor
        if self._inputs[i] is None:
            shape, dtype = self._input_types[i]
            self._inputs[i] = tvm.runtime.tensor(np.zeros(shape, dtype), self.device)
            self._origin[i] = "own"
        return self._inputs[i]

    def unset_inputs(self) -> list:
        """Names of the inputs neither set (``set_input``) nor built into the library (bound
        weights): what a run still needs."""
        return [n for n, v in zip(self._input_names, self._inputs) if v is None]

    def get_input_index(self, name) -> int:
        """The index of input ``name``, or -1 when the module has no input of that name
        (tvm.relay 0.19's ``GraphModule.get_input_index``; ``set_input`` of such a name raises
        :class:`~relay_tvm.errors.InputError` naming the inputs there are).

        Raises:
            InputError: ``name`` is neither a string nor an index in range.
        """
        if isinstance(name, str) and name not in self._input_index:
            return -1
        return self._index(name, "get_input_index")

    def get_num_inputs(self) -> int:
        return len(self._input_names)

    def get_input_info(self):
        """``(shape_dict, dtype_dict)`` of all inputs."""
        return ({n: t[0] for n, t in zip(self._input_names, self._input_types)},
                {n: t[1] for n, t in zip(self._input_names, self._input_types)})

    def load_params(self, blob: bytes):
        """Set inputs from a parameter blob of :func:`relay_tvm.save_param_dict`."""
        from ..backend.param_dict import load_param_dict

        self.set_input(**load_param_dict(blob))

    # ---- running --------------------------------------------------------------------------

    def _check_ready(self):
        missing = self.unset_inputs()
        if missing:
            raise InputError(f"run: inputs {missing} were not set (set_input)")

    def run(self, **input_dict):
        """Run the graph (after setting ``input_dict`` if given)."""
        if input_dict:
            self.set_input(**input_dict)
        self._check_ready()
        try:
            out = self._main(*self._inputs)
        except Exception as e:
            from ..backend.shape_func import failed_check

            check = failed_check(str(e))  # a kernel's check of its input values (index range)
            if check:
                raise InputError(check) from None
            raise
        self._outputs = self._own_outputs(list(out))
        self._deliver_outputs()

    def _own_outputs(self, outs: list) -> list:
        """``outs`` with a copy of each output that is a user input's tensor or a view of one
        (a graph output that is an input itself, or a reshape of one): a later ``set_input``
        writes into that tensor, and the output taken before would change with it (fresh-user
        trial). An output that is a parameter bound into the library stays the module's own
        copy of it, as 0.19's executor buffer was (tests/runtime/test_bound_params.py)."""
        alias = self._aliased_outputs
        if alias is None:
            nodes = self._graph["nodes"]
            bound = set(self._meta.get("param_names", ())) | set(
                self._meta.get("bound_params", ()))

            def of_input(nid):
                node = nodes[nid]
                while node["op"] != "null" and node["attrs"].get("func_name") == "__nop":
                    nid = node["inputs"][0][0]
                    node = nodes[nid]
                return node["op"] == "null" and node["name"] not in bound

            alias = self._aliased_outputs = [k for k, h in enumerate(self._graph["heads"])
                                             if of_input(h[0])]
        for k in alias:
            outs[k] = outs[k].copyto(outs[k].device)
        return outs

    def _deliver_outputs(self) -> None:
        """Copy the outputs of a run into the tensors given to :meth:`set_output_zero_copy`."""
        for k, dest in self._output_dest.items():
            if self._outputs[k] is not dest:
                dest.copyfrom(self._outputs[k])
                self._outputs[k] = dest

    def set_output_zero_copy(self, index, value) -> None:
        """Have each later :meth:`run` leave output ``index`` in the tvm Tensor ``value``
        (tvm.relay 0.19's ``set_output_zero_copy``); :meth:`get_output` then returns
        ``value`` itself.

        Not zero-copy here: the host program allocates its outputs from its memory plan (the
        kernels cannot be pointed at a given buffer), so the output is copied into ``value``
        at the end of each run -- the result is 0.19's, at the cost of one copy of the output.

        Args:
            index: the output's index (relay_tvm graphs have no output names).
            value: a tvm Tensor of the output's shape and dtype on the module's device.

        Raises:
            InputError: ``index`` is not an output index; ``value`` is not a tvm Tensor, or of
                another shape, dtype or device.
        """
        n = self.get_num_outputs()
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
                or not 0 <= index < n:
            raise InputError(f"set_output_zero_copy: output index {index!r} out of range; the "
                             f"module has {n} output{'s' if n != 1 else ''} (numbered, not "
                             f"named)")
        index = int(index)
        self._check_tensor(value, self._output_types[index], f"set_output_zero_copy({index})")
        self._output_dest[index] = value

    def _check_tensor(self, value, expected, where, hint="") -> None:
        """``value`` must be a tvm Tensor on this module's device of ``expected`` (shape,
        dtype); an InputError naming ``where`` otherwise."""
        import tvm

        shape, dtype = expected
        if not isinstance(value, tvm.runtime.Tensor):
            raise InputError(f"{where}: expected a tvm Tensor of shape {shape} and dtype "
                             f"{dtype}{hint}, got {type(value).__name__}")
        if value.device != self.device:
            raise InputError(f"{where}: tensor on {value.device}, the module runs on "
                             f"{self.device}")
        got_shape, got_dtype = _shape_dtype(value)
        if (got_shape, got_dtype) != (shape, dtype):
            raise InputError(f"{where}: got {got_shape} {got_dtype}, expected {shape} {dtype}")

    def get_num_outputs(self) -> int:
        return len(self._output_types)

    def get_output(self, index: int, out=None):
        """Output ``index`` of the last run (copied into ``out`` when given). Each run's
        outputs are new tensors: one taken before a ``run()`` keeps its values (0.19 returned
        a view of the executor's buffer, which the next run overwrote).

        Raises:
            InputError: no run yet, ``index`` out of range, or ``out`` not a tvm tensor of the
                output's shape and dtype.
        """
        n = self.get_num_outputs()
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise InputError(f"get_output: index must be an int (outputs are numbered, not "
                             f"named), got {type(index).__name__} {index!r}")
        if not 0 <= index < n:  # checked first: true before a run too
            raise InputError(f"get_output: index {index} out of range; the module has "
                             f"{n} output{'s' if n != 1 else ''}")
        if not self._outputs:
            raise InputError("get_output: the module has not run yet (run())")
        res = self._outputs[index]
        if out is not None:
            want = _shape_dtype(res)
            if not hasattr(out, "copyfrom") or _shape_dtype(out) != want:
                got = _shape_dtype(out) if hasattr(out, "shape") else ("?", "?")
                raise InputError(f"get_output({index}, out): out must be a tvm tensor of shape "
                                 f"{want[0]} and dtype {want[1]} (the output's); got "
                                 f"{type(out).__name__} of shape {got[0]}, dtype {got[1]}")
            out.copyfrom(res)
            return out
        return res

    def get_outputs_structured(self):
        """The outputs of the last run nested as ``main``'s result type (tuples)."""
        def build(s):
            if isinstance(s, list):
                return tuple(build(x) for x in s)
            return self._outputs[s]

        return build(self._meta["output_structure"])

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  end_to_end=False, **kwargs):
        """Time ``run`` (tvm.contrib.graph_executor.GraphModule.benchmark).

        Returns:
            ``tvm.runtime.module.BenchmarkResult`` with ``mean``, ``median``, ``std`` (seconds)
            and ``results``.

        Raises:
            InputError: ``func_name`` other than ``"run"``; ``device`` other than the module's;
                inputs not set.
        """
        if func_name != "run":  # 0.19 timed the named function of the executor module
            raise InputError(f"benchmark: func_name {func_name!r}: only 'run' is timed (the "
                             f"module's other functions set or read values)")
        dev = device if device is not None else self.device
        if dev != self.device:
            raise InputError(f"benchmark: device {dev}: the module runs on {self.device}")
        if kwargs:
            self.set_input(**kwargs)
        self._check_ready()
        from .._threads import keep_affinity

        self._vm.save_function("main", "__relay_bench", *self._inputs)
        f = self._vm.time_evaluator("__relay_bench", dev, number=number, repeat=repeat,
                                    min_repeat_ms=min_repeat_ms or 0)
        with keep_affinity():  # TVM's pool may pin this thread (see keep_affinity)
            result = f()
        self.run()  # the outputs of a run, as after 0.19's benchmark (which ran in place)
        return result

    # ---- the debug path: a Python loop over the kernels ----------------------------------------

    def _kernel_module(self, name):
        mod = getattr(self._lib, "mod", self._lib)
        stack = [mod]
        while stack:
            m = stack.pop()
            try:
                f = m.get_function(name)
                if f is not None:
                    return m
            except Exception:
                pass
            stack.extend(m.imports)
        raise BuildError(f"kernel {name!r} is not in the library")

    def _kernel_calls(self):
        """``[(node index, kernel name, packed function, args)]`` in execution order, each
        node's outputs in tensors of their own (allocated here), inputs from the set inputs.
        A ``__nop`` node (a reshape-only call) has no kernel: its output is a view of its
        input, and it is not in the list."""
        import tvm

        self._check_ready()
        graph = self._graph
        shapes = graph["attrs"]["shape"][1]
        dtypes = graph["attrs"]["dltype"][1]
        row = graph["node_row_ptr"]
        vals, calls = {}, []
        for k, nid in enumerate(graph["arg_nodes"]):
            self._own(k)  # every node's output is handed out (debug_get_output): no library's
            vals[(nid, 0)] = self._inputs[k]
        for nid, node in enumerate(graph["nodes"]):
            if node["op"] == "null":
                continue
            name = node["attrs"]["func_name"]
            if name == "__nop":
                a, b, _ = node["inputs"][0]
                vals[(nid, 0)] = vals[(a, b)]._create_view(tuple(shapes[row[nid]]))
                continue
            nout = int(node["attrs"]["num_outputs"])
            outs = [tvm.runtime.empty(shapes[row[nid] + i], dtypes[row[nid] + i], self.device)
                    for i in range(nout)]
            args = [vals[(a, b)] for a, b, _ in node["inputs"]] + outs
            calls.append((nid, name, self._kernel_module(name), args))
            for i, o in enumerate(outs):
                vals[(nid, i)] = o
        return vals, calls

    def _debug_run(self, time_number=0, time_repeat=1):
        from .._threads import keep_affinity

        vals, calls = self._kernel_calls()
        times = []
        with keep_affinity():
            for nid, name, kmod, args in calls:
                kmod.get_function(name)(*args)
                if time_number:
                    t = kmod.time_evaluator(name, self.device, number=time_number,
                                            repeat=time_repeat)(*args)
                    times.append((nid, name, float(t.median)))
        return vals, times

    def _sequence_times(self, repeat: int, flush_bytes: int = 0):
        """Median seconds of each kernel call over ``repeat`` passes of the whole sequence,
        each kernel timed once per pass where it runs in the model (after its producers);
        with ``flush_bytes``, each call instead follows a read of that many bytes (its data
        and weights then come from memory)."""
        import time

        _, calls = self._kernel_calls()
        funcs = [(nid, name, kmod.get_function(name), args) for nid, name, kmod, args in calls]
        for _, _, f, args in funcs:  # a first pass: the kernels are loaded and the data is set
            f(*args)
        sweep = np.ones(max(flush_bytes // 4, 1), "float32") if flush_bytes else None
        samples = [[] for _ in funcs]
        clock = time.perf_counter
        for _ in range(repeat):
            for k, (_, _, f, args) in enumerate(funcs):
                if sweep is not None:
                    sweep.sum()
                t = clock()
                f(*args)
                samples[k].append(clock() - t)
        return [(nid, name, float(np.median(s))) for (nid, name, _, _), s in zip(funcs, samples)]

    def debug_get_output(self, node):
        """Output 0 of graph node ``node`` (index, or name of the first node with that name),
        computed by running the kernels one by one (tvm.contrib.debugger's API)."""
        nodes = self._graph["nodes"]
        if isinstance(node, str):
            idx = [i for i, n in enumerate(nodes) if n["name"] == node]
            if not idx:
                raise BuildError(f"debug_get_output: no node named {node!r}")
            node = idx[0]
        if not 0 <= node < len(nodes):
            raise BuildError(f"debug_get_output: node {node} out of range ({len(nodes)} nodes)")
        vals, _ = self._debug_run()
        return vals[(node, 0)]

    def profile(self, number=3, repeat=3, show=False, mode="alone", flush_bytes=64 << 20):
        """Time every kernel call separately (a Python loop over the kernels).

        Args:
            number, repeat: ``mode="alone"``: each kernel is run ``number`` times in a row,
                ``repeat`` such measurements, the median kept (``time_evaluator``; the data
                and weights are then in the caches). Other modes: ``repeat`` passes over the
                whole sequence (``number`` unused), the median of each kernel's passes kept.
            show: also print a table sorted by time.
            mode: ``"alone"`` (as above); ``"sequence"``: each kernel timed once per pass as
                it runs inside the model (its input just written by its producer, its weights
                wherever the previous kernels left them: the times of a real run);
                ``"cold"``: each kernel timed after reading ``flush_bytes`` of other memory
                (its data and weights from memory). Comparing the modes tells how much of a
                run goes to caches and to the hand-over between kernels.
            flush_bytes: bytes read before each kernel with ``mode="cold"`` (more than the
                last-level cache).

        Returns:
            list of ``(node index, kernel name, seconds)`` in execution order.

        Raises:
            InputError: an unknown ``mode`` or a non-positive ``repeat``.
        """
        if mode not in ("alone", "sequence", "cold"):
            raise InputError(f"profile: mode must be 'alone', 'sequence' or 'cold', got {mode!r}")
        if int(repeat) < 1 or int(number) < 1:
            raise InputError(f"profile: number and repeat must be >= 1, got {number}, {repeat}")
        if mode == "alone":
            _, times = self._debug_run(number, repeat)
        else:
            times = self._sequence_times(int(repeat), flush_bytes if mode == "cold" else 0)
        if show:
            total = sum(t for _, _, t in times) or 1.0
            print(f"{'node':>5}  {'ms':>9}  {'%':>5}  kernel ({mode})")
            for nid, name, t in sorted(times, key=lambda r: -r[2]):
                print(f"{nid:>5}  {t * 1e3:>9.3f}  {100 * t / total:>5.1f}  {name}")
            print(f"total {total * 1e3:.3f} ms over {len(times)} kernel calls")
        return times

    @property
    def memory(self) -> dict:
        """The memory plan summary: planned bytes vs. the sum of all intermediates."""
        return dict(self._meta.get("memory", {}))

    def get_graph_json(self) -> str:
        return self._meta["graph_json"]

    @property
    def module(self):
        """The runtime module (tvm.relay scripts call ``m.module.time_evaluator("run", dev)``
        and ``m.module["set_input"]``); here the GraphModule itself serves both."""
        return self

    def time_evaluator(self, func_name, dev=None, number=1, repeat=1, min_repeat_ms=0, **_):
        """``f()`` timing ``func_name`` (only ``"run"``) as
        ``tvm.runtime.Module.time_evaluator`` did; returns a BenchmarkResult (seconds).

        Raises:
            BuildError: a function other than ``run``.
        """
        if func_name != "run":
            raise BuildError(f"time_evaluator: only 'run' can be timed, got {func_name!r}")
        return lambda *args: self.benchmark(dev, "run", repeat=repeat, number=number,
                                            min_repeat_ms=min_repeat_ms)

    def __getitem__(self, name):  # module["set_input"](...) as with a tvm runtime module
        fn = {"set_input": self.set_input, "run": self.run, "get_output": self.get_output,
              "get_num_outputs": self.get_num_outputs, "get_input": self.get_input,
              "get_num_inputs": self.get_num_inputs, "load_params": self.load_params,
              "set_input_zero_copy": self.set_input_zero_copy,
              "set_output_zero_copy": self.set_output_zero_copy,
              "share_params": self.share_params,
              "get_input_index": self.get_input_index}.get(name)
        if fn is None:
            raise InputError(f"GraphModule has no function {name!r}")
        return fn


class LoadedFactory:
    """What :func:`load_module` returns: ``m["default"](dev)`` gives a :class:`GraphModule`."""

    def __init__(self, lib, path: str | None = None):
        self.lib = lib
        self.path = path  # the file it was loaded from (export_library copies it)
        self._meta = None
        self._vm = None

    def _host_vm(self):
        """A VM of the library on the host, for its ``__relay_meta`` / ``__relay_params``."""
        if self._vm is None:
            import tvm
            from tvm import relax

            self._vm = relax.VirtualMachine(self.lib, tvm.cpu(0))
        return self._vm

    def _get_meta(self):
        if self._meta is None:
            self._meta = json.loads(self._host_vm()["__relay_meta"]())
        return self._meta

    @property
    def libmod_name(self) -> str:
        return self._get_meta().get("mod_name", "default")

    def __getitem__(self, name):
        from ..backend.build_module import factory_function

        return factory_function(self, name, "loaded module",
                                lambda dev: GraphModule._from_executable(self.lib, dev), "m")

    def get_graph_json(self) -> str:
        return self._get_meta()["graph_json"]

    def get_params(self) -> dict:
        """``name -> tvm Tensor``: the parameters bound into the library (``p0``, ...), shared
        with it (see :meth:`GraphModule.get_input` for the copies modules make)."""
        names = self._get_meta()["param_names"]
        return dict(zip(names, list(self._host_vm()["__relay_params"]())))

    def export_library(self, path, **kwargs):
        """Write the loaded library again (to a ``.so``, ``.dylib``, ``.dll`` or ``.tar``
        path, the kind of file it was loaded from): a copy of that file (see
        :func:`.library.copy_loaded`, which says what it raises)."""
        from ..backend.library_file import check_export_path
        from .library import copy_loaded, without_scope_log

        check_export_path(path, "export_library", archive=True)
        if self.path is not None:
            copy_loaded(self.path, path, kwargs, "export_library")
            return
        with without_scope_log():  # TVM logs the executable's memory scopes when saving
            self.lib.export_library(path, **kwargs)


def create(graph_json_str: str, libmod, device=None) -> GraphModule:
    """``tvm.contrib.graph_executor.create(graph_json, lib, dev)``: a :class:`GraphModule` of
    ``libmod`` (what ``relay.build`` or :func:`load_module` returned). relay_tvm libraries carry
    their graph, so ``graph_json_str`` must be that graph.

    Raises:
        BuildError: ``libmod`` is not a relay_tvm module, or the graph differs from its own.
    """
    if not hasattr(libmod, "get_graph_json"):
        # lib.get_lib() of a relay_tvm build, or a tvm.runtime.load_module of an exported file:
        # the VM executable that embeds the graph
        fac = LoadedFactory(libmod)
        try:
            fac._get_meta()
        except Exception:
            fac = None
        if fac is not None:
            libmod = fac
    if not hasattr(libmod, "get_graph_json") or not hasattr(libmod, "__getitem__"):
        raise BuildError(f"graph_executor.create: expected the module relay.build or "
                         f"load_module returned, got {type(libmod).__name__}")
    own = json.loads(libmod.get_graph_json())
    given = None
    if graph_json_str is not None:
        try:
            given = json.loads(graph_json_str)
        except (TypeError, ValueError) as e:
            raise BuildError(f"graph_executor.create: graph_json_str is not a graph JSON "
                             f"({e}); pass lib.get_graph_json() or None") from None
    if given is not None and given != own:
        raise BuildError("graph_executor.create: the graph JSON differs from the one compiled "
                         "into the library (relay_tvm libraries embed their graph)")
    name = getattr(libmod, "libmod_name", "default")
    return GraphModule(libmod[name](device))


def load_module(path: str) -> LoadedFactory:
    """Load a library written by ``export_library`` (in any process).

    Raises:
        BuildError: the file is missing or is not a relay_tvm graph module (a VM executable is
            named as such, with the loader to use).
    """
    from .library import library_kind, load_library, not_ours

    lib = load_library(path, "load_module")
    kind = library_kind(lib)
    if kind == "vm":
        raise BuildError(
            f"load_module: {path!r} is a relay_tvm VM executable (from "
            f"relay.vm.compile(...).export_library), not a graph module; load it with "
            f"relay.vm.load_executable({path!r}) and run it on relay.vm.VirtualMachine")
    if kind != "graph":
        raise BuildError(not_ours(path, lib, "load_module"))
    return LoadedFactory(lib, path)


__all__ = ["GraphModule", "load_module", "LoadedFactory", "create"]


def _register_with_the_factory() -> None:
    from ..backend.build_module import GraphExecutorFactoryModule

    GraphExecutorFactoryModule.module_class = GraphModule  # lib["default"](dev) -> GraphModule


_register_with_the_factory()
