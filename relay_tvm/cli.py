"""The ``relay-tvm`` command: import, compile, run and inspect models.

::

    relay-tvm                        # = relay-tvm demo: a model-zoo net, no files needed
    relay-tvm demo --model mobilenet1.0 --batch 1
    relay-tvm compile model-symbol.json --params model-0000.params --shape data=1,3,224,224 -o m.so
    relay-tvm compile --zoo resnet18_v1 --shape data=1,3,224,224 --opt-level 3 -o resnet18.so
    relay-tvm compile --zoo resnet18_v1 --executor vm -o r18-vm.so   # a VM executable
    relay-tvm run m.so --input data=x.npy --output-dir out/ --repeat 20   # either kind
    relay-tvm show --zoo resnet18_v1 --shape data=1,3,224,224 --after-passes
    relay-tvm tune --zoo resnet18_v1 --trials 200 --work-dir r18-tuning/
    relay-tvm compile --zoo resnet18_v1 --tuning-db r18-tuning/ -o r18.so

Model files are read without MXNet; ``--zoo`` and ``demo`` need MXNet 1.9.1 (random weights:
``get_model(name, pretrained=False)``). Long steps show tqdm progress on stderr.

``--shape NAME=D1,D2,...`` is required with a model file (one per input). With ``--zoo`` it is
optional: a model-zoo network has one input, ``data`` (NCHW, float32), which defaults to
``data=1,3,224,224``, or ``data=1,3,299,299`` when the name contains ``inception``
(inceptionv3); give ``--shape data=N,3,H,W`` for another batch size or image size. ``demo``
takes ``--batch`` and ``--size`` instead (the same defaults).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
import warnings

import numpy as np

from .errors import RelayError, TuningError, close_names, did_you_mean
from .testing.gluon import zoo_image_size


class CLIError(RelayError):
    """A usage error of the command (an argument, a file, an option that does not fit):
    printed as one line, exit status 2. A :class:`relay_tvm.errors.RelayError`, as every
    error relay_tvm raises on purpose is; the errors of the library below it print with their
    class name, exit status 1."""


@contextlib.contextmanager
def _argument(prefix: str = ""):
    """A library check of a command-line argument (``-o``'s suffix, ``--work-dir``,
    ``--rpc-tracker``): its ``InputError`` / ``TuningError`` is a usage error, ``prefix``
    (the flag) before its message."""
    from .errors import InputError

    try:
        yield
    except (InputError, TuningError) as e:
        raise CLIError(f"{prefix}{e}") from None


def _require_path(flag: str, path: str, directory: bool, expected: str) -> None:
    """A usage error unless ``path`` (given to ``flag``) is an existing directory
    (``directory``) or file: checked before the slow steps (import, build, load) that a bad
    path would otherwise fail after."""
    if (os.path.isdir if directory else os.path.isfile)(path):
        return
    what = "does not exist" if not os.path.exists(path) else \
        "is a file, not a directory" if directory else "is a directory"
    raise CLIError(f"{flag} {path!r} {what} (expected {expected})")


# the forms of --input, said where an item without NAME= names no readable file
# (`--input data:x.npy` in a new-user trial)
_INPUT_FORMS = " (--input takes NAME=FILE.npy, or FILE.npy for the inputs in order)"


def _parse_shape(items):
    shapes = {}
    for item in items or []:
        name, sep, dims = item.partition("=")
        if not sep or not name:
            raise CLIError(f"--shape {item!r}: expected NAME=D1,D2,... such as data=1,3,224,224")
        try:
            shape = tuple(int(d) for d in dims.split(","))
        except ValueError:
            raise CLIError(f"--shape {item!r}: dimensions must be integers separated by commas "
                           f"(e.g. data=1,3,224,224)") from None
        if any(d <= 0 for d in shape):
            raise CLIError(f"--shape {item!r}: every dimension must be >= 1")
        if name in shapes:
            raise CLIError(f"--shape {item!r}: input {name!r} was given a shape already "
                           f"({','.join(map(str, shapes[name]))}); give each input once")
        shapes[name] = shape
    return shapes


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def _nonnegative_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {v}")
    return v


def _opt_level(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= v <= 4:
        raise argparse.ArgumentTypeError(f"opt level must be 0..4, got {v}")
    return v


def _progress(total, desc):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="step", file=sys.stderr, leave=False,
                disable=None if sys.stderr.isatty() else True)


@contextlib.contextmanager
def _step(bar, desc):
    if bar is not None:
        bar.set_description(desc)
    t0 = time.perf_counter()
    yield
    if bar is not None:
        bar.update(1)
    print(f"[relay-tvm] {desc}: {time.perf_counter() - t0:.2f} s", file=sys.stderr)


def _zoo_suggestion(name, mxnet_message):
    """One line for an unknown model-zoo name: the closest names, not MXNet's list of ~35."""
    # MXNet 1.9.1: "Model X is not supported. Available options are\n\talexnet\n\t..."
    names = [ln.strip() for ln in mxnet_message.splitlines()[1:] if ln.startswith("\t")]
    if not names:
        return mxnet_message
    close = sorted((n for n in names if n.startswith(name.lower())), key=lambda n: (len(n), n))
    # 0.75: typos score 0.8-0.96 against their model (vgg61 / vgg16, mobilnet1.0 /
    # mobilenet1.0); 0.5 let a shared "net" suggest densenet121 for nosuchnet
    close = close[:4] or close_names(name, names, n=4, cutoff=0.75)
    if close:
        hint = f"did you mean {', '.join(close)}?"
    else:  # one name of each family (a new-user trial was shown only "alexnet, ...")
        import re

        family = {}
        for n in sorted(names, key=lambda n: (len(n), n)):  # the shortest name of each
            family.setdefault(re.match(r"[a-z]+(v\d)?", n).group(0), n)
        hint = f"the families are {', '.join(sorted(family.values()))}, ..."
    return (f"not a Gluon model-zoo network; {hint} ({len(names)} names: "
            "mxnet.gluon.model_zoo.vision.get_model)")


def _zoo_block(name, shape, flag="--zoo"):
    try:
        import mxnet as mx
    except ImportError:
        raise CLIError("--zoo and demo need MXNet 1.9.1 (pip install mxnet==1.9.1 numpy<1.24); "
                       "compile exported -symbol.json/.params files without it") from None
    try:
        net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    except ValueError as e:
        raise CLIError(f"{flag} {name!r}: {_zoo_suggestion(name, str(e))}") from None
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.hybridize()
    try:
        x = mx.nd.random.uniform(-1, 1, shape)
        # MXNet prints "infer_shape error. Arguments: ..." to stdout before it raises: the
        # error line below says it, and stdout stays empty
        with contextlib.redirect_stdout(io.StringIO()):
            net(x)  # materializes the parameters
    except Exception as e:  # MXNet reports a bad input shape from deep inside its shape inference
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CLIError(f"{name}: MXNet cannot run the network on input shape {tuple(shape)}: "
                       f"{first}") from None
    # batch-norm statistics drawn too: with MXNet's defaults (mean 0, variance 1, gamma 1) a
    # deep random net's output shrank to ~1e-22 and the demo's comparison said nothing
    from .testing.gluon import random_batch_norm

    random_batch_norm(net)
    return net


_OTHER_KINDS = ((b"\x93NUMPY", "a .npy file (np.save)"), (b"PK\x03\x04", "a zip archive (.npz?)"),
                (b"{", "JSON text (the -symbol.json?)"))


