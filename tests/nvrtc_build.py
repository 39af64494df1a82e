"""Compile hwlib's CUDA kernels with the real NVRTC (from the PyPI wheel nvidia-cuda-nvrtc-cu12) to
cubin for a real architecture, exactly as CuPy's RawKernel does, and read back each kernel's register
count from the cubin. No GPU and no driver needed: NVRTC is a library that only compiles.

Options, as CuPy 14 passes them (cupy/cuda/compiler.py, _compile_with_cache_cuda and
_compile_using_nvrtc_no_warning; cupy/_core/core.pyx, compile_with_cache): the kernel's own options
(-DITERS=k, -DILP=k), then -I<cupy's include dir> and --std=c++17, -ftz=true, -arch=sm_XX (CuPy asks
for cubin when NVRTC knows the architecture) and --device-as-default-execution-space.

Register count: the cubin is an ELF file whose ".nv.info" section holds attribute records (format
u8, attribute u8, then a u16 size and a payload for format 0x04, EIFMT_SVAL); attribute 0x2f
(EIATTR_REGCOUNT) carries (kernel's index in .symtab u32, registers u32). This is what cuobjdump
--dump-resource-usage prints.

`python tests/nvrtc_build.py` rewrites hwlib/data/kernel_registers.yaml from these builds.
"""

from __future__ import annotations

import ctypes
import glob
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "hwlib" / "kernels"
ARCHS = ("75", "80", "86", "89", "90", "100", "120")
# (file, entry points, the -D option sets the experiments compile): E3 k = 0 ... 1024, E6 ILP 1/2/4/8
E3_ITERS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
BUILDS = {
    "stream.cu": ([f"stream_{k}_{t}" for t in ("f32", "f64") for k in ("copy", "scale", "add", "triad")], [()]),
    "roofline.cu": (["fma_sweep_f32", "fma_sweep_f64"], [(f"-DITERS={k}",) for k in E3_ITERS]),
    "occupancy.cu": (["read_ilp"], [(f"-DILP={k}",) for k in (1, 2, 4, 8)]),
    "divergence.cu": (["branchy", "branchy32"], [()]),
    "coalescing.cu": (["strided_read"], [()]),
}
EIATTR_REGCOUNT = 0x2F
EIFMT_SVAL = 0x04


