// Stands in for a CUDA program on machines without a GPU: it does what the
// CUDA driver does when CUDA_INJECTION64_PATH is set (load the library,
// call InitializeInjection), then keeps its main thread busy with short
// sleeps for --seconds (so the scheduler switches it in and out), and exits
// 0. With GPUNOISE_CUPTI_PATH naming fake_cupti, the library's capture
// runs as it would on a GPU.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
  }
  if (const char* path = std::getenv("CUDA_INJECTION64_PATH")) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    auto init = lib ? reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection")) : nullptr;
    if (!init) {
      std::fprintf(stderr, "fake_cuda_app: cannot load %s: %s\n", path, dlerror());
      return 1;
    }
    init();
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return 0;
}
