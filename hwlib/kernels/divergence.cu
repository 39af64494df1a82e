// E5 warp divergence. Every thread does the same amount of arithmetic (`iters` dependent FMAs),
// but which of two code paths it takes depends on sel[i]. Threads of one warp (32 lanes) that
// disagree make the warp run both paths one after the other with the other lanes masked off.
//   sel patterns chosen by the host: all 0, warp-uniform ((i / 32) % 2), lane-alternating (i % 2), random.
// The two paths use different constants so the compiler cannot merge them into one.
extern "C" __global__ void branchy(const float* __restrict__ x, const int* __restrict__ sel,
                                   float* __restrict__ y, long long n, int iters) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if (sel[i]) {
        for (int k = 0; k < iters; k++) v = fmaf(v, 1.000001f, 0.5f);
    } else {
        for (int k = 0; k < iters; k++) v = fmaf(v, 0.999999f, -0.5f);
    }
    y[i] = v;
}

// 32-way variant: lane l of a warp takes case (l % 32), so a full warp serialises up to 32 paths.
extern "C" __global__ void branchy32(const float* __restrict__ x, float* __restrict__ y,
                                     long long n, int iters, int ways) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    const int path = (int)(i % 32) % ways;
    const float scale = 1.0f + 1e-6f * (float)(path + 1);  // a different constant per path
    for (int p = 0; p < 32; p++) {
        if (p == path) {
            for (int k = 0; k < iters; k++) v = fmaf(v, scale, 0.25f);
        }
    }
    y[i] = v;
}