def _check_params_kind(path) -> None:
    """Refuse a ``--params`` file that is recognisably of another kind (NumPy's .npy or .npz,
    JSON) before the import, whose reader would report only a bad magic number.

    Raises:
        CLIError: naming the file, what it is and what was expected."""
    with open(path, "rb") as f:
        head = f.read(8)
    for magic, what in _OTHER_KINDS:
        if head.lstrip().startswith(magic):
            raise CLIError(f"--params {path!r} is {what}; expected the model's .params file "
                           f"(MXNet's NDArray list, or NNVM's / TVM's save_param_dict)")


def _check_model_file(path, fmt="mxnet"):
    """Refuse a model file that cannot be imported, before the other arguments are looked at:
    one that does not exist, a directory, a file that is not JSON (the .params file given as
    MODEL) or malformed JSON (a truncated download).

    Raises:
        CLIError: the path does not exist, is a directory or is not JSON text.
        ConversionError: the JSON is malformed or not a graph (the frontend's own message,
            which names the file, the line and the column).
    """
    if not os.path.exists(path):
        raise CLIError(f"model file {path!r} does not exist")
    if os.path.isdir(path):
        try:
            found = sorted(n for n in os.listdir(path) if n.endswith(".json"))
        except OSError:
            found = []
        hint = (f"; it holds {_short_list([os.path.join(path, n) for n in found], 4)}"
                if found else "")
        raise CLIError(f"model file {path!r} is a directory; expected a -symbol.json (or NNVM "
                       f"graph .json) file{hint}")
    with open(path, "rb") as f:
        head = f.read(64)
    if head and head.lstrip()[:1] not in (b"{", b"["):
        raise CLIError(f"model file {path!r} is not JSON (a .params file?): give the "
                       f"-symbol.json (or NNVM graph .json) as MODEL and the weights with "
                       f"--params")
    from .frontend.mxnet_json import parse_graph

    parse_graph(path, "NNVM graph" if fmt == "nnvm" else "MXNet symbol")


def _check_dtype(dtype: str) -> None:
    """``--dtype``: a dtype Relay knows (``ir.base.check_dtype``: float32, int8, bfloat16, ...).

    Raises:
        CLIError: naming the value (before the model is imported)."""
    from .ir.base import check_dtype

    try:
        check_dtype(dtype, "--dtype")
    except RelayError as e:
        raise CLIError(str(e)) from None


def _import(args, shapes):
    from . import frontend

    _check_dtype(args.dtype)
    if args.zoo:
        if getattr(args, "model", None):  # one model: the file was ignored before
            raise CLIError(f"give a model file ({args.model}) or --zoo {args.zoo}, not both")
        for option, value, why in (
                ("--params", args.params, "the zoo network has random weights of its own"),
                ("--format", args.format, "the zoo network is a Gluon block, not a file")):
            if value:  # (fresh-user trial: both were ignored)
                raise CLIError(f"--zoo {args.zoo}: {option} {value} applies to model files "
                               f"only ({why}); give the model file instead of --zoo")
        if not shapes:
            size = zoo_image_size(args.zoo)
            shapes = {"data": (1, 3, size, size)}
        if set(shapes) != {"data"}:
            raise CLIError(f"--zoo {args.zoo}: the model's only input is 'data'; got --shape for "
                           f"{', '.join(sorted(shapes))}")
        if len(shapes["data"]) != 4:
            raise CLIError(f"--zoo {args.zoo}: the input 'data' is NCHW (4 dimensions), got "
                           f"--shape data={','.join(map(str, shapes['data']))}")
        if args.dtype != "float32":
            raise CLIError(f"--zoo {args.zoo}: model-zoo networks are float32; --dtype {args.dtype} "
                           f"applies to model files only")
        net = _zoo_block(args.zoo, shapes["data"])
        return frontend.from_mxnet(net, shape=shapes)
    if not args.model:
        raise CLIError("give a model file (-symbol.json / NNVM graph .json) or --zoo NAME")
    args.format = args.format or "mxnet"
    _check_model_file(args.model, args.format)  # before --shape and --params: the first problem
    if not shapes:
        raise CLIError("--shape NAME=D1,D2,... is needed for model files")
    from .frontend.mxnet import find_params_file

    if args.params:
        _require_path("--params", args.params, False, "the model's .params file")
        _check_params_kind(args.params)
    try:
        params = args.params or find_params_file(args.model)
    except RelayError as e:
        raise CLIError(f"{e}") from None
    if params is None and not getattr(args, "weights_as_inputs", False):
        raise CLIError(f"no parameter file found for {args.model!r} (looked for "
                       f"PREFIX-NNNN.params next to it): give --params FILE, or "
                       f"--weights-as-inputs to compile the weights as runtime inputs")
    from .errors import ConversionError, InputShapeError, TypeInferenceError, UnknownInputError

    try:
        if args.format == "nnvm":
            return frontend.from_nnvm(args.model, params=params, shape=shapes, dtype=args.dtype)
        with warnings.catch_warnings():
            # --weights-as-inputs asked for what from_mxnet warns about
            warnings.filterwarnings("ignore", message=r".*the weights are inputs of main")
            return frontend.from_mxnet(args.model, shape=shapes, dtype=args.dtype,
                                       arg_params=params)
    except UnknownInputError as e:  # a --shape name the graph lacks: the option is wrong
        raise CLIError(f"{args.model}: {e}") from None
    except InputShapeError as e:  # an operator refused the shape given: the option is wrong
        dims = ",".join(map(str, shapes[e.input_name]))
        first = str(e).splitlines()[0]
        raise CLIError(f"{args.model}: --shape {e.input_name}={dims} does not fit the graph: "
                       f"{first}") from None
    except (TypeInferenceError, ConversionError) as e:
        if args.dtype == "float32" or "dtype" not in str(e):
            raise
        # one line, as every usage error: the option's effect, and the operator that met it
        # (the conversion error's first line; its IR and Python-API hint are not for the CLI)
        first = str(e).splitlines()[0]
        raise CLIError(f"{args.model}: --dtype {args.dtype} sets the dtype of the inputs given "
                       f"by --shape only; the parameters keep the dtype they were saved with, "
                       f"and Relay does not cast between them (save the model in {args.dtype}, "
                       f"e.g. net.cast('{args.dtype}') in Gluon): {first}") from None


