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
//
// Launching threads, for the pid-namespace tests (each launch goes through
// fake_cupti_launch, so its API record carries the thread's own tid):
//   --threads N     N threads "gn-worker-I" launching every 20 ms from the start
//   --late-ms MS    one thread "gn-late" started MS ms in, launching to the end
//   --short-ms MS   one thread "gn-short" started MS ms in that launches once
//                   and exits at once (before the library's next flush)
//   --go-file PATH  the late and short threads' MS count from when PATH
//                   appears, and so does --seconds (a test starts them after
//                   its recorder is up)
// With any of these, each thread prints "thread NAME tid TID" (its gettid(),
// as its pid namespace sees it) on stdout when it starts.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
void (*g_launch)() = nullptr;
bool g_announce = false;

volatile sig_atomic_t g_term = 0;
void OnTerm(int) { g_term = 1; }

void Announce(const std::string& name) {
  if (!g_announce) return;
  ::pthread_setname_np(::pthread_self(), name.c_str());
  std::printf("thread %s tid %ld\n", name.c_str(), static_cast<long>(::syscall(SYS_gettid)));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  bool say = false, handle_term = false;
  int threads = 0, late_ms = -1, short_ms = -1;
  const char* go_file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--say")) say = true;
    else if (!std::strcmp(argv[i], "--handle-term")) handle_term = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--late-ms") && i + 1 < argc) late_ms = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--short-ms") && i + 1 < argc) short_ms = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--go-file") && i + 1 < argc) go_file = argv[++i];
  }
  g_announce = threads > 0 || late_ms >= 0 || short_ms >= 0 || go_file;
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
  // The library has loaded the stand-in libcupti; the same handle again.
  if (const char* cupti = std::getenv("GPUNOISE_CUPTI_PATH")) {
    if (void* h = dlopen(cupti, RTLD_NOW | RTLD_NOLOAD))
      g_launch = reinterpret_cast<void (*)()>(dlsym(h, "fake_cupti_launch"));
  }
  if (say) {
    std::printf("fake_cuda_app: started\n");
    std::fflush(stdout);
  }
  Announce("fake_cuda_app");
  // Workers run from the start until the end, which is not known before the
  // go file appears.
  std::atomic<int64_t> end_ns{Clock::now().time_since_epoch().count() +
                              static_cast<int64_t>(go_file ? 3600e9 : seconds * 1e9)};
  std::vector<std::thread> workers;
  auto until_end = [&end_ns](const std::string& name) {
    Announce(name);
    while (Clock::now().time_since_epoch().count() < end_ns.load() && !g_term) {
      if (g_launch) g_launch();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  auto join_all = [&workers] {
    for (auto& w : workers) w.join();
  };
  for (int i = 0; i < threads; ++i) workers.emplace_back(until_end, "gn-worker-" + std::to_string(i));
  if (go_file) {
    auto give_up = Clock::now() + std::chrono::seconds(60);
    while (::access(go_file, F_OK) != 0 && Clock::now() < give_up) {
      if (g_launch) g_launch();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    end_ns = Clock::now().time_since_epoch().count() + static_cast<int64_t>(seconds * 1e9);
  }
  auto start = Clock::now();
  Clock::time_point end(Clock::duration(end_ns.load()));
  bool late_started = false, short_started = false;
  while (Clock::now() < end) {
    if (g_term) {
      std::printf("fake_cuda_app: stopping on SIGTERM\n");
      end_ns = 0;
      join_all();
      return 3;
    }
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (late_ms >= 0 && !late_started && elapsed >= late_ms) {
      late_started = true;
      workers.emplace_back(until_end, std::string("gn-late"));
    }
    if (short_ms >= 0 && !short_started && elapsed >= short_ms) {
      short_started = true;
      workers.emplace_back([] {
        Announce("gn-short");
        if (g_launch) g_launch();
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  join_all();
  if (say) std::printf("fake_cuda_app: finished\n");
  return 0;
}
