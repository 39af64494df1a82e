"""Every CUDA source in hwlib/kernels compiles to PTX, with the macro values the experiments pass,
and exports the extern "C" names the Python code launches. No GPU needed. The compiler is the real
NVRTC from the package index (tests/real_stack.py) with CuPy's options, so this runs in CI; where
nvcc is on the machine as well, the same builds go through it too."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import hwlib
import nvrtc_build as nb
import real_stack

KERNELS = Path(hwlib.__file__).parent / "kernels"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (CUDA toolkit) not installed on this machine")

# file -> entry points the experiments launch
STREAM = {f"stream_{k}_{t}" for k in ("copy", "scale", "add", "triad") for t in ("f32", "f64")}
EXPECTED = {
    "roofline.cu": {"fma_sweep_f32", "fma_sweep_f64"},
    "divergence.cu": {"branchy", "branchy32"},
    "occupancy.cu": {"read_ilp"},
    "stream.cu": STREAM,
    "coalescing.cu": {"strided_read"},
}
# (file, -D option the experiments pass, architecture): sm_75 = T4 (Colab's free GPU), sm_90 = H100/H200
BUILDS = [
    ("roofline.cu", "-DITERS=0", "sm_75"),
    ("roofline.cu", "-DITERS=1024", "sm_75"),
    ("roofline.cu", "-DITERS=64", "sm_90"),
    ("occupancy.cu", "-DILP=1", "sm_75"),
    ("occupancy.cu", "-DILP=8", "sm_90"),
    ("divergence.cu", None, "sm_75"),
    ("divergence.cu", None, "sm_90"),
    ("stream.cu", None, "sm_75"),
    ("stream.cu", None, "sm_90"),
    ("coalescing.cu", None, "sm_75"),
    ("coalescing.cu", None, "sm_90"),
]
_cache = {}


def ptx(tmp_path_factory, name, define=None, arch="sm_75"):
    """PTX text of one build by NVRTC with CuPy's options (each build compiled once per session)."""
    key = (name, define, arch, "nvrtc")
    if key not in _cache:
        if "nvrtc" not in _cache:
            _cache["nvrtc"] = nb.NVRTC(nb.find_nvrtc([real_stack.stack("nvrtc-12.9")]))
        opts = tuple(
            o.replace("-arch=sm_", "-arch=compute_") for o in nb.cupy_options((define,) if define else (), arch[3:])
        )
        text, log = _cache["nvrtc"].compile((KERNELS / name).read_text(), name, opts, ptx=True)
        assert not log, f"NVRTC on {name} {define} {arch}:\n{log}"
        _cache[key] = text
    return _cache[key]


def nvcc_ptx(tmp_path_factory, name, define=None, arch="sm_75"):
    """PTX text of one build by nvcc (~0.5 s a file), where the CUDA toolkit is installed."""
    key = (name, define, arch)
    if key not in _cache:
        out = tmp_path_factory.mktemp("ptx") / f"{name}.ptx"
        cmd = [NVCC, "--ptx", f"-arch={arch}", *([define] if define else []), str(KERNELS / name), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, f"nvcc failed on {name} {define} {arch}:\n{proc.stderr}"
        _cache[key] = out.read_text()
    return _cache[key]


def fma32(text: str) -> int:
    """FP32 FMAs in PTX: fma.rn.f32, or fma.rn.ftz.f32 as CuPy builds them (it passes -ftz=true)."""
    return len(re.findall(r"\bfma\.rn(?:\.ftz)?\.f32\b", text))


def test_every_cu_file_is_covered():
    assert {p.name for p in KERNELS.glob("*.cu")} == set(EXPECTED)


@pytest.mark.parametrize("name, define, arch", BUILDS)
def test_compiles_and_exports_entry_points(tmp_path_factory, name, define, arch):
    found = set(re.findall(r"\.entry\s+(\w+)\(", ptx(tmp_path_factory, name, define, arch)))
    assert EXPECTED[name] <= found, f"{name}: PTX exports {found}, Python launches {EXPECTED[name]}"


@needs_nvcc
@pytest.mark.parametrize("name, define, arch", BUILDS)
def test_nvcc_compiles_and_exports_entry_points(tmp_path_factory, name, define, arch):
    found = set(re.findall(r"\.entry\s+(\w+)\(", nvcc_ptx(tmp_path_factory, name, define, arch)))
    assert EXPECTED[name] <= found, f"{name}: nvcc's PTX exports {found}, Python launches {EXPECTED[name]}"


def test_python_launches_the_names_the_tests_expect():
    """The .cu entry names above are the ones hwlib.bench asks CuPy for."""
    bench_dir = KERNELS.parent / "bench"
    launched = set(
        re.findall(
            r'"(fma_sweep_f\d\d|branchy32|branchy|read_ilp|strided_read)"',
            "".join(p.read_text() for p in bench_dir.glob("e*.py")),
        )
    )
    from hwlib.bench import e1_bandwidth

    assert 'f"stream_{name}_{suffix}"' in (bench_dir / "e1_bandwidth.py").read_text()
    launched |= {f"stream_{k}_{t}" for k in e1_bandwidth.KERNELS for t in ("f32", "f64")}
    assert launched == set().union(*EXPECTED.values())


def test_roofline_kernel_keeps_its_fmas(tmp_path_factory):
    """The FMAs must survive optimisation (the result is stored only under a never-true test)."""
    assert fma32(ptx(tmp_path_factory, "roofline.cu", "-DITERS=0")) == 0
    assert fma32(ptx(tmp_path_factory, "roofline.cu", "-DITERS=64", "sm_90")) >= 16
    assert ptx(tmp_path_factory, "roofline.cu", "-DITERS=64", "sm_90").count("fma.rn.f64") >= 16


def test_stream_kernels_repeat_their_traversal(tmp_path_factory):
    """Each STREAM kernel keeps an outer loop over reps around its grid-stride loop: two backward
    branches per kernel (the compiler barrier stops it from merging the reps into one traversal)."""
    text = ptx(tmp_path_factory, "stream.cu", None, "sm_90")
    for name in sorted(STREAM):
        body = text.split(f".entry {name}(")[1].split(".entry")[0]
        loops = len(re.findall(r"bra(?:\.uni)?\s+\$L__BB\d+_\d+;", body))
        assert loops >= 2 and "ld.global" in body and "st.global" in body, name


def test_divergence_kernel_keeps_two_paths(tmp_path_factory):
    """Both branch bodies stay separate loops (not merged into one select), or there is no divergence."""
    body = ptx(tmp_path_factory, "divergence.cu").split(".entry branchy32")[0]
    assert fma32(body) >= 2 and "@%p" in body