def _count(n, word: str) -> str:
    """``"1 thread"``, ``"2 threads"``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _check_target(text) -> None:
    """Validate ``--target`` before the model is imported (a slow step).

    Raises:
        CLIError: naming the target string and what is wrong with it (a bad argument, exit
            status 2 like every other; it printed as an ``InputError`` with status 1 until a
            fresh-user trial noticed the difference).
    """
    from .backend.target import make_target

    try:
        with warnings.catch_warnings():  # the build makes the target again and says them
            # (a CUDA target without -arch was warned of twice; fresh-user trial)
            warnings.simplefilter("ignore")
            make_target(text)
    except RelayError as e:
        msg = str(e)
        for prefix in (f"target {text!r}: ", "target: "):
            if msg.startswith(prefix):
                msg = msg[len(prefix):]
                break
        raise CLIError(f"--target {text!r}: {msg}") from None


def _target_device(text, model="MODEL"):
    """The device ``relay-tvm demo`` runs a build for ``--target text`` on: the CPU for
    ``llvm``/``c``, else the target kind's device (``cuda`` -> ``tvm.cuda(0)``).

    Raises:
        CLIError: this machine has no such device, or its CPU cannot run code for the target
            (another architecture such as ``-mtriple=aarch64-linux-gnu``, or an ``-mcpu`` with
            instructions it lacks).
    """
    import tvm

    from .backend.target import make_target

    target = make_target(text)
    kind = target.kind.name
    if kind in ("llvm", "c"):
        from .backend.isa import host_isa, missing_features, target_isa

        isa = target_isa(target)
        wrong_arch, missing = missing_features(isa) if isa else (False, [])
        if wrong_arch or missing:
            arch = host_isa()[0]
            why = (f"this {arch} machine cannot run {isa['arch']} code" if wrong_arch else
                   f"this CPU lacks {', '.join(missing)}")
            raise CLIError(f"--target {text!r}: the demo runs what it compiles, and {why}; "
                           f"`relay-tvm compile --zoo {model} --target {text!r} -o "
                           f"{model}.so` builds it without running (then `relay-tvm run "
                           f"{model}.so --fill-random` where the target's CPU is)")
        return tvm.cpu(0)
    try:
        dev = tvm.device(kind, 0)
    except Exception:  # noqa: BLE001 - a target kind TVM has no device for
        dev = None
    if dev is None or not dev.exist:
        raise CLIError(f"--target {text!r}: this machine has no {kind} device to run the demo "
                       f"on (or TVM's {kind} runtime is missing); `relay-tvm compile` builds "
                       f"for it without running")
    return dev


def _check_compiler(value: str) -> tuple:
    """``--cc PATH [FLAGS]``: an executable file, or a command found on ``PATH``
    (``riscv64-linux-gnu-g++``), then the flags it links with, split as a shell would
    (``"g++ -O2 -static-libstdc++"``). Returns ``(path, flags)``.

    Raises:
        CLIError: naming the value and what is wrong with it (checked before the import and the
            build, which a bad compiler would otherwise fail after).
    """
    import shlex
    import shutil

    try:
        words = shlex.split(value)
    except ValueError as e:
        raise CLIError(f"--cc {value!r}: {e} (expected the C++ compiler, then its flags, "
                       f"quoted as in a shell)") from None
    if not words:
        raise CLIError("--cc '': expected the C++ compiler that links the library")
    path, flags = words[0], words[1:]
    if os.sep not in path and shutil.which(path):
        return path, flags
    if not os.path.exists(path):
        where = "" if os.sep in path else " and is no command on PATH"
        raise CLIError(f"--cc {path!r} does not exist{where} (expected the C++ compiler "
                       f"that links the library for the target, e.g. riscv64-linux-gnu-g++)")
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        what = "is a directory" if os.path.isdir(path) else "is not executable"
        raise CLIError(f"--cc {path!r} {what} (expected the C++ compiler that links the "
                       f"library for the target)")
    return path, flags


def cmd_compile(args):
    from . import transform
    from .backend import build

    _check_target(args.target)
    shapes = _parse_shape(args.shape)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CLIError(f"-o {args.output!r}: the directory {out_dir!r} does not exist")
    from .backend.library_file import ARCHIVE_SUFFIXES, check_export_path

    with _argument():  # before the import and the build, not after (its message names -o)
        check_export_path(args.output, "-o", archive=True)
    cc = getattr(args, "cc", None)
    link = {}
    if cc is not None:
        path, flags = _check_compiler(cc)
        link = {"cc": path, **({"options": flags} if flags else {})}
        if args.output.endswith(ARCHIVE_SUFFIXES):
            raise CLIError(f"--cc {cc!r}: -o {args.output!r} is an archive of object files, which "
                           f"is not linked when it is written; write a .so to link it with "
                           f"--cc, or drop --cc")
    database = None
    if getattr(args, "tuning_db", None):  # before the import (fresh-user trial: --zoo took a
        # minute before a misspelled directory was reported)
        from .tune import load_database

        _require_path("--tuning-db", args.tuning_db, True, "the --work-dir of relay-tvm tune")
        database = load_database(args.tuning_db)
    bar = _progress(3, "import")
    with _step(bar, "import"):
        mod, params = _import(args, shapes)
    if args.weights_as_inputs:
        # the weights stay parameters of main, set at run time (not bound into the library),
        # also when a .params file or --zoo supplies values for them
        params = None
    executor = "" if args.executor == "graph" else ", VM executor"
    from .backend.build_module import BUILD_ADVICE

    advice = BUILD_ADVICE.set("cli")  # warnings name --opt-level, not Python
    try:
        with _step(bar, f"compile (opt level {args.opt_level}, target {args.target}{executor})"):
            with transform.PassContext(opt_level=args.opt_level):
                if args.executor == "vm":
                    from . import vm

                    lib = vm.compile(mod, target=args.target, params=params, database=database)
                else:
                    lib = build(mod, target=args.target, params=params, database=database)
        if database is not None:
            from .tune import database_report

            report = database_report(lib)
            for line in report.format(args.tuning_db):
                print(f"[relay-tvm] {line}", file=sys.stderr)
        with _step(bar, f"export {args.output}"):  # its errors name --cc, not cc=
            lib.export_library(args.output, **link)
    finally:
        BUILD_ADVICE.reset(advice)
    if bar is not None:
        bar.close()
    print(f"wrote {args.output}")
    return 0


def cmd_tune(args):
    from . import tune
    from .tune.measure import RPCSettings
    from .tune.tuner import check_tunable_kind

    with _argument("--target: "):  # a target the tuner does not take is a bad option value
        check_tunable_kind(args.target)
    _check_target(args.target)
    shapes = _parse_shape(args.shape)
    if args.trials is None and args.minutes is None:
        raise CLIError("give a budget: --trials N (measurements in all) and/or --minutes M")
    if (args.rpc_tracker is None) != (args.rpc_key is None):
        raise CLIError("--rpc-tracker HOST:PORT and --rpc-key KEY go together")
    runner = "local"
    if args.rpc_tracker is not None:
        with _argument("--rpc-tracker / --rpc-key: "):
            runner = RPCSettings.parse(args.rpc_tracker, args.rpc_key)
    from .tune.workdir import check_work_dir

    with _argument("--work-dir: "):  # before the model import (created once it is imported)
        check_work_dir(args.work_dir)
    created = not os.path.exists(args.work_dir)
    mod, params = _import(args, shapes)
    t0 = time.perf_counter()
    import signal

    interrupted = []

    def on_sigint(signum, frame):
        # the first Ctrl-C asks the tuner to stop between batches (an exception raised inside
        # meta_schedule's C++ loop can crash the process); a second one aborts at once
        if interrupted:
            signal.default_int_handler(signum, frame)
        interrupted.append(signum)
        tune.request_stop()
        print("\n[tune] Ctrl-C: stopping after the current batch (Ctrl-C again to abort)",
              file=sys.stderr, flush=True)

    try:
        prev_handler = signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread
        prev_handler = None
    try:
        db = tune.tune_relay(
            mod, params, args.target, args.work_dir,
            args.trials if args.trials is not None else 1 << 30,
            max_trials_per_task=args.per_task if args.per_task is not None else (
                None if args.trials is not None else 64),
            num_trials_per_iter=args.trials_per_iter, runner=runner, seed=args.seed,
            time_budget_s=args.minutes * 60 if args.minutes is not None else None,
            opt_level=args.opt_level, progress=tune.print_progress, verbose=args.verbose)
    except BaseException as e:
        # meta_schedule's C++ loop turns Ctrl-C into a RuntimeError without a message
        if not isinstance(e, KeyboardInterrupt) and not (interrupted and
                                                          isinstance(e, RuntimeError)):
            _remove_unused_work_dir(args.work_dir, created)
            raise
        print(f"\n[tune] interrupted: {args.work_dir} is consistent; run the same command "
              f"again to resume", file=sys.stderr)
        return 130
    finally:
        if prev_handler is not None:
            signal.signal(signal.SIGINT, prev_handler)
    if not len(db):  # --trials 0, or a model with nothing to tune: no build to suggest
        print(f"tuned in {time.perf_counter() - t0:.0f} s: no records in {args.work_dir} "
              f"(nothing was measured): --tuning-db with it would build the untuned schedules")
        return 0
    print(f"tuned in {time.perf_counter() - t0:.0f} s: {len(db)} records in {args.work_dir}; "
          f"build with: relay-tvm compile ... --target '{args.target}' --opt-level "
          f"{args.opt_level} --tuning-db {args.work_dir}")
    return 0


def _remove_unused_work_dir(path: str, created: bool) -> None:
    """After a failed tune: remove the work directory this command created if nothing was
    measured into it (an unreachable RPC tracker left one holding only empty databases:
    fresh-user trial); one with tuning records, or made before, is kept for resuming."""
    import shutil

    from .tune.workdir import RECORDS

    records = os.path.join(path, RECORDS)
    if created and os.path.isdir(path) and not (os.path.exists(records)
                                                and os.path.getsize(records)):
        shutil.rmtree(path, ignore_errors=True)


def _minutes(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {v}")
    return v


def _short_list(names, n=8) -> str:
    more = f", ... ({len(names) - n} more)" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def _load_archive(path) -> dict:
    """The named arrays of an .npz (np.savez) or a .params file (TVM's save_param_dict, or
    MXNet's with its arg: / aux: prefixes dropped).

    Raises:
        CLIError: the file cannot be read as one of them.
    """
    try:
        if path.endswith(".npz"):
            with np.load(path) as z:
                return {k: z[k] for k in z.files}
        with open(path, "rb") as f:
            blob = f.read()
    except (OSError, ValueError) as e:
        raise CLIError(f"--input {path!r}: cannot read it: {e}") from None
    from .backend.param_dict import load_param_dict

    try:
        return dict(load_param_dict(blob, as_numpy=True))
    except Exception as tvm_err:  # not TVM's format: MXNet's?
        from .frontend.mxnet_params import load_ndarray_bytes, split_arg_aux

        try:
            arrays = load_ndarray_bytes(blob, path)
            if not isinstance(arrays, dict):
                raise CLIError(f"--input {path!r}: an MXNet file of unnamed arrays; expected "
                               f"named ones")
            arg, aux = split_arg_aux(arrays, path)
            return {**arg, **aux}
        except CLIError:
            raise
        except Exception as mx_err:
            raise CLIError(f"--input {path!r}: neither a TVM .params file ({tvm_err}) nor an "
                           f"MXNet one ({mx_err})") from None


def _load_inputs(items, gm, fill_random=False):
    shapes, dtypes = gm.get_input_info()
    # the weights built into the library are already set; the rest are the model's inputs
    names = gm.unset_inputs()
    values = {}
    source = {}  # input name -> the --input item that gave it
    positional = 0
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep and item.endswith((".npz", ".params")):
            # an archive of named arrays: the weights of a --weights-as-inputs library at once
            for key, arr in _load_archive(item).items():
                if key not in names:
                    raise CLIError(f"--input {item!r}: array {key!r} names no input of the "
                                   f"model{did_you_mean(key, names)} (inputs: "
                                   f"{_short_list(names)})")
                if key in values:
                    raise CLIError(f"--input {item!r}: input {key!r} was given already; give "
                                   f"each input once")
                values[key], source[key] = arr, item
            continue
        if not sep:
            i, positional = positional, positional + 1
            name, path = (names[i] if i < len(names) else f"#{i}"), item
        if name not in names:
            raise CLIError(f"--input {item!r}: the model has no input {name!r}"
                           f"{did_you_mean(name, names)} (inputs: {_short_list(names)})")
        if name in values:  # the second would silently replace the first
            raise CLIError(f"--input {item!r}: input {name!r} was given already; give each "
                           f"input once")
        source[name] = item
        if path.endswith(".params"):  # np.load's "pickled data" error said nothing of this
            raise CLIError(f"--input {item!r}: NAME= takes a .npy file (np.save); a .params "
                           f"file of named arrays goes without NAME= (--input {path}) and sets "
                           f"the inputs its arrays name")
        try:
            values[name] = np.load(path)
        except (OSError, ValueError) as e:
            # np.load takes what is not .npy / .npz for a pickle, which it refuses
            why = "it is not a .npy file (np.save) nor an .npz archive" \
                if "pickled" in str(e) else str(e)
            raise CLIError(f"--input {item!r}: cannot read {path!r}: {why}"
                           f"{'' if sep else _INPUT_FORMS}") from None
        if not isinstance(values[name], np.ndarray):  # an .npz archive: several arrays
            keys = list(values[name].keys())
            raise CLIError(f"--input {item!r}: {path!r} is an .npz archive (arrays {keys}); "
                           f"give it without NAME= (--input {path}) to set the inputs its "
                           f"arrays name, or one array per input as a .npy file (np.save)")
    for name, arr in values.items():
        want = dtypes.get(name)
        if want is None:
            continue
        want = str(want)
        got = "bool" if arr.dtype == np.bool_ else arr.dtype.name
        if got != want:  # before the executor's "no implicit cast": which file, and the fix
            raise CLIError(f"--input {source[name]!r}: the model's input {name!r} is {want}, "
                           f"but the file holds {got} (no implicit cast; convert the array "
                           f"with .astype({want!r}) before saving it)")
        shp = tuple(int(d) for d in shapes[name])
        if len(shp) != arr.ndim or any(d >= 0 and d != a for d, a in zip(shp, arr.shape)):
            # a VM executable's relay.Any() dimension is -1 here: any size
            raise CLIError(f"--input {source[name]!r}: the model's input {name!r} has shape "
                           f"{tuple('?' if d < 0 else d for d in shp)}, but the file holds an "
                           f"array of shape {tuple(arr.shape)} (no implicit reshape or "
                           f"broadcast)")
    missing = [n for n in names if n not in values]
    if missing and not fill_random:
        raise CLIError(f"inputs not given: {_short_list(missing)} (give --input NAME=FILE.npy "
                       f"for each, --input FILE.npz / FILE.params for named arrays, e.g. the "
                       f"weights, or --fill-random to run on random values)")
    for name in missing:
        shp = tuple(int(d) for d in shapes[name])
        if any(d < 0 for d in shp):  # a VM executable's relay.Any() dimension
            raise CLIError(f"input {name!r} has a dimension known only at run time (shape "
                           f"{tuple('?' if d < 0 else d for d in shp)}): --fill-random cannot "
                           f"choose it; give --input {name}=FILE.npy")
        print(f"[relay-tvm] input {name!r} not given: using random {shp} {dtypes[name]}",
              file=sys.stderr)
        values[name] = np.random.default_rng(0).uniform(-1, 1, shp).astype(dtypes[name])
    return values


class _VMRun:
    """``relay-tvm run``'s view of a VM executable: the calls it makes on a ``GraphModule``,
    over ``main`` of a :class:`relay_tvm.vm.VirtualMachine`.

    Raises:
        CLIError: ``main`` takes or returns something other than tensors (ADT values,
            references, functions), which .npy files cannot hold.
    """

    def __init__(self, exe, dev, path):
        from .vm import VirtualMachine

        sigs = exe.signatures.get("main")
        if sigs is None:
            raise CLIError(f"{path}: the VM executable has no function 'main' (it has "
                           f"{', '.join(sorted(exe.signatures))}); run it from Python with "
                           f"relay.vm.VirtualMachine")
        other = [f"{name} ({kind})" for name, kind, _, _ in sigs if kind != "tensor"]
        if other:
            raise CLIError(f"{path}: main of the VM executable takes {', '.join(other)}; "
                           f"relay-tvm run passes tensors (.npy files) only: run it from "
                           f"Python with relay.vm.VirtualMachine")
        self.path = path
        self.vm = VirtualMachine(exe, dev)
        self.names = [s[0] for s in sigs]
        self.shapes = {s[0]: tuple(s[2]) for s in sigs}
        self.dtypes = {s[0]: s[3] for s in sigs}
        self.outputs = []

    def get_input_info(self):
        return self.shapes, self.dtypes

    def unset_inputs(self):
        return list(self.names)  # weights are compiled in as constants, or are parameters

    def set_input(self, **values):
        self.vm.set_input("main", **values)

    def run(self):
        import tvm

        out = self.vm.invoke("main")
        flat = list(out) if isinstance(out, tuple) else [out]
        if not all(isinstance(o, tvm.runtime.Tensor) for o in flat):
            kinds = sorted({type(o).__name__ for o in flat})
            raise CLIError(f"{self.path}: main of the VM executable returns {', '.join(kinds)}, "
                           f"not tensors; run it from Python with relay.vm.VirtualMachine")
        self.outputs = flat

    def get_num_outputs(self):
        return len(self.outputs)

    def get_output(self, i):
        return self.outputs[i]

    def benchmark(self, repeat, number):
        return self.vm.benchmark(repeat=repeat, number=number)

    @property
    def num_threads(self):
        return self.vm.num_threads


def _check_input_files(items) -> None:
    """Each ``--input`` item's file exists (before the library is loaded: a 97 MB ResNet-18
    library was loaded before a misspelt .npy was reported; fresh-user trial)."""
    for item in items or []:
        name, sep, path = item.partition("=")
        path = path if sep else item
        if not os.path.isfile(path):
            raise CLIError(f"--input {item!r}: no such file {path!r}"
                           f"{'' if sep else _INPUT_FORMS}")


def _check_library_file(module) -> None:
    from .backend.library_file import looks_like_library

    if not os.path.isfile(module):
        raise CLIError(f"{module}: no such file (expected a library written by "
                       f"`relay-tvm compile`)")
    if not looks_like_library(module):
        raise CLIError(f"{module}: not a relay_tvm library (expected the .so written "
                       f"by `relay-tvm compile MODEL -o NET.so`; inputs go in --input "
                       f"NAME=FILE.npy)")


def _prepare_output_dir(path) -> None:
    """Create ``--output-dir`` before the run (not after it)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise CLIError(f"--output-dir {path!r}: cannot create the directory "
                       f"({e.strerror or e})") from None
    if not os.access(path, os.W_OK):
        raise CLIError(f"--output-dir {path!r}: the directory is not writable")


