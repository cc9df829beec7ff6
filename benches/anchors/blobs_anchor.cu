// NPP's connected components on issue 54's blob images, the peer of clpix's GPU `blobs`:
// nppiLabelMarkersUF_8u32u_C1R_Ctx (8-connected: nppiNormInf; `--four`: nppiNormL1), then
// nppiCompressMarkerLabelsUF_32u_C1IR_Ctx, then nppiCompressedMarkerLabelsUFInfo_32u_C1R_Ctx (per
// region: pixel count and bounding box). Each image is made on the host, thresholded there into an
// 8u mask (255 where the key is strictly above the threshold, else 0) and uploaded; the threshold
// pass is not timed (one read and one write of the mask: ~0.03 ms at 8192² on an H200). Kernel time
// by cudaEvents, the median of 10 runs after one untimed run, each step and the three together.
// Info is called with the fewest optional outputs NPP 13.0.1 accepts: the per-region contour
// pixel counts (device and host lists). Every optional output NULL, as the header's notes allow,
// fails there with status -1000; the direction image also needs the contour image, the totals and
// the offsets lists (else status -8). `--contours` passes all of them (contour image, direction
// image, totals, counts and offsets lists), each sized as the header and NVIDIA's sample size them.
//
// Build: nvcc -O3 -arch=sm_90 -std=c++17 blobs_anchor.cu -o blobs_anchor -lnppif -lnppc
//   (the LabelMarkersUF, CompressMarkerLabelsUF and CompressedMarkerLabelsUFInfo functions are
//   declared in nppi_filtering_functions.h, which says "These functions can be found in the nppif
//   library"; nppGetLibVersion is in nppc.)
// Run:   ./blobs_anchor [side, default 8192] [--four] [--contours]
//
// Signatures, each checked against CUDA 13's include/nppi_filtering_functions.h (the copy in
// github.com/leomaxwell972/CU13ToolKit_Includes) and the NPP reference pages
// docs.nvidia.com/cuda/archive/12.1.1/npp/group__image__filter__compresssed__marker__labels__info.html
// and .../11.4.1/npp/group__image__filter__label__markers.html; the call sequence as in
// NVIDIA/CUDALibrarySamples NPP/findContour/findContour.cpp:
//   NppStatus nppiLabelMarkersUFGetBufferSize_32u_C1R(NppiSize oSizeROI, int *hpBufferSize);
//   NppStatus nppiLabelMarkersUF_8u32u_C1R_Ctx(Npp8u *pSrc, int nSrcStep, Npp32u *pDst, int nDstStep,
//       NppiSize oSizeROI, NppiNorm eNorm, Npp8u *pBuffer, NppStreamContext);
//   NppStatus nppiCompressMarkerLabelsGetBufferSize_32u_C1R(int nStartingNumber, int *hpBufferSize);
//   NppStatus nppiCompressMarkerLabelsUF_32u_C1IR_Ctx(Npp32u *pSrcDst, int nSrcDstStep, NppiSize,
//       int nStartingNumber /* MUST be width * height */, int *pNewNumber /* host */, Npp8u *pBuffer,
//       NppStreamContext);
//   NppStatus nppiCompressedMarkerLabelsUFGetInfoListSize_32u_C1R(unsigned int nMaxMarkerLabelID,
//       unsigned int *hpBufferSize /* bytes */);
//   NppStatus nppiCompressedMarkerLabelsUFInfo_32u_C1R_Ctx(Npp32u *pCompressedMarkerLabels,
//       Npp32s step, NppiSize, unsigned int nMaxMarkerLabelID, NppiCompressedMarkerLabelsInfo *pList,
//       Npp8u *pContoursImage, Npp32s, NppiContourPixelDirectionInfo *pContoursDirectionImage, Npp32s,
//       NppiContourTotalsInfo *pTotalsHost, Npp32u *pCountsDev, Npp32u *pCountsHost,
//       Npp32u *pStartingOffsetDev, Npp32u *pStartingOffsetHost, NppStreamContext);
// The label images must come from cudaMalloc with step = width * 4 (the header's notes).
//
// NPP labels every region of equal value, the background's too: "regions" below counts both.
// After the timing the labels are checked against a host union-find of the mask (distinct labels
// under foreground pixels, after LabelMarkersUF and after the compression; any label spanning two
// true blobs). NPP 13.0.1 on an H200 SPLITS blobs, never merges them, differently run to run: at
// 8192², 8-connected, the spiral's 1 blob got 1983-1991 labels, noise's 220837 blobs 298772-298920,
// spots' 2342 blobs 2355-2357 (4-connected likewise; a zeroed scratch buffer or a non-default
// stream changed nothing). NVIDIA/cuda-samples#355 (CUDA 12.0, nppiNormL1) reports the same. The
// times are of that output.
//
// The images (python/bench/blobs_vs_opencv.py makes the same bytes; `checksum` is
// Σ (i + 1) · pixel[i] mod 2^64 over the row-major bytes, to compare the two):
//   rnd(seed, i) = splitmix64 output i: z = seed + (i + 1) · 0x9E3779B97F4A7C15, then
//   z = (z ^ z >> 30) · 0xBF58476D1CE4E5B9, z = (z ^ z >> 27) · 0x94D049BB133111EB, z ^ z >> 31;
//   below(seed, i, n) = (rnd(seed, i) >> 32) mod n.
//   spots  (threshold 100): pixel i = below(1, i, 41); then for spot k = 0..1999 in order:
//          cx = below(2, 4k, side), cy = below(2, 4k + 1, side), r = 3 + below(2, 4k + 2, 13),
//          peak = 200 + below(2, 4k + 3, 56); every pixel with d² = (x − cx)² + (y − cy)² ≤ r²
//          (σ = r / 2) becomes min(255, pixel + ⌊peak · exp(−2.0 · d² / (r · r)) + 0.5⌋) (f64).
//   noise  (threshold 127): pixel i = below(3, i, 256).
//   spiral (threshold 127): from (0, 0) heading right, draw 255; step while the next cell is inside,
//          undrawn, and the cell two ahead is undrawn (or outside); else turn clockwise; stop at
//          the second turn in a row without a step.
#include <cuda_runtime.h>
#include <npp.h>
#include <nppi_filtering_functions.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("cuda: %s (line %d)\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)
#define NK(x) do { NppStatus s_ = (x); if (s_ < 0) { \
  printf("npp: status %d (line %d: %s)\n", (int)s_, __LINE__, #x); exit(1); } \
  else if (s_ > 0) { printf("npp: warning %d (line %d)\n", (int)s_, __LINE__); } } while (0)

