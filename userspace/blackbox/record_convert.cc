#include "blackbox/record_convert.h"

#include "common/strings.h"

namespace gpunoise::blackbox {
namespace {

model::NetDevice Device(std::string_view name) {
  model::NetDevice d;
  d.name = model::NetDevName(name);
  return d;
}

int32_t I32(const RecordView& v, std::string_view name) {
  return static_cast<int32_t>(v.Int(name).value_or(0));
}
uint64_t U64(const RecordView& v, std::string_view name) { return v.Uint(name).value_or(0); }

// The typed payload for the tracepoints the model knows, nullopt otherwise.
std::optional<model::Payload> Typed(const EventFormat& f, const RecordView& v, std::string* irq_name) {
  const std::string& n = f.name;
  if (f.group == "sched") {
    if (n == "sched_switch") {
      model::SchedSwitch s;
      s.prev_tid = I32(v, "prev_pid");
      s.prev_state = v.Int("prev_state").value_or(0);
      s.next_tid = I32(v, "next_pid");
      s.next_prio = I32(v, "next_prio");
      s.next_comm = model::TaskComm(v.String("next_comm"));
      return s;
    }
    if (n == "sched_waking" || n == "sched_wakeup_new") {
      model::SchedWaking s;
      s.tid = I32(v, "pid");
      s.prio = I32(v, "prio");
      s.target_cpu = I32(v, "target_cpu");
      s.comm = model::TaskComm(v.String("comm"));
      s.is_new_task = n == "sched_wakeup_new";
      return s;
    }
    if (n == "sched_migrate_task") {
      model::SchedMigrate s;
      s.tid = I32(v, "pid");
      s.prio = I32(v, "prio");
      s.orig_cpu = I32(v, "orig_cpu");
      s.dest_cpu = I32(v, "dest_cpu");
      s.comm = model::TaskComm(v.String("comm"));
      return s;
    }
    if (n == "sched_process_exit") {
      model::ProcessExit s;
      s.tid = I32(v, "pid");
      s.prio = I32(v, "prio");
      s.comm = model::TaskComm(v.String("comm"));
      return s;
    }
    return std::nullopt;
  }
  if (f.group == "irq") {
    if (n == "irq_handler_entry") {
      if (irq_name) *irq_name = std::string(v.String("name"));
      return model::IrqEntry{I32(v, "irq")};
    }
    if (n == "irq_handler_exit") return model::IrqExit{I32(v, "irq"), I32(v, "ret")};
    auto vec = static_cast<uint32_t>(v.Uint("vec").value_or(0));
    if (n == "softirq_entry") return model::SoftirqEntry{vec};
    if (n == "softirq_exit") return model::SoftirqExit{vec};
    if (n == "softirq_raise") return model::SoftirqRaise{vec};
    return std::nullopt;
  }
  if (f.group == "irq_vectors" && (n == "local_timer_entry" || n == "local_timer_exit")) {
    int32_t vector = I32(v, "vector");
    if (n == "local_timer_entry") return model::VectorEntry{model::VectorKind::kLocalTimer, vector};
    return model::VectorExit{model::VectorKind::kLocalTimer, vector};
  }
  if (f.group == "napi" && n == "napi_poll") {
    model::NapiPoll p;
    p.dev = Device(v.String("dev_name"));
    p.work = I32(v, "work");
    p.budget = I32(v, "budget");
    return p;
  }
  if (f.group == "net") {
    if (n == "netif_receive_skb") {
      model::NetReceive r;
      r.dev = Device(v.String("name"));
      r.skbaddr = U64(v, "skbaddr");
      r.len = static_cast<uint32_t>(U64(v, "len"));
      return r;
    }
    if (n == "net_dev_xmit") {
      model::NetTransmit t;
      t.dev = Device(v.String("name"));
      t.skbaddr = U64(v, "skbaddr");
      t.len = static_cast<uint32_t>(U64(v, "len"));
      t.rc = I32(v, "rc");
      return t;
    }
    if (n == "net_dev_xmit_timeout") {
      model::NetTxTimeout t;
      t.dev = Device(v.String("name"));
      t.driver = model::NetDevName(v.String("driver"));
      t.queue = I32(v, "queue_index");
      return t;
    }
    return std::nullopt;
  }
  if (f.group == "skb" && n == "kfree_skb") {
    model::SkbDrop d;
    d.skbaddr = U64(v, "skbaddr");
    d.location = U64(v, "location");
    d.protocol = static_cast<uint16_t>(U64(v, "protocol"));
    d.reason = static_cast<uint32_t>(U64(v, "reason"));
    return d;
  }
  return std::nullopt;
}

}  // namespace

Converted ConvertRecord(const EventFormat& format, uint64_t ts, uint32_t cpu,
                        std::span<const uint8_t> payload, std::string* irq_name) {
  RecordView v(format.format, payload);
  if (payload.size() < 8) return std::monostate{};
  if (auto typed = Typed(format, v, irq_name)) {
    model::Event e;
    e.ts = ts;
    e.cpu = cpu;
    e.tid = v.pid();
    e.common_flags = v.flags();
    e.payload = std::move(*typed);
    return e;
  }
  GenericRecord g;
  g.ts = ts;
  g.cpu = cpu;
  g.tid = v.pid();
  g.common_flags = v.flags();
  g.event = format.name;
  g.group = format.group;
  for (const collect::TraceField& f : format.format.fields) {
    if (f.is_common) continue;
    GenericField out;
    out.name = f.name;
    bool stringy = StartsWith(f.type, "__data_loc") || StartsWith(f.type, "__rel_loc") ||
                   ((StartsWith(f.type, "char") || StartsWith(f.type, "const char")) &&
                    f.type.find('[') != std::string::npos);
    if (stringy) {
      out.is_string = true;
      out.text = std::string(v.String(f.name));
      // A marker or a printk line ends with its newline; the field does not.
      while (!out.text.empty() && (out.text.back() == '\n' || out.text.back() == '\0'))
        out.text.pop_back();
    } else if (auto value = v.Int(f.name)) {
      out.value = *value;
    } else {
      continue;  // arrays and wide fields: not representable as one number
    }
    g.fields.push_back(std::move(out));
  }
  return g;
}

}  // namespace gpunoise::blackbox
