// The GPU side of `gpunoise record`: the fragment directory and injection
// environment for `-- CMD`, collection of fragments written by processes
// started separately (`--gpu-dir`), and NVML counters sampled while the
// recording runs. Plugs into RecordOptions (start_workload, append_extra).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"
#include "collect/nvml_sampler.h"
#include "model/gpu_loss.h"
#include "model/pid_ns_map.h"
#include "model/session_info.h"

namespace gpunoise::perfetto {
class TraceFileWriter;
}
namespace gpunoise::collect {
class PodFragmentDirs;
}

namespace gpunoise::record {

struct GpuRecordingOptions {
  // `-- CMD`: fragments go to a private directory made for this recording.
  bool capture_workload = false;
  // `--gpu-dir DIR`: collect fragments other processes write there.
  std::string collect_dir;
  // `--gpu-pod-dirs ROOT`: one directory per pod under ROOT, made and
  // handed to each pod's user while the recording runs
  // (collect/pod_fragment_dirs.h); fragments are collected from all.
  std::string pod_dirs_root;
  std::string kubelet_log_dir = "/var/log";
  // NVML counters; `counters_requested` makes a missing NVML worth a line
  // on stderr (it always gets a note in the trace).
  bool counters = true;
  bool counters_requested = false;
  uint64_t sample_interval_ns = 100000000ull;
  // Route NVTX to CUPTI in the workload.
  bool nvtx = true;
  // The workload's owner under sudo: the private directory is made theirs.
  int owner_uid = -1;
  int owner_gid = -1;
};

class GpuRecording {
 public:
  // `exe_path` locates libgpunoise_cupti.so beside the gpunoise binary.
  static Result<std::unique_ptr<GpuRecording>> Create(const GpuRecordingOptions& options,
                                                      const std::string& exe_path);
  ~GpuRecording();

  // Environment for the workload; empty when GPU capture is not possible
  // (the reason is in warnings()).
  const std::vector<std::pair<std::string, std::string>>& workload_env() const { return env_; }
  const std::string& fragment_dir() const { return dir_; }

  // When the recording starts: NVML sampling begins, and with pod
  // directories the pass that makes and hands them over every second.
  void Begin();
  // After the kernel side: NVML counters (or the note why there are none)
  // and the GPU fragments of the recording window.
  Status Append(perfetto::TraceFileWriter& out, const model::SessionInfo& session);
  // Removes the private directory; kept (and said so) if the workload is
  // still running and may write more.
  void Finish(bool workload_running);

  // One line for the end of the recording: "GPU: 3 processes, 41 fragments, ...".
  std::string Summary() const;
  // Which host task has which ids inside pid namespaces: the recording
  // fills it (RecordOptions::pid_ns_map), Append translates the fragments
  // of containerized processes with it.
  model::PidNsMap* pid_ns_map() { return &pid_ns_map_; }
  // What the GPU side lost, as Append wrote it into the trace.
  const model::GpuLoss& loss() const { return loss_; }
  // Lines for stderr not yet said (no injection library, no NVML, a bad
  // fragment); each is handed out once.
  std::vector<std::string> TakeWarnings() {
    std::lock_guard<std::mutex> lock(pod_dirs_mu_);
    return std::exchange(warnings_, {});
  }
  // Lines for stderr that are information, not warnings (no NVML on a
  // recording that did not ask for GPU data).
  std::vector<std::string> TakeInfos() { return std::exchange(infos_, {}); }

 private:
  GpuRecording() = default;
  // One pass over the pod directories; its lines go to warnings_.
  void UpdatePodDirs();
  void StopPodDirs();

  GpuRecordingOptions options_;
  std::vector<std::pair<std::string, std::string>> env_;
  std::string dir_;
  bool own_dir_ = false;
  std::string node_id_;
  std::unique_ptr<gpu::NvmlSampler> sampler_;
  std::string nvml_unavailable_;
  size_t fragments_ = 0, processes_ = 0;
  uint64_t packets_ = 0;
  size_t nvml_gpus_ = 0, nvml_samples_ = 0;
  model::GpuLoss loss_;
  model::PidNsMap pid_ns_map_;
  std::vector<std::string> warnings_;
  std::vector<std::string> infos_;
  std::unique_ptr<collect::PodFragmentDirs> pod_dirs_;
  size_t pod_dirs_created_ = 0, pod_dirs_handed_ = 0;
  std::thread pod_dirs_thread_;
  std::mutex pod_dirs_mu_;  // pod_dirs_, its counts and warnings_ while the thread runs
  std::condition_variable pod_dirs_cv_;
  bool pod_dirs_stop_ = false;
  std::set<std::string> pod_dirs_said_;
};

}  // namespace gpunoise::record