static uint64_t rnd(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int below(uint64_t seed, uint64_t i, uint32_t n) { return (int)((rnd(seed, i) >> 32) % n); }

static std::vector<uint8_t> spots(int side) {
  std::vector<uint8_t> img((size_t)side * side);
  for (size_t i = 0; i < img.size(); ++i) img[i] = (uint8_t)below(1, i, 41);
  for (uint64_t k = 0; k < 2000; ++k) {
    const int cx = below(2, 4 * k, side), cy = below(2, 4 * k + 1, side);
    const int r = 3 + below(2, 4 * k + 2, 13), peak = 200 + below(2, 4 * k + 3, 56);
    for (int y = std::max(0, cy - r); y <= std::min(side - 1, cy + r); ++y)
      for (int x = std::max(0, cx - r); x <= std::min(side - 1, cx + r); ++x) {
        const int d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
        if (d2 > r * r) continue;
        const int add = (int)(peak * std::exp(-2.0 * d2 / (double)(r * r)) + 0.5);
        uint8_t &v = img[(size_t)y * side + x];
        v = (uint8_t)std::min(255, v + add);
      }
  }
  return img;
}

static std::vector<uint8_t> noise(int side) {
  std::vector<uint8_t> img((size_t)side * side);
  for (size_t i = 0; i < img.size(); ++i) img[i] = (uint8_t)below(3, i, 256);
  return img;
}

static std::vector<uint8_t> spiral(int side) {
  std::vector<uint8_t> img((size_t)side * side, 0);
  const int dx[4] = {1, 0, -1, 0}, dy[4] = {0, 1, 0, -1};
  auto inside = [&](int x, int y) { return x >= 0 && y >= 0 && x < side && y < side; };
  auto drawn = [&](int x, int y) { return inside(x, y) && img[(size_t)y * side + x] != 0; };
  int x = 0, y = 0, d = 0, turns = 0;
  img[0] = 255;
  while (turns < 2) {
    const int nx = x + dx[d], ny = y + dy[d];
    if (inside(nx, ny) && !drawn(nx, ny) && !drawn(nx + dx[d], ny + dy[d])) {
      x = nx; y = ny; img[(size_t)y * side + x] = 255; turns = 0;
    } else {
      d = (d + 1) & 3; ++turns;
    }
  }
  return img;
}

// The host's union-find of the mask (8- or 4-connected): the number of true blobs.
static uint32_t find(std::vector<uint32_t> &parent, uint32_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}
static uint64_t reference_blobs(const std::vector<uint8_t> &mask, int side, bool four,
                                std::vector<uint32_t> &parent) {
  uint64_t blobs = 0;
  for (size_t i = 0; i < mask.size(); ++i) parent[i] = (uint32_t)i;
  auto unite = [&](uint32_t a, uint32_t b) {
    a = find(parent, a), b = find(parent, b);
    if (a != b) { parent[std::max(a, b)] = std::min(a, b); --blobs; }
  };
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      const uint32_t i = (uint32_t)y * side + x;
      if (!mask[i]) continue;
      ++blobs;
      if (x > 0 && mask[i - 1]) unite(i, i - 1);
      if (y == 0) continue;
      if (mask[i - side]) unite(i, i - side);
      if (four) continue;
      if (x > 0 && mask[i - side - 1]) unite(i, i - side - 1);
      if (x + 1 < side && mask[i - side + 1]) unite(i, i - side + 1);
    }
  return blobs;
}

