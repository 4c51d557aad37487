"""Targets: the strings users type, translated to what TVM 0.27 accepts.

TVM 0.27 only takes targets as JSON dicts (``{"kind": "llvm", "mcpu": "skylake-avx512"}``) or
bare kind names; tvm.relay users wrote command-line strings (``"llvm -mcpu=skylake-avx512"``).
:func:`make_target` accepts both, plus ``tvm.target.Target`` objects, and gives plain ``"llvm"``
the host CPU (``mcpu``/``mtriple`` of the machine), as TVM's old ``llvm -mcpu=native`` did.

Translation table (string → dict), for example::

    "llvm"                               {"kind": "llvm", "mcpu": <host cpu>, "mtriple": <host>}
    "llvm -mcpu=skylake-avx512"          {"kind": "llvm", "mcpu": "skylake-avx512",
                                          "mtriple": <host>}
    "llvm -mtriple=aarch64-linux-gnu"    {"kind": "llvm", "mtriple": "aarch64-linux-gnu",
                                          "mattr": ["+neon"]}
    "llvm -mcpu=native"                  {"kind": "llvm", "mcpu": <host cpu>, "mtriple": <host>}
    "llvm -mattr=+avx2,+fma"             {"kind": "llvm", ..., "mattr": ["+avx2", "+fma"]}
    "llvm -num-cores 2"                  {"kind": "llvm", ..., "num-cores": 2}
    "cuda", "cuda -arch=sm_80"           {"kind": "cuda"}, {"kind": "cuda", "arch": "sm_80"}
    "c"                                  {"kind": "c"}

An ``-mattr`` feature LLVM does not know for the triple (``+avx51f``) is an
:class:`~relay_tvm.errors.InputError` with LLVM's closest feature names: LLVM itself only prints
a warning and builds without it. A CUDA ``-arch`` that names no NVIDIA GPU (``sm_999``,
``sm_80a``; TVM takes any string) is one too, listing the known ``sm_XY``
(:data:`relay_tvm.backend.cuda.KNOWN_ARCHS`). A CUDA target without ``-arch`` gets the local
GPU's, or on a machine without a GPU ``sm_50`` with a warning saying so
(:func:`relay_tvm.backend.cuda.default_arch`).
"""

from __future__ import annotations

import functools
import shlex

from ..errors import InputError, did_you_mean

# options whose value is a list in TVM's schema (comma separated on the command line)
_LIST_OPTS = {"mattr", "keys", "libs", "cl-opt"}
_INT_OPTS = {"max_num_threads", "thread_warp_size", "max_shared_memory_per_block",
             "max_threads_per_block", "opt-level", "num-cores", "vector-width"}
_KINDS = {"llvm", "cuda", "c", "rocm", "opencl", "vulkan", "metal", "nvptx", "hexagon",
          "webgpu", "ext_dev", "hybrid"}


def host_cpu() -> tuple:
    """``(mcpu, mtriple)`` of the machine running the compiler, as LLVM names them."""
    import tvm

    return tvm.target.codegen.llvm_get_system_cpu(), tvm.target.codegen.llvm_get_system_triple()


def _is_host_triple(triple: str | None) -> bool:
    if not triple:
        return True
    host = host_cpu()[1]
    return triple.split("-")[0] == host.split("-")[0]


