"""The VM compiler drops each allocated tensor after its last read (vm_emit.insert_kills), and
jump offsets still land on the same instructions."""

import numpy as np

import relay_tvm as relay
from relay_tvm.backend.vm_emit import _CALL, _GOTO, _IF, _LOOP, _RET, insert_kills

ALLOC = "vm.builtin.alloc_tensor"


def test_kill_after_last_read_and_offsets_remapped():
    code = [
        (_CALL, ALLOC, [], 2),                 # 0: r2 = alloc
        (_CALL, "k", [("r", 2)], 3),           # 1: last read of r2 -> kill after
        (_IF, 3, 3),                           # 2: false branch at 5
        (_CALL, "vm.builtin.copy", [("r", 0)], 4),  # 3: param r0 never killed
        (_GOTO, 2),                            # 4: -> 6
        (_CALL, "vm.builtin.copy", [("r", 1)], 4),  # 5
        (_RET, 4),                             # 6
    ]
    out = insert_kills(code, n_fixed=2)
    assert out[2] == (_CALL, "vm.builtin.null_value", [], 2)
    assert all(ins[3] not in (0, 1) for ins in out if ins[0] == _CALL and ins[1].endswith("null_value"))
    # the IF (now at 3) still reaches the false branch's copy from r1, the GOTO the RET
    i_if = next(i for i, ins in enumerate(out) if ins[0] == _IF)
    assert out[i_if + out[i_if][2]] == code[5]
    i_goto = next(i for i, ins in enumerate(out) if ins[0] == _GOTO)
    assert out[i_goto + out[i_goto][1]] == code[6]
    assert out[-1] == code[6]
    assert [ins for ins in out if ins[0] == _LOOP] == []


def test_loop_and_branches_with_kills_equal_interpreter():
    # a tail-recursive loop over tensors with a branch: tensors die in both arms and in the loop
    src = """#[version = "0.0.5"]
def @f(%i: int32, %x: Tensor[(64), float32]) -> Tensor[(64), float32] {
  if (less(%i, 50)) {
    %0 = multiply(%x, 1.01f);
    %1 = if (less(%i, 25)) { add(%0, 1f) } else { subtract(%0, 0.5f) };
    @f(add(%i, 1), nn.relu(%1))
  } else {
    %x
  }
}
def @main(%x: Tensor[(64), float32]) { @f(0, %x) }
"""
    mod = relay.parse(src)
    x = np.linspace(-3, 3, 64).astype("float32")
    want = relay.create_executor("debug", mod=mod).evaluate()(x).numpy()
    got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    code = str(relay.vm.compile(mod, target="llvm").bytecode)
    assert "null_value" in code