def _save_outputs(outs, out_dir) -> None:
    for i, o in enumerate(outs):
        path = os.path.join(out_dir, f"output_{i}.npy")
        np.save(path, o)
        print(f"output {i}: shape {o.shape} {o.dtype} -> {path}")


class _QemuInputs:
    """The input names and types of an AArch64 library, read under qemu (what
    :func:`_load_inputs` asks a loaded module for)."""

    def __init__(self, info):
        self._names = list(info["input_names"])
        self._types = {k: (tuple(shape), dtype) for k, (shape, dtype)
                       in info["input_types"].items()}

    def get_input_info(self):
        return ({k: t[0] for k, t in self._types.items()},
                {k: t[1] for k, t in self._types.items()})

    def unset_inputs(self):
        return list(self._names)


def _suggest_qemu(module) -> None:
    """An AArch64 library given to a native run on another architecture: say that ``--qemu``
    runs it here (before the loader's generic "compiled for aarch64" refusal)."""
    from .backend.isa import host_isa
    from .backend.library_file import holds_vm_executable, library_arch

    host = host_isa()[0]
    if library_arch(module) == "aarch64" and host != "aarch64":
        if holds_vm_executable(module):  # --qemu runs graph libraries only
            raise CLIError(f"{module} is a VM executable compiled for aarch64 and this machine "
                           f"is {host}: run it on an AArch64 machine with relay_tvm installed "
                           f"(relay-tvm run there, or relay.vm.load_executable)")
        raise CLIError(f"{module} was compiled for aarch64 and this machine is {host}: run it "
                       f"on an AArch64 machine, or here under emulation with --qemu (outputs "
                       f"only, no latency; needs the arm64 Python of "
                       f"tools/setup_aarch64_qemu.sh)")


