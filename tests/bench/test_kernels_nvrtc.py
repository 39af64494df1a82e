"""hwlib's CUDA kernels built by the real NVRTC (nvidia-cuda-nvrtc-cu12 from the package index, cached
by tests/real_stack.py) with exactly the options CuPy's RawKernel passes, to cubin for every
architecture from sm_75 (T4) to sm_120, with no GPU: every build must succeed with an empty compiler
log (no warning), the register counts read back from the cubins must match
hwlib/data/kernel_registers.yaml (which the stand-in's occupancy model reads), and the PTX must keep
the loads in flight the experiments count on."""

import re

import pytest
import yaml

import nvrtc_build as nb
import real_stack


@pytest.fixture(scope="module")
def nvrtc():
    lib = nb.find_nvrtc([real_stack.stack("nvrtc-12.9")])
    assert lib, "the nvidia-cuda-nvrtc-cu12 wheel has no libnvrtc.so"
    return nb.NVRTC(lib)


@pytest.fixture(scope="module")
def builds(nvrtc):
    return list(nb.build_all(nvrtc))


def ptx(nvrtc, fname, define=(), arch="90"):
    opts = tuple(o.replace("-arch=sm_", "-arch=compute_") for o in nb.cupy_options(define, arch))
    text, log = nvrtc.compile((nb.KERNELS / fname).read_text(), fname, opts, ptx=True)
    assert not log, log
    return text


def body(text, entry):
    return text.split(f".entry {entry}(")[1].split(".entry")[0]


def test_nvrtc_is_the_pinned_release(nvrtc):
    assert nvrtc.version == (12, 9)


def test_every_build_compiles_without_a_warning(builds):
    """133 builds: 5 files x their -D values x 7 architectures; any log text is a warning or worse."""
    assert len(builds) == 7 * (1 + 12 + 4 + 1 + 1)
    noisy = [(f, d, a, log) for f, d, a, _, log in builds if log]
    assert not noisy, noisy


def test_every_build_exports_the_kernels_the_experiments_launch(builds):
    for fname, define, arch, regs, _ in builds:
        assert set(regs) == set(nb.BUILDS[fname][0]), (fname, define, arch, sorted(regs))


def test_register_table_matches_a_fresh_build(builds):
    """hwlib/data/kernel_registers.yaml is what NVRTC makes of today's kernels (rerun
    `python tests/nvrtc_build.py` after changing a kernel)."""
    table = yaml.safe_load((nb.ROOT / "hwlib" / "data" / "kernel_registers.yaml").read_text())["registers"]
    for _fname, define, arch, regs, _ in builds:
        for kernel, n in regs.items():
            assert table[kernel][" ".join(define)][arch] == n, (kernel, define, arch, n)


def test_stream_registers_leave_a_full_sm_resident(builds):
    """__launch_bounds__(256, 6) (4 on sm_75): at most 65536 / (6 x 256) = 42 registers, so
    >= 1536 threads per SM (1024 on sm_75, its limit) stay resident; and nothing spills."""
    stream = [(arch, regs) for fname, _define, arch, regs, _ in builds if fname == "stream.cu"]
    assert stream, "no stream.cu build"
    over = [(arch, regs) for arch, regs in stream if max(regs.values()) > (64 if arch == "75" else 42)]
    assert over == []


def test_no_kernel_spills_registers(nvrtc):
    """ptxas --warn-on-spills: a spill would put loads in flight through local memory."""
    for fname, (_, defines) in nb.BUILDS.items():
        for arch in ("75", "80", "90"):
            opts = (*nb.cupy_options(defines[-1], arch), "--ptxas-options=--warn-on-spills")
            _, log = nvrtc.compile((nb.KERNELS / fname).read_text(), fname, opts)
            assert "spill" not in log.lower(), (fname, arch, log)


@pytest.mark.parametrize("arch", ["75", "90"])
def test_stream_kernels_issue_four_loads_per_array_before_a_store(nvrtc, arch):
    """Loads in flight per thread = UNROLL (4) per input array: in the main loop every load comes
    before the first store (without __restrict__ and the batching each load was followed by its store)."""
    text = ptx(nvrtc, "stream.cu", arch=arch)
    inputs = {"copy": 1, "scale": 1, "add": 2, "triad": 2}
    for name, k in inputs.items():
        for t in ("f32", "f64"):
            ops = re.findall(r"\b(ld\.global\S*|st\.global\S*)", body(text, f"stream_{name}_{t}"))
            first_store = next(i for i, op in enumerate(ops) if op.startswith("st."))
            assert ops[:first_store] == ["ld.global.cg." + t] * (4 * k), (name, t, ops)


def test_stream_loads_bypass_l1(nvrtc):
    """__ldcg: every STREAM load is cached at L2 only, so the sweep's small working sets measure L2."""
    text = ptx(nvrtc, "stream.cu")
    loads = re.findall(r"\bld\.global\S*", text)
    assert loads and all(op.startswith("ld.global.cg") for op in loads), set(loads)


@pytest.mark.parametrize("ilp", [1, 2, 4, 8])
def test_occupancy_kernel_has_exactly_ilp_loads(nvrtc, ilp):
    """#pragma unroll 1 on the outer loop: ILP loads in flight, not 4 x ILP (ILP 4 and 8 distinct)."""
    assert len(re.findall(r"\bld\.global", body(ptx(nvrtc, "occupancy.cu", (f"-DILP={ilp}",)), "read_ilp"))) == ilp


def test_coalescing_kernel_keeps_four_loads_in_flight_and_a_full_sm(nvrtc, builds):
    """strided_read: the main loop loads UNROLL (4) floats into four distinct registers, each from an
    address no add feeds (so none waits on another: ptxas hoists them, as for read_ilp), through the
    read-only path (__restrict__ const: ld.global.nc); <= 32 registers on every architecture, so
    2,048 threads (64 warps) fit an SM's 65,536 registers."""
    text = body(ptx(nvrtc, "coalescing.cu"), "strided_read")
    loads = re.findall(r"ld\.global\.nc\.f32\s+(%f\d+),\s*\[(%rd\d+)\]", text)
    assert len(loads) >= 5, loads  # 4 in the main loop, the tail after
    main = loads[:4]
    assert len({dst for dst, _ in main}) == 4 and len({addr for _, addr in main}) == 4, main
    assert not re.search(r"add\.\S*f32\s+%rd", text)  # float adds never produce an address
    assert "ld.global.f32" not in text and "st.global" in text  # the one guarded store
    for fname, _define, arch, regs, _ in builds:
        if fname == "coalescing.cu":
            assert regs["strided_read"] <= 32, (arch, regs)
