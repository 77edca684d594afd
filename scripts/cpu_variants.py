"""Ways to make this machine compute like another CPU, and a probe that measures what each one changes.

Committed notebook outputs must not depend on the CPU. We cannot run on other CPUs here, but these
settings change the kernels PyTorch, MKL, oneDNN and OpenBLAS pick, or how reductions are split:

    python scripts/cpu_variants.py            # table: which variant changes which float32 op (fresh process each)
    python scripts/cpu_variants.py --env other-cpu   # print one variant's settings, e.g. for a shell

Measured on an AMD EPYC (AVX2, 2 cores), torch 2.13.0+cpu: see VARIANTS. On an AMD EPYC with AVX-512 (2 cores,
PyTorch's AVX512 kernels by default), `aten-avx2` changed only softmax (by up to 2e-7, 24-34% of entries) and
sdpa (1e-7, 19%) of the probe; its 200 Adam steps stayed bit-identical, but a longer training amplifies such bits.
`other-cpu` combines every setting that changed a result; `make test` runs the notebooks under it
(scripts/nbval_other_cpu.py), and where the CPU has AVX-512 under `aten-avx2` too.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Variant:
    """Environment settings (and optionally a forced torch thread count) that imitate another CPU."""

    name: str
    env: dict = field(default_factory=dict)
    threads: int | None = None  # torch.set_num_threads at kernel start (OMP_NUM_THREADS above the cores is capped)
    note: str = ""

    def describe(self) -> str:
        """The settings as one line, e.g. 'ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1'."""
        parts = [f"{k}={v}" for k, v in self.env.items()]
        if self.threads is not None:
            parts.append(f"torch.set_num_threads({self.threads})")
        return " ".join(parts) or "(this machine as it is)"


OTHER_CPU = Variant(
    "other-cpu",
    {
        "ATEN_CPU_CAPABILITY": "default",  # PyTorch's non-vectorised kernels: changes nearly every float32 op
        "OMP_NUM_THREADS": "1",  # one thread: large full reductions (sum, mean of 1e5+ values) change
        "MKL_CBWR": "COMPATIBLE",  # MKL's SSE2 code path: changes matmul, einsum, Linear
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",  # no effect on AMD (measured) but on Intel CPUs it changes MKL kernels
        "DNNL_MAX_CPU_ISA": "SSE41",  # oneDNN without AVX: changes gelu
        "OPENBLAS_CORETYPE": "Prescott",  # numpy's OpenBLAS with SSE3 kernels: changes numpy matmul, SVD
    },
    note="every setting below that changed a result, at once",
)

# On a CPU with AVX-512 PyTorch picks its AVX-512 kernels; most CPUs (and CI runners) without it run these.
# nbval_other_cpu.py runs it after other-cpu where the CPU has AVX-512.
AVX2 = Variant("aten-avx2", {"ATEN_CPU_CAPABILITY": "avx2"},
               note="PyTorch's AVX2 kernels: what a CPU without AVX-512 runs (the same as unset on one)")

VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("aten-default", {"ATEN_CPU_CAPABILITY": "default"}),
    AVX2,
    Variant("threads-1", {"OMP_NUM_THREADS": "1"}),
    Variant("threads-4-env", {"OMP_NUM_THREADS": "4"}, note="torch caps it at the 2 cores: no effect here"),
    # PASSIVE: idle OpenMP threads sleep instead of spinning on 2 shared cores (same numbers, far faster here)
    Variant("threads-3", {"OMP_WAIT_POLICY": "PASSIVE"}, threads=3, note="forced with torch.set_num_threads"),
    Variant("threads-4", {"OMP_WAIT_POLICY": "PASSIVE"}, threads=4, note="forced with torch.set_num_threads"),
    Variant("mkl-sse4_2", {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}),
    Variant("mkl-avx", {"MKL_ENABLE_INSTRUCTIONS": "AVX"}),
    Variant("mkl-cbwr-compatible", {"MKL_CBWR": "COMPATIBLE"}),
    Variant("mkl-cbwr-avx", {"MKL_CBWR": "AVX"}),
    Variant("dnnl-sse41", {"DNNL_MAX_CPU_ISA": "SSE41"}),
    Variant("dnnl-avx", {"DNNL_MAX_CPU_ISA": "AVX"}),
    Variant("openblas-prescott", {"OPENBLAS_CORETYPE": "Prescott"}),
    OTHER_CPU,
]}


def has_avx512() -> bool:
    """True if this CPU has AVX-512 (the avx512f flag of /proc/cpuinfo; elsewhere, what PyTorch detects)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        return "avx512f" in cpuinfo.read_text().split()
    import torch

    return torch.backends.cpu.get_cpu_capability() == "AVX512"  # honours ATEN_CPU_CAPABILITY if set


def kernel_env(variant: Variant, workdir: str | Path) -> dict:
    """os.environ with the variant's settings, for a process that starts Jupyter kernels.

    Args:
        variant: the settings. workdir: a scratch folder (holds an IPython startup file when threads is set).

    Returns:
        the environment (a new dict).
    """
    env = dict(os.environ, **variant.env)
    if variant.threads is not None:
        startup = Path(workdir) / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True, exist_ok=True)
        (startup / "00-threads.py").write_text(f"import torch\ntorch.set_num_threads({variant.threads})\n")
        env["IPYTHONDIR"] = str(Path(workdir) / "ipython")
    return env


