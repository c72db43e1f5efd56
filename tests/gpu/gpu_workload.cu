// A small CUDA program for checking GPU capture end to end
// (tests/gpu/check.sh): two named kernels on two streams, each stream fed
// by its own CPU thread, host<->device copies, and NVTX ranges. It writes a
// manifest of what it did (kernel names, counts, launching thread ids,
// copy sizes) for gpu_trace_check to compare with the trace.
//
// Without a GPU it says so on stderr and exits with status 3, which is
// what the no-GPU integration test expects.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

// Kernels at global scope, so their demangled names are exactly the
// manifest's ("stream_a_work(float*, int)").
__global__ void stream_a_work(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 1.0001f + 0.5f;
}

__global__ void stream_b_work(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = sqrtf(fabsf(data[i]) + 1.0f);
}

namespace {

constexpr int kElements = 1 << 20;  // 4 MiB of floats per copy

long Tid() { return static_cast<long>(::syscall(SYS_gettid)); }

bool Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "gpu_workload: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// One thread per stream: copy in, run `iterations` kernels, copy out, each
// iteration inside an NVTX range on the launching thread.
bool Feed(cudaStream_t stream, bool a, int iterations, float* host, float* device, long* tid) {
  *tid = Tid();
  const size_t bytes = kElements * sizeof(float);
  bool ok = Check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream), "copy in");
  for (int i = 0; i < iterations && ok; ++i) {
    nvtxRangePushA(a ? "iteration a" : "iteration b");
    if (a)
      stream_a_work<<<(kElements + 255) / 256, 256, 0, stream>>>(device, kElements);
    else
      stream_b_work<<<(kElements + 255) / 256, 256, 0, stream>>>(device, kElements);
    ok = Check(cudaGetLastError(), "launch");
    nvtxRangePop();
  }
  ok = ok && Check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream), "copy out");
  ok = ok && Check(cudaStreamSynchronize(stream), "synchronize");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 20;
  const char* manifest_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--manifest") && i + 1 < argc) manifest_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: gpu_workload [--iterations N] [--manifest FILE]\n");
      return 2;
    }
  }
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "gpu_workload: no CUDA device: %s\n",
                 e == cudaSuccess ? "none found" : cudaGetErrorString(e));
    return 3;
  }
  nvtxMarkA("gpu_workload start");
  const size_t bytes = kElements * sizeof(float);
  cudaStream_t sa, sb;
  float *ha, *hb, *da, *db;
  if (!Check(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking), "stream") ||
      !Check(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking), "stream") ||
      !Check(cudaMallocHost(&ha, bytes), "host alloc") || !Check(cudaMallocHost(&hb, bytes), "host alloc") ||
      !Check(cudaMalloc(&da, bytes), "device alloc") || !Check(cudaMalloc(&db, bytes), "device alloc"))
    return 4;
  for (int i = 0; i < kElements; ++i) ha[i] = hb[i] = static_cast<float>(i % 97);

  long tid_a = 0, tid_b = 0;
  bool ok_a = false, ok_b = false;
  std::thread ta([&] { ok_a = Feed(sa, true, iterations, ha, da, &tid_a); });
  std::thread tb([&] { ok_b = Feed(sb, false, iterations, hb, db, &tid_b); });
  ta.join();
  tb.join();
  if (!ok_a || !ok_b) return 5;

  if (manifest_path) {
    FILE* m = std::fopen(manifest_path, "w");
    if (!m) {
      std::perror(manifest_path);
      return 6;
    }
    // kernel NAME COUNT LAUNCHING_TID STREAM_LABEL
    std::fprintf(m, "pid %d\n", static_cast<int>(getpid()));
    std::fprintf(m, "kernel stream_a_work(float*, int) %d %ld a\n", iterations, tid_a);
    std::fprintf(m, "kernel stream_b_work(float*, int) %d %ld b\n", iterations, tid_b);
    // copy KIND BYTES COUNT LAUNCHING_TID
    std::fprintf(m, "copy HtoD %zu 2\n", bytes);
    std::fprintf(m, "copy DtoH %zu 2\n", bytes);
    // range NAME COUNT TID
    std::fprintf(m, "range iteration a %d %ld\n", iterations, tid_a);
    std::fprintf(m, "range iteration b %d %ld\n", iterations, tid_b);
    std::fclose(m);
  }
  std::printf("gpu_workload: %d iterations on 2 streams done (threads %ld, %ld)\n", iterations,
              tid_a, tid_b);
  return 0;
}
