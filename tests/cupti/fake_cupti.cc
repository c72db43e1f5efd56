// A stand-in for libcupti, for testing libgpunoise_cupti.so's run-time
// paths (buffers, flusher thread, exit and signal flushes, fragment files)
// on machines without a GPU. It implements the CUPTI functions the library
// resolves with dlsym. Each cuptiActivityFlushAll delivers one buffer with
// records of the real types: the device, then per flush one
// cudaLaunchKernel call on the thread that started capture and the kernel
// it launched, plus one such pair for each fake_cupti_launch() call since the
// last flush, on the thread that called it (fake_cuda_app --threads).
// cuptiActivityGetNumDroppedRecords reports 5 records dropped, once. With
// FAKE_CUPTI_FORCED_FLUSH_HANG_MS=N a forced flush (the final one) first
// blocks for N ms, as a CUPTI caught in CUDA's teardown might.
// FAKE_CUPTI_DEVICES=GPU-<uuid>,GPU-<uuid>... sends one device record per
// UUID (CUDA ordinals 0, 1, ... in that order) instead of the one without a
// UUID, and FAKE_CUPTI_KERNEL_DEVICE=N puts the kernels on ordinal N: a
// process that sees the node's GPUs under ordinals of its own.
//
// InitializeInjectionNvtx2 with NVTX's export table takes the core table's
// push and pop slots, as CUPTI does, and the ranges pushed come out as
// marker records (start and end) with the next flush.
#define NVTX_NO_IMPL
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

CUpti_BuffersCallbackRequestFunc g_request = nullptr;
CUpti_BuffersCallbackCompleteFunc g_complete = nullptr;
CUpti_TimestampCallbackFunc g_timestamp = nullptr;
uint32_t g_tid = 0;
std::atomic<uint32_t> g_correlation{1};
std::atomic<bool> g_device_sent{false};
std::atomic<bool> g_dropped_sent{false};
std::mutex g_flush_mu;

// Launches made by fake_cupti_launch() since the last flush: (tid, time).
std::mutex g_launch_mu;
std::vector<std::pair<uint32_t, uint64_t>> g_launches;

// NVTX ranges pushed through our slots since the last flush, as CUPTI would
// record them: (id, thread, time, name); end records have no name.
struct FakeMarker {
  uint32_t id, tid;
  uint64_t ts;
  bool start;
  const char* name;
};
std::mutex g_marker_mu;
std::vector<FakeMarker> g_markers;
std::atomic<uint32_t> g_marker_id{1};
thread_local std::vector<uint32_t> t_open_ranges;

uint64_t BoottimeNow() {  // the clock the library gives CUPTI
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int NVTX_API FakePush(nvtxDomainHandle_t, const nvtxEventAttributes_t* attr) {
  uint32_t id = g_marker_id.fetch_add(1);
  const char* name = attr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII ? attr->message.ascii : "";
  std::lock_guard<std::mutex> lock(g_marker_mu);
  g_markers.push_back({id, static_cast<uint32_t>(::syscall(SYS_gettid)), BoottimeNow(), true, name});
  t_open_ranges.push_back(id);
  return static_cast<int>(t_open_ranges.size()) - 1;
}

int NVTX_API FakePop(nvtxDomainHandle_t) {
  if (t_open_ranges.empty()) return -1;
  uint32_t id = t_open_ranges.back();
  t_open_ranges.pop_back();
  std::lock_guard<std::mutex> lock(g_marker_mu);
  g_markers.push_back({id, static_cast<uint32_t>(::syscall(SYS_gettid)), BoottimeNow(), false, nullptr});
  return static_cast<int>(t_open_ranges.size());
}

size_t Aligned(size_t n) { return (n + 7) & ~size_t{7}; }

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_DEVICE: return Aligned(sizeof(CUpti_ActivityDevice5));
    case CUPTI_ACTIVITY_KIND_RUNTIME: return Aligned(sizeof(CUpti_ActivityAPI));
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return Aligned(sizeof(CUpti_ActivityKernel10));
    case CUPTI_ACTIVITY_KIND_MARKER: return Aligned(sizeof(CUpti_ActivityMarker2));
    default: return 0;
  }
}

// "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f" -> its 16 bytes; false if it
// is not 32 hex digits.
bool ParseUuid(const std::string& text, CUuuid* out) {
  std::string hex;
  for (char c : text.substr(text.rfind("GPU-", 0) == 0 ? 4 : 0))
    if (c != '-') hex += c;
  if (hex.size() != 32) return false;
  for (int i = 0; i < 16; ++i)
    out->bytes[i] = static_cast<char>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return true;
}

