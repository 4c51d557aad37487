"""The ``relay-tvm`` command: compile exported files (no MXNet), run with .npy inputs, show the
Relay text; the demo against MXNet."""

import json
import os
import shlex
import sys
import warnings

import numpy as np
import pytest
from test_mxnet_json import _conv_fc, _conv_fc_params, _numpy_conv_fc

from relay_tvm.cli import main
from relay_tvm.frontend.mxnet_params import save_ndarray_file


@pytest.fixture
def exported(tmp_path):
    params = _conv_fc_params(np.random.default_rng(0))
    (tmp_path / "m-symbol.json").write_text(json.dumps(_conv_fc()))
    save_ndarray_file(tmp_path / "m-0007.params", params)
    return tmp_path, params


def test_compile_and_run(exported, capsys):
    d, params = exported
    so = str(d / "m.so")
    # the .params file is found next to the symbol (the only one: several is an error)
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5",
                 "--opt-level", "3", "-o", so]) == 0
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype("float32")
    np.save(d / "x.npy", x)
    out_dir = d / "out"
    assert main(["run", so, "--input", f"data={d / 'x.npy'}", "--output-dir", str(out_dir),
                 "--repeat", "2"]) == 0
    got = np.load(out_dir / "output_0.npy")
    np.testing.assert_allclose(got, _numpy_conv_fc(x, params), rtol=1e-4, atol=1e-4)
    text = capsys.readouterr().out
    assert "latency: mean" in text and "output 0: shape (2, 3)" in text
    assert "threads)" in text
    import tvm

    if not tvm.cuda(0).exist:  # a device the machine lacks: one clear line, exit status 2
        assert main(["run", so, "--input", f"data={d / 'x.npy'}", "--device", "cuda"]) == 2
        assert "this machine has no cuda device" in capsys.readouterr().err


