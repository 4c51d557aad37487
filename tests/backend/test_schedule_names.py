"""Every operator's ``Op.schedule`` name either has a CPU schedule rule or is declared as getting
the generic schedule on purpose: a misspelt name would silently fall back to the generic
schedule (correct, but slow)."""

import relay_tvm  # noqa: F401  (registers the operators)
from relay_tvm.backend.schedule import cpu
from relay_tvm.op.registry import _REGISTRY


def test_every_schedule_name_has_a_rule_or_is_declared_generic():
    rules = cpu.rule_names()
    unknown = sorted(f"{name}: {op.schedule!r}" for name, op in _REGISTRY.items()
                     if op.schedule and op.schedule not in rules
                     and op.schedule not in cpu.GENERIC_BY_DESIGN)
    assert not unknown, "schedule names without a rule (add one or declare it generic): " + \
        ", ".join(unknown)


def test_declared_generic_names_are_used_and_have_no_rule():
    used = {op.schedule for op in _REGISTRY.values() if op.schedule}
    assert cpu.GENERIC_BY_DESIGN <= used, cpu.GENERIC_BY_DESIGN - used
    assert not cpu.GENERIC_BY_DESIGN & cpu.rule_names()


def test_the_rules_cover_the_anchor_operators():
    for name in ("nn.dense", "nn.conv2d", "nn.batch_matmul", "nn.max_pool2d"):
        assert _REGISTRY[name].schedule in cpu.rule_names(), name
