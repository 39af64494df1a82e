"""E7 - matmul speed and accuracy per number format: fp32, tf32, fp16, bf16, fp8.

Speed: square N x N matmul, FLOP/s = 2 N^3 / t (chapter 5: each halving of bits roughly doubles
tensor-core throughput - on hardware that has the format). Accuracy: relative Frobenius error
||C_fmt - C_64|| / ||C_64|| of a 256 x 256 product against float64 from the same random inputs.

GPU (CuPy -> cuBLAS, fp32 accumulation): fp32; tf32 via cupy._core.set_compute_type(float32, TF32)
(compute capability >= 8.0, restored afterwards); fp16; bf16 via ml_dtypes.bfloat16 arrays (where a probe
says CuPy holds them: CuPy >= 14 with NumPy >= 2.1.2);
fp8 e4m3 only through PyTorch's torch._scaled_mm on compute capability >= 8.9 (CuPy has no fp8 dtype).
CPU: fp64 and fp32 through BLAS are real hardware paths; NumPy float16 (own loop, no BLAS) and
ml_dtypes bfloat16 (promoted to float32 for the product) are labelled emulation - their speed says
nothing about fp16/bf16 hardware; tf32 and
fp8 have no CPU matmul (fp8's accuracy is still reported, from a scaled-quantization emulation).
"""

from __future__ import annotations

import numpy as np

from hwlib.bench import _common
from hwlib.bench.e2_matmul import random, time_matmul

FORMATS = ("fp32", "tf32", "fp16", "bf16", "fp8")
TITLE = "E7 matmul per number format"


def _bf16():
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def _rel_error(got, ref) -> float:
    got = np.asarray(got, dtype=np.float64)
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def _accuracy(bk, fmt, small=256) -> float | None:
    """Relative error of one small product in `fmt` on this backend vs float64 on the host."""
    rng = np.random.default_rng(7)
    a64, b64 = rng.standard_normal((small, small)), rng.standard_normal((small, small))
    ref = a64 @ b64
    if fmt == "fp8":
        import ml_dtypes

        q = []
        for m in (a64, b64):  # per-tensor scaling into e4m3's range, quantize, back to float32
            s = 448.0 / np.abs(m).max()
            q.append((m * s).astype(ml_dtypes.float8_e4m3fn).astype(np.float32) / np.float32(s))
        return _rel_error(q[0] @ q[1], ref)
    dt = {"fp32": np.float32, "tf32": np.float32, "fp16": np.float16, "bf16": _bf16(), "fp64": np.float64}[fmt]
    a, b = (bk.xp.asarray(m.astype(dt)) for m in (a64, b64))
    return _rel_error(bk.asnumpy(bk.xp.matmul(a, b)).astype(np.float64), ref)


def _entry(fmt, n=None, t=None, **extra) -> dict:
    row = {"format": fmt, "status": "ok" if t is not None else "skipped", "n": n}
    if t is not None:
        flops = 2.0 * n**3
        row.update(
            seconds=t.median_s,
            first_call_s=t.first_call_s,
            flops=flops,
            flops_per_s=_common.rate(flops, t.median_s),
            launch_bound=t.launch_bound,
            **(t.clocks or {}),
        )
    row.update(extra)
    return row


def _failed(fmt, exc, **extra) -> dict:
    """A format whose run raised: status "failed", the error in one line; the other formats still run."""
    reason = _common.one_line(exc)
    if _common.is_out_of_memory(exc):  # cuBLAS and PyTorch say so in their own words
        reason = f"out of memory: {reason}"
    return {"format": fmt, "status": "failed", "n": None, "reason": reason, **extra}


def _time(bk, n, dtype, samples):
    a, b = random(bk, (n, n), dtype, 1), random(bk, (n, n), dtype, 2)
    result_dtype = bk.xp.matmul(a[:2], b[:, :2]).dtype  # bf16 @ bf16 is bf16 on CuPy, float32 on NumPy
    out = bk.xp.empty((n, n), dtype=result_dtype)
    return time_matmul(bk, a, b, out, samples)


def _gpu(bk, fmt, n, samples) -> dict:
    cp = bk.xp
    cc = int(bk.device_info()["compute_capability"])
    if fmt in ("fp32", "fp16"):
        dt = np.float32 if fmt == "fp32" else np.float16
        tf32 = {"tf32": _common.tf32_state(bk)["enabled"]} if fmt == "fp32" else {}
        return _entry(fmt, n, _time(bk, n, dt, samples), dtype=np.dtype(dt).name, rel_error=_accuracy(bk, fmt), **tf32)
    if fmt == "tf32":
        if cc < 80:
            return _entry(fmt, reason=f"TF32 needs compute capability >= 8.0 (Ampere); this GPU is sm_{cc}")
        core = cp._core
        old = core.get_compute_type(cp.float32)
        try:
            core.set_compute_type(cp.float32, 7)  # 7 = COMPUTE_TYPE_TF32 (cupy/_core/_routines_linalg.pyx)
            return _entry(
                fmt,
                n,
                _time(bk, n, np.float32, samples),
                dtype="float32 (TF32 tensor cores)",
                rel_error=_accuracy(bk, fmt),
                tf32=True,
            )
        finally:
            core.set_compute_type(cp.float32, old)
    if fmt == "bf16":
        dt, missing = _common.bf16_support(bk)  # a probe: the CuPy and NumPy versions both decide
        if missing:
            return _entry(fmt, reason=missing)
        row = _entry(fmt, n, _time(bk, n, _bf16(), samples), dtype="bfloat16", rel_error=_accuracy(bk, fmt))
        if cc < 80:
            row["note"] = f"sm_{cc} has no bf16 tensor cores: expect this to be slower than fp32"
        return row
    return _fp8_torch(bk, n, samples, cc)