def _run_under_qemu(args):
    """``relay-tvm run --qemu``: an AArch64 graph library on this machine, in the arm64 Python
    of tools/setup_aarch64_qemu.sh under qemu-aarch64 (relay_tvm.testing.aarch64). Outputs are
    written as by a native run; the latency is not reported (it would be the emulator's)."""
    from .backend.library_file import holds_vm_executable, library_arch
    from .testing import aarch64

    if args.device != "cpu":
        raise CLIError(f"--qemu --device {args.device}: qemu-aarch64 emulates the CPU only; "
                       f"drop --device")
    _check_input_files(args.input)
    _check_library_file(args.module)
    arch = library_arch(args.module)
    if arch != "aarch64":
        raise CLIError(f"--qemu: {args.module} was compiled for "
                       f"{arch or 'no ELF architecture'}, not aarch64; --qemu runs libraries "
                       f"compiled with --target 'llvm -mtriple=aarch64-linux-gnu' (run this "
                       f"one without --qemu)")
    if holds_vm_executable(args.module):
        raise CLIError(f"--qemu: {args.module} is a VM executable (relay-tvm compile "
                       f"--executor vm); --qemu runs graph libraries (compile without "
                       f"--executor vm). A VM executable needs relay_tvm on the AArch64 "
                       f"machine (relay.vm.load_executable there)")
    reason = aarch64.unavailable_reason(need_cross_compiler=False)
    if reason:
        raise CLIError(f"--qemu: cannot run AArch64 code on this machine: {reason}")
    bar = _progress(2, "load")
    with _step(bar, f"load {args.module} under qemu-aarch64"):
        inputs = _QemuInputs(aarch64.describe_exported(args.module))
    values = _load_inputs(args.input, inputs, args.fill_random)
    _prepare_output_dir(args.output_dir)
    with _step(bar, "run under qemu-aarch64"):
        outs = aarch64.run_exported(args.module, values)
    if bar is not None:
        bar.close()
    _save_outputs(outs, args.output_dir)
    print("latency: not measured (qemu-aarch64 emulates the CPU; time the library on an "
          "AArch64 machine: `relay-tvm run` there, or relay_tvm/runtime/deploy.py with "
          "--repeat N where only TVM's runtime is installed)")
    return 0


