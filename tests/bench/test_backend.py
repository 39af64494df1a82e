"""hwlib.backend: CuPy only when it really works, NumPy otherwise with a one-line reason."""

import sys
import types

import numpy as np
import pytest

from hwlib import backend


@pytest.fixture(autouse=True)
def _fresh_choice(monkeypatch):
    monkeypatch.delenv(backend.ENV_VAR, raising=False)
    backend._cache.clear()
    yield
    backend._cache.clear()


class CUDARuntimeError(RuntimeError):
    """Stands in for cupy_backends.cuda.api.runtime.CUDARuntimeError (a RuntimeError subclass)."""


def fake_cupy(device_count=1, count_error=None, kernel_error=None, name=b"Tesla T4", **attrs):
    """A cupy-like module: runtime queries, a 'kernel' (numpy underneath), device attributes."""
    cp = types.ModuleType("cupy")
    cp.__version__ = "14.2.0"
    cp.int32 = np.int32

    def get_device_count():
        if count_error:
            raise count_error
        return device_count

    def arange(n, dtype=None):
        if kernel_error:
            raise kernel_error
        return np.arange(n, dtype=dtype)

    attributes = {
        "MultiProcessorCount": 40,
        "ClockRate": 1_590_000,
        "MemoryClockRate": 5_001_000,
        "GlobalMemoryBusWidth": 256,
        "L2CacheSize": 4 << 20,
        "MaxThreadsPerMultiProcessor": 1024,
    }
    attributes.update(attrs)

    class Device:
        id = 0
        compute_capability = "75"

        def __init__(self, *_):
            self.attributes = attributes

        def synchronize(self):
            Device.synced = True

    runtime = types.SimpleNamespace(
        getDeviceCount=get_device_count,
        runtimeGetVersion=lambda: 12090,
        getDeviceProperties=lambda i: {"name": name, "totalGlobalMem": 15_828_320_256},
    )
    cp.cuda = types.SimpleNamespace(runtime=runtime, Device=Device)
    cp.arange = arange
    return cp


def test_env_forces_numpy(monkeypatch):
    monkeypatch.setenv(backend.ENV_VAR, "numpy")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())  # even a working CuPy is ignored
    b = backend.get()
    assert (b.name, b.xp, b.is_gpu) == ("numpy", np, False)
    assert "HWLIB_BACKEND=numpy" in b.reason


def test_env_rejects_unknown_value(monkeypatch):
    monkeypatch.setenv(backend.ENV_VAR, "tpu")
    with pytest.raises(ValueError, match="HWLIB_BACKEND.*'tpu'"):
        backend.get()