def test_show(exported, capsys):
    d, _ = exported
    assert main(["show", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5"]) == 0
    text = capsys.readouterr().out
    assert "nn.conv2d(%data, %conv_weight" in text and "/* span=conv */" in text
    assert main(["show", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5",
                 "--after-passes", "--opt-level", "3", "--no-spans"]) == 0
    text = capsys.readouterr().out
    assert "Primitive=1" in text and "span=" not in text
    # bound weights are constants: the printer's note named a Python argument (new-user trial)
    assert main(["show", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5",
                 "--after-passes", "--bind-params", "--no-spans"]) == 0
    text = capsys.readouterr().out
    assert "meta[relay.Constant][0]" in text and "show_meta_data" not in text
    assert text.rstrip().endswith("// meta data omitted: the values of the constants "
                                  "(meta[relay.Constant][i]) are not printed")


@pytest.mark.parametrize("argv, match", [
    (["compile", "{d}/m-symbol.json", "--shape", "data"], "expected NAME=D1,D2"),
    (["compile", "{d}/m-symbol.json"], "--shape NAME=D1,D2,... is needed"),
    (["compile", "--shape", "data=1,2"], "give a model file"),
])
def test_usage_errors(exported, capsys, argv, match):
    d, _ = exported  # an existing model file: a missing one is reported first
    assert main([a.format(d=d) for a in argv]) == 2
    assert match in capsys.readouterr().err


def test_conversion_error_exit_status(exported, capsys):
    d, _ = exported
    assert main(["show", str(d / "m-symbol.json"), "--shape", "data=1,3,5,5"]) == 1
    assert "ConversionError" in capsys.readouterr().err


def test_exit_statuses_are_the_readmes(exported, capsys):
    """README.md documents 2 for usage errors and 1 for a model that cannot be converted;
    compile and show keep to it, for a model with weights of other shapes and for a
    truncated symbol file alike."""
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    assert "**2** for a usage error" in readme and "`relay-tvm: error: ...`" in readme
    assert "**1** when the model or the build fails" in readme
    assert "`relay-tvm: ConversionError: ...`" in readme
    d, _ = exported
    (d / "cut-symbol.json").write_text(json.dumps(_conv_fc())[:40])
    so = str(d / "m.so")
    cases = [
        (["compile", "{d}/m-symbol.json", "--shape", "data=1,3,5,5", "-o", so], 1,
         "relay-tvm: ConversionError: parameter 'conv_weight'"),
        (["show", "{d}/m-symbol.json", "--shape", "data=1,3,5,5"], 1,
         "relay-tvm: ConversionError: parameter 'conv_weight'"),
        (["compile", "{d}/cut-symbol.json", "--shape", "data=1,2,5,5", "-o", so], 1,
         "relay-tvm: ConversionError: "),
        (["show", "{d}/cut-symbol.json", "--shape", "data=1,2,5,5"], 1,
         "relay-tvm: ConversionError: "),
        (["compile", "{d}/m-symbol.json", "--shape", "data", "-o", so], 2,
         "relay-tvm: error: "),
        (["compile", "{d}/m-symbol.json", "--shape", "data=1,2,5,5", "--cc", "{d}/none",
          "-o", so], 2, "relay-tvm: error: --cc"),
        # a --shape name the graph lacks is the option's fault, whatever the model's source
        # (it was a ConversionError, exit 1, for a model file and 2 for --zoo; fresh-user trial)
        (["compile", "{d}/m-symbol.json", "--shape", "dat=1,2,5,5", "-o", so], 2,
         "relay-tvm: error: {d}/m-symbol.json: shape given for 'dat', but the graph has no "
         "input of that name; did you mean 'data'?"),
        (["show", "{d}/m-symbol.json", "--shape", "dat=1,2,5,5"], 2, "relay-tvm: error: "),
        # a --params file of another kind is a usage error (it was the importer's "bad file
        # magic", exit 1; fresh-user trial)
        (["compile", "{d}/m-symbol.json", "--shape", "data=1,2,5,5", "--params", "{d}/x.npy",
          "-o", so], 2, "relay-tvm: error: --params '{d}/x.npy' is a .npy file (np.save); "
         "expected the model's .params file"),
        (["compile", "{d}/m-symbol.json", "--shape", "data=1,2,5,5", "--params",
          "{d}/m-symbol.json", "-o", so], 2, "relay-tvm: error: --params "),
    ]
    np.save(d / "x.npy", np.zeros(3))
    for argv, status, first in cases:
        assert main([a.format(d=d) for a in argv]) == status, argv
        lines = [ln for ln in capsys.readouterr().err.splitlines()
                 if not ln.startswith("[relay-tvm] ")]  # the progress lines
        assert lines[0].startswith(first.format(d=d)), (argv, lines)
        if status == 2:
            assert len(lines) == 1, lines


@pytest.mark.mxnet
def test_demo_default_command(capsys):
    pytest.importorskip("mxnet", reason="the demo compares against MXNet 1.9.1")
    # no sub-command: the demo (options go to it)
    assert main(["--model", "mobilenet0.25", "--size", "32", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "(OK)" in out and "latency MXNet 1.9.1" in out and "latency relay_tvm" in out
    from relay_tvm._threads import num_threads

    assert f"{num_threads()} threads" in out
    # the header names what "llvm" resolved to here: the CPU built for and the vector width
    # (fresh-user trial: only an error for an unknown -mcpu revealed it)
    from relay_tvm.backend.schedule.cpu_model import cpu_features
    from relay_tvm.backend.target import make_target

    tgt = make_target("llvm")
    bits = cpu_features(tgt).lanes(32) * 32
    assert f"target llvm (-mcpu={tgt.attrs['mcpu']}, {bits}-bit vectors" in out.splitlines()[0]
    # MXNet timed on its own fastest CPU path (what the README's peer tables use), named
    import mxnet as mx

    mode = ("MKLDNN subgraph" if mx.runtime.Features().is_enabled("MKLDNN")
            else "hybridized, static_alloc")
    mx_line = next(ln for ln in out.splitlines() if ln.startswith("latency MXNet"))
    assert mx_line.endswith(f", {mode}, static_alloc)" if mode == "MKLDNN subgraph"
                            else f", {mode})")


@pytest.mark.mxnet
def test_demo_gives_mxnet_the_threads_tvm_runs_on_and_counts_the_machine_code(tmp_path):
    """Fresh-user trial: with TVM_NUM_THREADS=1 the demo ran MXNet on every core against our
    one thread, and its compile time left out the LLVM machine code made when the module
    loads (0.69 of ResNet-18's 3.5 s)."""
    import re
    import subprocess
    import sys

    pytest.importorskip("mxnet", reason="the demo compares against MXNet 1.9.1")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env.update(TVM_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-m", "relay_tvm.cli", "demo", "--model",
                        "mobilenet0.25", "--size", "32", "--repeat", "2"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = {ln.split(":")[0].strip(): ln for ln in r.stdout.splitlines() if " : " in ln}
    assert "(median of 2, 1 thread)" in lines["latency relay_tvm"]
    assert "(median of 2, 1 thread," in lines["latency MXNet 1.9.1"]
    m = re.fullmatch(r"compile time +: +([\d.]+) s \(relay\.build ([\d.]+) s, then the "
                     r"machine code as the module loads ([\d.]+) s\)",
                     lines["compile time"])
    assert m and float(m[1]) == pytest.approx(float(m[2]) + float(m[3]), abs=0.011)


def test_demo_unknown_model_names_its_option(capsys):
    pytest.importorskip("mxnet", reason="the demo compares against MXNet 1.9.1")
    assert main(["demo", "--model", "resnet19"]) == 2
    out, err = capsys.readouterr()
    assert "--model 'resnet19'" in err and "--zoo" not in err
    # from a new-user trial: the "relay-tvm demo: MODEL (random weights), ..." header came
    # first, then the error; the arguments are checked before anything is printed now
    assert out == ""


@pytest.mark.mxnet
def test_demo_size_the_network_cannot_take_prints_no_header(capsys):
    pytest.importorskip("mxnet", reason="the demo compares against MXNet 1.9.1")
    # SqueezeNet's pooling needs more than 16x16; MXNet's own "infer_shape error" print to
    # stdout is kept out too
    assert main(["demo", "--model", "squeezenet1.0", "--size", "16"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("relay-tvm: error: squeezenet1.0: MXNet cannot run the network on "
                          "input shape (1, 3, 16, 16)"), err


def test_zoo_shape_help_and_default(capsys, monkeypatch):
    """--shape is optional with --zoo: help and docstring say the default (data=1,3,224,224;
    299 for Inception), which is what the import uses."""
    import relay_tvm.cli as cli

    helps = {a.dest: a.help for a in cli.build_parser()._subparsers._group_actions[0]
             .choices["compile"]._actions}
    assert "Required with a model file" in helps["shape"]
    assert "default data=1,3,224,224, or data=1,3,299,299" in helps["shape"]
    assert "``data=1,3,224,224``, or ``data=1,3,299,299``" in cli.__doc__
    seen = []

    def fake_zoo_block(name, shape, flag="--zoo"):
        seen.append((name, tuple(shape)))
        raise cli.CLIError("stop")

    monkeypatch.setattr(cli, "_zoo_block", fake_zoo_block)
    for name in ("resnet18_v1", "inceptionv3", "InceptionV3"):
        assert main(["show", "--zoo", name]) == 2
    assert seen == [("resnet18_v1", (1, 3, 224, 224)), ("inceptionv3", (1, 3, 299, 299)),
                    ("InceptionV3", (1, 3, 299, 299))]


@pytest.mark.parametrize("cmd", ["compile", "show"])
def test_shape_for_an_unknown_input_lists_the_data_inputs_only(exported, capsys, cmd):
    """From a new-user trial: `--shape dta=...` listed the weights among the valid names."""
    d, _ = exported
    argv = [cmd, str(d / "m-symbol.json"), "--shape", "dta=1,2,5,5"]
    assert main(argv + (["-o", str(d / "m.so")] if cmd == "compile" else [])) == 2
    out, err = capsys.readouterr()
    assert err == (f"relay-tvm: error: {d / 'm-symbol.json'}: shape given for 'dta', but the "
                   "graph has no input of that name; did you mean 'data'? (its data inputs: "
                   "'data')\n")
    assert "weight" not in err and "bias" not in err and out == ""


def test_shape_for_an_unknown_input_without_parameters_says_all_are_inputs(exported):
    from relay_tvm import frontend
    from relay_tvm.errors import ConversionError

    d, _ = exported
    with pytest.raises(ConversionError, match=r"^shape given for 'xyz', but the graph has no "
                       r"input of that name \(no parameters were given, so every variable is "
                       r"an input: 'data', 'conv_weight', 'conv_bias', 'fc_weight', "
                       r"'fc_bias'\)$"):
        # the JSON text: a path would load the m-0007.params next to it, as the CLI does
        frontend.from_mxnet((d / "m-symbol.json").read_text(), shape={"xyz": (1, 2, 5, 5)})


@pytest.mark.parametrize("argv, match", [
    (["compile", "{d}/m-symbol.json", "--shape", "data=2,2,5x5"], "integers separated by commas"),
    (["compile", "{d}/m-symbol.json", "--shape", "data=2,0,5,5"], "every dimension must be >= 1"),
    (["compile", "{d}/m-symbol.json", "--shape", "data=1,2,5,5", "--shape", "data=2,2,5,5"],
     "was given a shape already"),
    (["compile", "{d}/nope-symbol.json", "--shape", "data=1,2,5,5"], "does not exist"),
    # a new-user trial: a missing file asked for --shape first
    (["compile", "{d}/nope-symbol.json"], "model file '{d}/nope-symbol.json' does not exist"),
    (["compile", "{d}/m-symbol.json", "--shape", "data=1,2,5,5", "-o", "{d}/no/dir/x.so"],
     "does not exist"),
    (["compile", "{d}/lonely-symbol.json", "--shape", "data=1,2,5,5"], "no parameter file found"),
    # the weights given as the model (a new user's mistake): named as such, before any import
    (["compile", "{d}/m-0007.params", "--shape", "data=1,2,5,5"], "is not JSON (a .params file?)"),
    (["compile", "{d}/m-0007.params", "--params", "{d}/m-0007.params", "--shape",
      "data=1,2,5,5"], "is not JSON (a .params file?)"),
])
def test_cli_rejects_bad_arguments(exported, capsys, argv, match):
    d, _ = exported
    (d / "lonely-symbol.json").write_text((d / "m-symbol.json").read_text())
    assert main([a.format(d=d) for a in argv]) == 2
    assert match.format(d=d) in capsys.readouterr().err


def test_cli_repeat_must_be_positive(exported, capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "x.so", "--repeat", "0"])
    assert info.value.code == 2
    # one line, as every usage error (argparse printed its usage block first; fresh-user trial)
    assert capsys.readouterr().err.splitlines() == [
        "relay-tvm: error: run: argument --repeat: must be >= 1, got 0 (relay-tvm run --help "
        "lists the options)"]


@pytest.mark.parametrize("argv, line", [
    (["run", "x.so", "--bogus"], "run: unrecognized arguments: --bogus (relay-tvm run --help"),
    (["compile", "--zoo", "resnet18_v1", "--shpe"],
     "compile: unrecognized arguments: --shpe (relay-tvm compile --help"),
    (["--bogus"], "demo: unrecognized arguments: --bogus (relay-tvm demo --help"),
])
def test_cli_unknown_option_names_its_subcommand(capsys, argv, line):
    # argparse reported unknown options of a subcommand from the top-level parser, whose
    # --help does not list them (fresh-user trial)
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("relay-tvm: error: " + line), err


def test_run_requires_every_input(exported, capsys):
    d, _ = exported
    so = str(d / "w.so")
    (d / "lonely-symbol.json").write_text((d / "m-symbol.json").read_text())
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["compile", str(d / "lonely-symbol.json"), "--shape", "data=1,2,5,5",
                     "--weights-as-inputs", "-o", so]) == 0
    # asked for: from_mxnet's "the weights are inputs of main" warning is not repeated
    assert not [w for w in caught if "weights are inputs" in str(w.message)]
    np.save(d / "x.npy", np.zeros((1, 2, 5, 5), "float32"))
    assert main(["run", so, "--input", f"data={d / 'x.npy'}", "-o", str(d)]) == 2
    assert "inputs not given: conv_weight" in capsys.readouterr().err
    assert main(["run", so, "--input", f"data={d / 'x.npy'}", "-o", str(d), "--fill-random",
                 "--repeat", "1"]) == 0
    # the same input twice (fresh-user trial: the second silently replaced the first)
    capsys.readouterr()
    assert main(["run", so, "--input", f"data={d / 'x.npy'}", "--input",
                 f"data={d / 'x.npy'}", "-o", str(d), "--fill-random"]) == 2
    assert "input 'data' was given already" in capsys.readouterr().err


def test_run_refuses_an_npz_input_and_an_output_dir_it_cannot_create(exported, capsys):
    """Fresh-user trial: an .npz input said "unsupported value NpzFile", and an --output-dir
    that cannot be created was a Python traceback after the whole benchmark."""
    d, _ = exported
    so = str(d / "m.so")
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5", "-o", so]) == 0
    x = np.zeros((2, 2, 5, 5), "float32")
    np.savez(d / "x.npz", data=x)
    np.save(d / "x.npy", x)
    capsys.readouterr()
    assert main(["run", so, "--input", f"data={d / 'x.npz'}", "-o", str(d)]) == 2
    assert "is an .npz archive (arrays ['data']); give it without NAME= (--input" in \
        capsys.readouterr().err
    # fresh-user trial: NAME=FILE.params said "Cannot load file containing pickled data"
    (d / "x.params").write_bytes(b"")
    assert main(["run", so, "--input", f"data={d / 'x.params'}", "-o", str(d)]) == 2
    assert "NAME= takes a .npy file (np.save); a .params file of named arrays goes without " \
           "NAME=" in capsys.readouterr().err
    # ... and any other file (the symbol JSON) NumPy's "pickled data" wording (fresh-user trial)
    assert main(["run", so, "--input", f"data={d / 'm-symbol.json'}", "-o", str(d)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"relay-tvm: error: --input 'data={d / 'm-symbol.json'}': cannot read "
        f"'{d / 'm-symbol.json'}': it is not a .npy file (np.save) nor an .npz archive")
    # new-user trial: NAME:FILE said only "No such file" for the whole item
    assert main(["run", so, "--input", f"data:{d / 'x.npy'}", "-o", str(d)]) == 2
    err = capsys.readouterr().err
    assert f"no such file 'data:{d / 'x.npy'}'" in err
    assert err.rstrip().endswith("(--input takes NAME=FILE.npy, or FILE.npy for the inputs in "
                                 "order)"), err
    (d / "afile").write_text("")
    assert main(["run", so, "--input", f"data={d / 'x.npy'}", "-o", str(d / "afile" / "sub")]) \
        == 2
    err = capsys.readouterr().err
    assert "--output-dir" in err and "cannot create the directory" in err
    assert "Traceback" not in err


def test_weights_as_inputs_with_a_params_file(exported, capsys):
    """--weights-as-inputs was ignored when a .params file was found (or with --zoo): the
    weights were bound all the same (fresh-user trial). They are now runtime inputs."""
    d, params = exported
    so = str(d / "wi.so")
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5",
                 "--weights-as-inputs", "-o", so]) == 0
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype("float32")
    np.save(d / "x.npy", x)
    capsys.readouterr()
    assert main(["run", so, "--input", f"data={d / 'x.npy'}", "-o", str(d)]) == 2
    assert "inputs not given: " in capsys.readouterr().err
    inputs = ["--input", f"data={d / 'x.npy'}"]
    for key, value in params.items():  # "arg:conv_weight": the .params file's keys
        name = key.partition(":")[2]
        np.save(d / f"{name}.npy", value)
        inputs += ["--input", f"{name}={d / (name + '.npy')}"]
    out_dir = d / "out-wi"
    assert main(["run", so, *inputs, "--output-dir", str(out_dir), "--repeat", "1"]) == 0
    np.testing.assert_allclose(np.load(out_dir / "output_0.npy"), _numpy_conv_fc(x, params),
                               rtol=1e-4, atol=1e-4)
    # all weights at once (new-user trial: ResNet-18 needed 62 --input flags): the model's
    # MXNet .params file, an .npz of them, or TVM's save_param_dict
    from relay_tvm.backend.param_dict import save_param_dict

    plain = {k.partition(":")[2]: v for k, v in params.items()}
    np.savez(d / "w.npz", **plain)
    (d / "w-tvm.params").write_bytes(save_param_dict(plain))
    want = _numpy_conv_fc(x, params)
    for archive in ("m-0007.params", "w.npz", "w-tvm.params"):
        out_dir = d / f"out-{archive}"
        assert main(["run", so, "--input", f"data={d / 'x.npy'}", "--input", str(d / archive),
                     "--output-dir", str(out_dir), "--repeat", "1"]) == 0, archive
        np.testing.assert_allclose(np.load(out_dir / "output_0.npy"), want, rtol=1e-4,
                                   atol=1e-4)
    np.savez(d / "bad.npz", conv_wieght=plain["conv_weight"])
    capsys.readouterr()
    assert main(["run", so, "--input", str(d / "bad.npz"), "-o", str(d)]) == 2
    assert "array 'conv_wieght' names no input of the model" in capsys.readouterr().err


def relay_host_is_x86() -> bool:
    import platform

    return platform.machine() in ("x86_64", "AMD64")


@pytest.mark.slow
def test_tune_then_compile_with_the_database(exported, capsys):
    d, params = exported
    sym, wd, so = str(d / "m-symbol.json"), str(d / "tuning"), str(d / "tuned.so")
    assert main(["tune", sym, "--shape", "data=2,2,5,5", "--trials", "4", "--trials-per-iter",
                 "2", "--seed", "0", "--work-dir", wd]) == 0
    err = capsys.readouterr().err
    assert "[tune]" in err and "untuned" in err
    assert main(["compile", sym, "--shape", "data=2,2,5,5", "--tuning-db", wd, "-o", so]) == 0
    import re

    m = re.search(r"(\d+) of (\d+) kernels use a tuned schedule \(measured faster than their "
                  r"untuned one\); (\d+) keep the untuned schedule \(no tuned record measured "
                  r"faster, or none searched\); (\d+) have no record", capsys.readouterr().err)
    assert m, "the tuned-kernel count is not reported"
    tuned, total, kept, none = (int(g) for g in m.groups())
    assert tuned + kept + none == total and tuned + kept > 0
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype("float32")
    np.save(d / "x.npy", x)
    assert main(["run", so, "--input", f"data={d / 'x.npy'}", "--output-dir", str(d / "o"),
                 "--repeat", "1"]) == 0
    np.testing.assert_allclose(np.load(d / "o" / "output_0.npy"), _numpy_conv_fc(x, params),
                               rtol=1e-4, atol=1e-4)
    # the same command again resumes: nothing left to measure
    assert main(["tune", sym, "--shape", "data=2,2,5,5", "--trials", "4", "--trials-per-iter",
                 "2", "--seed", "0", "--work-dir", wd]) == 0
    assert "untuned" not in capsys.readouterr().err
    # another batch size makes other kernels: the database applies to none, which is said
    # (it only printed "0 of N kernels use a tuned record" before; from the new-user trial)
    never = r"tuning database has no record for any of the \d+ kernels of this model"
    with pytest.warns(UserWarning, match=never):
        assert main(["compile", sym, "--shape", "data=1,2,5,5", "--tuning-db", wd, "-o",
                     so]) == 0
    # another opt level: the advice is the command line's option, not Python (it said "build
    # inside `with relay.transform.PassContext(...)`"; second fresh-user trial, 2026-12-05)
    with pytest.warns(UserWarning, match=r"tuned at opt level 3 and this build is at opt "
                      r"level 2.*: compile with `--opt-level 3`$"):
        assert main(["compile", sym, "--shape", "data=2,2,5,5", "--tuning-db", wd,
                     "--opt-level", "2", "-o", so]) == 0
    # a database of another target is said once, by the build, naming what differs (fresh-user
    # trial: load_database and the build each gave a warning of it)
    if relay_host_is_x86():
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            assert main(["compile", sym, "--shape", "data=2,2,5,5", "--tuning-db", wd,
                         "--target", "llvm -mcpu=haswell", "-o", so]) == 0
        other = [str(w.message) for w in said if "tuned for" in str(w.message)]
        assert len(other) == 1 and "tuned for another target" in other[0], other
        assert "not haswell" in other[0], other
    # and so does relay.build in Python (it was silent there; from the second new-user trial)
    import relay_tvm as relay

    mod, p1 = relay.frontend.from_mxnet(sym, shape={"data": (1, 2, 5, 5)},
                                        arg_params=str(d / "m-0007.params"))
    with pytest.warns(UserWarning, match=never):
        relay.build(mod, target="llvm", params=p1, database=wd)
    mod, p2 = relay.frontend.from_mxnet(sym, shape={"data": (2, 2, 5, 5)},
                                        arg_params=str(d / "m-0007.params"))
    with warnings.catch_warnings(), relay.transform.PassContext(opt_level=3):
        warnings.simplefilter("error")  # the model it was tuned for (the CLI's opt level 3)
        relay.build(mod, target="llvm", params=p2, database=wd)


def test_bad_paths_are_refused_before_the_slow_steps(exported, capsys, monkeypatch):
    """Fresh-user trial: `compile --zoo resnet18_v1 --tuning-db nodir/` imported the model,
    and `run r18.so --input data=nofile.npy` loaded the 97 MB library, before the missing path
    was reported."""
    from relay_tvm import cli
    from relay_tvm.runtime import library

    d, _ = exported
    monkeypatch.chdir(d)

    def slow(*a, **k):
        raise AssertionError("the slow step ran before the argument check")

    monkeypatch.setattr(cli, "_import", slow)
    monkeypatch.setattr(library, "load_compiled", slow)
    assert main(["compile", "m-symbol.json", "--shape", "data=2,2,5,5", "--tuning-db",
                 "nodir/", "-o", "x.so"]) == 2
    assert "--tuning-db 'nodir/' does not exist" in capsys.readouterr().err
    (d / "emptydir").mkdir()  # a directory, but no tuning work directory
    assert main(["compile", "m-symbol.json", "--shape", "data=2,2,5,5", "--tuning-db",
                 "emptydir", "-o", "x.so"]) == 1
    assert "tuning database 'emptydir': no " in capsys.readouterr().err
    (d / "lib.so").write_bytes(b"")
    assert main(["run", "lib.so", "--input", "data=nofile.npy"]) == 2
    assert capsys.readouterr().err.strip() == (
        "relay-tvm: error: --input 'data=nofile.npy': no such file 'nofile.npy'")


@pytest.mark.parametrize("argv, status, match", [
    (["tune", "m-symbol.json", "--shape", "data=2,2,5,5", "--work-dir", "w"], 2,
     "give a budget"),
    (["tune", "m-symbol.json", "--shape", "data=2,2,5,5", "--work-dir", "w", "--trials", "3",
      "--rpc-tracker", "127.0.0.1:9190"], 2, "go together"),
    (["tune", "m-symbol.json", "--shape", "data=2,2,5,5", "--work-dir", "w", "--trials", "3",
      "--rpc-tracker", "nowhere", "--rpc-key", "k"], 2,
     "relay-tvm: error: --rpc-tracker / --rpc-key: RPC tracker 'nowhere': expected HOST:PORT"),
    (["tune", "m-symbol.json", "--shape", "data=2,2,5,5", "--work-dir", "w", "--trials", "3",
      "--target", "cuda -arch=sm_80"], 2, "relay-tvm: error: --target: tuning target 'cuda "),
    (["tune", "m-symbol.json", "--shape", "data=2,2,5,5", "--work-dir", "w", "--trials", "3",
      "--target", "llvm -mtriple=aarch64-linux-gnu"], 1, "measure it on a board over TVM RPC"),
    # (a path that does not exist: a usage error, exit 2, like -o's missing directory; from
    # the new-user trial: it was a TuningError with exit 1, as --params' missing file was a
    # ConversionError)
    (["compile", "m-symbol.json", "--shape", "data=2,2,5,5", "--tuning-db", "nothere"], 2,
     "relay-tvm: error: --tuning-db 'nothere' does not exist (expected the --work-dir"),
    (["compile", "m-symbol.json", "--shape", "data=2,2,5,5", "--tuning-db", "m-symbol.json"], 2,
     "relay-tvm: error: --tuning-db 'm-symbol.json' is a file, not a directory"),
    (["compile", "m-symbol.json", "--shape", "data=2,2,5,5", "--params", "nosuch.params"], 2,
     "relay-tvm: error: --params 'nosuch.params' does not exist (expected the model's .params"),
])
def test_tune_usage_errors(exported, capsys, monkeypatch, argv, status, match):
    d, _ = exported
    monkeypatch.chdir(d)
    assert main(argv) == status
    assert match in capsys.readouterr().err


def test_warnings_print_as_messages(exported):
    """A command's warnings read as messages (no library file, line or warning class)."""
    import subprocess
    import sys

    d, _ = exported
    r = subprocess.run([sys.executable, "-m", "relay_tvm.cli", "tune", "m-symbol.json",
                        "--shape", "data=2,2,5,5", "--trials", "0", "--work-dir", "w"],
                       cwd=d, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "relay-tvm: warning: tune_relay: a budget of 0 trials" in r.stderr
    assert "UserWarning" not in r.stderr and ".py:" not in r.stderr
    # nothing measured: no "build with --tuning-db" suggestion (fresh-user trial)
    assert "no records in w (nothing was measured)" in r.stdout
    assert "build with" not in r.stdout


@pytest.mark.slow
def test_tune_interrupted_says_how_to_resume(exported):
    """From the new-user trial: Ctrl-C during relay-tvm tune printed a 30-line traceback ending
    in a bare RuntimeError (meta_schedule's C++ loop swallows the KeyboardInterrupt); it now
    prints one line saying the work directory is consistent and exits with 130."""
    import signal
    import subprocess
    import sys
    import time

    d, _ = exported
    proc = subprocess.Popen(
        [sys.executable, "-m", "relay_tvm.cli", "tune", str(d / "m-symbol.json"), "--shape",
         "data=2,2,5,5", "--trials", "400", "--trials-per-iter", "4", "--work-dir",
         str(d / "w")], stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, TVM_NUM_THREADS="1"))
    err = []
    deadline = time.time() + 240
    for line in proc.stderr:  # wait for the first measured task before the Ctrl-C
        err.append(line)
        if line.startswith("[tune] task") or time.time() > deadline:
            break
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=240)[1]
    text = "".join(err) + rest
    assert proc.returncode == 130, text[-3000:]
    assert "interrupted" in text and "run the same command again to resume" in text
    assert "Traceback" not in text


def test_input_dtype_other_than_the_parameters(exported, capsys):
    """--dtype float16 on a float32 model: the type error says that --dtype sets only the
    inputs' dtype (it named a BatchNorm / conv dtype clash and nothing else)."""
    d, _ = exported
    rc = main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5", "--dtype",
               "float16", "-o", str(d / "h.so")])
    assert rc == 2
    err = capsys.readouterr().err.splitlines()
    # one line, as every usage error (it was five: the IR, a Python-API hint; fresh-user trial)
    assert len(err) == 1, err
    assert err[0].startswith(f"relay-tvm: error: {d / 'm-symbol.json'}: --dtype float16 sets "
                             f"the dtype of the inputs given by --shape only"), err
    assert "dtype float16 and weight dtype float32 differ" in err[0], err


def test_run_a_file_that_is_not_a_library(tmp_path, capsys):
    """`relay-tvm run x.npy` (an input given where the library goes): a CLIError saying so,
    not TVM's loader text (from a new-user trial)."""
    np.save(tmp_path / "x.npy", np.zeros((1, 2), "float32"))
    assert main(["run", str(tmp_path / "x.npy")]) == 2
    err = capsys.readouterr().err
    assert "x.npy: not a relay_tvm library" in err and "relay-tvm compile" in err
    assert main(["run", str(tmp_path / "nope.so")]) == 2
    assert "nope.so: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", [
    ["compile", "missing-symbol.json", "--shape", "data=1,2,5,5"],
    ["tune", "missing-symbol.json", "--shape", "data=1,2,5,5", "--trials", "1",
     "--work-dir", "w"],
    ["show", "missing-symbol.json", "--shape", "data=1,2,5,5", "--stats"],
    ["demo", "--model", "resnet18_v1"],
])
@pytest.mark.parametrize("target, why", [
    ("llvmx", "unknown target kind 'llvmx'; expected one of ['c', 'cuda', "),
    ("llvm -foo=bar", "TVM's llvm target has no option -foo; its options include -mcpu"),
    ("llvm -mattr=+avx51f", "-mattr feature '+avx51f' is not an LLVM feature of "),
    ("llvm -mcpu=foo", "LLVM does not know the CPU 'foo'"),
    ("llvm -mtriple=aarch46-linux-gnu", "LLVM does not know the target triple 'aarch46-"),
])
def test_bad_target_is_one_usage_error_before_the_import(tmp_path, capsys, monkeypatch, cmd,
                                                         target, why):
    """From a new-user trial: a bad --target was reported after importing the model, as a
    BuildError or an InputError listing all of TVM's options; now one short line, first
    (the model file does not exist: importing it first would report that instead), as a
    usage error with exit status 2 like every other bad argument (a later trial: it printed
    as an InputError with status 1)."""
    monkeypatch.chdir(tmp_path)
    assert main([*cmd, "--target", target]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # the demo's header is not printed before the error either
    assert err.startswith(f"relay-tvm: error: --target {target!r}: {why}")
    assert len(err.strip().splitlines()) == 1 and "Known options" not in err


@pytest.mark.parametrize("cmd", [
    ["compile", "missing-symbol.json", "--shape", "data=1,2,5,5"],
    ["show", "missing-symbol.json", "--shape", "data=1,2,5,5", "--stats"],
    ["demo", "--model", "resnet18_v1"],
])
def test_cuda_arch_no_gpu_has_is_one_input_error_first(tmp_path, capsys, monkeypatch, cmd):
    """From a new-user trial: 'cuda -arch=sm_999' was accepted (TVM takes any string)."""
    monkeypatch.chdir(tmp_path)
    target = "cuda -arch=sm_999"
    assert main([*cmd, "--target", target]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"relay-tvm: error: --target {target!r}: -arch='sm_999' is not "
                          f"the architecture of an NVIDIA GPU; expected sm_XY of a known compute "
                          f"capability: sm_30, "), err
    assert "sm_90, sm_100" in err and err.count("\n") == 1


@pytest.mark.parametrize("target", ["cuda", "cuda -arch=sm_80", "opencl"])
def test_tune_a_gpu_target_says_gpu_tuning_is_unsupported_first(tmp_path, capsys, monkeypatch,
                                                                 target):
    """``--target cuda`` asked for an -arch (on a machine without a GPU), and following that
    advice then said GPU tuning is not supported: the unsupported case is checked first."""
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "missing-symbol.json", "--shape", "data=1,2,5,5", "--trials", "1",
                 "--work-dir", "w", "--target", target]) == 2  # an option's value it
    err = capsys.readouterr().err  # cannot take: a usage error (fresh-user trial: exit 1)
    assert err.startswith("relay-tvm: error: --target: ") and "GPU tuning is not supported" in err
    assert "no -arch given" not in err


