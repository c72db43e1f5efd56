#include "blackbox/buffer_decoder.h"

#include <algorithm>

namespace gpunoise::blackbox {

uint64_t LostRecords(const CpuDecodeStats& decoded, const CpuBufferStats& kernel) {
  uint64_t counted = kernel.overrun + kernel.commit_overrun + kernel.dropped_events;
  return std::max(decoded.loss(), counted);
}

CpuDecodeStats DecodeCpuPages(uint32_t cpu, std::span<const std::vector<uint8_t>> pages,
                              const PageLayout& layout, const EventTable& table,
                              const DecodeCallbacks& callbacks) {
  CpuDecodeStats s;
  s.cpu = cpu;
  std::vector<model::Event> batch;  // one page's events, reused
  std::string irq_name;
  uint64_t previous_ts = 0;
  for (const std::vector<uint8_t>& page : pages) {
    batch.clear();
    uint64_t clock = 0;
    PageResult r = DecodePage(layout, page, &clock, [&](const RawRecord& rec) {
      ++s.records;
      if (previous_ts && rec.ts < previous_ts) ++s.backwards;
      previous_ts = rec.ts;
      if (!s.first_ts) s.first_ts = rec.ts;
      s.last_ts = rec.ts;
      auto type = RecordType(rec.payload);
      const EventFormat* format = type ? table.Find(*type) : nullptr;
      if (!format) {
        ++s.unknown_ids;
        return;
      }
      irq_name.clear();
      Converted c = ConvertRecord(*format, rec.ts, cpu, rec.payload, &irq_name);
      if (auto* e = std::get_if<model::Event>(&c)) {
        ++s.events;
        if (!irq_name.empty() && callbacks.on_irq_name) {
          if (auto* entry = std::get_if<model::IrqEntry>(&e->payload)) callbacks.on_irq_name(entry->irq, irq_name);
        }
        batch.push_back(std::move(*e));
      } else if (auto* g = std::get_if<GenericRecord>(&c)) {
        ++s.generic;
        if (callbacks.on_generic) callbacks.on_generic(*g);
      } else {
        ++s.unknown_ids;  // too short to hold its common fields
      }
    });
    ++s.pages;
    const PageSummary& p = r.summary;
    if (p.missed_events) {
      ++s.pages_with_loss;
      if (p.missed_stored) s.lost_records += p.missed_count;
      else ++s.loss_uncounted_pages;
    }
    s.discarded += p.discarded;
    s.time_extends += p.time_extends;
    s.time_stamps += p.time_stamps;
    if (r.error != PageError::kNone) ++s.damaged_pages;
    if ((!batch.empty() || p.missed_events) && callbacks.on_events)
      callbacks.on_events(cpu, batch, p.missed_events);
  }
  return s;
}

}  // namespace gpunoise::blackbox
