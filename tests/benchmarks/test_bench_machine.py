"""benchmarks/_machine.py (CPU, ISA, clock, peak FLOP/s) and bench_mxnet's argument handling
and report (ratios to the fastest peer, the issue-10 goal), on fixed inputs."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import _machine  # noqa: E402
import bench_mxnet  # noqa: E402

ZEN3 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC 7763 64-Core Processor
cpu MHz\t\t: 2445.424
flags\t\t: fpu sse sse2 avx fma avx2 bmi2

processor\t: 1
model name\t: SECOND CPU
"""


def test_read_cpuinfo_takes_the_first_processor():
    info = _machine.read_cpuinfo(ZEN3)
    assert info["model name"] == "AMD EPYC 7763 64-Core Processor"
    assert info["cpu MHz"] == "2445.424"
    assert _machine.isa_of_flags(info["flags"]) == "avx2"


@pytest.mark.parametrize("flags,isa", [("sse sse2 avx avx2 avx512f fma", "avx512f"),
                                       ("sse avx2 fma", "avx2"), ("sse avx", "avx"),
                                       ("sse sse2", "sse"), ("fp asimd", "neon")])
def test_isa_of_flags(flags, isa):
    assert _machine.isa_of_flags(flags) == isa


@pytest.mark.parametrize("target,host,isa", [
    ("llvm", "avx512f", "avx512f"),
    ("llvm -mcpu=haswell", "avx512f", "avx2"),          # AVX2 code on an AVX-512 machine
    ("llvm -mcpu=znver3", "avx512f", "avx2"),
    ("llvm -mattr=-avx512f", "avx512f", "avx2"),
    ("llvm -mattr=+avx2,+fma", "avx512f", "avx2"),        # the generic CPU plus AVX2
    ("llvm -mattr=+avx512f", "avx2", "avx2"),            # never more than the host runs
    ("llvm -mcpu=skylake-avx512", "avx2", "avx2"),      # never more than the host runs
    ("llvm -mcpu=sapphirerapids", "avx512f", "avx512f"),
    ("llvm -mcpu=some-future-cpu", "avx2", "avx2"),
])
def test_isa_of_target(target, host, isa):
    assert _machine.isa_of_target(target, host) == isa


def test_clock_prefers_the_maximum():
    info = _machine.read_cpuinfo(ZEN3)
    c = _machine.clock_mhz(info, "Model name: AMD EPYC\nCPU max MHz:  3529.0520\n")
    assert (c["max"], c["cpuinfo"], c["used"]) == (3529.052, 2445.424, 3529.052)
    c = _machine.clock_mhz(info, "Model name: AMD EPYC\n")
    if c["max"] is None:  # no cpufreq on this machine either: the current clock
        assert c["used"] == 2445.424 and "cpu MHz" in c["source"]


@pytest.mark.parametrize("name,vendor,family,model,flags,isa,units", [
    ("AMD EPYC 7763", "AuthenticAMD", "25", "1", "avx2 fma", "avx2", 2),      # Zen 3
    ("AMD EPYC 9654", "AuthenticAMD", "25", "17", "avx2 avx512f fma", "avx512f", 1),  # Zen 4
    ("AMD EPYC 9654", "AuthenticAMD", "25", "17", "avx2 avx512f fma", "avx2", 2),  # its ymm
    ("AMD EPYC 9655", "AuthenticAMD", "26", "2", "avx2 avx512f fma", "avx512f", 2),  # Zen 5
    ("AMD EPYC 7702", "AuthenticAMD", "23", "49", "avx2 fma", "avx2", 2),     # Zen 2
    ("AMD EPYC 7601", "AuthenticAMD", "23", "1", "avx2 fma", "avx2", 1),      # Zen 1
    ("Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz", "GenuineIntel", "6", "85",
     "avx512f fma", "avx512f", 1),
    ("Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz", "GenuineIntel", "6", "85",
     "avx512f fma", "avx512f", 1),
    ("Intel(R) Xeon(R) Gold 5222 CPU @ 3.80GHz", "GenuineIntel", "6", "85",
     "avx512f fma", "avx512f", 2),
    ("Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz", "GenuineIntel", "6", "85",
     "avx512f fma", "avx512f", 2),
    ("Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz", "GenuineIntel", "6", "85",
     "avx512f fma", "avx2", 2),   # AVX2 code: two 256-bit FMA pipes
    ("Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz", "GenuineIntel", "6", "45", "avx", "avx", 1),
])
def test_fma_units(name, vendor, family, model, flags, isa, units):
    info = {"model name": name, "vendor_id": vendor, "cpu family": family, "model": model,
            "flags": flags}
    assert _machine.fma_units(info, isa)[0] == units


