// libgpunoise_cupti.so: loaded into unmodified CUDA programs by the CUDA
// driver (CUDA_INJECTION64_PATH -> InitializeInjection) and by NVTX
// (NVTX_INJECTION64_PATH -> InitializeInjectionNvtx2), it records GPU
// activity with CUPTI's activity API and writes it as Perfetto trace
// fragments into $GPUNOISE_GPU_DIR (docs/gpu.md).
//
// Rules for code that runs inside someone else's training job: never make
// it fail (every problem is one line on stderr and capture stays off), never
// change its signal behaviour (signal_chain.h), never block its threads on
// file I/O (a flusher thread of ours writes, and no lock CUPTI's threads
// take is held while it does), never wait in a signal handler, never hold
// its exit longer than kExitFlushWaitMs, and bound the memory we hold. A
// full disk or an unwritable directory costs one line and the data.
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cupti/activity_converter.h"
#include "cupti/cupti_library.h"
#include "cupti/fragment_writer.h"
#include "cupti/injection_settings.h"
#include "cupti/nvtx_hooks.h"
#include "cupti/packet_builder.h"
#include "cupti/process_self.h"
#include "cupti/signal_chain.h"
#include "model/gpu_capture.h"

#define GN_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpunoise::cupti {
namespace {

// CUPTI stamps every record through this, so GPU activity is on
// CLOCK_BOOTTIME like the kernel's events (DESIGN.md decision 1).
uint64_t CUPTIAPI BoottimeTimestamp() { return ClockNs(CLOCK_BOOTTIME); }

// How long the end of the program (exit or a fatal SIGINT/SIGTERM) waits
// for the final flush. CUPTI's forced flush and the write of the last chunk
// take milliseconds; a stuck disk or a CUPTI blocked in CUDA's teardown
// must not hold the job's exit for longer than this.
constexpr int kExitFlushWaitMs = 2000;
// Signals the program handles itself each ask for a flush; a storm of them
// gets one per this interval, not a fragment per signal.
constexpr uint64_t kMinRequestedFlushGapNs = 100'000'000;

class Capture {
 public:
  static Capture& Get() {
    // Never destroyed: CUPTI's threads and our atexit handler may touch it
    // while static destructors run.
    static Capture* capture = new Capture();
    return *capture;
  }

  void Start();
  int InitializeNvtx(NvtxGetExportTable get_export_table);
  int InitializeNvtxExtension(nvtxExtModuleInfo_t* module_info);

  // CUPTI buffer callbacks.
  void RequestBuffer(uint8_t** buffer, size_t* size, size_t* max_records);
  void CompleteBuffer(uint8_t* buffer, size_t valid_size);

  // Async-signal-safe. A child forked after capture started inherits our
  // handlers but not our threads; for it these do nothing.
  void RequestFlush(bool final) {
    if (::getpid() != owner_pid_) return;
    if (final) final_requested_.store(true);
    uint64_t one = 1;
    if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
  }
  // Async-signal-safe: a fatal signal. The reaper thread re-raises it once
  // the final flush is done (or kExitFlushWaitMs passed).
  bool RequestFinalFlushAndDeath(int sig) {
    if (::getpid() != owner_pid_ || !running_.load()) return false;
    int none = 0;
    if (fatal_signal_.compare_exchange_strong(none, sig)) {
      RequestFlush(true);
      ::sem_post(&fatal_signal_posted_);
    }
    return true;
  }

  void AtExit();
 private:
  Capture() {
    ::sem_init(&final_flushed_, 0, 0);
    ::sem_init(&fatal_signal_posted_, 0, 0);
  }
  bool EnableActivities(std::string* error);
  // One fragment saying why this process is not captured (mu_ held).
  void WriteCaptureOff(const std::string& reason);
  void EnableApiRecords();
  void FlusherLoop();
  void ReaperLoop();
  void Flush(bool final);
  // Waits up to `timeout_ms` for the final flush; false if it did not end.
  bool WaitFinalFlush(int timeout_ms);

  std::once_flag start_once_;
  std::once_flag cupti_once_;
  bool cupti_loaded_ = false;
  std::string cupti_error_;
  CuptiLibrary cupti_;
  InjectionSettings settings_;
  pid_t owner_pid_ = 0;

  // converter_. CUPTI's buffer-completion thread (often one of the job's
  // own) converts under it, so nothing slow happens while it is held: no
  // file I/O, no CUPTI call.
  std::mutex mu_;
  std::unique_ptr<ActivityConverter> converter_;
  std::mutex write_mu_;  // writer_, write_failed_: the file side, flusher only
  std::unique_ptr<FragmentWriter> writer_;
  bool write_failed_ = false;
  bool other_subscriber_ = false;
  // The writer's lost chunks, for the converter's summary (mu_ side).
  std::atomic<uint64_t> chunks_not_written_{0};
  std::atomic<size_t> held_chunks_{0};