# ---------------------------------------------------------------- the probe (one fresh process per variant)


def probe(out: str, threads: int | None) -> None:
    """Compute float32 ops at the course's sizes, each on its own seeded input, and save them to `out` (.npz)."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    if threads is not None:
        torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen)

    res = {
        "matmul [4,8,8]@[4,8,8]": randn(4, 8, 8) @ randn(4, 8, 8),
        "matmul [8,32,64]@[8,64,32]": randn(8, 32, 64) @ randn(8, 64, 32),
        "matmul [512,512]@[512,512]": randn(512, 512) @ randn(512, 512),
        "einsum nd,hdk->hnk [32,32]x[8,32,64]": torch.einsum("nd,hdk->hnk", randn(32, 32), randn(8, 32, 64)),
        "nn.Linear 64→64 on [16,64]": F.linear(randn(16, 64), randn(64, 64), randn(64)),
        "softmax rows [64,64]": torch.softmax(randn(64, 64) * 3, -1),
        "softmax rows [8,512]": torch.softmax(randn(8, 512) * 3, -1),
        "exp [64,64]": torch.exp(randn(64, 64) * 3),
        "sum rows [64,512]": randn(64, 512).sum(-1),
        "var rows [64,512]": randn(64, 512).var(-1),
        "sum of 1e4": randn(10_000).sum(),
        "sum of 1e6": randn(1_000_000).sum(),
        "mean of 1e5": randn(100_000).mean(),
        "var of 1e6": randn(1_000_000).var(),
        "tanh [1e5]": torch.tanh(randn(100_000)),
        "gelu [1e5]": F.gelu(randn(100_000)),
        "sdpa [2,4,32,16]": F.scaled_dot_product_attention(randn(2, 4, 32, 16), randn(2, 4, 32, 16),
                                                           randn(2, 4, 32, 16)),
    }
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    x, y = randn(128, 16), torch.randint(0, 4, (128,), generator=gen)
    for _ in range(200):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    res["Adam, 200 steps (weights)"] = torch.cat([p.detach().flatten() for p in net.parameters()])
    arrays = {k: v.numpy() for k, v in res.items()}
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    arrays["numpy f64 matmul [64,64]"] = a @ b
    arrays["numpy f64 svd [64,64]"] = np.linalg.svd(a, compute_uv=False)
    arrays["numpy f64 exp [1e5]"] = np.exp(rng.standard_normal(100_000))
    arrays["numpy f32 matmul [64,64]"] = a.astype(np.float32) @ b.astype(np.float32)
    np.savez(out, **{k: np.asarray(v) for k, v in arrays.items()})


def measure(names: list[str]) -> str:
    """Run the probe under this machine and each variant; return a Markdown table of what changed.

    Args:
        names: variant names (keys of VARIANTS).

    Returns:
        the table: one row per op, one column per variant, "=" (bit-identical) or the largest absolute change.
    """
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        def run(tag: str, variant: Variant) -> dict:
            out = Path(tmp) / f"{tag}.npz"
            cmd = [sys.executable, __file__, "--probe", str(out)]
            if variant.threads is not None:
                cmd += ["--threads", str(variant.threads)]
            subprocess.run(cmd, env=dict(os.environ, **variant.env), check=True)
            return dict(np.load(out))

        base = run("base", Variant("base"))
        again = run("again", Variant("base"))
        runs = {n: run(n, VARIANTS[n]) for n in names}
    cols = ["rerun"] + names
    lines = ["| op (float32 unless numpy f64) | max abs value | " + " | ".join(cols) + " |",
             "|---" * (len(cols) + 2) + "|"]
    for key, ref in base.items():
        cells = []
        for other in [again] + [runs[n] for n in names]:
            got = other[key]
            if np.array_equal(got, ref):
                cells.append("=")
            else:
                change = np.abs(got.astype(np.float64) - ref).max()
                cells.append(f"{change:.0e} ({np.mean(got != ref):.0%})")
        lines.append(f"| {key} | {np.abs(ref).max():.2g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", metavar="VARIANT", help="print the settings of one variant and exit")
    parser.add_argument("--only", nargs="*", metavar="VARIANT", help="measure only these variants")
    parser.add_argument("--probe", metavar="OUT", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.probe, args.threads)
        return
    if args.env:
        if args.env not in VARIANTS:
            sys.exit(f"--env must be one of {sorted(VARIANTS)}, got {args.env!r}")
        print(VARIANTS[args.env].describe())
        return
    names = args.only or list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        sys.exit(f"--only takes variant names {sorted(VARIANTS)}, got {unknown}")
    print(measure(names))
    print("\ncells: '=' bit-identical to this machine's run; "
          "else the largest absolute change (share of entries changed)")
    for n in names:
        v = VARIANTS[n]
        print(f"- {n}: {v.describe()}" + (f"  ({v.note})" if v.note else ""))


if __name__ == "__main__":
    main()