def parse_target_string(text: str) -> dict:
    """Translate a command-line target string (``"llvm -mcpu=x -mattr=+a,+b"``) to a dict.

    An option is ``-key=value``, ``-key value`` (the next word, when it does not start with
    ``-``) or a bare ``-flag`` (true), as TVM's own target string parser read them.

    Raises:
        InputError: (a ``BuildError`` and a ``ValueError``) unknown target kind or a malformed
            option.
    """
    try:
        parts = shlex.split(text)
    except ValueError as e:
        raise InputError(f"target {text!r}: cannot parse ({e})") from None
    if not parts:
        raise InputError("target: empty string; expected e.g. 'llvm' or 'cuda'")
    kind = parts[0]
    if kind not in _KINDS:
        raise InputError(
            f"target {text!r}: unknown target kind {kind!r}; expected one of {sorted(_KINDS)}"
        )
    out: dict = {"kind": kind}
    rest = parts[1:]
    i = 0
    while i < len(rest):
        p = rest[i]
        i += 1
        if not p.startswith("-") or not p.lstrip("-"):
            raise InputError(f"target {text!r}: option {p!r} must look like -key=value or "
                             f"-key value")
        # "--num-cores=2" is "-num-cores=2": TVM 0.19's parser read the key without its
        # dashes, and its meta_schedule tutorials wrote targets so
        key, eq, value = p.lstrip("-").partition("=")
        if not eq:
            if i < len(rest) and not rest[i].startswith("-"):
                # "-num-cores 2": the value as the next word, as TVM's string parser took it
                value = rest[i]
                i += 1
            else:
                # a flag such as "-link-params" or "-system-lib": boolean true
                out[key] = True
                continue
        if key == "device" and value == "arm_cpu":
            out.setdefault("keys", ["arm_cpu", "cpu"])
            continue
        if key in ("model", "device"):
            continue  # informational in tvm.relay; TVM 0.27 drops them
        if key in _LIST_OPTS:
            out[key] = [v for v in value.split(",") if v]
        elif key in _INT_OPTS:
            try:
                out[key] = int(value)
            except ValueError:
                raise InputError(f"target {text!r}: option -{key} expects an integer, got "
                                 f"{value!r}") from None
        else:
            out[key] = value
    return out


def complete_llvm(d: dict) -> dict:
    """Fill in host defaults for an llvm target: the host cpu and triple when neither is given,
    the host triple when only a cpu is given, ``+neon`` for AArch64 triples without ``mattr``.

    The host cpu is not filled in when ``mattr`` adds a feature (``-mattr=+avx2,+fma``): that
    target is LLVM's generic cpu of the triple plus those features, as in tvm.relay 0.19 (the
    usual portable build: x86-64 with AVX2 and FMA, code any such CPU runs). ``mattr`` that only
    removes features (``-mattr=-avx512f``) is the host cpu without them."""
    d = dict(d)
    if d.get("kind") != "llvm":
        return d
    _check_llvm_options(d)
    cpu, triple = host_cpu()
    if d.get("mcpu") == "native":  # LLVM's name for the host CPU (clang -march=native)
        if "mtriple" in d and not _is_host_triple(d["mtriple"]):
            raise InputError(f"target: -mcpu=native means this machine's CPU, which cannot run "
                             f"{d['mtriple']}; name the target's CPU (-mcpu=NAME)")
        d["mcpu"] = cpu
    adds = any(str(f).startswith("+") for f in d.get("mattr", ()))
    if "mtriple" not in d:
        d["mtriple"] = triple
        if "mcpu" not in d and not adds:
            d["mcpu"] = cpu
    elif _is_host_triple(d["mtriple"]) and "mcpu" not in d and not adds:
        d["mcpu"] = cpu
    _check_triple(d["mtriple"])
    if d["mtriple"].startswith("aarch64") and "mattr" not in d and "mcpu" not in d:
        d["mattr"] = ["+neon"]
    if "mcpu" in d:
        import tvm

        is_valid = getattr(tvm.target.codegen, "llvm_is_valid_cpu", None)
        if is_valid is not None and not is_valid(d["mcpu"], d["mtriple"]):
            # TVM would print the complaint once per kernel and then build for a generic CPU;
            # the names close to it from LLVM's own list (a fresh-user trial was sent to `llc`,
            # which a pip install does not have, for the conda triple of TVM's LLVM)
            try:
                known = list(tvm.target.codegen.llvm_get_cpu_archlist(
                    tvm.target.Target({"kind": "llvm", "mtriple": d["mtriple"]})))
            except Exception:  # noqa: BLE001 - cannot ask LLVM: name this machine's only
                known = []
            hint = did_you_mean(d["mcpu"], known, n=3, clause=True)
            mine = f" ({host_cpu()[0]!r} is this machine's)" if _is_host_triple(d["mtriple"]) \
                else ""
            raise InputError(f"target: LLVM does not know the CPU {d['mcpu']!r} for "
                             f"{d['mtriple']}{hint}{mine}")
    _check_mattr(d)
    return d