def test_no_cupy_installed_falls_back(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    b = backend.get()
    assert b.name == "numpy" and not b.is_gpu
    assert b.reason.startswith("NumPy on the CPU") and "CuPy is not installed" in b.reason
    assert "\n" not in b.reason


def test_install_hint_is_in_a_pip_users_terms(monkeypatch):
    """A Colab or pip user has no requirements-gpu.txt: the hint names hwlib's extras, and Colab."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    reason = backend.get().reason
    assert 'pip install "hwlib[gpu-cuda12]"' in reason and "hwlib[gpu-cuda13]" in reason and "Colab" in reason
    assert "requirements-gpu.txt" not in reason


def test_the_extras_the_hints_name_exist_and_bring_cuda_libraries():
    import re
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    named = set(re.findall(r"hwlib\[([\w-]+)\]", backend.INSTALL_HINT + backend.LIBS_HINT))
    assert named and named <= set(extras)
    assert any(d.startswith("cupy-cuda12x[ctk]") for d in extras["gpu-cuda12"])
    assert any(d.startswith("cupy-cuda13x[ctk]") for d in extras["gpu-cuda13"])
    assert extras["gpu"] == extras["gpu-cuda12"]
    assert all("torch" not in d for name in ("gpu", "gpu-cuda12", "gpu-cuda13") for d in extras[name])  # torch optional
    assert any(re.fullmatch(r"torch>=2\.\d+", d) and int(d.split(".")[1]) >= 5 for d in extras["fp8"])


def test_cupy_without_its_cuda_libraries_says_what_to_install(monkeypatch):
    err = RuntimeError("CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(kernel_error=err))
    reason = backend.get().reason
    assert "libnvrtc" in reason and "cupy-cuda12x[ctk]" in reason and "\n" not in reason


def test_zero_memory_clock_gives_no_theoretical_bandwidth(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(MemoryClockRate=0))
    info = backend.get().device_info()
    assert info["theoretical_bandwidth"] is None and info["spec"] == "T4" and "memory clock" in info["bandwidth_note"]


def test_broken_cupy_install_names_the_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "cupy":
            raise ImportError("libcudart.so.12: cannot open shared object file")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(builtins, "__import__", fake_import)
    b = backend.get()
    assert b.name == "numpy" and "CuPy import failed (ImportError: libcudart.so.12" in b.reason


def test_cupy_without_driver_falls_back(monkeypatch):
    err = CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(count_error=err))
    b = backend.get()
    assert b.name == "numpy"
    assert "CuPy unusable" in b.reason and "cudaErrorInsufficientDriver" in b.reason


def test_cupy_with_zero_devices_falls_back(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(device_count=0))
    assert "no CUDA device" in backend.get().reason


def test_cupy_whose_kernel_cannot_compile_falls_back(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(kernel_error=RuntimeError("libnvrtc.so.12: cannot open\nmore")))
    b = backend.get()
    assert b.name == "numpy" and "libnvrtc" in b.reason and "\n" not in b.reason


def test_env_cupy_says_it_was_asked_for(monkeypatch):
    monkeypatch.setenv(backend.ENV_VAR, "cupy")
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert "although HWLIB_BACKEND=cupy" in backend.get().reason


def test_working_cupy_is_chosen_and_describes_the_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())
    b = backend.get()
    assert (b.name, b.is_gpu) == ("cupy", True)
    info = b.device_info()
    assert info["name"] == "Tesla T4" and info["kind"] == "gpu" and info["sm_count"] == 40
    assert info["theoretical_bandwidth"] == pytest.approx(320.064e9)  # 2 x 5.001 GHz x 256 bit / 8
    assert info["l2_bytes"] == 4 << 20 and b.cache_bytes() == 4 << 20
    assert info["spec"] == "T4" and info["spec_bandwidth"] == pytest.approx(320e9, rel=0.01)
    b.synchronize()
    assert sys.modules["cupy"].cuda.Device.synced


def test_theoretical_bandwidth_formula():
    assert backend.theoretical_bandwidth(1.215e9, 5120) == pytest.approx(1555.2e9)  # A100 40GB
    with pytest.raises(ValueError, match="bus_width_bits"):
        backend.theoretical_bandwidth(1e9, 0)


def test_cpu_device_info_says_cpu(monkeypatch):
    monkeypatch.setenv(backend.ENV_VAR, "numpy")
    info = backend.get().device_info()
    assert info["kind"] == "cpu" and info["name"].startswith("CPU") and info["cores"] >= 1
    assert "not a GPU" in info["note"]
    assert backend.get().cache_bytes() > 0


def test_announce_prints_one_line(monkeypatch, capsys):
    monkeypatch.setenv(backend.ENV_VAR, "numpy")
    backend.get(refresh=True)  # a fresh decision: announced once more
    backend.announce()
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "numpy" in out and "HWLIB_BACKEND=numpy" in out and "CPU" in out


def test_announce_prints_once_per_process(monkeypatch, capsys):
    """A page's kernel that announces in three cells shows the banner once; a new decision shows it again."""
    monkeypatch.setenv(backend.ENV_VAR, "numpy")
    first = backend.announce(again=True)
    capsys.readouterr()
    assert backend.announce() is first and backend.announce() is first
    assert capsys.readouterr().out == ""
    backend.get(refresh=True)
    backend.announce()
    assert capsys.readouterr().out.count("hwlib backend:") == 1


@pytest.mark.parametrize(
    "reported, expected",
    [
        ("NVIDIA H200", "H200"),
        ("Tesla T4", "T4"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA A100-PCIE-40GB", None),  # a PCIe card must not get the SXM entry's numbers
        ("NVIDIA H100 NVL", None),
        ("Quadro RTX 8000", None),
    ],
)
def test_match_spec(reported, expected):
    got = backend.match_spec(reported)
    assert (got.name if got else None) == expected


def test_from_xp():
    assert backend.from_xp(np).name == "numpy"
    with pytest.raises(ValueError, match="numpy or cupy"):
        backend.from_xp("torch")