std::vector<CUpti_ActivityDevice5> Devices() {
  std::vector<CUpti_ActivityDevice5> out;
  const char* list = std::getenv("FAKE_CUPTI_DEVICES");
  std::string rest = list ? list : "";
  do {
    CUpti_ActivityDevice5 d;
    std::memset(&d, 0, sizeof(d));
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.name = "NVIDIA Fake";
    d.id = static_cast<uint32_t>(out.size());
    size_t comma = rest.find(',');
    std::string uuid = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    if (!uuid.empty() && !ParseUuid(uuid, &d.uuid)) continue;
    out.push_back(d);
  } while (!rest.empty());
  return out;
}

uint32_t KernelDevice() {
  const char* n = std::getenv("FAKE_CUPTI_KERNEL_DEVICE");
  return n ? static_cast<uint32_t>(std::atoi(n)) : 0;
}

template <typename T>
void Put(uint8_t* buffer, size_t size, size_t* used, const T& record) {
  if (*used + Aligned(sizeof(T)) > size) return;
  std::memcpy(buffer + *used, &record, sizeof(T));
  *used += Aligned(sizeof(T));
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) std::atomic<int> fake_cupti_nvtx_calls{0};

CUptiResult cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  *str = result == CUPTI_SUCCESS                                   ? "CUPTI_SUCCESS"
         : result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                                    : "CUPTI_ERROR_FAKE";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  *name = domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == 211 ? "cudaLaunchKernel_v7000" : "cudaOther";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
  g_request = request;
  g_complete = complete;
  g_tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) {
  g_timestamp = fn;
  return CUPTI_SUCCESS;
}

// FAKE_CUPTI_OTHER_SUBSCRIBER=1 plays a process where torch.profiler (or
// Nsight) already subscribed: the one subscriber slot is taken.
CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) {
  if (const char* other = std::getenv("FAKE_CUPTI_OTHER_SUBSCRIBER"); other && *other == '1')
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  static int token;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&token);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) { return CUPTI_SUCCESS; }

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnable(CUpti_ActivityKind) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t offset = 0;
  if (*record) {
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) +
             RecordSize((*record)->kind);
  }
  if (offset >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = g_dropped_sent.exchange(true) ? 0 : 5;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
    if (const char* ms = std::getenv("FAKE_CUPTI_FORCED_FLUSH_HANG_MS"))
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
  }
  std::lock_guard<std::mutex> lock(g_flush_mu);
  if (!g_request || !g_complete || !g_timestamp) return CUPTI_ERROR_NOT_INITIALIZED;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  g_request(&buffer, &size, &max_records);
  if (!buffer) return CUPTI_SUCCESS;
  size_t used = 0;
  uint64_t now = g_timestamp();
  if (!g_device_sent.exchange(true))
    for (const CUpti_ActivityDevice5& d : Devices()) Put(buffer, size, &used, d);
  std::vector<std::pair<uint32_t, uint64_t>> launches;
  {
    std::lock_guard<std::mutex> launch_lock(g_launch_mu);
    launches.swap(g_launches);
  }
  launches.emplace_back(g_tid, now);
  for (const auto& [tid, ts] : launches) {
    uint32_t corr = g_correlation.fetch_add(1);
    CUpti_ActivityAPI api;
    std::memset(&api, 0, sizeof(api));
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = 211;
    api.start = ts - 2000;
    api.end = ts - 1500;
    api.processId = static_cast<uint32_t>(::getpid());
    // CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM: gettid() as the thread sees it,
    // inside its pid namespace.
    api.threadId = tid;
    api.correlationId = corr;
    Put(buffer, size, &used, api);
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = ts - 1000;
    k.end = ts - 500;
    k.streamId = 7;
    k.deviceId = KernelDevice();
    k.correlationId = corr;
    k.name = "_Z4busyv";
    Put(buffer, size, &used, k);
  }
  std::vector<FakeMarker> markers;
  {
    std::lock_guard<std::mutex> marker_lock(g_marker_mu);
    markers.swap(g_markers);
  }
  for (const FakeMarker& fm : markers) {
    CUpti_ActivityMarker2 m;
    std::memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = fm.start ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
    m.id = fm.id;
    m.timestamp = fm.ts;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = static_cast<uint32_t>(::getpid());
    m.objectId.pt.threadId = fm.tid;
    m.name = fm.name;
    m.domain = fm.start ? "NCCL" : nullptr;
    Put(buffer, size, &used, m);
  }
  g_complete(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}

// A launch on the calling thread, delivered with the next flush.
__attribute__((visibility("default"))) void fake_cupti_launch() {
  if (!g_timestamp) return;
  uint64_t now = g_timestamp();
  std::lock_guard<std::mutex> lock(g_launch_mu);
  g_launches.emplace_back(static_cast<uint32_t>(::syscall(SYS_gettid)), now);
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  ++fake_cupti_nvtx_calls;
  auto* callbacks = get ? static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS)) : nullptr;
  NvtxFunctionTable table = nullptr;
  unsigned int n = 0;
  if (callbacks && callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &n) && table &&
      n > NVTX_CBID_CORE2_DomainRangePop) {
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&FakePush);
    *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&FakePop);
  }
  return 1;
}

}  // extern "C"
