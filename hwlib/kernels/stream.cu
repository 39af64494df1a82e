// E1 STREAM kernels (McCalpin's STREAM; BabelStream's CUDA version) with the traversal repeated
// `reps` times inside one launch. A small working set (one that fits in L2) takes microseconds per
// traversal, less than launching a kernel costs on the host; repeating it inside the kernel keeps
// the GPU busy for the whole timed region, so the time measures the memory (L2 or DRAM), not the
// launch. Each rep is a grid-stride loop; every thread touches the same elements in every rep, so
// there is no dependence between blocks. The empty asm with a "memory" clobber is a compiler
// barrier: the reps cannot be merged or hoisted, so each one really reads and writes its arrays.
//   copy  c = a         scale b = s c         add  c = a + b         triad a = b + s c
// Bytes counted per rep as STREAM counts them: 2 arrays (copy, scale) or 3 (add, triad) x n x sizeof(T).
//
// Loads in flight (Little's law: bandwidth = bytes in flight / latency). Each thread issues UNROLL
// independent loads per input array before it stores anything, so UNROLL (copy, scale) or
// 2 x UNROLL (add, triad) loads are outstanding per thread; without that, each load is followed by
// a dependent store the compiler may not move past the next load (the pointers could alias) and
// only 1 or 2 are. __restrict__ promises no aliasing; __launch_bounds__(256, MIN_BLOCKS) caps the
// registers at 65536 / (MIN_BLOCKS x 256) per thread, so at least 1536 threads per SM stay resident
// (1024 on sm_75, its limit; a larger MIN_BLOCKS there is out of range and ptxas warns). 8 blocks
// (32 registers) would make add and triad spill on sm_80; 6 (40 registers) spills nothing.
// Bytes in flight on an H200: 132 SMs x >= 1536 threads x 4 loads x 4 B >= 3.2 MB, above the
// ~2.4 MB that 4.8 TB/s x ~500 ns of latency needs.
// Loads go through __ldcg (cache at L2, not L1): the working-set sweep repeats the same addresses
// every rep, and an L1-cached load would make the sweep's "L2 plateau" mostly an L1 one.
#define UNROLL 4
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define MIN_BLOCKS 4
#else
#define MIN_BLOCKS 6
#endif
#define BOUNDS __launch_bounds__(256, MIN_BLOCKS)

template <typename T>
__device__ __forceinline__ void copy_body(const T* __restrict__ a, T* __restrict__ c, long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; r++) {
        long long i = tid;
        for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
            T x[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) x[u] = __ldcg(a + i + u * stride);
#pragma unroll
            for (int u = 0; u < UNROLL; u++) c[i + u * stride] = x[u];
        }
        for (; i < n; i += stride) c[i] = __ldcg(a + i);
        asm volatile("" ::: "memory");
    }
}

template <typename T>
__device__ __forceinline__ void scale_body(const T* __restrict__ c, T* __restrict__ b, T s, long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; r++) {
        long long i = tid;
        for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
            T x[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) x[u] = __ldcg(c + i + u * stride);
#pragma unroll
            for (int u = 0; u < UNROLL; u++) b[i + u * stride] = s * x[u];
        }
        for (; i < n; i += stride) b[i] = s * __ldcg(c + i);
        asm volatile("" ::: "memory");
    }
}

template <typename T>
__device__ __forceinline__ void add_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                         long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; r++) {
        long long i = tid;
        for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
            T x[UNROLL], y[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                x[u] = __ldcg(a + i + u * stride);
                y[u] = __ldcg(b + i + u * stride);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) c[i + u * stride] = x[u] + y[u];
        }
        for (; i < n; i += stride) c[i] = __ldcg(a + i) + __ldcg(b + i);
        asm volatile("" ::: "memory");
    }
}

template <typename T>
__device__ __forceinline__ void triad_body(const T* __restrict__ b, const T* __restrict__ c, T* __restrict__ a, T s,
                                           long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; r++) {
        long long i = tid;
        for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
            T x[UNROLL], y[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                x[u] = __ldcg(b + i + u * stride);
                y[u] = __ldcg(c + i + u * stride);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) a[i + u * stride] = x[u] + s * y[u];
        }
        for (; i < n; i += stride) a[i] = __ldcg(b + i) + s * __ldcg(c + i);
        asm volatile("" ::: "memory");
    }
}

extern "C" __global__ void BOUNDS stream_copy_f32(const float* __restrict__ a, float* __restrict__ c, long long n, int reps) { copy_body<float>(a, c, n, reps); }
extern "C" __global__ void BOUNDS stream_scale_f32(const float* __restrict__ c, float* __restrict__ b, float s, long long n, int reps) { scale_body<float>(c, b, s, n, reps); }
extern "C" __global__ void BOUNDS stream_add_f32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, long long n, int reps) { add_body<float>(a, b, c, n, reps); }
extern "C" __global__ void BOUNDS stream_triad_f32(const float* __restrict__ b, const float* __restrict__ c, float* __restrict__ a, float s, long long n, int reps) { triad_body<float>(b, c, a, s, n, reps); }
extern "C" __global__ void BOUNDS stream_copy_f64(const double* __restrict__ a, double* __restrict__ c, long long n, int reps) { copy_body<double>(a, c, n, reps); }
extern "C" __global__ void BOUNDS stream_scale_f64(const double* __restrict__ c, double* __restrict__ b, double s, long long n, int reps) { scale_body<double>(c, b, s, n, reps); }
extern "C" __global__ void BOUNDS stream_add_f64(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, long long n, int reps) { add_body<double>(a, b, c, n, reps); }
extern "C" __global__ void BOUNDS stream_triad_f64(const double* __restrict__ b, const double* __restrict__ c, double* __restrict__ a, double s, long long n, int reps) { triad_body<double>(b, c, a, s, n, reps); }
