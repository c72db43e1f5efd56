// NIC health: link speed and duplex against what the device supports, PCIe
// links trained below their maximum, TX timeouts, error counters that grow,
// MTU mismatches, ring sizes and interrupt coalescing.
#pragma once

#include <string>
#include <vector>

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

// Error counters under /sys/class/net/*/statistics that doctor samples; a
// rise between two samples means the NIC is losing packets now. rx_dropped
// is left out: it also counts frames of protocols nobody listens to.
const std::vector<std::string>& WatchedNicCounters();

// An RX ring smaller than this while the device allows more overflows in
// line-rate bursts (ethtool -G).
inline constexpr uint32_t kMinRxRing = 1024;
// RX interrupt delay above this (µs) adds visible latency to small messages.
inline constexpr uint32_t kMaxRxUsecs = 128;

CheckResult CheckNicLink(const DoctorInputs& in);      // nic.link
CheckResult CheckPcieLink(const DoctorInputs& in);     // pcie.link
CheckResult CheckTxTimeouts(const DoctorInputs& in);   // nic.tx_timeout
CheckResult CheckNicErrors(const DoctorInputs& in);    // nic.errors
CheckResult CheckMtu(const DoctorInputs& in);          // nic.mtu
CheckResult CheckRings(const DoctorInputs& in);        // nic.rings
CheckResult CheckCoalesce(const DoctorInputs& in);     // nic.coalesce

// "16.0 GT/s PCIe" -> 16.0; nullopt for "Unknown".
std::optional<double> ParseLinkSpeedGts(std::string_view text);

}  // namespace gpunoise::doctor
