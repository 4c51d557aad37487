"""First-order gradient of a whole ResNet-18 (relay_tvm.testing.resnet, float64, 32x32) against
central finite differences along a random direction in every input and parameter."""

import numpy as np

import relay_tvm as relay
from relay_tvm.testing import resnet, run_infer_type


def test_resnet18_first_order_directional_derivative():
    mod, params = resnet.get_workload(batch_size=1, num_classes=10, image_shape=(3, 32, 32),
                                      dtype="float64")
    f0 = mod["main"]
    rng = np.random.default_rng(5)
    # softmax outputs sum to one: weight the log-probabilities so the objective moves
    w = relay.const(rng.standard_normal((1, 10)), "float64")
    func = run_infer_type(relay.Function(f0.params, relay.sum(relay.log(f0.body) * w)))
    grad = relay.transform.gradient(func, mode="first_order")
    names = [p.name_hint for p in func.params]
    args = [rng.standard_normal((1, 3, 32, 32)) if n == "data" else params[n].numpy()
            for n in names]
    _, grads = relay.create_executor().evaluate(grad)(*args)
    fwd = relay.create_executor().evaluate(func)
    vs = [rng.standard_normal(a.shape) for a in args]
    # ReLU kinks: a step this small crosses none of them (float64 keeps ~8 digits)
    eps = 1e-8
    groups = {}
    for i, n in enumerate(names):
        groups.setdefault(n.rsplit("_", 1)[-1], []).append(i)
    assert {"data", "weight", "gamma", "beta", "mean", "var", "bias"} <= set(groups)
    for kind, idx in groups.items():
        plus = [a + eps * v if i in idx else a for i, (a, v) in enumerate(zip(args, vs))]
        minus = [a - eps * v if i in idx else a for i, (a, v) in enumerate(zip(args, vs))]
        num = (float(fwd(*plus).numpy()) - float(fwd(*minus).numpy())) / (2 * eps)
        ana = sum(float(np.sum(grads[i].numpy() * vs[i])) for i in idx)
        np.testing.assert_allclose(ana, num, rtol=1e-5, err_msg=f"parameters *_{kind}")


def test_resnet18_higher_order_partially_evaluated_equals_first_order():
    mod, params = resnet.get_workload(batch_size=1, num_classes=10, image_shape=(3, 32, 32),
                                      dtype="float64")
    func = mod["main"]
    ho = relay.IRModule.from_expr(relay.transform.gradient(func))
    ho = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.PartialEvaluate(),
        relay.transform.LazyGradientInit(), relay.transform.DeadCodeElimination(),
        relay.transform.InferType()])(ho)
    kinds = set()
    relay.analysis.post_order_visit(ho["main"].body, lambda e: kinds.add(type(e).__name__))
    assert not {"RefCreate", "RefRead", "RefWrite", "Function", "If"} & kinds
    fo = relay.transform.gradient(func, mode="first_order")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((1, 3, 32, 32)) if p.name_hint == "data"
            else params[p.name_hint].numpy() for p in func.params]
    _, a = relay.create_executor(mod=ho).evaluate()(*args)
    _, b = relay.create_executor().evaluate(fo)(*args)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)
