"""What the benchmarks print about the machine: CPU model, ISA, usable cores, clock, peak FP32.

Standard library only (the ONNX Runtime / OpenVINO workers of ``bench_mxnet.py`` import it from
a second virtual environment). Everything is read from Linux's ``/proc/cpuinfo``,
``os.sched_getaffinity``, the cgroup CPU quota and ``lscpu``; on other systems the fields are
``"unknown"`` and the peak is not computed.

Peak FP32 FLOP/s of one core = FP32 lanes per vector register (SSE 4, AVX2 8, AVX-512 16)
x FMA units x 2 flops per FMA x clock. FMA units: 2 on Intel since Haswell (AVX2), on AMD
Zen 2-5 (256-bit) and on AVX-512 server parts from Skylake-SP on, EXCEPT the Xeon Bronze/Silver/
Gold 31xx-52xx of the Skylake-SP and Cascade Lake generations (1 AVX-512 FMA unit, save Gold 5122
and 5222; recognised by the model name) and Zen 1/Zen+ (256-bit FMA split into two 128-bit
halves: counted as 1) and Zen 4 with AVX-512 (a 512-bit FMA on both 256-bit pipes: 1). The clock is the maximum (turbo) clock where Linux reports one; where it
does not (a VM's ``/proc/cpuinfo`` gives the nominal clock, which the cores exceed: 2.6 GHz read,
3.9 GHz run on a Zen 5 VM), the clock is measured: a C loop of independent FMAs on registers,
compiled for the ISA by the system's C compiler, run for 0.2 s on as many cores at once as the
peak's threads (a turbo clock drops as more cores run), gives FMA vectors per second per core,
divided by the FMA units (:func:`measured_clock_mhz`). Under a hypervisor the model
name may hide the part; ``--fma-units`` overrides the guess.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import subprocess

# LLVM CPU names -> the widest FP32 vector ISA they enable (others: read the host).
_AVX512_CPUS = ("skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
                "icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
                "graniterapids", "graniterapids-d", "diamondrapids", "knl", "knm", "znver4",
                "znver5", "x86-64-v4", "skx")
_AVX2_CPUS = ("haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake",
              "arrowlake", "arrowlake-s", "lunarlake", "gracemont", "pantherlake", "znver1",
              "znver2", "znver3", "bdver4", "x86-64-v3", "core-avx2")
_LANES = {"avx512f": 16, "avx2": 8, "avx": 8, "sse": 4, "neon": 4}


def read_cpuinfo(text: str | None = None) -> dict:
    """The first processor's fields of ``/proc/cpuinfo`` (``{}`` if unreadable)."""
    if text is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                text = f.read()
        except OSError:
            return {}
    info = {}
    for line in text.splitlines():
        if not line.strip():
            if info:
                break
            continue
        key, _, val = line.partition(":")
        info.setdefault(key.strip(), val.strip())
    return info


def isa_of_flags(flags: str) -> str:
    """The widest FP32 vector ISA named by a cpuinfo ``flags`` line: avx512f, avx2, avx, sse."""
    fl = set(flags.split())
    for isa in ("avx512f", "avx2", "avx"):
        if isa in fl:
            return isa
    if "asimd" in fl or "neon" in fl:
        return "neon"
    return "sse"