def cmd_run(args):
    import tvm

    from .runtime.library import load_compiled

    if args.qemu:
        return _run_under_qemu(args)
    _check_input_files(args.input)
    bar = _progress(3, "load")
    with _step(bar, f"load {args.module}"):
        dev = tvm.device(args.device, 0)
        if not dev.exist:
            raise CLIError(f"--device {args.device}: this machine has no {args.device} device "
                           f"(or TVM's {args.device} runtime is missing)")
        _check_library_file(args.module)
        _suggest_qemu(args.module)
        # a graph library (relay.build, `relay-tvm compile`) or a VM executable
        # (relay.vm.compile, `relay-tvm compile --executor vm`): both export to one .so
        try:
            kind, loaded = load_compiled(args.module, "run")
        except RelayError as e:
            if "holds cuda kernels" not in str(e):
                raise
            where = ("; run it on a machine with an NVIDIA GPU and TVM's CUDA runtime"
                     if args.device == "cuda" else
                     "; run it with --device cuda on a machine with an NVIDIA GPU")
            raise CLIError(f"{args.module!r} was compiled for CUDA (--target cuda), and this "
                           f"machine's TVM runtime cannot load CUDA kernels{where}, or compile "
                           f"the model for this CPU (--target llvm)") from None
        if kind == "vm":
            gm = _VMRun(loaded, dev, args.module)
        else:
            gm = loaded["default"](dev)
    print(f"[relay-tvm] {args.module}: "
          f"{'VM executable' if kind == 'vm' else 'graph-executor library'}", file=sys.stderr)
    values = _load_inputs(args.input, gm, args.fill_random)
    _prepare_output_dir(args.output_dir)  # before the run and the benchmark, not after them
    with _step(bar, "run"):
        gm.set_input(**values)
        gm.run()
        outs = [gm.get_output(i).numpy() for i in range(gm.get_num_outputs())]
    with _step(bar, f"benchmark ({args.repeat} runs)"):
        res = gm.benchmark(repeat=args.repeat, number=1)
    if bar is not None:
        bar.close()
    _save_outputs(outs, args.output_dir)
    print(f"latency: mean {res.mean * 1e3:.3f} ms, median {res.median * 1e3:.3f} ms "
          f"({_count(args.repeat, 'run')}, {_count(gm.num_threads, 'thread')})")
    _warn_if_busy()
    return 0


def cmd_show(args):
    from . import transform
    from .backend.build_module import optimize_module as optimize

    # an option that only acts with another one is refused without it (fresh-user trial:
    # they were ignored)
    for option, given, needs, present in (("--bind-params", args.bind_params, "--after-passes",
                                           args.after_passes),
                                          ("--unfused", args.unfused, "--graph", args.graph),
                                          ("--target", args.target, "--stats", args.stats)):
        if given and not present:
            raise CLIError(f"show: {option} applies with {needs} only; add {needs}, or leave "
                           f"{option} out")
    args.target = args.target or "llvm"
    if args.stats:
        _check_target(args.target)
    shapes = _parse_shape(args.shape)
    mod, params = _import(args, shapes)
    if args.stats:
        from .report import model_stats

        with _step(None, f"statistics (opt level {args.opt_level}, target {args.target})"):
            stats = model_stats(mod, params, target=args.target, opt_level=args.opt_level)
        print(stats.format())
    if args.after_passes:
        with transform.PassContext(opt_level=args.opt_level):
            mod = optimize(mod, params=params if args.bind_params else None)
    if args.graph:
        _show_graph(args, mod)
    if args.stats or args.graph:
        return 0
    from .text import astext
    from .text.printer import META_OMITTED

    text = astext(mod, show_meta_data=False, show_types=args.types, show_spans=not args.no_spans)
    # the printer's note names a Python argument; the command has no such flag (new-user trial)
    print(text.replace(META_OMITTED, "// meta data omitted: the values of the constants "
                                     "(meta[relay.Constant][i]) are not printed"))
    return 0


def _show_graph(args, mod):
    import warnings

    from . import transform
    from .report import render_dot, to_dot
    from .report.graph import RENDER_FORMATS

    ext = os.path.splitext(args.graph)[1].lower().lstrip(".")
    if ext not in RENDER_FORMATS + ("dot", "gv"):
        raise CLIError(f"--graph {args.graph!r}: the file name must end in .svg, .png, .pdf "
                       f"(a picture) or .dot (the Graphviz text)")
    out_dir = os.path.dirname(os.path.abspath(args.graph))
    if not os.path.isdir(out_dir):
        raise CLIError(f"--graph {args.graph!r}: the directory {out_dir!r} does not exist")
    # --after-passes has fused the module already: draw its groups as they are
    with transform.PassContext(opt_level=args.opt_level):
        text = to_dot(mod, fused=not args.unfused and not args.after_passes)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = render_dot(text, args.graph)
    for w in caught:
        print(f"relay-tvm: {w.message}", file=sys.stderr)
    print(f"wrote {written}")


def _mx_latency(net, x, repeat):
    """``(median seconds, mode)`` of MXNet running ``net`` on ``x`` the fastest way MXNet 1.9
    runs CPU inference (benchmarks/bench_mxnet.py's setting): the MKLDNN (oneDNN) subgraph
    backend with static memory where MXNet has it, else the hybridized graph with static
    memory. Call after the reference output is taken: the subgraph backend fuses batch norm
    into the convolutions (rounding differs)."""
    import mxnet as mx

    xin = mx.nd.array(x)
    mode = "hybridized, static_alloc"
    try:
        if not mx.runtime.Features().is_enabled("MKLDNN"):
            raise RuntimeError("no MKLDNN")
        net.optimize_for(xin, backend="MKLDNN", static_alloc=True, static_shape=True)
        mode = "MKLDNN subgraph, static_alloc"
    except Exception:  # an MXNet without oneDNN, or a block its subgraph pass refuses
        net.hybridize(static_alloc=True, static_shape=True)
    net(xin).wait_to_read()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        net(xin).wait_to_read()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), mode


def _warn_if_busy():
    """Latencies on a machine whose cores are busy with other processes mean little (thread
    pools wait for each other): say so when the load average exceeds the usable cores."""
    from ._threads import usable_cores

    try:
        load = os.getloadavg()[0]
    except OSError:
        return
    cores = usable_cores()
    if load > cores + 0.5:
        print(f"note: load average {load:.1f} on {cores} usable cores: other processes share the "
              f"CPUs, so these latencies are pessimistic; benchmarks/bench_mxnet.py times each "
              f"engine in its own process", file=sys.stderr)


def _target_note(target: str) -> str:
    """`` (-mcpu=znver4, 512-bit vectors; CPU: AMD EPYC)``: what an LLVM target string resolves
    to on this machine (the CPU it is built for, the float32 vector width the templates are
    sized for) and the machine's CPU model; empty for other targets."""
    from .backend.isa import cpu_info
    from .backend.schedule.cpu_model import cpu_features
    from .backend.target import make_target

    tgt = make_target(target)
    if str(tgt.kind.name) != "llvm":
        return ""
    mcpu = str(tgt.attrs.get("mcpu", "") or "generic")
    bits = cpu_features(tgt).lanes(32) * 32
    cpu = cpu_info().get("model name")
    return f" (-mcpu={mcpu}, {bits}-bit vectors" + (f"; CPU: {cpu})" if cpu else ")")