def test_compile_to_an_unloadable_suffix_is_refused_first(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "missing-symbol.json", "--shape", "data=1,2,5,5", "-o",
                 "m.zip"]) == 2  # a bad argument: a usage error, like every other
    err = capsys.readouterr().err
    assert err.startswith("relay-tvm: error: -o: 'm.zip' has suffix '.zip'")
    assert "or a .tar of object files" in err
    assert "does not exist" not in err


@pytest.mark.parametrize("work_dir", ["x.npy/sub", "/proc/relay-tvm-no/sub"])
def test_tune_work_dir_that_cannot_be_created_is_refused_first(tmp_path, capsys, monkeypatch,
                                                               work_dir):
    """From a new-user trial: a --work-dir under a regular file (or under /proc) ended in a raw
    NotADirectoryError traceback after the model import; now one line, before the import (the
    model file does not exist: importing it first would report that instead)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.npy").write_bytes(b"")
    assert main(["tune", "missing-symbol.json", "--shape", "data=1,2,5,5", "--trials", "1",
                 "--work-dir", work_dir]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"relay-tvm: error: --work-dir: work dir {work_dir!r} cannot be "
                          f"created: ")
    assert len(err.strip().splitlines()) == 1 and "missing-symbol" not in err


def test_demo_on_a_gpu_target_without_that_gpu_is_one_line(capsys, monkeypatch):
    """The demo ran a CUDA build on tvm.cpu() (TVM's raw "CUDA runtime is not linked"); now
    it runs on the target's device, and says first, in one line, when there is none."""
    import tvm

    if tvm.cuda(0).exist:
        pytest.skip("this machine has a CUDA GPU: the demo runs on it")
    monkeypatch.setattr("relay_tvm.cli._zoo_block", lambda *a: pytest.fail("model created"))
    assert main(["demo", "--target", "cuda -arch=sm_80"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("relay-tvm: error: --target 'cuda -arch=sm_80': this machine has no "
                          "cuda device to run the demo on")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("repeat, threads, says", [(1, 1, "(1 run, 1 thread)"),
                                                    (2, 2, "(2 runs, 2 threads)")])
def test_run_counts_read_as_english(exported, capsys, monkeypatch, repeat, threads, says):
    """From a new-user trial: 'relay-tvm run' printed '(10 runs, 1 threads)'."""
    from relay_tvm.runtime import GraphModule

    d, _ = exported
    so = str(d / "m.so")
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5", "-o", so]) == 0
    monkeypatch.setattr(GraphModule, "num_threads", property(lambda self: threads))
    assert main(["run", so, "--fill-random", "--output-dir", str(d / "o"), "--repeat",
                 str(repeat)]) == 0
    out = capsys.readouterr().out
    assert "latency: mean" in out and says in out


def _commit(db, task, sch, secs, target):
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo
    from tvm.s_tir.meta_schedule.database import TuningRecord

    db.commit_tuning_record(TuningRecord(sch.trace, db.commit_workload(task.mod), [secs], target,
                                         ArgInfo.from_prim_func(sch.mod["main"])))


@pytest.mark.parametrize("tuned_secs, tuned, kept", [(0.5e-4, 1, 0), (2e-4, 0, 1)])
def test_compile_with_tuning_db_lists_the_kernels_without_a_record(exported, capsys, tuned_secs,
                                                                    tuned, kept):
    """`compile --tuning-db` names the kernels built with the untuned template because the
    database has no record for them (second new-user report: it only counted them), and counts
    those whose tuned record was slower than the untuned one. The database (a work dir, no
    measuring) holds records of the conv2d kernel only: its untuned schedule at 0.1 ms and a
    tuned one faster or slower; the dense kernel has none, the two copies are never tuned."""
    import tvm

    from relay_tvm import frontend, tune
    from relay_tvm.backend.target import make_target
    from relay_tvm.tune.space import apply_template, assignments, knob_space, untuned_candidate

    d, _ = exported
    sym, wd, so = str(d / "m-symbol.json"), str(d / "tuning"), str(d / "tuned.so")
    mod, params = frontend.from_mxnet(sym, shape={"data": (2, 2, 5, 5)},
                                      arg_params=str(d / "m-0007.params"))
    with pytest.warns(UserWarning, match="a budget of 0 trials"):
        tune.tune_relay(mod, params, "llvm", wd, 0)  # an empty work dir
    host = make_target("llvm")
    (conv,) = [t for t in tune.extract_tasks(mod, "llvm", params) if "conv2d" in t.name]
    db = tune.load_database(wd)
    _commit(db, conv, untuned_candidate(conv, host), 1e-4, host)
    sch = tvm.s_tir.Schedule(conv.mod)
    apply_template(sch, conv, host, assignments(knob_space(conv, host)[1])[1])
    _commit(db, conv, sch, tuned_secs, host)
    capsys.readouterr()
    assert main(["compile", sym, "--shape", "data=2,2,5,5", "--tuning-db", wd, "-o", so]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[relay-tvm] ")
             and "tuning database" in ln or ln.startswith("[relay-tvm]   ")]
    assert lines == [
        f"[relay-tvm] tuning database {wd}: {tuned} of 4 kernels use a tuned schedule (measured "
        f"faster than their untuned one); {kept} keep the untuned schedule (no tuned record "
        f"measured faster, or none searched); 3 have no record: 1 that tuning measures (built "
        f"with the untuned template, listed below), 2 that it skips (no reduction or dynamic "
        f"shape)",
        "[relay-tvm]   no record: fused_nn_dense_add (2x3)"]
    # the Python API is quiet; the same facts come from tune.database_report
    import relay_tvm as relay

    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, "llvm", params=params, database=wd)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    rep = tune.database_report(lib)
    assert [n for n, _ in rep.no_record] == ["tvmgen_default_fused_nn_dense_add"]
    assert [n for n, _ in rep.tuned + rep.untuned_faster] == [
        "tvmgen_default_fused_nn_contrib_conv2d_NCHWc_add_nn_relu"]
    assert (len(rep.tuned), len(rep.untuned_faster), len(rep.not_tuned)) == (tuned, kept, 2)
    assert rep.not_applied == []


def test_database_report_lists_at_most_max_listed_kernels():
    from relay_tvm.tune import DatabaseReport

    rep = DatabaseReport(no_record=[(f"tvmgen_default_fused_nn_dense_{i}", "1x8")
                                    for i in range(13)],
                         not_applied=[("tvmgen_default_fused_nn_conv2d", "1x4x5x5",
                                       "record tuned for another target (mcpu a, not b)")])
    lines = rep.format("db", max_listed=10)
    assert lines[0].startswith("tuning database db: 0 of 14 kernels use a tuned schedule")
    assert lines[0].endswith("; 1 have a record that was not applied")
    assert lines[1:] == [f"  no record: fused_nn_dense_{i} (1x8)" for i in range(10)] + [
        "  ... and 3 more",
        "  record not applied: fused_nn_conv2d (1x4x5x5): record tuned for another target "
        "(mcpu a, not b)"]


def test_run_runs_graph_libraries_and_vm_executables(exported, capsys):
    """From a new-user trial: `relay-tvm run` refused what `relay.vm.compile(...)
    .export_library` writes. `compile --executor vm` now writes a VM executable, and `run`
    detects which kind a file is and runs either; both give NumPy's result. A later trial:
    `-o m.tar` (TVM's tar of object files, which relay.build's library exports and
    tvm.runtime.load_module loads) was refused for both kinds; it is written and run too."""
    d, params = exported
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype("float32")
    np.save(d / "x.npy", x)
    ref = _numpy_conv_fc(x, params)
    for executor, suffix in (("graph", ".so"), ("vm", ".so"), ("graph", ".tar"),
                             ("vm", ".tar")):
        so = str(d / f"{executor}{suffix}")
        assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5",
                     "--executor", executor, "-o", so]) == 0
        out_dir = d / f"out-{executor}{suffix}"
        assert main(["run", so, "--input", f"data={d / 'x.npy'}", "--output-dir",
                     str(out_dir), "--repeat", "2"]) == 0
        np.testing.assert_allclose(np.load(out_dir / "output_0.npy"), ref, rtol=1e-4, atol=1e-4)
        captured = capsys.readouterr()
        assert "output 0: shape (2, 3) float32" in captured.out
        assert "latency: mean" in captured.out and "(2 runs, " in captured.out
        kind = "VM executable" if executor == "vm" else "graph-executor library"
        assert f"{so}: {kind}" in captured.err
    import relay_tvm as relay

    # the Python loaders name the other kind and the loader to use
    with pytest.raises(relay.BuildError, match=r"is a relay_tvm graph library .*load_module"):
        relay.vm.load_executable(str(d / "graph.so"))
    with pytest.raises(relay.BuildError, match=r"is a relay_tvm VM executable .*load_executable"):
        relay.runtime.load_module(str(d / "vm.so"))