  std::mutex pool_mu_;
  std::vector<uint8_t*> free_buffers_;
  size_t buffers_out_ = 0;

  int wake_fd_ = -1;
  std::thread flusher_;
  std::thread reaper_;  // re-raises a fatal signal after the final flush
  std::atomic<bool> running_{false};
  std::atomic<bool> final_requested_{false};
  std::atomic<bool> final_done_{false};  // the final flush has ended
  sem_t final_flushed_;  // posted when final_done_ is set; re-posted by each waiter
  std::atomic<int> fatal_signal_{0};  // the first fatal SIGINT/SIGTERM
  sem_t fatal_signal_posted_;
};

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Capture::Get().RequestBuffer(buffer, size, max_records);
}

void CUPTIAPI OnBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  Capture::Get().CompleteBuffer(buffer, valid_size);
}

void AtExitHandler() { Capture::Get().AtExit(); }
void SignalRequestFlush() { Capture::Get().RequestFlush(false); }
bool SignalRequestFinalFlush(int sig) { return Capture::Get().RequestFinalFlushAndDeath(sig); }

void Capture::RequestBuffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (!free_buffers_.empty()) {
    *buffer = free_buffers_.back();
    free_buffers_.pop_back();
  } else if (buffers_out_ < settings_.max_buffers) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, settings_.buffer_bytes));
  } else {
    // Declining makes CUPTI drop records, which it counts; the count goes
    // into the trace. Better than growing without bound inside the job.
    *buffer = nullptr;
  }
  if (*buffer) ++buffers_out_;
  *size = *buffer ? settings_.buffer_bytes : 0;
}

void Capture::CompleteBuffer(uint8_t* buffer, size_t valid_size) {
  if (!buffer) return;
  size_t dropped = 0;
  cupti_.GetNumDroppedRecords(nullptr, 0, &dropped);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (converter_) {
      // Decoded before CUPTI's records of the same ranges were written, so
      // before this buffer's: the converter joins them at the range starts.
      uint64_t hook_dropped = 0;
      std::vector<NcclCall> calls = NvtxHooks::Get().Take(&hook_dropped);
      converter_->AddNcclCalls(std::move(calls), hook_dropped);
    }
    CUpti_Activity* record = nullptr;
    while (converter_ &&
           cupti_.GetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      converter_->Convert(record);
      if (record->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) {
        // CUPTI hands ownership of the details to the client.
        auto* overhead = reinterpret_cast<CUpti_ActivityOverhead3*>(record);
        std::free(overhead->overheadData);
        overhead->overheadData = nullptr;
      }
    }
    if (converter_) converter_->AddDroppedRecords(dropped);
  }
  std::lock_guard<std::mutex> lock(pool_mu_);
  --buffers_out_;
  free_buffers_.push_back(buffer);
}

void Capture::Flush(bool final) {
  // Completed buffers come back through CompleteBuffer, on this thread or
  // CUPTI's; the forced flush at the end also returns partly filled ones.
  cupti_.FlushAll(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  size_t dropped = 0;
  cupti_.GetNumDroppedRecords(nullptr, 0, &dropped);
  std::string chunk;
  uint64_t flush_ts = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!converter_) return;
    converter_->AddDroppedRecords(dropped);
    converter_->SetChunksNotWritten(chunks_not_written_.load());
    // An idle process writes nothing, unless the writer holds data back:
    // then each flush tries the directory again.
    if (!final && !converter_->has_events() && held_chunks_.load() == 0) return;
    ClockReadings now = ReadClocks();
    chunk = converter_->TakeChunk(now, final);
    flush_ts = now.boottime;
  }
  // The write happens with mu_ released: a buffer CUPTI completes meanwhile
  // is converted at once, whatever the disk does.
  std::lock_guard<std::mutex> lock(write_mu_);
  std::string error;
  if (!writer_->Write(chunk, flush_ts, &error) && !write_failed_) {
    write_failed_ = true;  // say it once; keep trying on later flushes
    Note("GPU trace data lost: " + error);
  }
  if (std::string note = writer_->TakeNote(); !note.empty()) Note(note);
  chunks_not_written_.store(writer_->chunks_lost());
  held_chunks_.store(writer_->chunks_pending());
  // The last flush, and the directory never became ours: what is held back
  // dies with the process. Said, since no fragment can say it.
  if (final && writer_->chunks_pending())
    Note("GPU trace data lost: " + settings_.dir + " never became writable; " +
         std::to_string(writer_->chunks_pending()) + " held-back flushes not written");
}

