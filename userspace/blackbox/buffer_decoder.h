// Decodes one CPU's pages (in the order the kernel handed them out) into
// model events and generic records, counting what a crash investigator must
// know about the data: pages, records, loss the kernel flagged, records of
// ids no format describes, damaged pages, and time going backwards.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "blackbox/event_formats.h"
#include "blackbox/instance_reader.h"
#include "blackbox/record_convert.h"
#include "blackbox/ring_page.h"

namespace gpunoise::blackbox {

struct CpuDecodeStats {
  uint32_t cpu = 0;
  uint64_t pages = 0;
  uint64_t records = 0;            // data records (what per_cpu/cpuN/stats counts as entries)
  uint64_t events = 0;             // of them, model events
  uint64_t generic = 0;            // of them, generic records
  uint64_t unknown_ids = 0;        // of them, ids no format describes (not decoded)
  uint64_t pages_with_loss = 0;    // pages flagged RB_MISSED_EVENTS
  uint64_t lost_records = 0;       // the counts the kernel stored on them
  uint64_t loss_uncounted_pages = 0;  // flagged pages without a stored count
  uint64_t discarded = 0, time_extends = 0, time_stamps = 0;
  uint64_t damaged_pages = 0;      // pages cut short by a PageError
  uint64_t backwards = 0;          // records earlier than the one before
  uint64_t first_ts = 0, last_ts = 0;
  // Loss as a count to report: stored counts, plus one per flagged page that
  // had none (the kernel knew records were lost, not how many).
  uint64_t loss() const { return lost_records + loss_uncounted_pages; }
};

struct DecodeCallbacks {
  // The model events of one page (sorted by time) and whether records were
  // lost before them.
  std::function<void(uint32_t cpu, std::span<const model::Event> events, bool lost_before)> on_events;
  std::function<void(const GenericRecord& record)> on_generic;
  std::function<void(int32_t irq, std::string_view name)> on_irq_name;
};

// Records a CPU lost, by the best count there is: the counts the kernel
// stored on flagged pages, or, where a full page had no room for one, the
// buffer's own overrun/commit-overrun/dropped counters (`kernel`, read
// before the pages; a buffer of an earlier boot may have zeros there).
uint64_t LostRecords(const CpuDecodeStats& decoded, const CpuBufferStats& kernel);

CpuDecodeStats DecodeCpuPages(uint32_t cpu, std::span<const std::vector<uint8_t>> pages,
                              const PageLayout& layout, const EventTable& table,
                              const DecodeCallbacks& callbacks);

}  // namespace gpunoise::blackbox