def test_run_a_vm_executable_with_a_dynamic_batch(tmp_path, capsys):
    """A VM executable whose input has a relay.Any() batch runs on the .npy given; with
    --fill-random there is no shape to draw from, which is said in one line."""
    import relay_tvm as relay

    x = relay.var("x", shape=(relay.Any(), 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) * relay.const(2.0)))
    relay.vm.compile(mod, target="llvm").export_library(str(tmp_path / "dyn.so"))
    xv = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    np.save(tmp_path / "x.npy", xv)
    assert main(["run", str(tmp_path / "dyn.so"), "-i", f"x={tmp_path / 'x.npy'}", "-o",
                 str(tmp_path), "--repeat", "1"]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "output_0.npy"), np.maximum(xv, 0) * 2)
    capsys.readouterr()
    assert main(["run", str(tmp_path / "dyn.so"), "--fill-random", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == ("relay-tvm: error: input 'x' has a dimension known only at run time (shape "
                   "('?', 3)): --fill-random cannot choose it; give --input x=FILE.npy")


def _relax_library_with_a_memory_scope(path):
    """A library built by TVM Relax (not relay_tvm) whose constant has a virtual device with a
    memory scope: TVM logs "Scope Saving:" when it is exported and "Scope Loaded:" whenever
    it is loaded."""
    import tvm
    from tvm import relax
    from tvm.ir import GenericConst

    vdev = relax.VDevice(tvm.target.Target("llvm"), 0, "global")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2,), "float32"))
    c = GenericConst(tvm.runtime.tensor(np.ones(2, "float32")),
                     relax.TensorType((2,), "float32", vdev))
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(relax.op.add(x, c)))
    mod = bb.get()
    mod.update_global_info("vdevice", [vdev])
    tvm.compile(mod, target="llvm").export_library(str(path))


