// Stands in for a CUDA program on machines without a GPU: it does what the
// CUDA driver does when CUDA_INJECTION64_PATH is set (load the library,
// call InitializeInjection), then keeps its main thread busy with short
// sleeps for --seconds (so the scheduler switches it in and out), and exits
// 0. With GPUNOISE_CUPTI_PATH naming fake_cupti, the library's capture
// runs as it would on a GPU.
//
// For the tests that the library never changes what its host does:
//   --say          prints "fake_cuda_app: started" and, at the end,
//                  "fake_cuda_app: finished" on stdout
//   --handle-term  handles SIGTERM itself: stops early, prints
//                  "fake_cuda_app: stopping on SIGTERM" and exits 3
#include <dlfcn.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

volatile sig_atomic_t g_term = 0;
void OnTerm(int) { g_term = 1; }

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  bool say = false, handle_term = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--say")) say = true;
    else if (!std::strcmp(argv[i], "--handle-term")) handle_term = true;
  }
  if (handle_term) {
    struct sigaction sa = {};
    sa.sa_handler = OnTerm;
    sigaction(SIGTERM, &sa, nullptr);
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
  if (say) {
    std::printf("fake_cuda_app: started\n");
    std::fflush(stdout);
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (g_term) {
      std::printf("fake_cuda_app: stopping on SIGTERM\n");
      return 3;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (say) std::printf("fake_cuda_app: finished\n");
  return 0;
}
