// E1 STREAM kernels (McCalpin's STREAM; BabelStream's CUDA version) with the traversal repeated
// `reps` times inside one launch. A small working set (one that fits in L2) takes microseconds per
// traversal, less than launching a kernel costs on the host; repeating it inside the kernel keeps
// the GPU busy for the whole timed region, so the time measures the memory (L2 or DRAM), not the
// launch. Each rep is a grid-stride loop; every thread touches the same elements in every rep, so
// there is no dependence between blocks. The empty asm with a "memory" clobber is a compiler
// barrier: the reps cannot be merged or hoisted, so each one really reads and writes its arrays.
//   copy  c = a         scale b = s c         add  c = a + b         triad a = b + s c
// Bytes counted per rep as STREAM counts them: 2 arrays (copy, scale) or 3 (add, triad) x n x sizeof(T).
template <typename T>
__device__ __forceinline__ void copy_body(const T* a, T* c, long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; r++) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i];
        asm volatile("" ::: "memory");
    }
}

template <typename T>
__device__ __forceinline__ void scale_body(const T* c, T* b, T s, long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; r++) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) b[i] = s * c[i];
        asm volatile("" ::: "memory");
    }
}

template <typename T>
__device__ __forceinline__ void add_body(const T* a, const T* b, T* c, long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; r++) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
        asm volatile("" ::: "memory");
    }
}

template <typename T>
__device__ __forceinline__ void triad_body(const T* b, const T* c, T* a, T s, long long n, int reps) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; r++) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) a[i] = b[i] + s * c[i];
        asm volatile("" ::: "memory");
    }
}

extern "C" __global__ void stream_copy_f32(const float* a, float* c, long long n, int reps) { copy_body<float>(a, c, n, reps); }
extern "C" __global__ void stream_scale_f32(const float* c, float* b, float s, long long n, int reps) { scale_body<float>(c, b, s, n, reps); }
extern "C" __global__ void stream_add_f32(const float* a, const float* b, float* c, long long n, int reps) { add_body<float>(a, b, c, n, reps); }
extern "C" __global__ void stream_triad_f32(const float* b, const float* c, float* a, float s, long long n, int reps) { triad_body<float>(b, c, a, s, n, reps); }
extern "C" __global__ void stream_copy_f64(const double* a, double* c, long long n, int reps) { copy_body<double>(a, c, n, reps); }
extern "C" __global__ void stream_scale_f64(const double* c, double* b, double s, long long n, int reps) { scale_body<double>(c, b, s, n, reps); }
extern "C" __global__ void stream_add_f64(const double* a, const double* b, double* c, long long n, int reps) { add_body<double>(a, b, c, n, reps); }
extern "C" __global__ void stream_triad_f64(const double* b, const double* c, double* a, double s, long long n, int reps) { triad_body<double>(b, c, a, s, n, reps); }
