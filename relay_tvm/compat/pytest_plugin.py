"""pytest plugin for Relay-era test suites (the part of TVM 0.19's ``tvm.testing.plugin`` they
rely on): ``target``/``dev`` arguments parametrized over the enabled targets, and the
correlated ``tvm.testing.parameters``. Load with ``pytest_plugins =
["relay_tvm.compat.pytest_plugin"]`` in a conftest.py.
"""

from __future__ import annotations

import pytest

from . import tvm_testing as _tt


def _enabled_target_names():
    import tvm.testing

    return [t for t, _dev in tvm.testing.enabled_targets()]


def pytest_generate_tests(metafunc):
    func = metafunc.function
    names = metafunc.fixturenames
    direct = {n for m in metafunc.definition.iter_markers("parametrize")
              for n in (m.args[0].split(",") if isinstance(m.args[0], str) else m.args[0])}
    direct = {n.strip() for n in direct}
    if "target" in names and "target" not in direct:
        listed = getattr(func, _tt._TARGETS_ATTR, None)
        targets = list(listed) if listed else _enabled_target_names()
        excluded = getattr(func, _tt._EXCLUDE_ATTR, [])
        xfail = getattr(func, _tt._XFAIL_ATTR, [])
        params = []
        for t in targets:
            if t in excluded:
                continue
            kind = str(t).split()[0]
            marks = []
            if not _tt._runnable(kind):
                marks.append(pytest.mark.skip(reason=f"target {t} not runnable here"))
            if t in xfail:
                marks.append(pytest.mark.xfail(reason="known failing target"))
            params.append(pytest.param(t, marks=marks, id=str(t)))
        metafunc.parametrize("target", params)
    groups = {}
    for name in names:
        fixdefs = metafunc._arg2fixturedefs.get(name) or ()
        for fd in fixdefs[-1:]:
            func = getattr(fd.func, "__func__", fd.func)
            info = getattr(func, _tt._PARAM_GROUP, None) or getattr(
                getattr(func, "__wrapped__", None), _tt._PARAM_GROUP, None)
            if info is not None:
                groups.setdefault(id(info[0]), (info, []))[1].append((info[1], name))
    for (_g, _i, value_sets, ids), members in groups.values():
        members.sort()
        argnames = [n for _, n in members]
        values = [tuple(vs[i] for i, _ in members) for vs in value_sets]
        if len(argnames) == 1:  # one name: pass it as a string so values are not unpacked
            metafunc.parametrize(argnames[0], [v[0] for v in values], ids=ids)
        else:
            metafunc.parametrize(argnames, values, ids=ids)


@pytest.fixture
def dev(target):
    """The device of the ``target`` argument."""
    import tvm

    return tvm.device(str(target).split()[0], 0)
