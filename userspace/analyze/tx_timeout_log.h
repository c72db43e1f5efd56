// One TX timeout, one finding: the TX watchdog fires the tracepoint
// (net_dev_xmit_timeout, nic_trouble's typed device and queue) and prints
// its line (NETDEV WATCHDOG, or the driver's own "TX timeout detected")
// within microseconds. nic_trouble's tx_timeout finding quotes the line;
// the kernel_log finding of that line would say the same thing twice, so it
// is left out. Lines are joined to a finding by the typed device (the
// netdev name, or the NIC's bus address through DEVICE=) and a time window,
// never by the finding's text.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"
#include "model/kernel_log.h"

namespace gpunoise::analyze {

// The bus address (ethtool bus-info, "0000:3b:00.0") of each NIC the trace
// describes, by netdev name.
std::map<std::string, std::string> NicBusAddresses(const AnalysisContext& ctx);

// Whether `e` is a TX-timeout line (model::KernelLogClass::kTxTimeout) of
// netdev `device` (bus address `bus_info`, empty when unknown) within
// `window_ns` of [start, end]. The device must be named by the record's
// own fields: the device its pattern captured or `about` ("eth1"), or its
// DEVICE= field / `about` naming the bus address ("+pci:0000:3b:00.0").
// Records written from user space (facility != 0) never are.
bool IsTxTimeoutLineOf(const model::KernelLogEntry& e, std::string_view device, std::string_view bus_info,
                       uint64_t start, uint64_t end, uint64_t window_ns);

// The kernel log records that nic_trouble tx_timeout findings among
// `findings` claim (threshold nic.tx_timeout_log_window), as indices into
// the timeline's kernel_log, sorted.
std::vector<size_t> TxTimeoutLinesClaimed(const AnalysisContext& ctx, std::span<const Finding> findings);

}  // namespace gpunoise::analyze
