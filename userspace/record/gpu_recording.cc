#include "record/gpu_recording.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "collect/kubelet_pods.h"
#include "collect/pod_fragment_dirs.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/strings.h"
#include "export/perfetto/sequence_ids.h"
#include "export/perfetto/trace_file_writer.h"
#include "merge/trace_merger.h"
#include "export/perfetto/track_event_writer.h"
#include "record/gpu/gpu_counter_packets.h"
#include "record/gpu/fragment_pid_translator.h"
#include "record/gpu/gpu_fragments.h"
#include "record/gpu/gpu_loss_packets.h"
#include "record/gpu/injection_env.h"
#include "model/gpu_capture.h"

namespace gpunoise::record {
namespace {

using perfetto::kFirstFragmentSequenceId;
using perfetto::kNvmlSequenceId;
// With --gpu-dir, processes flush on their own schedule (default every
// second): wait this long after the recording for the last window's data.
constexpr uint64_t kCollectWaitNs = (model::kDefaultFlushMs + 500) * 1000000ull;
// How often the pod directories are brought up to date: a pod's directory
// appears within this of its sandbox, and is handed over within this of its
// first process (the library holds its data back meanwhile).
constexpr auto kPodDirsInterval = std::chrono::seconds(1);

std::string BootId() {
  auto id = ReadFileToString("/proc/sys/kernel/random/boot_id");
  return id.ok() ? std::string(Trim(*id)) : std::string("unknown-boot");
}

uint64_t RandomSalt() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

Result<std::unique_ptr<GpuRecording>> GpuRecording::Create(const GpuRecordingOptions& options,
                                                            const std::string& exe_path) {
  std::unique_ptr<GpuRecording> g(new GpuRecording());
  g->options_ = options;
  g->node_id_ = BootId();
  if (!options.collect_dir.empty()) {
    struct stat st;
    if (::stat(options.collect_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return MakeError("failed to use --gpu-dir {}: not a directory", options.collect_dir);
    g->dir_ = options.collect_dir;
  }
  if (!options.pod_dirs_root.empty()) {
    auto dirs = collect::PodFragmentDirs::Open(options.pod_dirs_root);
    if (!dirs.ok()) return MakeError("failed to use --gpu-pod-dirs: {}", dirs.error().message);
    g->pod_dirs_ = std::make_unique<collect::PodFragmentDirs>(std::move(*dirs));
    g->dir_ = options.pod_dirs_root;
    // The first pass now, before the capability drop: the pods already
    // running get theirs before the recording starts.
    g->UpdatePodDirs();
  }
  if (options.capture_workload) {
    auto library = gpu::FindInjectionLibrary(exe_path);
    if (!library.ok()) {
      g->warnings_.push_back("GPU capture off: " + library.error().message +
                             "; recording the kernel side only");
    } else {
      if (g->dir_.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpunoise-gpu-XXXXXX";
        if (!::mkdtemp(tmpl.data()))
          return MakeError("failed to create a GPU fragment directory {}: {}", tmpl, std::strerror(errno));
        g->dir_ = tmpl;
        g->own_dir_ = true;
        // The command runs as the invoking user: the directory must be theirs.
        if (options.owner_uid >= 0 &&
            ::chown(g->dir_.c_str(), static_cast<uid_t>(options.owner_uid),
                    static_cast<gid_t>(options.owner_gid)) != 0)
          return MakeError("failed to hand {} to uid {}: {}", g->dir_, options.owner_uid,
                           std::strerror(errno));
      }
      gpu::InjectionEnvOptions env;
      env.library = *library;
      env.dir = g->dir_;
      env.nvtx = options.nvtx;
      g->env_ = gpu::InjectionEnvironment(env);
    }
  }
  return g;
}

GpuRecording::~GpuRecording() { StopPodDirs(); }

void GpuRecording::UpdatePodDirs() {
  collect::KubeletPods pods = collect::KubeletPods::Read(options_.kubelet_log_dir);
  std::lock_guard<std::mutex> lock(pod_dirs_mu_);
  collect::PodDirsPass pass = pod_dirs_->Update(pods);
  pod_dirs_created_ += pass.created;
  pod_dirs_handed_ += pass.handed;
  for (auto& p : pass.problems)
    if (pod_dirs_said_.insert(p).second) warnings_.push_back("GPU pod directory: " + p);  // once, not each pass
}

void GpuRecording::StopPodDirs() {
  if (!pod_dirs_thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(pod_dirs_mu_);
    pod_dirs_stop_ = true;
  }
  pod_dirs_cv_.notify_all();
  pod_dirs_thread_.join();
}

void GpuRecording::Begin() {
  if (pod_dirs_ && !pod_dirs_thread_.joinable()) {
    pod_dirs_thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(pod_dirs_mu_);
      while (!pod_dirs_cv_.wait_for(lock, kPodDirsInterval, [this] { return pod_dirs_stop_; })) {
        lock.unlock();
        UpdatePodDirs();
        lock.lock();
      }
    });
  }
  if (!options_.counters) return;
  auto api = gpu::LoadNvml();
  if (!api.ok()) {
    nvml_unavailable_ = api.error().message;
  } else {
    auto sampler = gpu::NvmlSampler::Create(*api);
    if (!sampler.ok()) {
      nvml_unavailable_ = sampler.error().message;
    } else {
      sampler_ = std::move(*sampler);
      sampler_->Start(options_.sample_interval_ns);
    }
  }
  if (!nvml_unavailable_.empty()) {
    std::string line = "no GPU counters: NVML unavailable: " + nvml_unavailable_;
    // Worth a warning when GPU data was asked for; on a node without GPUs
    // it is only information.
    if (options_.counters_requested) warnings_.push_back(line);
    else infos_.push_back(line);
  }
}

Status GpuRecording::Append(perfetto::TraceFileWriter& out, const model::SessionInfo& session) {
  // One writer for the recorder's GPU-side packets: NVML counters and the
  // collection summary.
  perfetto::TrackEventWriter writer(kNvmlSequenceId, RandomSalt());
  if (options_.counters) {
    if (sampler_) {
      sampler_->Stop();
      // The sampler runs on while the kernel side detaches and the trace is
      // finished; samples after the recording's end would outlast every
      // other track.
      std::vector<gpu::GpuSample> samples;
      for (const auto& sample : sampler_->samples())
        if (sample.ts <= session.end_ts) samples.push_back(sample);
      nvml_gpus_ = sampler_->gpus().size();
      nvml_samples_ = samples.size();
      GN_RETURN_IF_ERROR(gpu::WriteGpuCounters(sampler_->gpus(), samples, node_id_, writer, out));
    } else {
      GN_RETURN_IF_ERROR(gpu::WriteNvmlUnavailable(session.start_ts, nvml_unavailable_, writer, out));
    }
  }
  if (dir_.empty()) return OkStatus();
  uint64_t from = 0, to = 0;
  if (!own_dir_) {
    // Fragments of processes that run on after the recording, or ran
    // before it, are outside its window.
    std::this_thread::sleep_for(std::chrono::nanoseconds(kCollectWaitNs));
    from = session.start_ts;
    to = session.end_ts + kCollectWaitNs;
  }
  uint64_t summary_ts = session.end_ts ? session.end_ts : session.start_ts;
  if (pod_dirs_) {
    // The last pass, then the directories as they are now.
    StopPodDirs();
    UpdatePodDirs();
  }
  auto window = pod_dirs_ ? Result<gpu::FragmentWindow>(gpu::ListFragmentWindows(pod_dirs_->Directories(), from, to))
                          : gpu::ListFragmentWindow(dir_, from, to);
  if (!window.ok()) {
    warnings_.push_back("GPU fragments not collected: " + window.error().message);
    loss_.error = window.error().message;
    return gpu::WriteGpuLoss(summary_ts, loss_, writer, out);
  }
  // Each refused file said by name: a root recorder does not read what a
  // symlink or someone else's file in the user's directory leads to.
  for (const auto& r : window->refused) warnings_.push_back("GPU fragment refused: " + r);
  perfetto::TraceMerger merger(&out, kFirstFragmentSequenceId);
  gpu::FragmentPidTranslator translator(&pid_ns_map_);
  gpu::FragmentsAppended appended =
      gpu::AppendGpuFragments(window->files, merger, window->before, &translator);
  loss_.processes_not_captured = appended.not_captured.size();
  for (const auto& n : appended.not_captured) warnings_.push_back("GPU capture of " + n);
  const gpu::PidTranslationStats& ns = translator.stats();
  loss_.processes_translated = ns.processes_translated;
  loss_.processes_unmapped = ns.processes_unmapped;
  loss_.threads_unmapped = ns.threads_unmapped;
  for (const auto& p : ns.problems) warnings_.push_back("GPU data not attached: " + p);
  if (ns.threads_unmapped_of_mapped)
    warnings_.push_back(fmt::format(
        "GPU data of {} threads in containers not attached to host threads (no host thread had "
        "their namespace ids during their fragments' windows)",
        ns.threads_unmapped_of_mapped));
  if (pid_ns_map_.tasks_over_limit())
    warnings_.push_back(fmt::format("pid namespace map full: {} tasks in containers not remembered",
                                    pid_ns_map_.tasks_over_limit()));
  fragments_ = appended.files;
  processes_ = appended.processes;
  packets_ = appended.packets;
  loss_.processes = appended.processes;
  loss_.fragments = appended.files;
  loss_.cupti_dropped_records = appended.cupti_dropped_records;
  loss_.chunks_not_written = appended.chunks_not_written;
  loss_.fragments_unreadable = appended.unreadable + window->refused.size();
  loss_.fragments_truncated = appended.truncated;
  loss_.fragments_late = window->late;
  for (const auto& p : appended.problems)
    warnings_.push_back(StartsWith(p, "refused ") ? "GPU fragment " + p : "GPU fragment cut short: " + p);
  // After the fragments: only now are the counts known.
  return gpu::WriteGpuLoss(summary_ts, loss_, writer, out);
}

void GpuRecording::Finish(bool workload_running) {
  if (!own_dir_) return;
  if (workload_running) {
    warnings_.push_back("the command is still running; its later GPU fragments go to " + dir_ +
                        " (remove it when it is done)");
    return;
  }
  auto names = ListDirectory(dir_);
  if (names.ok())
    for (const auto& n : *names) ::unlink((dir_ + "/" + n).c_str());
  ::rmdir(dir_.c_str());
}

std::string GpuRecording::Summary() const {
  std::string out;
  if (!dir_.empty()) {
    out = fmt::format("GPU: {} processes, {} fragments ({} packets)", processes_, fragments_, packets_);
    std::string lost;
    auto add = [&](uint64_t n, std::string_view what) {
      if (n) lost += fmt::format("{}{} {}", lost.empty() ? "" : ", ", n, what);
    };
    add(loss_.cupti_dropped_records, "CUPTI records dropped");
    add(loss_.chunks_not_written, "chunks not written (directory not writable in time)");
    add(loss_.fragments_unreadable, "fragments unreadable");
    add(loss_.fragments_truncated, "fragments truncated");
    add(loss_.fragments_late, "fragments after the end");
    if (!lost.empty()) out += ", lost: " + lost;
    if (pod_dirs_)
      out += fmt::format("; pod directories: {} created, {} handed to their pod's user", pod_dirs_created_,
                         pod_dirs_handed_);
  }
  if (options_.counters) {
    if (!out.empty()) out += "; ";
    out += sampler_ ? fmt::format("NVML: {} GPUs, {} samples", nvml_gpus_, nvml_samples_)
                    : std::string("NVML: unavailable");
  }
  return out;
}

}  // namespace gpunoise::record