def isa_of_target(target: str, host_isa: str) -> str:
    """The ISA code built for ``target`` (``"llvm -mcpu=haswell"``) uses on this host.

    No ``-mcpu``: the host's (relay_tvm builds for the host CPU), but with ``-mattr`` adding
    features the widest one added (relay_tvm then builds for the generic CPU plus those). A
    known LLVM CPU name caps it at that CPU's ISA; ``-mattr=-avx512f`` caps it at AVX2. Unknown
    names keep the host's.
    """
    order = ["sse", "avx", "avx2", "avx512f"]
    isa = host_isa
    added = re.findall(r"\+(avx512f|avx2|avx)\b", target)
    if "-mcpu=" not in target and re.search(r"-mattr=\S*\+", target):
        isa = max(added, key=order.index, default="sse")
        if isa in order and host_isa in order and order.index(isa) > order.index(host_isa):
            isa = host_isa
    m = re.search(r"-mcpu=(\S+)", target)
    if m:
        cpu = m.group(1)
        cap = "avx512f" if cpu in _AVX512_CPUS else "avx2" if cpu in _AVX2_CPUS else None
        if cap and isa in order and order.index(cap) < order.index(isa):
            isa = cap
    if "-avx512f" in target and isa == "avx512f":
        isa = "avx2"
    return isa


def usable_cores() -> tuple[int, str]:
    """``(n, how)``: the cores this process may run on (affinity mask, capped by a cgroup quota)."""
    try:
        n = len(os.sched_getaffinity(0))
        how = "sched_getaffinity"
    except (AttributeError, OSError):
        n, how = os.cpu_count() or 1, "os.cpu_count"
    quota = _cgroup_quota()
    if quota is not None and quota < n:
        return quota, f"{how} {n}, cgroup CPU quota {quota}"
    return n, how


