// GPU health as NVML reports it, per GPU (by PCI address). Each field is
// absent when NVML does not support it on that GPU or could not read it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/result.h"
#include "collect/nvml_api.h"

namespace gpunoise::doctor {

// Throttle reason bits and their names are NVML's, shared with the
// recorder's GPU counters.
using gpu::kThrottleApplicationsClocks;
using gpu::kThrottleDisplayClocks;
using gpu::kThrottleGpuIdle;
using gpu::kThrottleHwPowerBrake;
using gpu::kThrottleHwSlowdown;
using gpu::kThrottleHwThermal;
using gpu::kThrottleSwPowerCap;
using gpu::kThrottleSwThermal;
using gpu::kThrottleSyncBoost;
using gpu::ThrottleReasonNames;

struct RemappedRows {
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  bool pending = false;  // a remap waits for a GPU reset
  bool failure = false;  // remapping failed: the GPU needs service
};

struct GpuHealth {
  std::optional<bool> persistence_mode;
  std::optional<uint64_t> throttle_reasons;
  std::optional<bool> ecc_enabled;
  std::optional<uint64_t> ecc_uncorrected_volatile;   // since the driver loaded
  std::optional<uint64_t> ecc_uncorrected_aggregate;  // over the GPU's life
  std::optional<uint64_t> ecc_corrected_volatile;
  std::optional<unsigned> retired_pages_sbe;  // multiple single-bit errors
  std::optional<unsigned> retired_pages_dbe;  // double-bit errors
  std::optional<bool> retired_pages_pending;
  std::optional<RemappedRows> remapped_rows;  // Ampere and newer instead of page retirement
  std::optional<unsigned> pcie_replays;
};

// Reads one GPU by PCI address ("0000:17:00.0").
using GpuHealthSource = std::function<Result<GpuHealth>(const std::string& pci_bdf)>;

}  // namespace gpunoise::doctor