def test_run_a_relax_library_is_one_line_without_tvm_scope_log(tmp_path, capfd):
    """From a new-user trial: `relay-tvm run` on a library TVM Relax built printed TVM's
    "[hh:mm:ss] .../executable.cc:340: Warning: Scope Loaded:global" (C++ log noise from the
    loader) before the error, and the error said only "no function '__relay_meta'". Now the
    loader's scope lines are dropped and the one line says what the file is."""
    so = tmp_path / "relax.so"
    _relax_library_with_a_memory_scope(so)
    capfd.readouterr()
    assert main(["run", str(so), "--fill-random"]) == 1
    err = capfd.readouterr().err
    assert "Scope Loaded" not in err
    lines = [ln for ln in err.splitlines() if not ln.startswith("[relay-tvm] ")]
    assert lines == [f"relay-tvm: BuildError: run: {str(so)!r} is a TVM Relax VM executable "
                     f"that relay_tvm did not write (no __relay_meta or __relay_vm_meta "
                     f"function: built by tvm.compile of a Relax module?); run it with "
                     f"tvm.relax.VirtualMachine, or export the model with `relay-tvm compile` "
                     f"/ relay.build / relay.vm.compile"]


def test_scope_log_filter_keeps_other_stderr_lines(capfd):
    """Only TVM's scope lines are dropped: anything else written to stderr (a real warning or
    error from C++) comes through, in order."""
    from relay_tvm.runtime.library import without_scope_log

    with without_scope_log():
        os.write(2, b"[07:01:02] /project/src/runtime/vm/executable.cc:340: Warning: Scope "
                    b"Loaded:global\n")
        os.write(2, b"[07:01:02] /project/src/runtime/x.cc:1: Warning: something real\n")
        os.write(2, b"Scope Loaded: a line not from TVM's logger\n")
    assert capfd.readouterr().err == ("[07:01:02] /project/src/runtime/x.cc:1: Warning: "
                                      "something real\nScope Loaded: a line not from TVM's "
                                      "logger\n")


