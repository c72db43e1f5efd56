// The end of writing a black-box trace that a live collect and a text
// import share: one CPU's generic records (tracepoints without a typed
// ftrace message) as GenericFtraceBundle packets.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "blackbox/record_convert.h"
#include "common/result.h"

namespace gpunoise::blackbox {

// Records per bundle (one bundle is one packet).
inline constexpr size_t kGenericRecordsPerBundle = 512;

// Encodes `records` (one CPU's, in order) as bundles of at most
// kGenericRecordsPerBundle and hands each packet to `write`; stops at the
// first error `write` returns (a caller that wants to go on returns OK).
Status WriteGenericBundles(uint32_t cpu, std::span<const GenericRecord* const> records,
                           const std::function<Status(std::string_view packet)>& write);

}  // namespace gpunoise::blackbox
