// E3 empirical roofline (after mixbench and the LBNL Empirical Roofline Toolkit).
// Each thread reads CHAINS elements per step (independent FMA chains give instruction-level
// parallelism), applies ITERS dependent fused multiply-adds to each, and folds them into a running
// sum that is stored only under a condition that is practically never true, so the compiler must
// keep the work but the kernel writes (almost) nothing.
//   FLOPs = (2 ITERS + 1) per element (one FMA = 2 FLOPs, +1 for the running sum)
//   bytes = itemsize per element (read once)
// ITERS is a compile-time constant: hwlib compiles one kernel per value with -DITERS=k.
#ifndef ITERS
#define ITERS 1
#endif
#define CHAINS 4

__device__ __forceinline__ float fma_t(float v, float a, float b) { return fmaf(v, a, b); }
__device__ __forceinline__ double fma_t(double v, double a, double b) { return fma(v, a, b); }

template <typename T>
__device__ __forceinline__ void fma_sweep_body(const T* __restrict__ x, T* __restrict__ out,
                                               long long n, T a, T b) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    T acc = T(0);
    for (long long base = tid; base < n; base += stride * CHAINS) {
        T v[CHAINS];
#pragma unroll
        for (int c = 0; c < CHAINS; c++) {
            const long long i = base + c * stride;  // coalesced: neighbouring threads, neighbouring i
            v[c] = i < n ? x[i] : T(0);
        }
#pragma unroll 16
        for (int k = 0; k < ITERS; k++) {
#pragma unroll
            for (int c = 0; c < CHAINS; c++) v[c] = fma_t(v[c], a, b);
        }
#pragma unroll
        for (int c = 0; c < CHAINS; c++) acc += v[c];
    }
    if (acc == T(-1.25e-30)) out[tid] = acc;  // keeps the result live; never true for a, b in (0, 1)
}

extern "C" __global__ void fma_sweep_f32(const float* x, float* out, long long n, float a, float b) {
    fma_sweep_body<float>(x, out, n, a, b);
}

extern "C" __global__ void fma_sweep_f64(const double* x, double* out, long long n, double a, double b) {
    fma_sweep_body<double>(x, out, n, a, b);
}