@pytest.mark.parametrize("target, host, why", [
    ("llvm -mtriple=aarch64-linux-gnu", None, "this x86_64 machine cannot run aarch64 code"),
    ("llvm -mcpu=haswell", ("x86_64", {"sse4_2"}), "this CPU lacks avx, avx2, "),
])
def test_demo_on_a_target_this_cpu_cannot_run_is_one_line_first(capsys, monkeypatch, target,
                                                                  host, why):
    """From a new-user trial: `relay-tvm demo --target "llvm -mtriple=aarch64-linux-gnu"`
    created the model and compiled it, then failed to run it (a BuildError about the library's
    architecture). Now the target is checked against this CPU first: one line, saying how to
    build without running."""
    import platform

    if host is None and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the AArch64 case needs a host of another architecture")
    if host is not None:
        monkeypatch.setattr("relay_tvm.backend.isa.host_isa", lambda: host)
    monkeypatch.setattr("relay_tvm.cli._zoo_block", lambda *a: pytest.fail("model created"))
    assert main(["demo", "--model", "mobilenet0.25", "--target", target]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"relay-tvm: error: --target {target!r}: the demo runs what it "
                          f"compiles, and {why}")
    assert err.rstrip().endswith(f"`relay-tvm compile --zoo mobilenet0.25 --target {target!r} "
                                 f"-o mobilenet0.25.so` builds it without running (then "
                                 f"`relay-tvm run mobilenet0.25.so --fill-random` where the "
                                 f"target's CPU is)")
    assert len(err.strip().splitlines()) == 1


