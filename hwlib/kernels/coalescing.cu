// E11 memory coalescing. Thread k of the grid reads x[k * stride + offset] for k < n (grid-stride,
// UNROLL independent loads in flight per thread), so the 32 lanes of a warp ask for 32 floats
// `stride` floats apart: stride 1 -> 4 sectors of 32 B per warp (every byte used); stride s ->
// min(32, 4 s) sectors; stride >= 8 -> one sector per lane, 1/8 of each used. `offset` (in floats)
// shifts the start off a 32-byte boundary. The host passes n = (elements of x - offset) / stride, so
// the footprint stays the same and the bytes moved follow the sectors. The running sums are stored
// only under a condition that is practically never true, so nothing but the reads costs time.
#ifndef UNROLL
#define UNROLL 4
#endif

extern "C" __global__ void strided_read(const float* __restrict__ x, float* __restrict__ out, long long n,
                                        int stride, int offset) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;
    long long k = tid;
#pragma unroll 1
    for (; k + (UNROLL - 1) * threads < n; k += UNROLL * threads) {
        float v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = x[(k + u * threads) * stride + offset];  // UNROLL loads in flight
#pragma unroll
        for (int u = 0; u < UNROLL; u++) acc[u] += v[u];
    }
    for (; k < n; k += threads) acc[0] += x[k * stride + offset];
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) s += acc[u];
    if (s == -1.25e-30f) out[tid] = s;
}