def find_nvrtc(paths=None) -> str | None:
    """Path of libnvrtc.so.12 from the nvidia-cuda-nvrtc-cu12 wheel in `paths` (default sys.path), or None."""
    for base in map(str, paths or sys.path):
        hits = sorted(glob.glob(os.path.join(base, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.*")))
        hits = [h for h in hits if "alt" not in os.path.basename(h) and "builtins" not in h]
        if hits:
            return hits[0]
    return None


def cupy_include_options() -> tuple:
    """-I for CuPy's header folder where CuPy is importable (it is not imported: only located)."""
    import importlib.util

    spec = importlib.util.find_spec("cupy")
    if spec is None or not spec.origin:
        return ()
    inc = Path(spec.origin).parent / "_core" / "include"
    return (f"-I{inc}",) if inc.is_dir() else ()


def cupy_options(define: tuple, arch: str) -> tuple:
    """The option list CuPy 14's RawKernel hands NVRTC for `define` on sm_`arch`."""
    return (*define, *cupy_include_options(), "--std=c++17", "-ftz=true", f"-arch=sm_{arch}",
            "--device-as-default-execution-space")  # fmt: skip


class NVRTC:
    """The few NVRTC calls a build needs, through ctypes."""

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._ok(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        self.version = (major.value, minor.value)

    def _ok(self, status: int, what: str, log: str = ""):
        if status != 0:
            self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p
            raise RuntimeError(f"{what}: {self.lib.nvrtcGetErrorString(status).decode()}\n{log}")

    def compile(self, source: str, name: str, options: tuple, ptx: bool = False) -> tuple:
        """(cubin bytes - or PTX text with ptx=True -, compiler log) of `source` built with `options`;
        raises with the log on an error."""
        prog = ctypes.c_void_p()
        self._ok(
            self.lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            status = self.lib.nvrtcCompileProgram(prog, len(options), opts)
            size = ctypes.c_size_t()
            self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            buf = ctypes.create_string_buffer(size.value)
            self.lib.nvrtcGetProgramLog(prog, buf)
            log = buf.value.decode(errors="replace").strip()
            self._ok(status, f"nvrtcCompileProgram({name}, {' '.join(options)})", log)
            if ptx:
                self._ok(self.lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
                text = ctypes.create_string_buffer(size.value)
                self._ok(self.lib.nvrtcGetPTX(prog, text), "nvrtcGetPTX")
                return text.value.decode(), log
            self._ok(self.lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
            cubin = ctypes.create_string_buffer(size.value)
            self._ok(self.lib.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
            return cubin.raw, log
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _sections(elf: bytes) -> dict:
    """{section name: bytes} of a 64-bit little-endian ELF file."""
    assert elf[:4] == b"\x7fELF" and elf[4] == 2, "not a 64-bit ELF cubin"
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    names = elf[strtab[4] : strtab[4] + strtab[5]]
    out = {}
    for h in heads:
        name = names[h[0] : names.index(b"\0", h[0])].decode()
        out[name] = elf[h[4] : h[4] + h[5]]
    return out


def _symbols(sections: dict) -> list:
    """Symbol names of the ELF's .symtab, by index."""
    tab, strs = sections.get(".symtab", b""), sections.get(".strtab", b"")
    names = []
    for pos in range(0, len(tab) - 23, 24):  # Elf64_Sym: name u32, info u8, other u8, shndx u16, value, size
        off = struct.unpack_from("<I", tab, pos)[0]
        names.append(strs[off : strs.index(b"\0", off)].decode())
    return names


def register_counts(cubin: bytes) -> dict:
    """{kernel name: registers per thread} from the cubin's .nv.info attribute records."""
    sections = _sections(cubin)
    symbols = _symbols(sections)
    out = {}
    for name, data in sections.items():
        if not (name == ".nv.info" or name.startswith(".nv.info.")):
            continue
        pos = 0
        while pos + 4 <= len(data):
            fmt, attr, size = struct.unpack_from("<BBH", data, pos)
            if fmt != EIFMT_SVAL:  # EIFMT_NVAL / BVAL / HVAL: the 2 bytes after the attribute are the value
                pos += 4
                continue
            if attr == EIATTR_REGCOUNT:
                sym, regs = struct.unpack_from("<II", data, pos + 4)
                out[symbols[sym]] = regs
            pos += 4 + size
    return out


def build_all(nvrtc: NVRTC, archs=ARCHS):
    """Yield (file, define, arch, {kernel: registers}, log) for every build the experiments make."""
    for fname, (_names, defines) in BUILDS.items():
        source = (KERNELS / fname).read_text()
        for define in defines:
            for arch in archs:
                cubin, log = nvrtc.compile(source, fname, cupy_options(define, arch))
                yield fname, define, arch, register_counts(cubin), log


def table(nvrtc: NVRTC) -> dict:
    """{kernel: {define or "": {arch: registers}}} over every build."""
    out: dict = {}
    for _fname, define, arch, regs, _log in build_all(nvrtc):
        for kernel, n in regs.items():
            out.setdefault(kernel, {}).setdefault(" ".join(define), {})[arch] = n
    return out


def write_yaml(path: Path, nvrtc: NVRTC) -> None:
    regs = table(nvrtc)
    lines = [
        "# Registers per thread of hwlib's CUDA kernels (hwlib/kernels/*.cu), per architecture, as NVRTC",
        f"# {nvrtc.version[0]}.{nvrtc.version[1]} (the nvidia-cuda-nvrtc-cu12 wheel) compiles them with CuPy's",
        "# RawKernel options, read from each cubin's EIATTR_REGCOUNT attribute (what cuobjdump",
        "# --dump-resource-usage prints). Written by tests/nvrtc_build.py; tests/bench/test_kernels_nvrtc.py checks",
        "# that it matches a fresh build. Keys: kernel -> compile-time option ('' for none) -> sm_XX -> registers.",
        f"nvrtc: '{nvrtc.version[0]}.{nvrtc.version[1]}'",
        "registers:",
    ]
    for kernel in sorted(regs):
        lines.append(f"  {kernel}:")
        for define in sorted(regs[kernel], key=lambda d: (len(d), d)):
            row = ", ".join(f"'{a}': {n}" for a, n in sorted(regs[kernel][define].items(), key=lambda x: int(x[0])))
            lines.append(f"    '{define}': {{{row}}}")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    import real_stack

    lib = find_nvrtc([real_stack.stack("nvrtc-12.9")])
    write_yaml(ROOT / "hwlib" / "data" / "kernel_registers.yaml", NVRTC(lib))
