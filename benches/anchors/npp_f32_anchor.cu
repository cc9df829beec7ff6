// NPP's separable f32 filter on the clpix f32 blur workload: 8192x8192 RGBA f32 (1 GiB),
// Gaussian radius w = 2, 8, 25 (taps 2w + 1, sigma w/2), replicate border, row then column
// pass (nppiFilterRowBorder_32f_C4R + nppiFilterColumnBorder_32f_C4R), the image on the device.
// Build: nvcc -O3 -arch=sm_90 npp_f32_anchor.cu -o npp_f32_anchor -lnppif -lnppc
#include <cuda_runtime.h>
#include <npp.h>
#include <nppi_filtering_functions.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#define CHECK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { \
  printf("cuda: %s (line %d)\n", cudaGetErrorString(err_), __LINE__); return 1; } } while (0)

// The stream context NPP's _Ctx calls take, for the default stream of device 0.
static NppStreamContext stream_context() {
  NppStreamContext c = {};
  cudaDeviceProp p;
  cudaGetDevice(&c.nCudaDeviceId);
  cudaGetDeviceProperties(&p, c.nCudaDeviceId);
  c.hStream = 0;
  c.nMultiProcessorCount = p.multiProcessorCount;
  c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  c.nSharedMemPerBlock = p.sharedMemPerBlock;
  c.nCudaDevAttrComputeCapabilityMajor = p.major;
  c.nCudaDevAttrComputeCapabilityMinor = p.minor;
  return c;
}

// Median milliseconds of `reps` timed runs of f, after one untimed run.
template <class F> static float median_of(int reps, F f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  f();
  cudaDeviceSynchronize();
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  const int side = 8192;
  const size_t pitch = (size_t)side * 4 * sizeof(float), bytes = pitch * side;
  float *in, *mid, *out;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&mid, bytes));
  CHECK(cudaMalloc(&out, bytes));
  std::vector<float> host((size_t)side * side * 4);
  unsigned state = 2463534242u;
  for (float &v : host) {
    state ^= state << 13; state ^= state >> 17; state ^= state << 5;
    v = (float)(state % 256u) / 255.0f;
  }
  CHECK(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice));
  NppStreamContext ctx = stream_context();
  NppiSize roi = {side, side};
  NppiPoint origin = {0, 0};
  float copy = median_of(15, [&] { cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice); });
  printf("npp f32 anchor 8192x8192 RGBA f32: device copy %.3f ms (%.0f GB/s)\n", copy,
         2.0 * bytes / copy / 1e6);
  for (int w : {2, 8, 25}) {
    const int taps = 2 * w + 1;
    const double sigma = w / 2.0;
    std::vector<float> weights(taps);
    double total = 0;
    for (int i = 0; i < taps; ++i) {
      double d = (i - w) / sigma;
      weights[i] = (float)std::exp(-0.5 * d * d);
      total += weights[i];
    }
    for (float &v : weights) v = (float)(v / total);
    float *kernel;
    CHECK(cudaMalloc(&kernel, taps * sizeof(float)));
    CHECK(cudaMemcpy(kernel, weights.data(), taps * sizeof(float), cudaMemcpyHostToDevice));
    NppStatus status = NPP_SUCCESS;
    float ms = median_of(15, [&] {
      status = nppiFilterRowBorder_32f_C4R_Ctx(in, (int)pitch, roi, origin, mid, (int)pitch, roi,
                                               kernel, taps, w, NPP_BORDER_REPLICATE, ctx);
      if (status == NPP_SUCCESS)
        status = nppiFilterColumnBorder_32f_C4R_Ctx(mid, (int)pitch, roi, origin, out, (int)pitch,
                                                    roi, kernel, taps, w, NPP_BORDER_REPLICATE, ctx);
    });
    printf("npp f32 blur w=%d: row+column 32f_C4R %.3f ms (status %d)\n", w, ms, (int)status);
    cudaFree(kernel);
  }
  return 0;
}