def test_show_into_a_reader_that_closes_early_exits_quietly(exported):
    # `relay-tvm show m-symbol.json | head`: head closes the pipe; no BrokenPipeError traceback
    import subprocess
    import sys

    d, _ = exported
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(
        [sys.executable, "-m", "relay_tvm.cli", "show", str(d / "m-symbol.json"), "--shape",
         "data=1,2,5,5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert err == ""


@pytest.mark.parametrize("argv, line", [
    (["demo", "--model", "resnet"],
     "relay-tvm: error: --model 'resnet': not a Gluon model-zoo network; did you mean "
     "resnet18_v1, resnet18_v2, resnet34_v1, resnet34_v2?"),
    (["show", "--zoo", "resnet18"],
     "relay-tvm: error: --zoo 'resnet18': not a Gluon model-zoo network; did you mean "
     "resnet18_v1, resnet18_v2?"),
    (["show", "--zoo", "mobilnet1.0"],
     "relay-tvm: error: --zoo 'mobilnet1.0': not a Gluon model-zoo network; did you mean "
     "mobilenet1.0,"),
])
def test_unknown_zoo_name_is_one_line_with_the_closest_names(capsys, argv, line):
    pytest.importorskip("mxnet", reason="the model zoo is MXNet's")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1, err
    assert "vgg19" not in err and "squeezenet1.1" not in err  # not MXNet's whole list
    assert "densenet" not in err  # nothing like "nosuchnet" or the others


def test_unknown_zoo_name_without_a_close_one_lists_the_families(capsys):
    """Nothing close to the name: one name of each family (a new-user trial: a shared "net"
    suggested densenet201, densenet169, ...; later only "the names include alexnet, ...")."""
    pytest.importorskip("mxnet", reason="the model zoo is MXNet's")
    assert main(["show", "--zoo", "nosuchnet"]) == 2
    err = capsys.readouterr().err
    assert err == ("relay-tvm: error: --zoo 'nosuchnet': not a Gluon model-zoo network; the "
                   "families are alexnet, densenet121, inceptionv3, mobilenet0.5, "
                   "mobilenetv2_0.5, resnet18_v1, squeezenet1.0, vgg11, ... (34 names: "
                   "mxnet.gluon.model_zoo.vision.get_model)\n"), err


def test_model_file_and_zoo_together_is_an_error(capsys, tmp_path):
    """``show net-symbol.json --zoo mobilenet0.25`` used the zoo network and ignored the file
    without a word (fresh-user trial)."""
    pytest.importorskip("mxnet", reason="the model zoo is MXNet's")
    path = tmp_path / "net-symbol.json"
    path.write_text("{}")
    assert main(["show", str(path), "--zoo", "mobilenet0.25"]) == 2
    err = capsys.readouterr().err
    assert "give a model file" in err and "not both" in err and "net-symbol.json" in err


def test_python_dash_m_relay_tvm_is_the_cli():
    # `python -m relay_tvm` said "No module named relay_tvm.__main__" (fresh-user trial)
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "relay_tvm", "compile", "--help"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: relay-tvm compile")


@pytest.mark.parametrize("extra", [[], ["--shape", "data=1,2,5,5"],
                                   ["--shape", "data=1,2,5,5", "--params", "{d}/m-0007.params"]])
def test_a_truncated_model_file_or_a_directory_is_reported_first(exported, capsys, extra):
    """A new-user trial: a truncated -symbol.json or a directory as MODEL asked for --params
    (or --shape) first; what is wrong with the file is now the first thing said."""
    d, _ = exported
    full = (d / "m-symbol.json").read_text()
    (d / "cut").mkdir()
    (d / "cut" / "cut-symbol.json").write_text(full[:len(full) // 2])  # no .params beside it
    extra = [a.format(d=d) for a in extra]
    assert main(["compile", str(d / "cut" / "cut-symbol.json"), *extra, "-o",
                 str(d / "x.so")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"relay-tvm: ConversionError: {d / 'cut' / 'cut-symbol.json'}: "
                          f"malformed MXNet symbol JSON: "), err
    assert err.rstrip().endswith("(the text ends there: a truncated file?)"), err
    assert "--params" not in err and "--shape" not in err
    assert main(["compile", str(d / "cut"), *extra, "-o", str(d / "x.so")]) == 2
    err = capsys.readouterr().err
    assert err == (f"relay-tvm: error: model file {str(d / 'cut')!r} is a directory; expected "
                   f"a -symbol.json (or NNVM graph .json) file; it holds "
                   f"{d / 'cut' / 'cut-symbol.json'}\n")
    (d / "empty").mkdir()
    assert main(["show", str(d / "empty"), *extra]) == 2
    assert capsys.readouterr().err == (f"relay-tvm: error: model file {str(d / 'empty')!r} is a "
                                       f"directory; expected a -symbol.json (or NNVM graph "
                                       f".json) file\n")


def test_run_names_the_closest_input_and_the_cast_a_float64_file_needs(exported, capsys):
    """A new-user trial: ``--input dat=x.npy`` listed the inputs without the one meant, and a
    float64 .npy (NumPy's default) stopped at the executor's "no implicit cast"."""
    d, _ = exported
    so = str(d / "m.so")
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5", "-o", so]) == 0
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5))  # float64
    np.save(d / "x64.npy", x)
    capsys.readouterr()
    for name, tail in [("dat", " (did you mean 'data'?)"), ("DATA", " (did you mean 'data'?)"),
                       ("zzz", "")]:
        item = f"{name}={d / 'x64.npy'}"
        assert main(["run", so, "--input", item, "-o", str(d)]) == 2
        assert capsys.readouterr().err.endswith(
            f"\nrelay-tvm: error: --input {item!r}: the model has no input {name!r}{tail} "
            f"(inputs: data)\n")
    for item in (f"data={d / 'x64.npy'}", str(d / "x64.npy")):  # named and positional
        assert main(["run", so, "--input", item, "-o", str(d)]) == 2
        assert capsys.readouterr().err.endswith(
            f"\nrelay-tvm: error: --input {item!r}: the model's input 'data' is float32, but the "
            f"file holds float64 (no implicit cast; convert the array with .astype('float32') "
            f"before saving it)\n")
    np.save(d / "x32.npy", x.astype("float32"))  # the fix it names
    assert main(["run", so, "--input", f"data={d / 'x32.npy'}", "-o", str(d), "--repeat",
                 "1"]) == 0


def test_run_names_the_input_file_of_a_wrong_shape(exported, capsys):
    """A new-user trial: an array of another shape stopped at the Python API's
    "InputError: set_input 'data': got shape ...", naming neither --input nor the file."""
    d, _ = exported
    so = str(d / "m.so")
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5", "-o", so]) == 0
    rng = np.random.default_rng(2)
    for shape in [(2, 2, 5, 4), (1, 2, 5, 5), (2, 2, 25)]:
        np.save(d / "xs.npy", rng.standard_normal(shape).astype("float32"))
        capsys.readouterr()
        item = f"data={d / 'xs.npy'}"
        assert main(["run", so, "--input", item, "-o", str(d)]) == 2
        assert capsys.readouterr().err.endswith(
            f"\nrelay-tvm: error: --input {item!r}: the model's input 'data' has shape "
            f"(2, 2, 5, 5), but the file holds an array of shape {shape} (no implicit reshape "
            f"or broadcast)\n")


def test_script_runs_a_relay_era_script_unchanged(tmp_path, capsys, monkeypatch):
    """`relay-tvm script FILE ARGS...`: a tvm.relay 0.19 script (`from tvm import relay`, which
    fails without an `import relay_tvm` first) runs unedited in a fresh process, as `python FILE
    ARGS...` would: __main__, its argv, its exit status, its traceback."""
    import subprocess
    import sys

    script = tmp_path / "era.py"
    script.write_text(
        "import sys\nimport numpy as np\nimport tvm\nfrom tvm import relay\n"
        "from tvm.contrib import graph_executor\n"
        "x = relay.var('x', shape=(2, 3))\n"
        "mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x - relay.const(1.0))))\n"
        "with tvm.transform.PassContext(opt_level=3):\n"
        "    lib = relay.build(mod, target='llvm')\n"
        "m = graph_executor.GraphModule(lib['default'](tvm.cpu()))\n"
        "m.set_input('x', np.load(sys.argv[1])); m.run()\n"
        "np.save(sys.argv[2], m.get_output(0).numpy())\n"
        "if __name__ == '__main__' and sys.argv[3:] == ['--fail']:\n"
        "    raise ValueError('asked to fail')\n")
    x = np.random.default_rng(5).standard_normal((2, 3)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    cmd = [sys.executable, "-m", "relay_tvm", "script", str(script), str(tmp_path / "x.npy"),
           str(tmp_path / "y.npy")]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), np.maximum(x - 1, 0), rtol=1e-6)
    done = subprocess.run(cmd + ["--fail"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "ValueError: asked to fail" in done.stderr
    # the script's own frames, named by absolute path, as Python shows them
    assert f'File "{script}", line 14' in done.stderr
    assert "runpy" not in done.stderr and "cli.py" not in done.stderr
    # its arguments exactly as given ("--" included), __file__ absolute
    (tmp_path / "args.py").write_text(
        "import sys\nassert sys.argv[1:] == ['--', '-x', 'y'], sys.argv\n"
        "assert __file__ == sys.argv[0] and __file__.startswith('/'), __file__\n")
    assert main(["script", str(tmp_path / "args.py"), "--", "-x", "y"]) == 0
    # a relative path: sys.argv[0] as given, __file__ absolute (Python 3.9+), __main__ is it
    (tmp_path / "rel.py").write_text(
        "import os, sys\nimport __main__\nassert sys.argv == ['rel.py', 'a'], sys.argv\n"
        f"assert __file__ == {str(tmp_path / 'rel.py')!r}, __file__\n"
        "assert __main__.__file__ == __file__ and __name__ == '__main__'\n")
    monkeypatch.chdir(tmp_path)
    assert main(["script", "rel.py", "a"]) == 0
    # in this process: sys.exit's status, and a missing script
    (tmp_path / "exit3.py").write_text("import sys\nsys.exit(3)\n")
    assert main(["script", str(tmp_path / "exit3.py")]) == 3
    assert main(["script", str(tmp_path / "none.py")]) == 2
    assert "'" + str(tmp_path / "none.py") + "' is no such file" in capsys.readouterr().err


@pytest.mark.parametrize("executor", ["graph", "vm"])
def test_compile_cuda_without_arch_warns_once(exported, capsys, monkeypatch, executor):
    """``compile --target cuda`` on a machine without a GPU builds for sm_50 with one warning
    naming ``-arch``; the command line's early check of the target gave it a second time
    (fresh-user trial)."""
    from relay_tvm.backend import cuda as cuda_backend

    monkeypatch.setattr(cuda_backend, "local_arch", lambda: None)
    d, _ = exported
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=2,2,5,5",
                     "--target", "cuda", "--executor", executor, "-o", str(d / "m.so")]) == 0
    arch = [str(w.message) for w in said if "no -arch given" in str(w.message)]
    assert len(arch) == 1 and "building for sm_50" in arch[0], arch


_FAKE_CC = """#!{python}
import json, struct, sys
args = sys.argv[1:]
machines = []
for a in args:
    if a.endswith(".o"):
        with open(a, "rb") as f:
            machines.append(struct.unpack("<H", f.read(20)[18:20])[0])  # ELF e_machine
with open({log!r}, "w") as f:
    json.dump({{"args": args, "machines": machines}}, f)
with open(args[args.index("-o") + 1], "wb") as f:
    f.write(b"linked by the fake compiler")
"""

_RISCV = "llvm -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c"


def test_compile_cc_links_a_cross_target_with_the_given_compiler(exported, capsys):
    import shutil
    import sys

    d, _ = exported
    if shutil.which("riscv64-linux-gnu-g++"):
        pytest.skip("a real riscv64 cross compiler is installed: the hint is not shown")
    log = d / "cc.json"
    cc = d / "fake-g++"
    cc.write_text(_FAKE_CC.format(python=sys.executable, log=str(log)))
    cc.chmod(0o755)
    so = str(d / "m.so")
    argv = ["compile", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5", "--target", _RISCV,
            "-o", so]
    # without --cc: the export fails, and the hint names the CLI's option, not Python's cc=
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "riscv64-linux-gnu-g++" in err and "--cc PATH" in err and "cc=" not in err
    assert main(argv + ["--cc", str(cc)]) == 0
    rec = json.loads(log.read_text())
    assert rec["args"][:4] == ["-shared", "-fPIC", "-o", so]
    assert rec["machines"] and set(rec["machines"]) == {243}  # EM_RISCV: riscv64 objects
    with open(so, "rb") as f:
        assert f.read() == b"linked by the fake compiler"
    # with flags, in one argument as a shell would quote them (a fresh-user trial: "g++ -O2"
    # was reported missing)
    assert main(argv + ["--cc", f"{shlex.quote(str(cc))} -O2 '-DNAME=a b'"]) == 0
    args = json.loads(log.read_text())["args"]
    assert args[:4] == ["-shared", "-fPIC", "-o", so] and args[4:6] == ["-O2", "-DNAME=a b"]


def test_compile_cc_that_writes_nothing_is_a_build_error(exported, capsys):
    # a "compiler" that exits 0 without writing -o: TVM's FileNotFoundError from sealing the
    # library came out as a traceback (fresh-user trial)
    d, _ = exported
    cc = d / "true-cc"
    cc.write_text("#!/bin/sh\nexit 0\n")
    cc.chmod(0o755)
    so = str(d / "m.so")
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5",
                 "--cc", str(cc), "-o", so]) == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("[")]
    assert err == [f"relay-tvm: BuildError: export_library: the compiler {str(cc)!r} exited "
                   f"without an error but wrote no {so!r} (is it a C++ compiler that writes "
                   f"its -o file?)"]