void Capture::WriteCaptureOff(const std::string& reason) {
  if (!writer_) return;
  ClockReadings now = ReadClocks();
  std::string chunk;
  PacketBuilder builder(static_cast<uint32_t>(owner_pid_), &chunk);
  builder.StartSequence();
  builder.ClockSnapshot(now);
  TrackSpec process;
  process.uuid = (static_cast<uint64_t>(owner_pid_) << 20) ^ now.boottime ^ 0x6770756e6f697365ull;
  process.process_pid = owner_pid_;
  process.process_name = ReadFirstLine("/proc/self/comm");
  builder.TrackDescriptor(process);
  builder.Instant(now.boottime, process.uuid, model::kCuptiCaptureOffEvent, "gpunoise")
      .Arg("pid", static_cast<int32_t>(owner_pid_))
      .Arg("reason", reason);
  std::string error;
  if (!writer_->Write(chunk, now.boottime, &error)) Note("GPU capture-off note lost: " + error);
}

// The only thread that writes: periodic flushes, flushes the program's
// signals ask for (at most one per kMinRequestedFlushGapNs), and the final
// flush that exit or a fatal signal asks for.
void Capture::FlusherLoop() {
  uint64_t last_flush = ClockNs(CLOCK_MONOTONIC);
  while (true) {
    uint64_t now = ClockNs(CLOCK_MONOTONIC);
    uint64_t due = last_flush + settings_.flush_ns;
    int timeout_ms = due > now ? static_cast<int>((due - now + 999999) / 1000000) : 0;
    pollfd p{wake_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, timeout_ms);
    if (n > 0) {
      uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof(count));
    }
    if (final_requested_.load()) {
      Flush(true);
      final_done_.store(true);
      ::sem_post(&final_flushed_);
      return;
    }
    now = ClockNs(CLOCK_MONOTONIC);
    bool periodic = now >= due;
    bool asked = n > 0 && now >= last_flush + kMinRequestedFlushGapNs;
    if (!periodic && !asked) continue;
    Flush(false);
    last_flush = ClockNs(CLOCK_MONOTONIC);
  }
}

// Waits for a fatal signal's final flush, then lets the signal kill the
// process (signal_chain.h). Blocks SIGINT/SIGTERM like the flusher, and
// takes the signal itself only in RaiseDefault.
void Capture::ReaperLoop() {
  while (::sem_wait(&fatal_signal_posted_) != 0) {
  }
  WaitFinalFlush(kExitFlushWaitMs);
  RaiseDefault(fatal_signal_.load());
}