def _short(exc) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]


def _fp8_torch(bk, n, samples, cc) -> dict:
    if cc < 89:
        return _entry(
            "fp8",
            reason=f"fp8 tensor cores need compute capability >= 8.9 (Ada/Hopper); this GPU is sm_{cc}",
            rel_error_emulated=_accuracy(bk, "fp8"),
        )
    try:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
    except Exception as exc:
        return _entry(
            "fp8",
            reason=f"CuPy has no fp8 dtype and PyTorch is unusable ({_short(exc)})",
            rel_error_emulated=_accuracy(bk, "fp8"),
        )
    try:
        return _fp8_timed(bk, torch, n, samples)
    except Exception as exc:  # an old torch (no float8), cuBLASLt refusing the case, a CUDA error
        row = _failed("fp8", exc, rel_error_emulated=_accuracy(bk, "fp8"))
        version = getattr(torch, "__version__", "?")
        row["reason"] = f"fp8 through PyTorch {version} torch._scaled_mm failed: {row['reason']}"
        return row


def _fp8_timed(bk, torch, n, samples) -> dict:
    from hwlib.bench import timing

    a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
    one = torch.tensor(1.0, device="cuda")
    fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
    t = timing.measure(lambda: (fn(), None)[1], bk, samples=samples)
    return _entry(
        "fp8",
        n,
        t,
        dtype="float8_e4m3fn (PyTorch torch._scaled_mm)",
        rel_error_emulated=_accuracy(bk, "fp8"),
        note="timed with CUDA events on CuPy's current stream",
    )


def _cpu(bk, fmt, n, n_soft, samples) -> dict:
    if fmt == "fp32":
        return _entry(fmt, n, _time(bk, n, np.float32, samples), dtype="float32", rel_error=_accuracy(bk, fmt))
    if fmt == "tf32":
        return _entry(fmt, reason="TF32 is a GPU tensor-core mode; CPUs have no TF32 matmul")
    if fmt in ("fp16", "bf16"):
        dt = np.float16 if fmt == "fp16" else _bf16()
        return _entry(
            fmt,
            n_soft,
            _time(bk, n_soft, dt, samples),
            dtype=np.dtype(dt).name,
            emulated=True,
            rel_error=_accuracy(bk, fmt),
            note="emulation: values rounded to the format, product computed by NumPy in software "
            "(fp16: NumPy's own loop, no BLAS; bf16: ml_dtypes promotes to float32) - "
            "not a hardware number",
        )
    return _entry(
        fmt,
        reason="no fp8 matmul on a CPU; rel_error_emulated comes from scaled e4m3 "
        "quantization of the inputs (ml_dtypes) with a float32 product",
        rel_error_emulated=_accuracy(bk, fmt),
    )


def formats(xp=None, n: int | None = None, which=FORMATS, quick: bool = False, samples: int = 5, progress=None) -> dict:
    """Run E7; one result per format with status "ok" (flops_per_s, rel_error) or "skipped" (reason).

    n: matrix size (GPU 8192, quick 2048; CPU 1024, quick 512; software-emulated formats use <= 256).
    which: formats to try, among FORMATS.
    """
    bk = _common.resolve(xp)
    wanted = [f for f in which if f in FORMATS]
    if isinstance(which, str) or len(wanted) != len(list(which)):
        raise ValueError(f"which must be a list among {', '.join(FORMATS)}; got {which!r}")
    n = _common.check_sizes("n", [n or (_common.sizes_for(bk, quick, [8192], [1024], [2048], [512])[0])])[0]
    n_soft = min(n, 128 if quick else 256)
    rec = _common.new_record(
        "formats",
        bk,
        TITLE,
        {"n": n, "n_emulated": None if bk.is_gpu else n_soft, "formats": wanted, "samples": samples},
        notes=[
            "flops = 2 n^3, median time; rel_error = ||C - C_fp64||_F / ||C_fp64||_F on 256 x 256 normal inputs",
        ],
    )
    if not bk.is_gpu:
        rec["results"].append(
            _entry("fp64", n, _time(bk, n, np.float64, samples), dtype="float64", rel_error=_accuracy(bk, "fp64"))
        )
    for i, fmt in enumerate(wanted, 1):
        _common.say(progress, f"formats ({i}/{len(wanted)}): {fmt}")
        try:
            rec["results"].append(_gpu(bk, fmt, n, samples) if bk.is_gpu else _cpu(bk, fmt, n, n_soft, samples))
        except Exception as exc:  # noqa: BLE001 - out of memory, a cuBLAS error: this format only
            _common.free_device_memory(bk)
            rec["results"].append(_failed(fmt, exc))
    if bk.is_gpu:
        rec["parameters"]["tf32"] = _common.tf32_state(bk)
    return rec