def test_compile_cc_with_an_unbalanced_quote_is_one_usage_error(exported, capsys):
    d, _ = exported
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5",
                 "--cc", "g++ '-O2", "-o", str(d / "m.so")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "relay-tvm: error: --cc \"g++ '-O2\": No closing quotation (expected the C++ compiler, "
        "then its flags, quoted as in a shell)"]


@pytest.mark.parametrize("make, says", [
    (None, "does not exist"),
    ("file", "is not executable"),
    ("dir", "is a directory"),
])
def test_compile_cc_that_cannot_run_is_one_usage_error_first(exported, capsys, monkeypatch,
                                                             make, says):
    import relay_tvm.cli as cli

    d, _ = exported
    cc = d / "cc"
    if make == "file":
        cc.write_text("#!/bin/sh\n")
        cc.chmod(0o644)
    elif make == "dir":
        cc.mkdir()
    monkeypatch.setattr(cli, "_import", lambda *a: pytest.fail("imported before the check"))
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5",
                 "--cc", str(cc), "-o", str(d / "m.so")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"relay-tvm: error: --cc {str(cc)!r} {says} (expected the C++ compiler "
                   "that links the library for the target" + (
                       ", e.g. riscv64-linux-gnu-g++)" if make is None else ")")]


def test_compile_cc_with_an_archive_output_is_one_usage_error_first(exported, capsys,
                                                                    monkeypatch):
    """A .tar is not linked when it is written (export_library would fail after the build
    with tar()'s TypeError): --cc with it is refused before the import (fresh-user trial)."""
    import relay_tvm.cli as cli

    d, _ = exported
    monkeypatch.setattr(cli, "_import", lambda *a: pytest.fail("imported before the check"))
    for executor in ("graph", "vm"):
        assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5",
                     "--executor", executor, "--cc", sys.executable, "-o", str(d / "m.tar")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is an archive of object files" in err[0], err
    assert not (d / "m.tar").exists()


@pytest.mark.parametrize("dtype", ["float16x", "floaty", "f32"])
def test_compile_bad_dtype_is_one_usage_error_before_the_import(exported, capsys, monkeypatch,
                                                                dtype):
    """--dtype that TVM cannot parse: exit 2 with one line, before the model is converted (it
    was a RelayError with exit 1 after the import; fresh-user trial)."""
    import relay_tvm.frontend as frontend

    d, _ = exported
    monkeypatch.setattr(frontend, "from_mxnet", lambda *a, **k: pytest.fail("converted"))
    assert main(["compile", str(d / "m-symbol.json"), "--shape", "data=1,2,5,5",
                 "--dtype", dtype, "-o", str(d / "m.so")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"relay-tvm: error: --dtype: {dtype!r} is not a dtype (expected e.g. "
                   f"float32, float16, int8, int64, bool)"]


def test_script_of_a_binary_file_or_with_a_syntax_error(tmp_path, capsys):
    # fresh-user trial: `script x.npy` printed a traceback through relay_tvm/cli.py
    np.save(tmp_path / "x.npy", np.ones(3))
    assert main(["script", str(tmp_path / "x.npy")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"relay-tvm: error: script: {str(tmp_path / 'x.npy')!r} is not a Python script (a "
        f"binary file: it holds null bytes)")
    bad = tmp_path / "bad.py"
    bad.write_text("x = (\n")
    assert main(["script", str(bad)]) == 1  # as `python bad.py`: the error, no traceback
    err = capsys.readouterr().err
    assert err.startswith(f'  File "{bad}", line 1') and "SyntaxError" in err
    assert "cli.py" not in err and "Traceback" not in err


@pytest.mark.parametrize("extra, match", [
    (["--params", "m-0007.params"], "--zoo resnet18_v1: --params m-0007.params applies to model "
     "files only (the zoo network has random weights of its own)"),
    (["--format", "nnvm"], "--zoo resnet18_v1: --format nnvm applies to model files only"),
])
def test_zoo_refuses_the_options_of_model_files(exported, capsys, monkeypatch, extra, match):
    # fresh-user trial: --params with --zoo was ignored, the library had the random weights
    d, _ = exported
    monkeypatch.chdir(d)
    assert main(["compile", "--zoo", "resnet18_v1", *extra, "-o", "x.so"]) == 2
    assert capsys.readouterr().err.strip().startswith("relay-tvm: error: " + match)
    assert not (d / "x.so").exists()


@pytest.mark.parametrize("extra, match", [
    (["--bind-params"], "show: --bind-params applies with --after-passes only"),
    (["--unfused"], "show: --unfused applies with --graph only"),
    (["--target", "cuda"], "show: --target applies with --stats only"),
])
def test_show_refuses_an_option_without_the_one_it_acts_with(exported, capsys, monkeypatch,
                                                             extra, match):
    # fresh-user trial: they were ignored, the plain text printed
    d, _ = exported
    monkeypatch.chdir(d)
    assert main(["show", "m-symbol.json", "--shape", "data=2,2,5,5", *extra]) == 2
    assert capsys.readouterr().err.strip().startswith("relay-tvm: error: " + match)
    assert main(["show", "m-symbol.json", "--shape", "data=2,2,5,5", "--stats", "--target",
                 "llvm"]) == 0


def test_shape_of_another_rank_for_a_model_file_names_the_option(exported, capsys,
                                                                  monkeypatch):
    # fresh-user trial: a ConversionError (exit 1) that read as a broken model
    d, _ = exported
    monkeypatch.chdir(d)
    assert main(["compile", "m-symbol.json", "--shape", "data=2,2,5", "-o", "x.so"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("relay-tvm: error: m-symbol.json: --shape data=2,2,5 does not fit the "
                          "graph: ") and "got shape (2, 2, 5)" in err and "\n" not in err
    from relay_tvm.errors import ConversionError, InputShapeError
    from relay_tvm.frontend import from_mxnet

    with pytest.raises(InputShapeError, match=r"hint: \(2, 2, 5\) is the shape given for input "
                       r"'data'") as e:  # the Python API says it as a hint
        from_mxnet(str(d / "m-symbol.json"), shape={"data": (2, 2, 5)},
                   arg_params=str(d / "m-0007.params"))
    # the error names the input (the command line reads it there, not from the hint's text)
    assert e.value.input_name == "data" and isinstance(e.value, ConversionError)


def test_failed_tune_leaves_no_work_dir_it_created(exported, capsys, monkeypatch):
    # fresh-user trial: an unreachable tracker left w/ holding empty databases
    d, _ = exported
    monkeypatch.chdir(d)
    assert main(["tune", "m-symbol.json", "--shape", "data=2,2,5,5", "--work-dir", "w",
                 "--trials", "2", "--rpc-tracker", "127.0.0.1:1", "--rpc-key", "k"]) == 1
    assert "RPC tracker 127.0.0.1:1 is not reachable" in capsys.readouterr().err
    assert not (d / "w").exists()
    (d / "mine").mkdir()  # a folder of the user's own is left as it was
    assert main(["tune", "m-symbol.json", "--shape", "data=2,2,5,5", "--work-dir", "mine",
                 "--trials", "2", "--rpc-tracker", "127.0.0.1:1", "--rpc-key", "k"]) == 1
    assert (d / "mine").is_dir()


def test_run_a_cuda_library_on_a_machine_without_cuda(exported, capsys, monkeypatch):
    import tvm

    if tvm.cuda(0).exist:
        pytest.skip("this machine loads CUDA libraries")
    from relay_tvm.errors import BuildError
    from relay_tvm.runtime import library

    d, _ = exported
    monkeypatch.chdir(d)
    np.save(d / "x.npy", np.ones((2, 2, 5, 5), "float32"))
    (d / "cu.so").write_bytes(b"\x7fELF")

    def cuda_library(path, who):  # what loading a --target cuda library says here
        raise BuildError(f"{who}: {path!r} holds cuda kernels, and this machine's TVM runtime "
                         f"cannot load them")

    monkeypatch.setattr(library, "load_compiled", cuda_library)
    monkeypatch.setattr("relay_tvm.cli._check_library_file", lambda path: None)
    assert main(["run", "cu.so", "--input", "data=x.npy"]) == 2
    assert capsys.readouterr().err.strip() == (
        "relay-tvm: error: 'cu.so' was compiled for CUDA (--target cuda), and this machine's "
        "TVM runtime cannot load CUDA kernels; run it with --device cuda on a machine with an "
        "NVIDIA GPU, or compile the model for this CPU (--target llvm)")
