#include "doctor/gpu_checks.h"

#include <fmt/format.h>

#include <functional>

#include "doctor/check_util.h"

namespace gpunoise::doctor {
namespace {

// Runs `judge` on each GPU's latest NVML reading and combines the outcomes;
// handles the no-GPU and no-NVML cases the same way for every GPU check.
struct GpuOutcome {
  Verdict verdict = Verdict::kUnknown;
  std::string text;
};
using Judge = std::function<GpuOutcome(const std::string& bdf, const GpuHealth& health)>;

CheckResult ForEachGpu(const DoctorInputs& in, std::string id, const char* why, const Judge& judge,
                       const std::string& fix) {
  auto gpus = in.inventory.OfKind(PciKind::kGpu);
  if (gpus.empty()) return Unknown(id, "no NVIDIA GPU (PCI class 0x03, vendor 0x10de) on this node", why);
  if (!in.nvml_unavailable.empty()) return Unknown(id, in.nvml_unavailable, why);
  CheckResult r;
  r.id = std::move(id);
  r.why = why;
  std::vector<std::string> problems, good, unknown;
  Verdict worst = Verdict::kUnknown;
  for (const PciDevice* gpu : gpus) {
    auto it = in.Last().gpus.find(gpu->bdf);
    if (it == in.Last().gpus.end()) {
      unknown.push_back(fmt::format("GPU {}: not read", gpu->bdf));
      continue;
    }
    if (!it->second.ok()) {
      unknown.push_back(fmt::format("GPU {}: {}", gpu->bdf, it->second.error().message));
      continue;
    }
    GpuOutcome o = judge(gpu->bdf, *it->second);
    std::string text = fmt::format("GPU {}: {}", gpu->bdf, o.text);
    worst = Worse(worst, o.verdict);
    if (o.verdict == Verdict::kWarn || o.verdict == Verdict::kFail) problems.push_back(text);
    else if (o.verdict == Verdict::kOk) good.push_back(text);
    else unknown.push_back(text);
  }
  r.details = problems;
  r.details.insert(r.details.end(), good.begin(), good.end());
  r.details.insert(r.details.end(), unknown.begin(), unknown.end());
  r.verdict = worst;
  if (!problems.empty()) {
    r.saw = JoinLimited(problems, 3);
    r.fix = fix;
  } else if (!good.empty()) {
    r.saw = JoinLimited(good, 3);
  } else {
    r.saw = JoinLimited(unknown, 3);
  }
  return r;
}

}  // namespace

CheckResult CheckPersistence(const DoctorInputs& in) {
  return ForEachGpu(
      in, "gpu.persistence",
      "without persistence mode the driver tears the GPU down when the last process exits and re-initializes it "
      "(seconds) at the next job start, and clock/ECC settings do not stick",
      [](const std::string&, const GpuHealth& h) -> GpuOutcome {
        if (!h.persistence_mode) return {Verdict::kUnknown, "persistence mode not reported"};
        if (*h.persistence_mode) return {Verdict::kOk, "persistence mode on"};
        return {Verdict::kWarn, "persistence mode off"};
      },
      "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1)");
}

CheckResult CheckThrottle(const DoctorInputs& in) {
  return ForEachGpu(
      in, "gpu.throttle",
      "a GPU slowed by hardware (thermal, power brake) or software (power cap, thermal) runs every kernel "
      "slower, and one slow GPU sets the pace of every collective",
      [](const std::string&, const GpuHealth& h) -> GpuOutcome {
        if (!h.throttle_reasons) return {Verdict::kUnknown, "throttle reasons not reported"};
        uint64_t mask = *h.throttle_reasons;
        std::string names = ThrottleReasonNames(mask);
        if (mask & (kThrottleHwSlowdown | kThrottleHwThermal | kThrottleHwPowerBrake))
          return {Verdict::kFail, "hardware slowdown: " + names};
        if (mask & (kThrottleSwThermal | kThrottleSwPowerCap)) return {Verdict::kWarn, "slowed: " + names};
        return {Verdict::kOk, names.empty() ? "clocks not held back" : "clocks not held back (" + names + ")"};
      },
      "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER; check airflow, inlet temperature and PSU/power capping");
}

CheckResult CheckEcc(const DoctorInputs& in) {
  return ForEachGpu(
      in, "gpu.ecc",
      "uncorrectable ECC errors corrupt results or kill the job; pending page retirement or row remapping takes "
      "effect only after a GPU reset, and a failed remap means the GPU needs service",
      [](const std::string&, const GpuHealth& h) -> GpuOutcome {
        std::vector<std::string> bad, warn, fine;
        if (h.ecc_enabled && !*h.ecc_enabled) warn.push_back("ECC disabled");
        if (h.ecc_uncorrected_volatile && *h.ecc_uncorrected_volatile)
          bad.push_back(fmt::format("{} uncorrectable ECC errors since driver load", *h.ecc_uncorrected_volatile));
        if (h.remapped_rows && h.remapped_rows->failure) bad.push_back("row remapping failed");
        if (h.remapped_rows && h.remapped_rows->pending) warn.push_back("row remap pending a GPU reset");
        if (h.retired_pages_pending && *h.retired_pages_pending) warn.push_back("page retirement pending a GPU reset");
        if (h.ecc_uncorrected_aggregate && *h.ecc_uncorrected_aggregate)
          warn.push_back(fmt::format("{} uncorrectable ECC errors over its life", *h.ecc_uncorrected_aggregate));
        if (h.retired_pages_dbe && *h.retired_pages_dbe)
          warn.push_back(fmt::format("{} pages retired for double-bit errors", *h.retired_pages_dbe));
        if (h.ecc_corrected_volatile) fine.push_back(fmt::format("{} corrected errors", *h.ecc_corrected_volatile));
        if (h.remapped_rows)
          fine.push_back(fmt::format("{}+{} remapped rows", h.remapped_rows->correctable, h.remapped_rows->uncorrectable));
        if (h.retired_pages_sbe) fine.push_back(fmt::format("{} SBE-retired pages", *h.retired_pages_sbe));
        bool any = h.ecc_enabled || h.ecc_uncorrected_volatile || h.remapped_rows || h.retired_pages_pending ||
                   h.ecc_uncorrected_aggregate || h.retired_pages_dbe;
        if (!any) return {Verdict::kUnknown, "ECC not supported or not reported"};
        std::vector<std::string> all = bad;
        all.insert(all.end(), warn.begin(), warn.end());
        all.insert(all.end(), fine.begin(), fine.end());
        std::string text = JoinLimited(all, 4);
        if (!bad.empty()) return {Verdict::kFail, text};
        if (!warn.empty()) return {Verdict::kWarn, text};
        return {Verdict::kOk, text.empty() ? "no ECC errors" : text};
      },
      "drain the node; nvidia-smi -r (GPU reset) applies pending retirements/remaps; a failed remap or recurring "
      "uncorrectable errors: RMA the GPU");
}

CheckResult CheckPcieReplay(const DoctorInputs& in) {
  const bool growth = in.HasGrowth();
  const DoctorInputs* inputs = &in;
  return ForEachGpu(
      in, "gpu.pcie_replay",
      "PCIe replays are link-level retransmissions: a rising count means a marginal slot, riser or cable, and "
      "each replay stalls the transfer it belongs to",
      [growth, inputs](const std::string& bdf, const GpuHealth& h) -> GpuOutcome {
        if (!h.pcie_replays) return {Verdict::kUnknown, "replay counter not reported"};
        if (!growth) return {Verdict::kUnknown, fmt::format("{} replays since boot (growth not sampled)", *h.pcie_replays)};
        auto before = inputs->First().gpus.find(bdf);
        uint64_t grew = 0;
        if (before != inputs->First().gpus.end() && before->second.ok() && before->second->pcie_replays &&
            *h.pcie_replays > *before->second->pcie_replays)
          grew = *h.pcie_replays - *before->second->pcie_replays;
        if (grew) return {Verdict::kWarn, fmt::format("{} replays (+{} during sampling)", *h.pcie_replays, grew)};
        return {Verdict::kOk, fmt::format("{} replays since boot, none during sampling", *h.pcie_replays)};
      },
      "reseat the GPU or its riser; nvidia-smi -q -d PCIE shows the replay and link state");
}

}  // namespace gpunoise::doctor