@functools.lru_cache(maxsize=None)
def _triple_known(triple: str) -> bool:
    """Whether LLVM has a back end for ``triple`` (it accepts its generic CPU); True when this
    TVM cannot tell."""
    import tvm

    from .._stderr import stderr_without

    is_valid = getattr(tvm.target.codegen, "llvm_is_valid_cpu", None)
    if is_valid is None:
        return True
    with stderr_without(lambda ln: b"is not valid in" in ln):
        return bool(is_valid("generic", triple))


def _check_triple(triple: str) -> None:
    """Refuse a triple LLVM has no back end for (a typo such as ``aarch46-linux-gnu``): TVM
    went on to build with no target machine and the process died of a segmentation fault.

    Raises:
        InputError: naming the triple and the architectures LLVM knows.
    """
    if _triple_known(triple):
        return
    import tvm

    try:
        archs = sorted(str(a) for a in tvm.target.codegen.llvm_get_targets())
    except Exception:  # noqa: BLE001 - the list is only a hint
        archs = []
    known = f"; its architectures: {', '.join(archs)}" if archs else ""
    raise InputError(f"target: LLVM does not know the target triple {triple!r} (expected "
                     f"ARCH-VENDOR-OS such as 'aarch64-linux-gnu' or 'x86_64-linux-gnu'"
                     f"{known})")


@functools.lru_cache(maxsize=None)
def _triple_features(triple: str) -> frozenset:
    """Every feature LLVM enables by default on some CPU of ``triple`` (empty when LLVM cannot
    list them, e.g. a TVM without those functions or an LLVM built without that backend)."""
    import tvm

    api = getattr(tvm.target.codegen, "_ffi_api", None)
    try:
        base = tvm.target.Target({"kind": "llvm", "mtriple": triple})
        out = set()
        for cpu in api.llvm_get_cpu_archlist(base):
            t = tvm.target.Target({"kind": "llvm", "mtriple": triple, "mcpu": str(cpu)})
            out.update(str(k) for k in api.llvm_get_cpu_features(t).keys())
        return frozenset(out)
    except Exception:  # noqa: BLE001 - no list to check against: the check is skipped
        return frozenset()


def _llvm_stderr_quiet():
    """Swallow LLVM's "'+x' is not a recognized feature" line (written to file descriptor 2 when
    probing a name); anything else written there meanwhile is passed on."""
    from .._stderr import stderr_without

    return stderr_without(lambda ln: b"is not a recognized feature" in ln)


def _llvm_knows(feature: str, triple: str) -> bool:
    """Whether LLVM accepts ``+feature`` for ``triple`` (it keeps what it knows in the CPU's
    feature map and drops, with a printed warning only, what it does not)."""
    import tvm

    api = tvm.target.codegen._ffi_api
    with _llvm_stderr_quiet():  # AArch64 targets already parse mattr when created
        t = tvm.target.Target({"kind": "llvm", "mtriple": triple, "mattr": ["+" + feature]})
        return feature in api.llvm_get_cpu_features(t).keys()


def _check_llvm_options(d: dict) -> None:
    """Refuse, before anything is compiled, an option TVM's llvm target kind does not have
    (with the closest names) and an ``-opt-level`` outside LLVM's 0-3 (TVM clamps it unsaid).

    Raises:
        InputError: naming the option and what is expected.
    """
    import tvm

    try:
        options = set(tvm.target.TargetKind.options_from_name("llvm"))
    except Exception:  # noqa: BLE001 - cannot list them: tvm.target.Target still checks
        options = set()
    unknown = [k for k in d if options and k not in options and k != "host"]
    if unknown:
        key = unknown[0]
        hint = did_you_mean(key, sorted(options - {"kind", "host"}), n=3, clause=True,
                            show=lambda c: f"-{c}")
        hint = hint or ("; its options include -mcpu, -mtriple, -mattr, -num-cores, "
                        "-opt-level, -fast-math, -vector-width (tvm.target.TargetKind."
                        "options_from_name('llvm') lists them all)")
        raise InputError(f"target: TVM's llvm target has no option -{key}{hint}")
    level = d.get("opt-level")
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)
                              or not 0 <= level <= 3):
        raise InputError(f"target: -opt-level={level!r}: expected an integer from 0 to 3 "
                         f"(LLVM's code generation levels; TVM would clamp it)")