def cmd_demo(args):
    from . import frontend, transform
    from ._threads import num_threads
    from .backend import build
    from .runtime import GraphModule

    _check_target(args.target)
    dev = _target_device(args.target, args.model)  # before the model is created and built
    size = args.size or zoo_image_size(args.model)
    shape = (args.batch, 3, size, size)
    # MXNet sizes its OpenMP pool when it loads: give it the threads TVM's runtime runs on
    # (TVM_NUM_THREADS=1 gave MXNet 2 threads against our 1 on a 2-core machine; fresh-user
    # trial), so the two latencies compare like with like (a user's OMP_NUM_THREADS is kept)
    if "mxnet" not in sys.modules and not os.environ.get("OMP_NUM_THREADS"):
        os.environ["OMP_NUM_THREADS"] = str(num_threads())
    bar = _progress(6, "create the Gluon model (MXNet)")
    try:
        # the model is created before the header is printed: an unknown --model, or a --size
        # the network cannot take, is one error line with nothing on stdout before it
        t0 = time.perf_counter()
        net = _zoo_block(args.model, shape, "--model")
        x = np.random.default_rng(0).uniform(-1, 1, shape).astype("float32")
        create_s = time.perf_counter() - t0
    except BaseException:
        bar.close()
        raise
    print(f"relay-tvm demo: {args.model} (random weights), input {shape}, opt level "
          f"{args.opt_level}, target {args.target}{_target_note(args.target)}", flush=True)
    bar.update(1)
    print(f"[relay-tvm] create the Gluon model (MXNet): {create_s:.2f} s", file=sys.stderr)
    with _step(bar, "import to Relay"):
        mod, params = frontend.from_mxnet(net, shape={"data": shape})
    with _step(bar, "compile"):
        t0 = time.perf_counter()
        with transform.PassContext(opt_level=args.opt_level):
            lib = build(mod, target=args.target, params=params)
        compile_s = time.perf_counter() - t0
    with _step(bar, "load the module (LLVM generates its machine code)"):
        t0 = time.perf_counter()
        gm = GraphModule(lib["default"](dev))
        load_s = time.perf_counter() - t0
    with _step(bar, f"run relay_tvm (one run, then {_count(args.repeat, 'timed run')})"):
        gm.set_input("data", x)
        gm.run()
        out = gm.get_output(0).numpy()
        ours = gm.benchmark(repeat=args.repeat, number=1).median
    with _step(bar, "run MXNet (one run, then the timed runs)"):
        import mxnet as mx

        ref = net(mx.nd.array(x)).asnumpy()
        theirs, mx_mode = _mx_latency(net, x, args.repeat)
    if bar is not None:
        bar.close()
    scale = float(np.abs(ref).max())
    err = float(np.abs(out - ref).max() / scale) if scale > 0 else float(np.abs(out).max())
    ok = err <= 1e-4
    if scale <= 1e-6:
        # random weights can shrink a deep net's output to ~0: then agreement means little
        print(f"warning: MXNet's output is ~0 (max |y| = {scale:.1e}); the comparison says "
              f"little about correctness (try another --model or --size)", file=sys.stderr)
    print(f"output {out.shape}: max |difference| to MXNet = {err:.2e} x max |y| "
          f"(max |y| = {scale:.1e}) ({'OK' if ok else 'MISMATCH'})")
    print(f"compile time        : {compile_s + load_s:8.2f} s (relay.build {compile_s:.2f} s, "
          f"then the machine code as the module loads {load_s:.2f} s)")
    mx_threads = os.environ.get("OMP_NUM_THREADS") or "1"
    print(f"latency relay_tvm   : {ours * 1e3:8.2f} ms (median of {args.repeat}, "
          f"{_count(gm.num_threads, 'thread')})")
    print(f"latency MXNet 1.9.1 : {theirs * 1e3:8.2f} ms (median of {args.repeat}, "
          f"{_count(int(mx_threads) if mx_threads.isdigit() else mx_threads, 'thread')}, "
          f"{mx_mode})")
    _warn_if_busy()
    return 0 if ok else 1


def _add_model_args(p):
    p.add_argument("model", nargs="?", help="MXNet -symbol.json (or NNVM graph JSON with "
                   "--format nnvm)")
    p.add_argument("--params", help="the .params file (default: PREFIX-NNNN.params next to it)")
    p.add_argument("--zoo", metavar="NAME", help="a Gluon model-zoo network with random "
                   "weights instead of files (needs MXNet), e.g. resnet18_v1")
    p.add_argument("--format", choices=["mxnet", "nnvm"], default=None,
                   help="model file format (default mxnet)")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="an input's shape, e.g. data=1,3,224,224 (repeat for several inputs). "
                   "Required with a model file. Optional with --zoo, whose only input is "
                   "'data': default data=1,3,224,224, or data=1,3,299,299 when the name "
                   "contains 'inception'; give it for another batch size or image size")
    p.add_argument("--dtype", default="float32", help="input dtype (default float32)")


class _Parser(argparse.ArgumentParser):
    """argparse's parser with its errors as every other usage error of the command: one line
    ``relay-tvm: error: ...`` and exit status 2 (argparse printed its usage block first; the
    README promises one line). ``--help`` still prints the usage."""

    def error(self, message):
        command = self.prog.removeprefix("relay-tvm").strip()
        print(f"relay-tvm: error: {command + ': ' if command else ''}{message} ({self.prog} "
              f"--help lists the options)", file=sys.stderr)
        self.exit(2)


def build_parser():
    parser = _Parser(
        prog="relay-tvm", description="Relay on Apache TVM: import MXNet/NNVM models, compile, "
        "run. With no command, runs the demo.")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("compile", help="import a model and compile it to a shared library")
    _add_model_args(p)
    p.add_argument("--target", default="llvm",
                   help="llvm (host CPU), 'llvm -mcpu=NAME', 'llvm -mtriple=aarch64-linux-gnu', "
                   "cuda (default llvm)")
    p.add_argument("--opt-level", type=_opt_level, default=3, help="0..4 (default 3)")
    p.add_argument("--weights-as-inputs", action="store_true",
                   help="compile the weights as runtime inputs (`run --input WEIGHTS.params` "
                   "or .npz, or NAME=FILE.npy each), not bound into the library; needed "
                   "without a .params file")
    p.add_argument("-o", "--output", default="model.so", help="library to write (default model.so)")
    p.add_argument("--cc", metavar="PATH", help="the C++ compiler that links the library, "
                   "with its flags if any (one argument: --cc 'g++ -static-libstdc++'; a "
                   "cross compiler such as riscv64-linux-gnu-g++ for a target of another "
                   "architecture; default: the host's, or <triple>-g++ when installed)")
    p.add_argument("--executor", choices=["graph", "vm"], default="graph",
                   help="graph: the graph executor (default; relay.build); vm: the Relay VM "
                   "(relay.vm.compile: control flow, dynamic shapes). `relay-tvm run` runs "
                   "either")
    p.add_argument("--tuning-db", metavar="DIR", help="apply the schedules of a relay-tvm tune "
                   "work dir")
    p.set_defaults(func=cmd_compile)
    p = sub.add_parser("tune", help="autotune the model's kernels (meta_schedule), resumable")
    _add_model_args(p)
    p.add_argument("--target", default="llvm", help="CPU target as for compile (default llvm)")
    p.add_argument("--opt-level", type=_opt_level, default=3,
                   help="opt level the model will be compiled at (default 3)")
    p.add_argument("--trials", type=_nonnegative_int, help="measurements in all")
    p.add_argument("--minutes", type=_minutes, help="stop starting new batches after M minutes")
    p.add_argument("--per-task", type=_positive_int, help="at most N measurements per kernel "
                   "(default: an even share; 64 with only --minutes)")
    p.add_argument("--trials-per-iter", type=_positive_int, default=16,
                   help="measurements per search batch (default 16)")
    p.add_argument("--work-dir", required=True, help="database directory (resumes when it "
                   "holds this model's tuning)")
    p.add_argument("--rpc-tracker", metavar="HOST:PORT", help="measure on RPC servers")
    p.add_argument("--rpc-key", metavar="KEY", help="the device key the servers registered")
    p.add_argument("--seed", type=int, default=None, help="search seed")
    p.add_argument("--verbose", action="store_true", help="print meta_schedule's log too")
    p.add_argument("--weights-as-inputs", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_tune)
    p = sub.add_parser("run", help="run a compiled model on .npy inputs; report latency")
    p.add_argument("module", help="library written by relay-tvm compile (either --executor) or "
                   "by export_library of relay.build / relay.vm.compile")
    p.add_argument("--input", "-i", action="append", metavar="NAME=FILE.npy",
                   help="an input's value as a .npy file (repeat for each input); or an .npz / "
                   ".params file (TVM's or MXNet's) whose named arrays set the inputs they name, "
                   "e.g. the weights of a --weights-as-inputs library")
    p.add_argument("--output-dir", "-o", default=".", help="where outputs go as .npy (default .)")
    p.add_argument("--repeat", type=_positive_int, default=10, help="timed runs (default 10)")
    p.add_argument("--fill-random", action="store_true",
                   help="run inputs that are not given on random values")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="device to run on (default cpu; cuda needs a library compiled with "
                        "--target cuda)")
    p.add_argument("--qemu", action="store_true",
                   help="run an AArch64 library (--target 'llvm -mtriple=aarch64-linux-gnu') "
                        "on this machine under qemu-aarch64, in the arm64 Python that "
                        "tools/setup_aarch64_qemu.sh prepares: outputs only, no latency")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("show", help="print the Relay text of an imported model, draw it "
                       "(--graph) or count what it costs (--stats)")
    _add_model_args(p)
    p.add_argument("--after-passes", action="store_true",
                   help="print the module after the optimization passes (fused)")
    p.add_argument("--bind-params", action="store_true",
                   help="with --after-passes: bind the weights as constants first")
    p.add_argument("--opt-level", type=_opt_level, default=3, help="0..4 (default 3)")
    p.add_argument("--types", action="store_true", help="add /* ty=... */ comments")
    p.add_argument("--no-spans", action="store_true",
                   help="leave out the /* span=NODE */ comments naming each MXNet/NNVM node")
    p.add_argument("--graph", metavar="FILE", help="draw the model (fused groups boxed) to FILE: "
                   ".svg/.png/.pdf with Graphviz's dot installed, else .dot text")
    p.add_argument("--unfused", action="store_true", help="with --graph: draw the operators "
                   "without fusing them")
    p.add_argument("--stats", action="store_true", help="print operator counts, MACs, "
                   "parameters, kernels after fusion and planned memory")
    p.add_argument("--target", default=None, help="with --stats: the target to plan kernels "
                   "for (default llvm)")
    p.set_defaults(func=cmd_show, weights_as_inputs=True)
    p = sub.add_parser("demo", help="model-zoo network with random weights: import, compile, "
                       "run, compare with MXNet (default command)")
    _add_demo_args(p)
    p = sub.add_parser("script", help="run a tvm.relay 0.19 Python script unchanged: relay_tvm "
                       "is imported first, so its `from tvm import relay` finds relay_tvm",
                       description="Run FILE as `python FILE ARGS...` would, after `import "
                       "relay_tvm` (which makes tvm.relay resolve to relay_tvm), so a Relay-era "
                       "script needs no edit. Its errors print with their traceback, as "
                       "Python's would.")
    p.add_argument("file", help="the Python script")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments (sys.argv[1:])")
    parser.commands = sub.choices  # name -> the subcommand's parser
    return parser