bool Capture::WaitFinalFlush(int timeout_ms) {
  if (final_done_.load()) return true;
  timespec deadline;
  ::clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += static_cast<long>(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  int r;
  while ((r = ::sem_timedwait(&final_flushed_, &deadline)) != 0 && errno == EINTR) {
  }
  if (r == 0) ::sem_post(&final_flushed_);  // a latch: every waiter passes
  return final_done_.load();
}

void Capture::AtExit() {
  // A child that forked after CUDA started has our state but not our
  // threads; its buffers are not its own to flush.
  if (::getpid() != owner_pid_ || !running_.load()) return;
  RequestFlush(true);
  if (!WaitFinalFlush(kExitFlushWaitMs)) {
    Note("GPU trace: the final flush did not finish within " + std::to_string(kExitFlushWaitMs) +
         " ms; the program exits without it (its last chunk is lost)");
  }
  // A fatal signal came first and the program reached exit() while the
  // flush ran: it still dies of that signal, as it would have without us.
  if (int sig = fatal_signal_.load()) RaiseDefault(sig);
}

void Capture::EnableApiRecords() {
  if (settings_.all_api || !cupti_.EnableRuntimeApi || !cupti_.EnableDriverApi) {
    cupti_.Enable(CUPTI_ACTIVITY_KIND_RUNTIME);
    cupti_.Enable(CUPTI_ACTIVITY_KIND_DRIVER);
    return;
  }
  // Only the calls that launch GPU work or wait for it: a training step
  // makes many thousands of other runtime calls (cudaGetDevice, ...) whose
  // records would cost more than they tell.
  struct Domain {
    CUpti_CallbackDomain domain;
    uint32_t count;
    decltype(cupti_.EnableRuntimeApi) enable;
  };
  Domain domains[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, cupti_.EnableRuntimeApi},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, cupti_.EnableDriverApi},
  };
  for (const Domain& d : domains) {
    for (uint32_t cbid = 1; cbid < d.count; ++cbid) {
      const char* name = nullptr;
      if (cupti_.GetCallbackName(d.domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
      if (IsRecordedByDefault(name)) d.enable(cbid, 1);
    }
  }
}

void CUPTIAPI NoCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

bool Capture::EnableActivities(std::string* error) {
  // CUPTI serves one client per process. Registering our buffers over
  // torch.profiler's (Kineto), dynolog's or Nsight's would take their data:
  // probe for a subscriber and, if there is one, stay out of the way. The
  // probe is released at once, so a profiler started later still works.
  if (cupti_.Subscribe) {
    CUpti_SubscriberHandle probe = nullptr;
    CUptiResult s = cupti_.Subscribe(&probe, NoCallback, nullptr);
    if (s == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      other_subscriber_ = true;
      *error = "another CUPTI client already runs in this process (torch.profiler/Kineto, dynolog, Nsight?): "
               "CUPTI allows one, so gpunoise stays out of its way";
      return false;
    }
    if (s == CUPTI_SUCCESS && cupti_.Unsubscribe) cupti_.Unsubscribe(probe);
  }
  CUptiResult r = cupti_.RegisterCallbacks(OnBufferRequested, OnBufferCompleted);
  if (r != CUPTI_SUCCESS) {
    *error = "failed to register CUPTI buffer callbacks: " + cupti_.ResultName(r);
    return false;
  }
  r = cupti_.RegisterTimestampCallback(BoottimeTimestamp);
  if (r != CUPTI_SUCCESS) {
    *error = "failed to register the CLOCK_BOOTTIME timestamp callback: " + cupti_.ResultName(r) +
             " (no CUDA driver or no GPU?)";
    return false;
  }
  // Real Linux thread ids, so API calls land on the thread the kernel's
  // scheduling data shows, not on pthread_self() values.
  r = cupti_.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (r != CUPTI_SUCCESS) {
    *error = "failed to select system thread ids: " + cupti_.ResultName(r);
    return false;
  }
  r = cupti_.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    *error = "failed to enable kernel records: " + cupti_.ResultName(r);
    return false;
  }
  // The rest are best effort: a kind this CUPTI or GPU lacks leaves a gap,
  // not a failed capture.
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, CUPTI_ACTIVITY_KIND_MARKER,
        CUPTI_ACTIVITY_KIND_MARKER_DATA, CUPTI_ACTIVITY_KIND_OVERHEAD})
    cupti_.Enable(kind);
  // One slice per graph launch, unless asked for each node's kernels.
  if (!settings_.graph_nodes) cupti_.Enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  EnableApiRecords();
  return true;
}