// NPP's labels under the foreground: how many distinct ones, and how many pixels carry a label
// first seen on another true blob (a merge).
struct Check { uint64_t labels = 0, merged = 0, out_of_range = 0; };
static Check check(const std::vector<Npp32u> &labels, const std::vector<uint8_t> &mask,
                   std::vector<uint32_t> &parent, size_t max_label) {
  Check c;
  std::vector<uint32_t> root(max_label + 1, UINT32_MAX);
  for (size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i]) continue;
    const Npp32u l = labels[i];
    if (l > max_label) { ++c.out_of_range; continue; }
    const uint32_t r = find(parent, (uint32_t)i);
    if (root[l] == UINT32_MAX) { root[l] = r; ++c.labels; }
    else if (root[l] != r) ++c.merged;
  }
  return c;
}

static NppStreamContext stream_context() {
  NppStreamContext c = {};
  cudaDeviceProp p;
  CK(cudaGetDevice(&c.nCudaDeviceId));
  CK(cudaGetDeviceProperties(&p, c.nCudaDeviceId));
  c.hStream = 0;
  c.nMultiProcessorCount = p.multiProcessorCount;
  c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  c.nSharedMemPerBlock = p.sharedMemPerBlock;
  c.nCudaDevAttrComputeCapabilityMajor = p.major;
  c.nCudaDevAttrComputeCapabilityMinor = p.minor;
  return c;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  int side = 8192;
  bool four = false, contours = false;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--four")) four = true;
    else if (!strcmp(argv[a], "--contours")) contours = true;
    else side = atoi(argv[a]);
  }
  // The Info call's optional outputs: 1 contour image, 2 direction image, 4 totals, 8 counts
  // lists, 16 offsets lists.
  const int opt = contours ? 31 : 8;
  if (side < 2) { printf("usage: blobs_anchor [side] [--four] [--contours]\n"); return 1; }
  const NppLibraryVersion *ver = nppGetLibVersion();
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("NPP %d.%d.%d on %s; %dx%d, %s-connected, Info %s; median of 10 after 1 (ms)\n\n",
         ver->major, ver->minor, ver->build, prop.name, side, side, four ? "4" : "8",
         contours ? "with every contour output" : "with contour counts only");

  const size_t pixels = (size_t)side * side;
  const NppiSize roi = {side, side};
  const NppiNorm norm = four ? nppiNormL1 : nppiNormInf;
  const int step8 = side, step32 = side * (int)sizeof(Npp32u);
  NppStreamContext ctx = stream_context();
  Npp8u *mask, *label_buf, *compress_buf;
  Npp32u *labels;
  int label_size = 0, compress_size = 0;
  NK(nppiLabelMarkersUFGetBufferSize_32u_C1R(roi, &label_size));
  NK(nppiCompressMarkerLabelsGetBufferSize_32u_C1R((int)pixels, &compress_size));
  CK(cudaMalloc(&mask, pixels));
  CK(cudaMalloc(&labels, pixels * sizeof(Npp32u)));
  CK(cudaMalloc(&label_buf, label_size));
  CK(cudaMalloc(&compress_buf, compress_size));
  // The optional contour outputs (`--contours`), sized as the header documents.
  Npp8u *contour_img = nullptr;
  NppiContourPixelDirectionInfo *direction_img = nullptr;
  if (opt & 1) CK(cudaMalloc(&contour_img, pixels));
  if (opt & 2) CK(cudaMalloc(&direction_img, pixels * sizeof(NppiContourPixelDirectionInfo)));
  cudaEvent_t ev[4];
  for (cudaEvent_t &e : ev) CK(cudaEventCreate(&e));

  printf("| anchor | image | step | ms |\n|---|---|---|---|\n");
  const char *names[3] = {"spots", "noise", "spiral"};
  const int thresholds[3] = {100, 127, 127};
  std::vector<uint8_t> host_mask(pixels);
  std::vector<Npp32u> host_labels(pixels);
  std::vector<uint32_t> parent(pixels);
  char summary[3][512];
  for (int which = 0; which < 3; ++which) {
    std::vector<uint8_t> img = which == 0 ? spots(side) : which == 1 ? noise(side) : spiral(side);
    uint64_t checksum = 0, foreground = 0;
    for (size_t i = 0; i < pixels; ++i) {
      checksum += (uint64_t)(i + 1) * img[i];
      host_mask[i] = img[i] > thresholds[which] ? 255 : 0;
      foreground += host_mask[i] != 0;
    }
    CK(cudaMemcpy(mask, host_mask.data(), pixels, cudaMemcpyHostToDevice));

    int regions = 0;
    unsigned list_size = 0, list_capacity = 0;
    NppiCompressedMarkerLabelsInfo *info = nullptr;
    Npp32u *counts_dev = nullptr, *offsets_dev = nullptr;
    std::vector<Npp32u> counts_host, offsets_host;
    NppiContourTotalsInfo totals = {};
    // One run of the three steps, an event between each two. The buffers sized by the region
    // count are allocated in the untimed first run (the count is the same in every run).
    auto run = [&](float t[3]) {
      CK(cudaEventRecord(ev[0], ctx.hStream));
      NK(nppiLabelMarkersUF_8u32u_C1R_Ctx(mask, step8, labels, step32, roi, norm, label_buf, ctx));
      CK(cudaEventRecord(ev[1], ctx.hStream));
      NK(nppiCompressMarkerLabelsUF_32u_C1IR_Ctx(labels, step32, roi, (int)pixels, &regions,
                                                 compress_buf, ctx));
      CK(cudaEventRecord(ev[2], ctx.hStream));
      NK(nppiCompressedMarkerLabelsUFGetInfoListSize_32u_C1R((unsigned)regions, &list_size));
      const unsigned want =
          std::max(list_size, (unsigned)((regions + 4) * sizeof(NppiCompressedMarkerLabelsInfo)));
      if (want > list_capacity) {
        if (info) CK(cudaFree(info));
        if (counts_dev) CK(cudaFree(counts_dev));
        if (offsets_dev) CK(cudaFree(offsets_dev));
        CK(cudaMalloc(&info, want));
        list_capacity = want;
        // Lists of nMaxMarkerLabelID (+ 4, as NVIDIA's sample) unsigned integers.
        if (opt & 8) CK(cudaMalloc(&counts_dev, (regions + 4) * sizeof(Npp32u)));
        if (opt & 16) CK(cudaMalloc(&offsets_dev, (regions + 4) * sizeof(Npp32u)));
        counts_host.assign(regions + 4, 0);
        offsets_host.assign(regions + 4, 0);
      }
      NK(nppiCompressedMarkerLabelsUFInfo_32u_C1R_Ctx(
          labels, step32, roi, (unsigned)regions, info,
          contour_img, (opt & 1) ? step8 : 0,
          direction_img, (opt & 2) ? side * (int)sizeof(NppiContourPixelDirectionInfo) : 0,
          (opt & 4) ? &totals : nullptr, counts_dev, (opt & 8) ? counts_host.data() : nullptr,
          offsets_dev, (opt & 16) ? offsets_host.data() : nullptr, ctx));
      CK(cudaEventRecord(ev[3], ctx.hStream));
      CK(cudaEventSynchronize(ev[3]));
      for (int s = 0; s < 3; ++s) CK(cudaEventElapsedTime(&t[s], ev[s], ev[s + 1]));
    };
    float t[3];
    run(t);
    std::vector<float> steps[4];
    for (int r = 0; r < 10; ++r) {
      run(t);
      for (int s = 0; s < 3; ++s) steps[s].push_back(t[s]);
      steps[3].push_back(t[0] + t[1] + t[2]);
    }
    CK(cudaGetLastError());
    const char *step_names[4] = {"LabelMarkersUF", "CompressMarkerLabelsUF", "CompressedMarkerLabelsUFInfo", "total"};
    for (int s = 0; s < 4; ++s)
      printf("| NPP | %s | %s | %.3f |\n", names[which], step_names[s], median(steps[s]));

    // The check, not timed: LabelMarkersUF's labels, then the compressed ones, against the host's.
    const uint64_t truth = reference_blobs(host_mask, side, four, parent);
    NK(nppiLabelMarkersUF_8u32u_C1R_Ctx(mask, step8, labels, step32, roi, norm, label_buf, ctx));
    CK(cudaMemcpy(host_labels.data(), labels, pixels * sizeof(Npp32u), cudaMemcpyDeviceToHost));
    const Check raw = check(host_labels, host_mask, parent, pixels + 1);
    NK(nppiCompressMarkerLabelsUF_32u_C1IR_Ctx(labels, step32, roi, (int)pixels, &regions, compress_buf, ctx));
    CK(cudaMemcpy(host_labels.data(), labels, pixels * sizeof(Npp32u), cudaMemcpyDeviceToHost));
    const Check packed = check(host_labels, host_mask, parent, (size_t)regions);
    snprintf(summary[which], sizeof summary[which],
             "%s: threshold %d, foreground %llu px, checksum %016llx; true blobs %llu (host "
             "union-find); NPP regions %d (background ones too); foreground labels: LabelMarkersUF "
             "%llu, compressed %llu%s%s%s",
             names[which], thresholds[which], (unsigned long long)foreground,
             (unsigned long long)checksum, (unsigned long long)truth, regions,
             (unsigned long long)raw.labels, (unsigned long long)packed.labels,
             raw.labels == truth && packed.labels == truth ? " (right)" : " (WRONG)",
             raw.merged || packed.merged ? "; a label spans two true blobs!" : "",
             raw.out_of_range || packed.out_of_range ? "; labels out of range!" : "");
    CK(cudaFree(info));
    if (counts_dev) CK(cudaFree(counts_dev));
    if (offsets_dev) CK(cudaFree(offsets_dev));
  }
  printf("\n");
  for (int which = 0; which < 3; ++which) printf("%s\n", summary[which]);
  return 0;
}