def _check_mattr(d: dict) -> None:
    """Refuse an ``-mattr`` feature LLVM does not know for the target's triple: LLVM itself
    only prints a warning and builds without it (``+avx51f`` for ``+avx512f``).

    Raises:
        InputError: naming the feature and the triple, with LLVM's closest feature names.
    """
    mattr = d.get("mattr")
    if not mattr or isinstance(mattr, str):
        return  # a string is not TVM's list form: tvm.target.Target says so
    for item in mattr:
        if str(item)[:1] not in ("+", "-"):
            # LLVM reads the first character as the sign: 'avx2' fails its verifier later
            raise InputError(f"target: -mattr feature {str(item)!r} needs a sign, + to enable "
                             f"or - to disable it: did you mean {'+' + str(item)!r}?")
    known = _triple_features(d["mtriple"])
    if not known:
        return
    for item in mattr:
        name = str(item).lstrip("+-")
        if not name or name in known:
            continue
        try:
            ok = _llvm_knows(name, d["mtriple"])
        except Exception:  # noqa: BLE001 - cannot ask LLVM: leave it to LLVM
            continue
        if ok:
            continue
        sign = str(item)[: len(str(item)) - len(name)]
        hint = did_you_mean(name, sorted(known), n=3, clause=True,
                            show=lambda c, sign=sign: repr(sign + c))
        hint = hint or f"; see `llc -mtriple={d['mtriple']} -mattr=help`"
        raise InputError(f"target: -mattr feature {str(item)!r} is not an LLVM feature of "
                         f"{d['mtriple']} (LLVM would ignore it){hint}")


def make_target(target=None, host=None):
    """A ``tvm.target.Target`` from what a user gives.

    Args:
        target: ``None`` (the target in scope, ``with tvm.target.Target(...):``, as 0.19's
            ``Target.target_or_current``; host LLVM where none is), a string (command-line
            form or JSON kind), a dict, or a ``tvm.target.Target``. ``{"kind": ..., "host":
            ...}`` dicts are accepted too, and 0.19's one-entry ``{device: target}``
            (:func:`target_of_device_map`).
        host: optional host target for device targets (same forms).

    Returns:
        ``tvm.target.Target`` with ``host`` set for device targets (host LLVM by default).

    Raises:
        BuildError: the target cannot be understood; :class:`InputError` (also a
            ``ValueError``) when TVM rejects it (an unknown option, e.g. ``-runtime=c``).
    """
    import tvm

    if target is None:
        target = tvm.target.Target.current(allow_none=True)
    if isinstance(target, dict) and target and "kind" not in target:
        target = target_of_device_map(target)  # 0.19's {device: target}
    if isinstance(host, dict) and host and "kind" not in host and not all(
            isinstance(v, (str, tvm.target.Target)) for v in host.values()):
        # relay.build(mod, "llvm", params): 0.19's third positional argument is target_host
        raise InputError(f"target_host: got a dict of {type(next(iter(host.values()))).__name__} "
                         f"values (the parameters?): relay.build's third positional argument "
                         f"is target_host, as in tvm.relay 0.19; pass the weights as "
                         f"params=...")
    if isinstance(target, tvm.target.Target):
        tgt = target
        for t in (tgt, tgt.host):  # TVM makes one of an unknown triple; building it crashed
            if t is not None and t.kind.name == "llvm" and "mtriple" in t.attrs:
                _check_triple(str(t.attrs["mtriple"]))
    else:
        if target is None:
            d = {"kind": "llvm"}
        elif isinstance(target, str):
            d = parse_target_string(target)
        elif isinstance(target, dict):
            d = dict(target)
        else:
            raise InputError(
                f"target: expected a string, a dict or a tvm.target.Target, got "
                f"{type(target).__name__}"
            )
        d = complete_llvm(d)
        _warn_libs(d, target)
        from .cuda import complete_cuda

        d = complete_cuda(d, target)
        try:
            tgt = _tvm_target_cls()(d)
        except Exception as e:  # TVM raises several error types for a bad target
            # an InputError is a BuildError and a ValueError (what 0.19 raised for an
            # unknown option such as -runtime=c)
            raise InputError(f"target {target!r}: TVM rejects it: {tvm_reason(e)}") from None
    if host is not None or ("gpu" in tgt.keys and tgt.host is None):
        host_t = make_target(host) if host is not None else make_target("llvm")
        tgt = tvm.target.Target(tgt, host=host_t)
    return tgt


