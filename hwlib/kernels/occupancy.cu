// E6 Little's law: bandwidth = bytes in flight / latency. A grid-stride read kernel whose total
// thread count (grid x block) and loads per thread per step (ILP, a compile-time constant set with
// -DILP=k) the host varies. Bytes in flight ~ threads x ILP x sizeof(float). The running sum is
// stored only under a condition that is practically never true, so nothing but the reads costs time.
// Elements read per launch: floor(n / (ILP x threads)) x ILP x threads (the host counts exactly this).
#ifndef ILP
#define ILP 1
#endif

extern "C" __global__ void read_ilp(const float* __restrict__ x, float* __restrict__ out, long long n) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long steps = n / (threads * ILP);
    float acc = 0.0f;
    // One step at a time, so exactly ILP loads are in flight: left to itself the compiler unrolls this loop
    // too (4/8/16/16 loads in flight for ILP 1/2/4/8 in sm_90 SASS), and ILP 4 and 8 would coincide.
#pragma unroll 1
    for (long long s = 0; s < steps; s++) {
        const long long base = s * threads * ILP + tid;
        float v[ILP];
#pragma unroll
        for (int k = 0; k < ILP; k++) v[k] = x[base + k * threads];  // ILP independent loads in flight
#pragma unroll
        for (int k = 0; k < ILP; k++) acc += v[k];
    }
    if (acc == -1.25e-30f) out[tid] = acc;
}
