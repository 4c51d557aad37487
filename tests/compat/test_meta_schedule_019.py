"""tvm.relay 0.19's ``tvm.meta_schedule.relay_integration`` on TVM 0.27 (relay_tvm's tuner):
a 0.19 tuning script's calls, checked against NumPy, and 0.19 options the tuner lacks refused by
name."""

import numpy as np
import pytest

import relay_tvm  # noqa: F401  (installs the tvm.* aliases)
from relay_tvm.errors import TuningError


def _model():
    import tvm
    from tvm import relay

    x = relay.var("x", shape=(1, 16))
    w = relay.var("w", shape=(8, 16))
    y = relay.nn.relu(relay.nn.dense(x, w))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], y))
    wv = np.random.default_rng(0).standard_normal((8, 16)).astype("float32")
    return mod, {"w": wv}


def test_019_tuning_script_runs(tmp_path):
    import tvm
    from tvm import meta_schedule as ms
    from tvm.contrib import graph_executor

    assert ms.database.JSONDatabase is tvm.s_tir.meta_schedule.database.JSONDatabase
    mod, params = _model()
    tasks = ms.relay_integration.extract_tasks(mod, "llvm", params)
    assert [t.task_name for t in tasks] == ["fused_nn_dense_nn_relu"]
    db = ms.relay_integration.tune_relay(mod=mod, params=params, target="llvm",
                                         work_dir=str(tmp_path), max_trials_global=2,
                                         num_trials_per_iter=2, seed=0)
    assert len(db.get_all_tuning_records()) >= 1
    lib = ms.relay_integration.compile_relay(db, mod, "llvm", params)
    gm = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    x = np.random.default_rng(1).standard_normal((1, 16)).astype("float32")
    gm.set_input("x", x)
    gm.run()
    ref = np.maximum(x.astype("float64") @ params["w"].T.astype("float64"), 0)
    np.testing.assert_allclose(gm.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-5)
    assert not ms.relay_integration.is_meta_schedule_enabled()
    with tvm.transform.PassContext(config={"relay.backend.use_meta_schedule": True}):
        assert ms.relay_integration.is_meta_schedule_enabled()


def test_019_options_the_tuner_lacks_are_refused_by_name(tmp_path):
    from tvm import meta_schedule as ms

    mod, params = _model()
    with pytest.raises(TuningError, match=r"task_scheduler='round-robin'.*0\.19 defaults: "
                                          r"task_scheduler='gradient'"):
        ms.relay_integration.tune_relay(mod, params, "llvm", str(tmp_path), 2,
                                        task_scheduler="round-robin")
    with pytest.raises(TuningError, match="backend='vm'"):
        ms.relay_integration.compile_relay(None, mod, "llvm", params, backend="vm")
    with pytest.raises(TuningError, match=r"unexpected argument\(s\) \['tuning_time'\]"):
        ms.relay_integration.extract_tasks(mod, "llvm", params, tuning_time=3)
    # the 0.19 defaults, spelled out, are accepted
    tasks = ms.relay_integration.extract_tasks(mod, "llvm", params, module_equality="structural",
                                               pass_config={"relay.backend.use_meta_schedule":
                                                            True})
    assert len(tasks) == 1


def test_pass_config_and_disabled_pass_shape_the_tasks():
    from tvm import meta_schedule as ms
    from tvm import relay

    x = relay.var("x", shape=(1, 32, 14, 14))
    w = relay.var("w", shape=(32, 32, 3, 3))
    import tvm

    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(
        relay.nn.conv2d(x, w, padding=(1, 1)))))
    params = {"w": np.ones((32, 32, 3, 3), "float32")}
    names = [t.task_name for t in ms.relay_integration.extract_tasks(
        mod, "llvm", params, pass_config={"relay.AlterOpLayout.winograd": 4})]
    assert any("winograd" in n for n in names), names
    names = [t.task_name for t in ms.relay_integration.extract_tasks(
        mod, "llvm", params, pass_config={"relay.AlterOpLayout.winograd": "never"},
        disabled_pass=["FuseOps"])]
    assert not any("winograd" in n for n in names) and "fused_nn_relu" in names, names