def _cgroup_quota() -> int | None:
    paths = [("/sys/fs/cgroup/cpu.max", None),
             ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")]
    for qpath, ppath in paths:
        try:
            with open(qpath, encoding="utf-8") as f:
                parts = f.read().split()
            if ppath:
                with open(ppath, encoding="utf-8") as f:
                    parts.append(f.read().strip())
        except OSError:
            continue
        if len(parts) >= 2 and parts[0] not in ("max", "-1"):
            return max(1, -(-int(parts[0]) // int(parts[1])))
    return None


def clock_mhz(cpuinfo: dict | None = None, lscpu_text: str | None = None) -> dict:
    """``{"max": MHz or None, "cpuinfo": MHz or None, "used": MHz or None, "source": str}``.

    ``max`` is ``lscpu``'s "CPU max MHz" (else cpufreq's ``cpuinfo_max_freq``); ``cpuinfo`` is
    ``/proc/cpuinfo``'s current "cpu MHz" (under a hypervisor often the nominal clock). The
    maximum is used when known: a peak must not be exceeded by a turbo clock.
    """
    cpuinfo = read_cpuinfo() if cpuinfo is None else cpuinfo
    if lscpu_text is None and shutil.which("lscpu"):
        try:
            lscpu_text = subprocess.run(["lscpu"], capture_output=True, text=True,
                                        timeout=10, env={**os.environ, "LC_ALL": "C"}).stdout
        except (OSError, subprocess.SubprocessError):
            lscpu_text = None
    mx = None
    m = re.search(r"^CPU max MHz:\s*([\d.]+)", lscpu_text or "", re.M)
    if m:
        mx = float(m.group(1))
    else:
        try:
            with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
                mx = int(f.read()) / 1000.0
        except (OSError, ValueError):
            pass
    cur = None
    try:
        cur = float(cpuinfo.get("cpu MHz", ""))
    except ValueError:
        pass
    if mx:
        return {"max": mx, "cpuinfo": cur, "used": mx, "source": "max MHz"}
    return {"max": None, "cpuinfo": cur, "used": cur,
            "source": "/proc/cpuinfo cpu MHz (no max MHz known)" if cur else "unknown"}


_FMA_LOOP = r"""
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#define N %(acc)d
int main(void) {
  VEC a[N], b = SET1(1.0000001f), c = SET1(1e-9f);
  for (int i = 0; i < N; i++) a[i] = SET1((float)i);
  struct timespec t0, t1;
  long iters = 1000000, done = 0;
  double s = 0.0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (s < 0.2) {
    for (long k = 0; k < iters; k++) {
#pragma GCC unroll 32
      for (int i = 0; i < N; i++) a[i] = FMA(a[i], b, c);
    }
    done += iters;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  }
  float sum = 0.0f;
  for (int i = 0; i < N; i++) { float t[16]; STORE(t, a[i]); sum += t[0]; }
  printf("%%.6e %%f\n", (double)done * N / s, sum);
  return 0;
}
"""
_FMA_VARIANTS = {
    "avx512f": ("-mavx512f -mfma", 24, "__m512", "_mm512_set1_ps", "_mm512_fmadd_ps",
                "_mm512_storeu_ps"),
    "avx2": ("-mavx2 -mfma", 12, "__m256", "_mm256_set1_ps", "_mm256_fmadd_ps",
             "_mm256_storeu_ps"),
}
_MEASURED: dict = {}


_C_PROGRAMS: dict = {}


def _c_program(name: str, source: str, flags=()) -> str | None:
    """The path of ``source`` compiled by the host's C compiler (``-O2`` and ``flags``), once
    per process (in a temporary directory removed at exit), or None without a compiler or
    where it fails."""
    key = (name, source, tuple(flags))
    if key not in _C_PROGRAMS:
        import atexit
        import tempfile

        cc = shutil.which("cc") or shutil.which("gcc")
        exe = None
        if cc:
            tmp = tempfile.mkdtemp(prefix=f"{name}_")
            atexit.register(shutil.rmtree, tmp, True)
            c_path, exe = os.path.join(tmp, f"{name}.c"), os.path.join(tmp, name)
            with open(c_path, "w") as f:
                f.write(source)
            try:
                subprocess.run([cc, "-O2", *flags, c_path, "-o", exe], check=True,
                               capture_output=True, timeout=60)
            except (OSError, subprocess.SubprocessError):
                exe = None
        _C_PROGRAMS[key] = exe
    return _C_PROGRAMS[key]


def measured_fma_rate(isa: str, copies: int = 1) -> float | None:
    """FMA vector instructions per second one core sustains on ``isa`` ("avx512f" / "avx2")
    while ``copies`` cores run the loop at once (the mean of the copies), measured once per
    process and count by a C loop of independent register FMAs (enough accumulators to cover 4
    cycles of latency on 2+ pipes), or None without a C compiler, on another ISA or when the
    host cannot run the code. A turbo clock falls as more cores are busy: on a 2-vCPU AMD EPYC
    (Zen 1) VM one core ran 2.78 G avx2 FMAs per second alone and 2.28-2.32 G with both cores
    running the loop (2026-12-06), so a peak for several threads takes ``copies`` = threads."""
    key = (isa, max(1, int(copies)))
    if key in _MEASURED:
        return _MEASURED[key]
    _MEASURED[key] = None
    if isa not in _FMA_VARIANTS:
        return None
    flags, acc, vec, set1, fma, store = _FMA_VARIANTS[isa]
    src = (f"#define VEC {vec}\n#define SET1 {set1}\n#define FMA {fma}\n#define STORE {store}\n"
           + _FMA_LOOP % {"acc": acc})
    exe = _c_program("fma", src, flags.split())
    if exe is None:
        return None
    procs = []
    try:
        # all copies started before any is waited for: they run at the same time
        procs = [subprocess.Popen([exe], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True) for _ in range(key[1])]
        rates = []
        for p in procs:
            out, _ = p.communicate(timeout=30)
            if p.returncode != 0:
                raise subprocess.CalledProcessError(p.returncode, exe)
            rates.append(float(out.split()[0]))
        _MEASURED[key] = sum(rates) / len(rates)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return _MEASURED[key]


_PINGPONG = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static _Atomic long flag __attribute__((aligned(64)));
static long n;
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s);
                         pthread_setaffinity_np(pthread_self(), sizeof s, &s); }
static void *other(void *core) {
  pin((int)(long)core);
  for (long i = 0; i < n; i++) {
    while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 1) {}
    atomic_store_explicit(&flag, 2 * i + 2, memory_order_release);
  }
  return 0;
}
int main(int argc, char **argv) {
  n = atol(argv[3]);
  pthread_t t; struct timespec a, b;
  pin(atoi(argv[1]));
  pthread_create(&t, 0, other, (void *)atol(argv[2]));
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) {
    atomic_store_explicit(&flag, 2 * i + 1, memory_order_release);
    while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 2) {}
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  pthread_join(t, 0);
  printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
  return 0;
}
"""


def vcpu_round_trip_ns(trips: int = 20000) -> float | None:
    """Nanoseconds for one cache line to go from the first usable core to the second and back
    (two pinned threads of a C program taking turns on an atomic), or None with fewer than two
    usable cores, without a C compiler or where the program fails. On the idle 2-vCPU cloud
    VMs of the RESULTS.md sections it is the machine's state: 50-90 ns while both vCPUs share
    a cache, 320-380 ns while they do not, and multi-threaded kernels then run 10-15% slower
    (RESULTS.md, 2026-12-05); another process busy on a core lengthens it too.
    ``bench_mxnet.py`` prints it beside each process's time."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cores) < 2:
        return None
    exe = _c_program("pingpong", _PINGPONG, ["-pthread"])
    if exe is None:
        return None
    try:
        r = subprocess.run([exe, str(cores[0]), str(cores[1]), str(int(trips))],
                           capture_output=True, text=True, timeout=30, check=True)
        return float(r.stdout.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def measured_clock_mhz(isa: str, units: int, copies: int = 1) -> float | None:
    """The clock implied by :func:`measured_fma_rate` (``copies`` cores at once) with ``units``
    FMA pipes (MHz)."""
    rate = measured_fma_rate(isa, copies)
    return rate / units / 1e6 if rate else None


def fma_units(cpuinfo: dict, isa: str) -> tuple[int, str]:
    """``(units, why)``: FMA pipes per core for ``isa`` (see the module docstring)."""
    name = cpuinfo.get("model name", "")
    one = re.search(r"Xeon\(R\) (?:Bronze|Silver|Gold) ([345][12]\d\d)", name)
    if isa == "avx512f" and one and one.group(1) not in ("5122", "5222"):
        return 1, f"1 AVX-512 FMA unit (Xeon {one.group(1)}: Skylake-SP/Cascade Lake 3xxx-5xxx)"
    if isa in ("avx", "sse") and "fma" not in cpuinfo.get("flags", "").split():
        return 1, "no FMA: one add and one multiply pipe, counted as 1 FMA unit"
    if cpuinfo.get("vendor_id") == "AuthenticAMD" and cpuinfo.get("cpu family") == "25" and \
            isa == "avx512f":
        # family 19h with AVX-512 is Zen 4 (Zen 3 has none): two 256-bit FMA pipes, one
        # 512-bit FMA a cycle (a Zen 4 VM's FMA loop: 3.42 G zmm FMAs/s on one core)
        return 1, "Zen 4: a 512-bit FMA takes both 256-bit FMA pipes, counted as 1 unit"
    if cpuinfo.get("vendor_id") == "AuthenticAMD" and cpuinfo.get("cpu family") == "23":
        try:
            if int(cpuinfo.get("model", "0")) < 0x30:
                return 1, "Zen 1/Zen+: 256-bit FMA as two 128-bit halves"
        except ValueError:
            pass
    return 2, "2 FMA units per core (assumed)"


def peak_gflops(threads: int, isa: str, mhz: float | None, units: int) -> float | None:
    """Peak FP32 GFLOP/s: lanes x FMA units x 2 flops x GHz x threads (None if clock unknown)."""
    if not mhz or isa not in _LANES:
        return None
    return _LANES[isa] * units * 2 * mhz / 1000.0 * threads


def machine(threads: int | None = None, target: str = "llvm", units: int | None = None,
            measure_clock: bool = True) -> dict:
    """Everything the headers print, as a dict (``peak_gflops`` is for ``threads`` cores and
    the ISA of ``target``'s code; without a maximum clock from Linux the clock is measured
    unless ``measure_clock`` is False)."""
    info = read_cpuinfo()
    cores, cores_how = usable_cores()
    threads = threads or cores
    host_isa = isa_of_flags(info.get("flags", info.get("Features", "")))
    code_isa = isa_of_target(target, host_isa)
    flags = set(info.get("flags", "").split())
    clock = clock_mhz(info)
    u, why = fma_units(info, code_isa)
    if units:
        u, why = units, f"{units} FMA units per core (--fma-units)"
    if not clock["max"] and measure_clock and code_isa in _FMA_VARIANTS:
        # as many cores at once as the threads the peak is for (at most the usable cores):
        # the clock all of them hold together, lower than one core's turbo
        copies = max(1, min(threads, cores))
        mhz = measured_clock_mhz(code_isa, u, copies)
        if mhz and copies > 1:
            one = measured_clock_mhz(code_isa, u)
            alone = f"; one core alone {one / 1000:.2f} G" if one else ""
            clock = dict(clock, used=mhz, source=f"measured: an FMA loop on each of {copies} "
                         f"cores at once ran {mhz / 1000:.2f} G {code_isa} FMAs per unit per "
                         f"second{alone}")
        elif mhz:
            clock = dict(clock, used=mhz, source=f"measured: an FMA loop on one core ran "
                         f"{mhz / 1000:.2f} G {code_isa} FMAs per unit per second")
    return {
        "model": info.get("model name", "unknown"), "host_isa": host_isa, "code_isa": code_isa,
        "flags": {f: f in flags for f in ("avx2", "avx512f", "fma")},
        "cores": cores, "cores_how": cores_how, "threads": threads, "clock": clock,
        "fma_units": u, "fma_why": why, "target": target,
        "peak_gflops": peak_gflops(threads, code_isa, clock["used"], u),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def header(m: dict) -> str:
    """The lines both benchmarks print first (a markdown-friendly block)."""
    c = m["clock"]
    fl = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in m["flags"].items())
    lines = [
        f"date: {m['date']}",
        f"CPU: {m['model']}; ISA {m['host_isa']} ({fl})",
        f"cores usable: {m['cores']} ({m['cores_how']}); threads used: {m['threads']}",
        f"clock: max {_mhz(c['max'])}, /proc/cpuinfo {_mhz(c['cpuinfo'])}; used {_mhz(c['used'])}"
        f" ({c['source']})",
        f"target: {m['target']} -> {m['code_isa']} code",
    ]
    if m["peak_gflops"]:
        lines.append(f"peak FP32: {_LANES[m['code_isa']]} lanes x {m['fma_units']} FMA x 2 flops x "
                     f"{c['used'] / 1000:.2f} GHz x {m['threads']} threads = "
                     f"{m['peak_gflops']:.1f} GFLOP/s ({m['fma_why']})")
    else:
        lines.append("peak FP32: unknown (no clock or ISA read)")
    return "\n".join(lines)


def _mhz(v):
    return f"{v:.0f} MHz" if v else "n/a"


def thread_env(threads: int | None) -> dict:
    """Environment variables that set every runtime's thread pool to ``threads`` (an empty
    dict for ``None``)."""
    if not threads:
        return {}
    n = str(threads)
    return {k: n for k in ("OMP_NUM_THREADS", "TVM_NUM_THREADS", "MKL_NUM_THREADS",
                           "OPENBLAS_NUM_THREADS")}


THREAD_VARS = ("OMP_NUM_THREADS", "TVM_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "MXNET_CPU_WORKER_NTHREADS")


def git_revision(path: str) -> str:
    """``git describe``-like short revision of the checkout holding ``path`` ("unknown")."""
    try:
        out = subprocess.run(["git", "-C", path, "log", "-1", "--format=%h %cd",
                              "--date=short"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