void Capture::Start() {
  std::call_once(start_once_, [this] {
    settings_ = ReadInjectionSettings([](const char* name) { return std::getenv(name); });
    // In a container the CUDA ordinals are the runtime's renumbering of the
    // GPUs it exposed, not NVML's indexes.
    settings_.visible_devices = ComposeVisibleDevices(std::getenv("NVIDIA_VISIBLE_DEVICES"),
                                                      std::getenv("CUDA_VISIBLE_DEVICES"),
                                                      OwnPidNamespace() != kInitPidNamespace);
    if (settings_.dir.empty()) {
      Note(std::string("GPU capture off: ") + model::kGpuDirEnv +
           " is not set (start the program with 'gpunoise record -- ...' or in the environment "
           "'gpunoise env DIR' prints)");
      return;
    }
    // A pod's directory exists but is not yet its user's: the node agent
    // hands it over once the pod's first process runs, so capture starts
    // and the writer holds the data back (bounded) until then. A missing
    // directory is a wrong setting: capture stays off.
    if (::access(settings_.dir.c_str(), W_OK | X_OK) != 0 &&
        !((errno == EACCES || errno == EPERM) && settings_.hold_bytes > 0)) {
      Note("GPU capture off: cannot write to " + settings_.dir + ": " + std::strerror(errno));
      return;
    }
    std::call_once(cupti_once_, [this] {
      cupti_loaded_ = LoadCupti(settings_.cupti_path, &cupti_, &cupti_error_);
    });
    if (!cupti_loaded_) {
      Note("GPU capture off: " + cupti_error_);
      return;
    }
    owner_pid_ = ::getpid();
    ConverterOptions options;
    options.pid = owner_pid_;
    options.process_name = ReadFirstLine("/proc/self/comm");
    options.node_id = ReadFirstLine("/proc/sys/kernel/random/boot_id");
    options.start_ts = ClockNs(CLOCK_BOOTTIME);
    options.sequence_id = static_cast<uint32_t>(owner_pid_);
    options.visible_devices = settings_.visible_devices;
    options.rank = settings_.rank;
    options.local_rank = settings_.local_rank;
    CuptiLibrary* lib = &cupti_;
    options.api_name = [lib](bool runtime, uint32_t cbid) {
      const char* name = nullptr;
      lib->GetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid,
                           &name);
      return std::string(name ? name : "");
    };
    {
      std::lock_guard<std::mutex> lock(mu_);
      converter_ = std::make_unique<ActivityConverter>(std::move(options));
      // The pid and the CUPTI thread ids are this namespace's; the name
      // says which namespace, for the recorder to translate them.
      writer_ = std::make_unique<FragmentWriter>(settings_.dir, owner_pid_, OwnPidNamespace(),
                                                 settings_.keep_ns);
      writer_->set_pending_limit(settings_.hold_bytes);
    }
    std::string error;
    if (!EnableActivities(&error)) {
      Note("GPU capture off: " + error);
      std::lock_guard<std::mutex> lock(mu_);
      if (other_subscriber_) WriteCaptureOff(error);
      converter_.reset();
      return;
    }
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    // Our threads never take SIGINT/SIGTERM: the program's threads do, as
    // before. Threads inherit the creator's mask, so block around creation.
    sigset_t block, saved;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &block, &saved);
    flusher_ = std::thread([this] { FlusherLoop(); });
    reaper_ = std::thread([this] { ReaperLoop(); });
    ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    // Neither is ever joined: exit waits for the final flush, boundedly,
    // and a thread stuck in a write must not hold the process.
    flusher_.detach();
    reaper_.detach();
    running_.store(true);
    // Registered during cuInit, after libcupti was loaded: atexit runs
    // handlers in reverse order, so this runs before libcupti's and the
    // driver's own exit-time teardown (as NVIDIA's injection samples rely
    // on), and CUPTI can still hand back its buffers.
    std::atexit(AtExitHandler);
    SignalFlushHooks hooks;
    hooks.request_flush = SignalRequestFlush;
    hooks.request_final_flush = SignalRequestFinalFlush;
    InstallSignalFlush(hooks);
  });
}

int Capture::InitializeNvtx(NvtxGetExportTable get_export_table) {
  std::call_once(cupti_once_, [this] {
    std::string path;
    if (const char* p = std::getenv(model::kCuptiPathEnv)) path = p;
    cupti_loaded_ = LoadCupti(path, &cupti_, &cupti_error_);
  });
  if (!cupti_loaded_ || !cupti_.InitializeInjectionNvtx2) return 0;  // NVTX calls stay no-ops
  int ok = cupti_.InitializeInjectionNvtx2(get_export_table);
  // Behind CUPTI's handlers, in front of them: NCCL's extended payloads
  // are read during the call (CUPTI's records cannot carry them).
  if (ok) NvtxHooks::Get().HookCore(get_export_table);
  return ok;
}

int Capture::InitializeNvtxExtension(nvtxExtModuleInfo_t* module_info) {
  std::call_once(cupti_once_, [this] {
    std::string path;
    if (const char* p = std::getenv(model::kCuptiPathEnv)) path = p;
    cupti_loaded_ = LoadCupti(path, &cupti_, &cupti_error_);
  });
  if (!cupti_loaded_) return 0;  // no capture: NVTX turns the extension into no-ops
  return NvtxHooks::Get().InitExtension(module_info, cupti_.InitializeInjectionNvtxExtension);
}

}  // namespace
}  // namespace gpunoise::cupti

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names
// this library. Always reports success: a failure to capture must not
// become a failure of the program.
GN_EXPORT int InitializeInjection(void) {
  try {
    gpunoise::cupti::Capture::Get().Start();
  } catch (...) {
    std::fprintf(stderr, "gpunoise-cupti[%d]: GPU capture off: unexpected error\n",
                 static_cast<int>(::getpid()));
  }
  return 1;
}

// Called by NVTX's extension modules (the payload extension: schema
// registration) when NVTX_INJECTION64_PATH names this library.
GN_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* module_info) {
  try {
    return gpunoise::cupti::Capture::Get().InitializeNvtxExtension(module_info);
  } catch (...) {
    return 0;
  }
}

// Called by NVTX when NVTX_INJECTION64_PATH names this library: hands NVTX
// to CUPTI, whose marker records then carry the ranges and marks.
GN_EXPORT int InitializeInjectionNvtx2(gpunoise::cupti::NvtxGetExportTable get_export_table) {
  try {
    return gpunoise::cupti::Capture::Get().InitializeNvtx(get_export_table);
  } catch (...) {
    return 0;
  }
}
