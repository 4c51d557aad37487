"""``mod.astext`` / ``expr.astext`` take the keywords of ``relay.astext`` (the README's
``astext(..., show_types=True)``) and print the same text."""

import numpy as np

import relay_tvm as relay


def _mod():
    x = relay.var("x", shape=(2, 3))
    y = relay.nn.relu(relay.add(x, relay.const(np.ones((2, 3), "float32"))))
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))


def test_module_astext_show_types():
    mod = _mod()
    text = mod.astext(show_types=True)
    assert "/* ty=Tensor[(2, 3), float32] */" in text
    assert text == relay.astext(mod, show_types=True)
    assert "/* ty=" not in mod.astext()
    assert "#[metadata]" not in mod.astext(show_meta_data=False, show_types=True)


def test_expr_astext_keywords():
    f = _mod()["main"]
    assert f.astext(show_types=True) == relay.astext(f, show_types=True)
    assert "ty=Tensor[(2, 3), float32]" in f.body.astext(show_types=True)
    seen = []
    text = f.astext(annotate=lambda e: seen.append(e) or "note")
    assert "note" in text and seen
    tw = relay.TupleWrapper(relay.Tuple([f.params[0], f.params[0]]), 2)
    assert tw.astext(show_meta_data=False) == relay.Tuple(
        [f.params[0], f.params[0]]).astext(show_meta_data=False)


def test_the_tail_of_a_function_has_its_comment_too():
    """0.19 printed the type of a function's last expression; it had no comment (fresh-user
    trial), and the text still parses back to the same function."""
    mod = _mod()
    text = mod.astext(show_types=True)
    assert "  nn.relu(%0) /* ty=Tensor[(2, 3), float32] */\n}" in text
    back = relay.parse(text)
    assert relay.analysis.structural_equal(back["main"], mod["main"])