def test_peak():
    # Zen 3, 2 cores at 2445 MHz: 8 lanes x 2 FMA x 2 flops x 2.445 GHz x 2 = 156.5 GFLOP/s
    assert _machine.peak_gflops(2, "avx2", 2445.0, 2) == pytest.approx(156.48)
    # Xeon Silver 4114, one core, 1 AVX-512 FMA unit at 3.0 GHz: 16 x 1 x 2 x 3.0 = 96
    assert _machine.peak_gflops(1, "avx512f", 3000.0, 1) == pytest.approx(96.0)
    assert _machine.peak_gflops(1, "avx512f", None, 2) is None


def test_machine_and_header_of_this_host():
    n = len(os.sched_getaffinity(0))
    cores, how = _machine.usable_cores()
    assert 1 <= cores <= n
    m = _machine.machine(1, "llvm -mcpu=haswell", units=1)
    assert m["threads"] == 1 and m["fma_units"] == 1
    text = _machine.header(m)
    assert m["model"] in text and "llvm -mcpu=haswell" in text
    if m["peak_gflops"]:
        lanes = 16 if m["code_isa"] == "avx512f" else 8 if m["code_isa"] in ("avx2", "avx") else 4
        assert m["peak_gflops"] == pytest.approx(lanes * 2 * m["clock"]["used"] / 1000)


