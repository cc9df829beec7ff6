// The peers on issue 53's formats, 8192x8192, the image on the device, kernel time (median of
// 15 runs after one): NPP's MaxIndx, HistogramEven and separable row + column filters (32-bit
// float weights, replicate border) for 8u_C1R, 16u_C1R, 32f_C1R and 8u_C3R, and CUB's reduce-sum
// (the read roofline: the same bytes read as 32-bit words), ArgMax, HistogramEven and Select::If
// on the same bytes. Prints one line per call with its status (NPP) and GB/s of bytes read.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 formats_anchor.cu -o formats_anchor -lnppist -lnppif -lnppc
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include <npp.h>
#include <nppi_filtering_functions.h>
#include <nppi_statistics_functions.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("cuda: %s (line %d)\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

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

template <class F> static float median_ms(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();
  CK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < 15; ++r) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

static void line(const char* what, float ms, double bytes, int status) {
  printf("%-44s %8.3f ms %7.1f GB/s read  status %d\n", what, ms, bytes / ms / 1e6, status);
}

struct Above { unsigned short t; __host__ __device__ bool operator()(unsigned short v) const { return v > t; } };

int main() {
  const int W = 8192, H = 8192;
  const size_t N = (size_t)W * H;
  NppStreamContext ctx = stream_context();
  NppiSize roi = {W, H};
  NppiPoint origin = {0, 0};
  // One buffer large enough for every format (RGB8 is 3 bytes a pixel, f32 4), filled with
  // random 32-bit words; the f32 image gets values in [0, 1).
  const size_t max_bytes = N * 4;
  std::vector<uint32_t> host(max_bytes / 4);
  uint64_t s = 88172645463325252ull;
  for (auto& v : host) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; v = (uint32_t)s; }
  void *src, *mid, *dst, *scratch;
  CK(cudaMalloc(&src, max_bytes));
  CK(cudaMalloc(&mid, max_bytes));
  CK(cudaMalloc(&dst, max_bytes));
  CK(cudaMemcpy(src, host.data(), max_bytes, cudaMemcpyHostToDevice));
  std::vector<float> f32(N);
  for (size_t i = 0; i < N; ++i) f32[i] = (float)(host[i] >> 8) / 16777216.0f;
  float* src_f32;
  CK(cudaMalloc(&src_f32, N * 4));
  CK(cudaMemcpy(src_f32, f32.data(), N * 4, cudaMemcpyHostToDevice));
  size_t scratch_bytes = 256u << 20;
  CK(cudaMalloc(&scratch, scratch_bytes));
  void* out_small;
  CK(cudaMalloc(&out_small, 1 << 20));
  int* hist;
  CK(cudaMalloc(&hist, 65537 * sizeof(int)));
  int *ix, *iy;
  CK(cudaMalloc(&ix, 64));
  CK(cudaMalloc(&iy, 64));
  float copy = median_ms([&] { cudaMemcpyAsync(dst, src, N * 2, cudaMemcpyDeviceToDevice); });
  printf("formats anchor %dx%d: device copy of 128 MiB %.3f ms (%.0f GB/s read+write)\n", W, H, copy,
         2.0 * N * 2 / copy / 1e6);

  // The read roofline: CUB's sum of the same bytes as 32-bit words, per format's size.
  struct Fmt { const char* name; size_t bytes_per_pixel; };
  for (Fmt f : {Fmt{"8u_C1", 1}, Fmt{"16u_C1", 2}, Fmt{"32f_C1", 4}, Fmt{"8u_C3", 3}}) {
    size_t words = N * f.bytes_per_pixel / 4, need = 0;
    cub::DeviceReduce::Sum(nullptr, need, (const uint32_t*)src, (unsigned long long*)out_small, words);
    float ms = median_ms([&] {
      size_t n = scratch_bytes;
      cub::DeviceReduce::Sum(scratch, n, (const uint32_t*)src, (unsigned long long*)out_small, words);
    });
    char what[64];
    snprintf(what, sizeof what, "cub reduce-sum, the bytes of %s", f.name);
    line(what, ms, (double)N * f.bytes_per_pixel, 0);
  }

  // NPP MaxIndx of each type.
  {
    size_t need = 0;
    NppStatus st = nppiMaxIndxGetBufferHostSize_8u_C1R_Ctx(roi, &need, ctx);
    float ms = median_ms([&] {
      st = nppiMaxIndx_8u_C1R_Ctx((const Npp8u*)src, W, roi, (Npp8u*)scratch, (Npp8u*)out_small, ix, iy, ctx);
    });
    line("npp MaxIndx 8u_C1R", ms, (double)N, st);
    st = nppiMaxIndxGetBufferHostSize_16u_C1R_Ctx(roi, &need, ctx);
    ms = median_ms([&] {
      st = nppiMaxIndx_16u_C1R_Ctx((const Npp16u*)src, W * 2, roi, (Npp8u*)scratch, (Npp16u*)out_small, ix, iy, ctx);
    });
    line("npp MaxIndx 16u_C1R", ms, (double)N * 2, st);
    st = nppiMaxIndxGetBufferHostSize_32f_C1R_Ctx(roi, &need, ctx);
    ms = median_ms([&] {
      st = nppiMaxIndx_32f_C1R_Ctx(src_f32, W * 4, roi, (Npp8u*)scratch, (Npp32f*)out_small, ix, iy, ctx);
    });
    line("npp MaxIndx 32f_C1R", ms, (double)N * 4, st);
    st = nppiMaxIndxGetBufferHostSize_8u_C3R_Ctx(roi, &need, ctx);
    ms = median_ms([&] {
      st = nppiMaxIndx_8u_C3R_Ctx((const Npp8u*)src, W * 3, roi, (Npp8u*)scratch, (Npp8u*)out_small, ix, iy, ctx);
    });
    line("npp MaxIndx 8u_C3R (per channel)", ms, (double)N * 3, st);
    (void)need;
  }

  // CUB ArgMax of each mono type.
  {
    size_t need = 0;
    cub::DeviceReduce::ArgMax(nullptr, need, (const uint8_t*)src, (uint8_t*)out_small, (int*)ix, (int)N);
    float ms = median_ms([&] {
      size_t n = scratch_bytes;
      cub::DeviceReduce::ArgMax(scratch, n, (const uint8_t*)src, (uint8_t*)out_small, (int*)ix, (int)N);
    });
    line("cub ArgMax u8", ms, (double)N, 0);
    ms = median_ms([&] {
      size_t n = scratch_bytes;
      cub::DeviceReduce::ArgMax(scratch, n, (const uint16_t*)src, (uint16_t*)out_small, (int*)ix, (int)N);
    });
    line("cub ArgMax u16", ms, (double)N * 2, 0);
    ms = median_ms([&] {
      size_t n = scratch_bytes;
      cub::DeviceReduce::ArgMax(scratch, n, (const float*)src_f32, (float*)out_small, (int*)ix, (int)N);
    });
    line("cub ArgMax f32", ms, (double)N * 4, 0);
  }

  // Histograms of a mono16 image: 256, 4,096 and 65,536 bins over 0..65535, random and constant.
  for (int constant = 0; constant < 2; ++constant) {
    if (constant) CK(cudaMemset(mid, 0x5a, N * 2));
    const Npp16u* img = (const Npp16u*)(constant ? mid : src);
    for (int bins : {256, 4096, 65536}) {
      size_t need = 0;
      NppStatus st = nppiHistogramEvenGetBufferSize_16u_C1R_Ctx(roi, bins + 1, &need, ctx);
      float ms = -1;
      if (st == NPP_SUCCESS && need <= scratch_bytes) {
        ms = median_ms([&] {
          st = nppiHistogramEven_16u_C1R_Ctx(img, W * 2, roi, hist, bins + 1, 0, 65536, (Npp8u*)scratch, ctx);
        });
      }
      char what[64];
      snprintf(what, sizeof what, "npp HistogramEven 16u_C1R %d bins %s", bins, constant ? "const" : "random");
      if (ms < 0)
        printf("%-44s not run: status %d, scratch of %zu bytes asked\n", what, (int)st, need);
      else
        line(what, ms, (double)N * 2, st);
      ms = median_ms([&] {
        size_t n = scratch_bytes;
        cub::DeviceHistogram::HistogramEven(scratch, n, (const unsigned short*)img, hist, bins + 1, 0, 65536, (int)N);
      });
      snprintf(what, sizeof what, "cub HistogramEven u16 %d bins %s", bins, constant ? "const" : "random");
      line(what, ms, (double)N * 2, 0);
    }
  }

  // CUB Select::If of the mono16 pixels above a threshold (about 1% kept).
  {
    float ms = median_ms([&] {
      size_t n = scratch_bytes;
      cub::DeviceSelect::If(scratch, n, (const unsigned short*)src, (unsigned short*)dst, (int*)out_small, (int)N,
                            Above{64880});
    });
    int kept = 0;
    CK(cudaMemcpy(&kept, out_small, 4, cudaMemcpyDeviceToHost));
    printf("%-44s %8.3f ms %7.1f GB/s read  kept %d\n", "cub Select::If u16 > 64880", ms, (double)N * 2 / ms / 1e6,
           kept);
  }

  // Separable filters, w = 2, 8, 25 (taps 2w + 1, sigma w / 2), replicate border.
  for (int w : {2, 8, 25}) {
    const int taps = 2 * w + 1;
    std::vector<float> k(taps);
    double total = 0;
    for (int i = 0; i < taps; ++i) { double d = (i - w) / (w / 2.0); k[i] = (float)std::exp(-0.5 * d * d); total += k[i]; }
    for (float& v : k) v = (float)(v / total);
    float* kern;
    CK(cudaMalloc(&kern, taps * sizeof(float)));
    CK(cudaMemcpy(kern, k.data(), taps * sizeof(float), cudaMemcpyHostToDevice));
    NppStatus st = NPP_SUCCESS;
    float ms = median_ms([&] {
      st = nppiFilterRowBorder32f_8u_C1R_Ctx((const Npp8u*)src, W, roi, origin, (Npp8u*)mid, W, roi, kern, taps, w,
                                             NPP_BORDER_REPLICATE, ctx);
      if (st == NPP_SUCCESS)
        st = nppiFilterColumnBorder32f_8u_C1R_Ctx((const Npp8u*)mid, W, roi, origin, (Npp8u*)dst, W, roi, kern, taps, w,
                                                  NPP_BORDER_REPLICATE, ctx);
    });
    char what[64];
    snprintf(what, sizeof what, "npp row+column 32f weights 8u_C1R w=%d", w);
    line(what, ms, (double)N, st);
    ms = median_ms([&] {
      st = nppiFilterRowBorder32f_16u_C1R_Ctx((const Npp16u*)src, W * 2, roi, origin, (Npp16u*)mid, W * 2, roi, kern,
                                              taps, w, NPP_BORDER_REPLICATE, ctx);
      if (st == NPP_SUCCESS)
        st = nppiFilterColumnBorder32f_16u_C1R_Ctx((const Npp16u*)mid, W * 2, roi, origin, (Npp16u*)dst, W * 2, roi,
                                                   kern, taps, w, NPP_BORDER_REPLICATE, ctx);
    });
    snprintf(what, sizeof what, "npp row+column 32f weights 16u_C1R w=%d", w);
    line(what, ms, (double)N * 2, st);
    ms = median_ms([&] {
      st = nppiFilterRowBorder_32f_C1R_Ctx(src_f32, W * 4, roi, origin, (Npp32f*)mid, W * 4, roi, kern, taps, w,
                                           NPP_BORDER_REPLICATE, ctx);
      if (st == NPP_SUCCESS)
        st = nppiFilterColumnBorder_32f_C1R_Ctx((const Npp32f*)mid, W * 4, roi, origin, (Npp32f*)dst, W * 4, roi, kern,
                                                taps, w, NPP_BORDER_REPLICATE, ctx);
    });
    snprintf(what, sizeof what, "npp row+column 32f_C1R w=%d", w);
    line(what, ms, (double)N * 4, st);
    ms = median_ms([&] {
      st = nppiFilterRowBorder32f_8u_C3R_Ctx((const Npp8u*)src, W * 3, roi, origin, (Npp8u*)mid, W * 3, roi, kern, taps,
                                             w, NPP_BORDER_REPLICATE, ctx);
      if (st == NPP_SUCCESS)
        st = nppiFilterColumnBorder32f_8u_C3R_Ctx((const Npp8u*)mid, W * 3, roi, origin, (Npp8u*)dst, W * 3, roi, kern,
                                                  taps, w, NPP_BORDER_REPLICATE, ctx);
    });
    snprintf(what, sizeof what, "npp row+column 32f weights 8u_C3R w=%d", w);
    line(what, ms, (double)N * 3, st);
    cudaFree(kern);
  }
  return 0;
}