def run_script(path: str, args=()) -> int:
    """Run the Python script ``path`` as ``__main__`` with ``sys.argv = [path, *args]`` (``path``
    as given), ``__file__`` its absolute path and its folder first on ``sys.path`` (as ``python
    path args...`` does), relay_tvm imported already.
    Returns 0, the status of the ``SystemExit`` the script raised, or 1 after printing the
    traceback of another exception from the script's own frames (as Python does).

    A script with a syntax error prints it as Python does and returns 1.

    Raises:
        CLIError: ``path`` is not a file, or a binary one.
    """
    import builtins
    import types

    if not os.path.isfile(path):
        what = "a directory" if os.path.isdir(path) else "no such file"
        raise CLIError(f"script: {path!r} is {what}; expected a Python script")
    full = os.path.abspath(path)  # Python's __file__ (and traceback name) of a main script
    with open(full, "rb") as f:
        source = f.read()
    if b"\0" in source:  # (fresh-user trial: `script x.npy` was a traceback through cli.py)
        raise CLIError(f"script: {path!r} is not a Python script (a binary file: it holds "
                       f"null bytes)")
    try:
        compiled = compile(source, full, "exec")
    except SyntaxError as e:  # as Python shows a script's syntax error: no traceback, status 1
        import traceback

        sys.stderr.write("".join(traceback.format_exception_only(type(e), e)))
        return 1
    import relay_tvm  # noqa: F401  (tvm.relay resolves to relay_tvm from here on)

    saved_argv, saved_path, saved_main = sys.argv, list(sys.path), sys.modules.get("__main__")
    sys.argv = [path, *args]  # argv[0] as given, as Python leaves it
    sys.path.insert(0, os.path.dirname(full))
    main_mod = types.ModuleType("__main__")
    main_mod.__dict__.update(__file__=full, __builtins__=builtins, __cached__=None,
                             __loader__=None, __package__=None, __spec__=None)
    sys.modules["__main__"] = main_mod  # pickling and `import __main__` find the script's
    try:
        exec(compiled, main_mod.__dict__)
    except SystemExit as e:
        code = e.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)  # sys.exit("message"): Python prints it, status 1
        return 1
    except Exception as e:  # the traceback from the script's own frames, as Python's
        import traceback

        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != full:
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    return 0


def _add_demo_args(p):
    p.add_argument("--model", default="resnet18_v1",
                   help="Gluon model-zoo name, e.g. resnet18_v1, mobilenet0.25 (default resnet18_v1)")
    p.add_argument("--batch", type=_positive_int, default=1, help="batch size (default 1)")
    p.add_argument("--size", type=_positive_int, default=None,
                   help="image size (default 224, 299 inception)")
    p.add_argument("--target", default="llvm",
                   help="compilation target (default llvm); the demo runs the result here, so "
                   "it must be one this machine runs (its CPU, or cuda with a GPU); for "
                   "another machine (e.g. 'llvm -mtriple=aarch64-linux-gnu') use "
                   "`relay-tvm compile --zoo MODEL --target ...`, which builds without running")
    p.add_argument("--opt-level", type=_opt_level, default=3, help="0..4 (default 3)")
    p.add_argument("--repeat", type=_positive_int, default=10, help="timed runs (default 10)")
    p.set_defaults(func=cmd_demo)


def main(argv=None):
    """Entry point of the ``relay-tvm`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["demo"] + argv
    if argv[:1] == ["script"] and len(argv) >= 2 and argv[1] not in ("-h", "--help"):
        # FILE and its arguments exactly as given (argparse would take a "--" of them)
        args = argparse.Namespace(command="script", file=argv[1], args=argv[2:])
    else:
        args, extra = parser.parse_known_args(argv)
        if extra:  # named by the subcommand's parser, whose --help lists its options
            parser.commands.get(args.command, parser).error(
                f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "script":  # the script's own errors and warnings, as Python shows them
        try:
            return run_script(args.file, args.args)
        except CLIError as e:
            print(f"relay-tvm: error: {e}", file=sys.stderr)
            return 2
    # a command's warnings are messages to its user: no source file and line of the library
    fmt = warnings.formatwarning
    warnings.formatwarning = lambda msg, cat, *_a, **_k: f"relay-tvm: warning: {msg}\n"
    try:
        status = args.func(args)
        sys.stdout.flush()  # a pipe's reader gone shows here, not in Python's exit-time flush
        return status
    except BrokenPipeError:
        # the reader of our output went away (`relay-tvm show ... | head`): stop quietly, as
        # the shell's own tools do. Python would report the pipe again when it flushes stdout at
        # exit, so stdout is pointed at /dev/null first (the recipe of Python's signal docs).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141  # 128 + SIGPIPE: what a shell reports for a command killed by SIGPIPE
    except CLIError as e:
        print(f"relay-tvm: error: {e}", file=sys.stderr)
        return 2
    except RelayError as e:
        print(f"relay-tvm: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        warnings.formatwarning = fmt


if __name__ == "__main__":
    sys.exit(main())