def test_thread_env():
    env = _machine.thread_env(3)
    assert env["TVM_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "3"
    assert _machine.thread_env(None) == {}


def test_bench_mxnet_args():
    a = bench_mxnet.parse_args(["--models", "resnet18_v1,vgg16", "mobilenet1.0",
                                "--mcpu", "haswell"])
    assert a.models == ["resnet18_v1", "vgg16", "mobilenet1.0"]
    assert a.target == "llvm -mcpu=haswell"
    assert bench_mxnet.input_shape("inceptionv3") == (1, 3, 299, 299)
    with pytest.raises(SystemExit):
        bench_mxnet.parse_args(["--engines", "tensorflow"])


def test_bench_mxnet_report_ratios_and_goal():
    a = bench_mxnet.parse_args([])
    rows = [
        {"model": "resnet18_v1", "shape": (1, 3, 224, 224), "diff": {"relay_tvm": 1e-6},
         "ref_max": 2.0, "skip": {"openvino": "openvino does not import"},
         "ms": {"relay_tvm": 7.0, "relay_tvm_default": 8.0, "mxnet": 10.0, "onnxruntime": 12.0},
         "res": {"relay_tvm_default": {"threads": 2, "version": "relay_tvm x"},
                 "relay_tvm": {"compile_s": 1.25, "version": "relay_tvm x"}}},
        {"model": "mobilenet1.0", "shape": (1, 3, 224, 224), "diff": {}, "skip": {},
         "ms": {"relay_tvm": 5.0, "relay_tvm_default": 6.0, "onnxruntime": 4.0}, "res": {}},
    ]
    text = bench_mxnet.report(rows, a, 2)
    r18 = next(line for line in text.splitlines() if line.startswith("| resnet18_v1 | 224"))
    cells = [c.strip() for c in r18.strip("|").split("|")]
    assert cells[7] == "MXNet"                   # fastest peer: 10 ms
    assert cells[8:10] == ["0.70×", "0.80×"]     # 7/10 and 8/10
    assert cells[10] == "≤ 0.8: met" and cells[11] == "1.2"
    mob = next(line for line in text.splitlines() if line.startswith("| mobilenet1.0 | 224"))
    assert "1.50×" in mob and "≤ 1.0: **not met**" in mob   # 6/4 vs ONNX Runtime
    assert "relay_tvm default (2 thr) ms" in text
    assert "OpenVINO: openvino does not import" in text
    assert "round trip" not in text  # none measured
    rows[0]["round_trip_ns"] = {"relay_tvm": [(60.0, 340.0)], "mxnet": [(70.0, None)]}
    text = bench_mxnet.report(rows, a, 2)
    assert "measured before and after each process: 60-340 ns, median 70" in text


def test_vcpu_round_trip():
    import shutil

    cores = sorted(os.sched_getaffinity(0))
    ns = _machine.vcpu_round_trip_ns(2000)
    if len(cores) < 2 or not (shutil.which("cc") or shutil.which("gcc")):
        assert ns is None
        return
    # a cache line between two cores of one machine: tens of ns to a few microseconds (a
    # loaded VM), never zero
    assert 5.0 < ns < 100_000.0, ns


def test_measured_fma_rate_and_clock():
    """The FMA loop runs where a C compiler and AVX2 are present: at least 0.5 G vector FMAs
    per second per unit (any x86 core of the last decade does 1.5-4 G even on a busy VM), and
    the implied clock is the rate over the units."""
    import shutil

    flags = _machine.read_cpuinfo().get("flags", "").split()
    if not (shutil.which("cc") or shutil.which("gcc")) or "avx2" not in flags:
        pytest.skip("the FMA loop needs a C compiler and an AVX2 host")
    rate = _machine.measured_fma_rate("avx2")
    assert rate is not None and rate > 0.5e9
    assert _machine.measured_clock_mhz("avx2", 2) == pytest.approx(rate / 2e6)
    assert _machine.measured_fma_rate("neon") is None


def test_measured_fma_rate_with_several_cores_at_once():
    """The loop run on two cores at once gives a per-core rate of the same kind (cached per
    copy count, apart from one core's), and at most about one core's alone: a turbo clock
    does not rise when more cores are busy (15% slack for a VM's noise)."""
    import shutil

    flags = _machine.read_cpuinfo().get("flags", "").split()
    if not (shutil.which("cc") or shutil.which("gcc")) or "avx2" not in flags:
        pytest.skip("the FMA loop needs a C compiler and an AVX2 host")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two usable cores")
    one = _machine.measured_fma_rate("avx2")
    two = _machine.measured_fma_rate("avx2", 2)
    assert two is not None and two > 0.5e9
    assert two <= one * 1.15
    assert ("avx2", 2) in _machine._MEASURED and ("avx2", 1) in _machine._MEASURED
    assert _machine.measured_clock_mhz("avx2", 1, 2) == pytest.approx(two / 1e6)


def test_peak_for_several_threads_uses_the_clock_they_hold_together(monkeypatch):
    """Without a maximum clock from Linux, the peak for N threads is measured with N copies
    of the FMA loop at once (capped at the usable cores), and the header says so next to one
    core's rate alone."""
    calls = []

    def fake_clock(isa, units, copies=1):
        calls.append(copies)
        return {1: 3000.0, 2: 2500.0}[copies]

    monkeypatch.setattr(_machine, "clock_mhz", lambda info=None: {
        "max": None, "cpuinfo": 2000.0, "used": 2000.0, "source": "cpuinfo"})
    monkeypatch.setattr(_machine, "measured_clock_mhz", fake_clock)
    monkeypatch.setattr(_machine, "usable_cores", lambda: (2, "test"))
    monkeypatch.setattr(_machine, "fma_units", lambda info, isa: (1, "one unit (test)"))
    m = _machine.machine(2, "llvm -mcpu=haswell")
    assert 2 in calls and m["clock"]["used"] == 2500.0
    assert m["peak_gflops"] == pytest.approx(8 * 1 * 2 * 2.5 * 2)
    assert "each of 2 cores at once ran 2.50 G" in m["clock"]["source"]
    assert "one core alone 3.00 G" in m["clock"]["source"]
    calls.clear()
    m = _machine.machine(4, "llvm -mcpu=haswell")   # more threads than cores: 2 copies
    assert calls[0] == 2
    calls.clear()
    m = _machine.machine(1, "llvm -mcpu=haswell")
    assert calls == [1] and m["clock"]["used"] == 3000.0
    assert "one core ran 3.00 G" in m["clock"]["source"]