def _tvm_target_cls():
    """TVM's own ``Target`` class, not the wrapper :mod:`relay_tvm.compat` installs as
    ``tvm.target.Target`` (whose error would name the translated dict, not the user's string)."""
    import tvm

    return getattr(type(tvm.target.Target), "_tvm_cls", None) or tvm.target.Target


_WARNED_LIBS: set = set()


def _warn_libs(d: dict, target) -> None:
    """Warn (once per list) that ``-libs=...`` has no effect: tvm.relay 0.19 handed some
    operators to those libraries (``cblas`` for dense, ``cudnn`` for convolutions); relay_tvm
    compiles every operator from its own templates. The option stays in the target."""
    libs = tuple(d.get("libs") or ())
    if libs and libs not in _WARNED_LIBS:
        import warnings

        _WARNED_LIBS.add(libs)
        warnings.warn(f"target {target!r}: -libs={','.join(libs)} has no effect in relay_tvm "
                      f"(no operator is handed to an external library; each is compiled from "
                      f"relay_tvm's templates)", stacklevel=4)


def tvm_reason(e: Exception) -> str:
    """The first line of TVM's complaint about a target, without the list of every option the
    kind knows ("Unknown config option 'foo'. Known options: ..." keeps its first sentence)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    first = lines[0] if lines else type(e).__name__
    for cut in (" Known options:", " Target creation from config dict failed"):
        if cut in first:
            first = first[:first.index(cut)]
    return first


def is_gpu(target) -> bool:
    return "gpu" in target.keys


def device_for(target):
    """The ``tvm.runtime.Device`` a target runs on (device 0)."""
    import tvm

    kind = target.kind.name
    if kind in ("llvm", "c"):
        return tvm.cpu(0)
    return tvm.device(kind, 0)


#: tvm.relay 0.19's names of devices in a ``{device: target}`` dict (its STR2MASK), by device
#: type (1: CPU, 2: CUDA)
_DEVICE_KEYS = {"llvm": 1, "stackvm": 1, "cpu": 1, "c": 1, "hybrid": 1, "gpu": 2, "cuda": 2,
                "nvptx": 2}


def target_of_device_map(target: dict):
    """The target of 0.19's one-entry ``{device: target}`` dict (``{"cpu": "llvm"}``).

    Raises:
        BuildError: more than one entry (heterogeneous builds are not provided).
        InputError: a key that names no device (``{"foo": "llvm"}``), or a device the target
            does not run on (``{"cuda": "llvm"}``); both were ignored.
    """
    from ..errors import BuildError

    if len(target) != 1:
        raise BuildError(f"target {target!r}: heterogeneous targets are not supported")
    ((key, value),) = target.items()
    dev = int(key.dlpack_device_type()) if hasattr(key, "dlpack_device_type") else (
        int(key) if isinstance(key, int) else _DEVICE_KEYS.get(str(key).lower()))
    if dev is None:
        raise InputError(f"target {{{key!r}: {value!r}}}: {key!r} is not a device "
                         f"(expected one of {sorted(_DEVICE_KEYS)}, or a device type)")
    kind = make_target(value).kind.name
    runs_on = 2 if kind in ("cuda", "nvptx") else 1 if kind in ("llvm", "c") else None
    if runs_on is not None and runs_on != dev:
        raise InputError(f"target {{{key!r}: {value!r}}}: a {kind} target does not run on "
                         f"device {key!r}")
    return value


__all__ = ["make_target", "parse_target_string", "host_cpu", "is_gpu", "device_for",
           "complete_llvm", "target_of_device_map"]
