#include "blackbox/text_dump.h"

#include <fmt/format.h>

#include <cctype>

#include "common/strings.h"

namespace gpunoise::blackbox {
namespace {

bool Digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Digits naming a CPU a trace may carry (model::kMaxTraceCpus): everything
// after the parse sizes per-CPU tables by it.
bool CpuNumber(std::string_view s) {
  if (!Digits(s) || s.size() > 5) return false;
  uint64_t n = 0;
  for (char c : s) n = n * 10 + static_cast<uint64_t>(c - '0');
  return n < model::kMaxTraceCpus;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// A printk time "[  123.456789]" (and a caller id "[T123]" after it), a
// syslog priority "<4>": what a console, netconsole or pstore capture puts
// before the dump's own text.
std::string_view StripConsolePrefix(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (line.size() > 2 && line[0] == '<') {
    size_t close = line.find('>');
    if (close != std::string_view::npos && close <= 4 && Digits(line.substr(1, close - 1))) line.remove_prefix(close + 1);
  }
  bool stamped = false;
  while (!line.empty() && line[0] == '[') {
    size_t close = line.find(']');
    if (close == std::string_view::npos) break;
    std::string_view inside = Trim(line.substr(1, close - 1));
    bool time = inside.find('.') != std::string_view::npos && Digits(inside.substr(0, inside.find('.'))) &&
                Digits(inside.substr(inside.find('.') + 1));
    bool caller = stamped && inside.size() > 1 && (inside[0] == 'T' || inside[0] == 'C') && Digits(inside.substr(1));
    if (!time && !caller) break;
    stamped = true;
    line.remove_prefix(close + 1);
    if (!line.empty() && line[0] == ' ') line.remove_prefix(1);
  }
  return line;
}

// The flags column (trace_print_lat_fmt): irqs off, need-resched, hardirq /
// softirq / NMI context, as the trace's common_flags bits
// (kernel/trace/trace.h TRACE_FLAG_*).
uint16_t FlagBits(std::string_view f) {
  uint16_t bits = 0;
  if (!f.empty() && (f[0] == 'd' || f[0] == 'D')) bits |= 0x01;  // IRQS_OFF
  if (f.size() > 1 && (f[1] == 'N' || f[1] == 'n')) bits |= 0x04;  // NEED_RESCHED
  if (f.size() > 1 && (f[1] == 'N' || f[1] == 'p')) bits |= 0x20;  // PREEMPT_RESCHED
  if (f.size() > 2) {
    switch (f[2]) {
      case 'h': bits |= 0x08; break;
      case 's': bits |= 0x10; break;
      case 'H': bits |= 0x18; break;
      case 'z': bits |= 0x40; break;
      case 'Z': bits |= 0x48; break;
      default: break;
    }
  }
  return bits;
}

// "key=value" at the start of the body or after a space; the value runs to
// the next space, or to `until` (a comm may hold spaces).
std::string_view Field(std::string_view body, std::string_view key, std::string_view until = {}) {
  std::string k = std::string(key) + "=";
  for (size_t at = body.find(k); at != std::string_view::npos; at = body.find(k, at + 1)) {
    if (at != 0 && body[at - 1] != ' ') continue;
    std::string_view v = body.substr(at + k.size());
    size_t end = until.empty() ? v.find(' ') : v.find(until);
    return end == std::string_view::npos ? v : v.substr(0, end);
  }
  return {};
}

int64_t Int(std::string_view s) {
  if (auto v = ParseInt64(s)) return *v;
  return 0;
}
uint64_t Hex(std::string_view s) {
  if (StartsWith(s, "0x")) s.remove_prefix(2);
  uint64_t v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) break;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// prev_state as sched_switch prints it ("S", "D|K", "R+", "I"): back to the
// report-state bits its field holds (include/trace/events/sched.h).
int64_t TaskState(std::string_view s) {
  int64_t v = 0;
  for (char c : s) {
    switch (c) {
      case 'S': v |= 0x01; break;
      case 'D': v |= 0x02; break;
      case 'T': v |= 0x04; break;
      case 't': v |= 0x08; break;
      case 'X': v |= 0x10; break;
      case 'Z': v |= 0x20; break;
      case 'P': v |= 0x40; break;
      case 'I': v |= 0x80; break;
      case '+': v |= model::task_state::kPreempted; break;
      default: break;
    }
  }
  return v;
}

model::NetDevice Device(std::string_view name) {
  model::NetDevice d;
  d.name = model::NetDevName(name);
  return d;
}

// The typed payload of the events the model knows, by their print formats.
std::optional<model::Payload> Typed(std::string_view event, std::string_view b, std::string* irq_name) {
  if (event == "sched_switch") {
    model::SchedSwitch s;
    s.prev_tid = static_cast<int32_t>(Int(Field(b, "prev_pid")));
    s.prev_state = TaskState(Field(b, "prev_state"));
    s.next_tid = static_cast<int32_t>(Int(Field(b, "next_pid")));
    s.next_prio = static_cast<int32_t>(Int(Field(b, "next_prio")));
    s.next_comm = model::TaskComm(Field(b, "next_comm", " next_pid="));
    if (Field(b, "next_pid").empty()) return std::nullopt;
    return s;
  }
  if (event == "sched_waking" || event == "sched_wakeup_new") {
    model::SchedWaking s;
    s.tid = static_cast<int32_t>(Int(Field(b, "pid")));
    s.prio = static_cast<int32_t>(Int(Field(b, "prio")));
    s.target_cpu = static_cast<int32_t>(Int(Field(b, "target_cpu")));
    s.comm = model::TaskComm(Field(b, "comm", " pid="));
    s.is_new_task = event == "sched_wakeup_new";
    if (Field(b, "pid").empty()) return std::nullopt;
    return s;
  }
  if (event == "sched_migrate_task") {
    model::SchedMigrate s;
    s.tid = static_cast<int32_t>(Int(Field(b, "pid")));
    s.prio = static_cast<int32_t>(Int(Field(b, "prio")));
    s.orig_cpu = static_cast<int32_t>(Int(Field(b, "orig_cpu")));
    s.dest_cpu = static_cast<int32_t>(Int(Field(b, "dest_cpu")));
    s.comm = model::TaskComm(Field(b, "comm", " pid="));
    return s;
  }
  if (event == "sched_process_exit") {
    model::ProcessExit s;
    s.tid = static_cast<int32_t>(Int(Field(b, "pid")));
    s.prio = static_cast<int32_t>(Int(Field(b, "prio")));
    s.comm = model::TaskComm(Field(b, "comm", " pid="));
    return s;
  }
  if (event == "irq_handler_entry") {
    if (irq_name) *irq_name = std::string(Field(b, "name"));
    return model::IrqEntry{static_cast<int32_t>(Int(Field(b, "irq")))};
  }
  if (event == "irq_handler_exit")  // IRQ_HANDLED is 1, IRQ_NONE 0
    return model::IrqExit{static_cast<int32_t>(Int(Field(b, "irq"))), Field(b, "ret") == "handled" ? 1 : 0};
  if (event == "softirq_entry" || event == "softirq_exit" || event == "softirq_raise") {
    std::string_view vec = Field(b, "vec");
    if (!Digits(vec)) return std::nullopt;
    auto v = static_cast<uint32_t>(Int(vec));
    if (event == "softirq_entry") return model::SoftirqEntry{v};
    if (event == "softirq_exit") return model::SoftirqExit{v};
    return model::SoftirqRaise{v};
  }
  if (event == "local_timer_entry") return model::VectorEntry{model::VectorKind::kLocalTimer, static_cast<int32_t>(Int(Field(b, "vector")))};
  if (event == "local_timer_exit") return model::VectorExit{model::VectorKind::kLocalTimer, static_cast<int32_t>(Int(Field(b, "vector")))};
  if (event == "napi_poll") {
    // "napi poll on napi struct %p for device %s work %d budget %d"
    std::vector<std::string_view> w = Split(b, ' ');
    model::NapiPoll p;
    bool ok = false;
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] == "device") p.dev = Device(w[i + 1]), ok = true;
      if (w[i] == "work") p.work = static_cast<int32_t>(Int(w[i + 1]));
      if (w[i] == "budget") p.budget = static_cast<int32_t>(Int(w[i + 1]));
    }
    if (!ok) return std::nullopt;
    return p;
  }
  if (event == "netif_receive_skb") {
    model::NetReceive r;
    r.dev = Device(Field(b, "dev"));
    r.skbaddr = Hex(Field(b, "skbaddr"));
    r.len = static_cast<uint32_t>(Int(Field(b, "len")));
    return r;
  }
  if (event == "net_dev_xmit") {
    model::NetTransmit t;
    t.dev = Device(Field(b, "dev"));
    t.skbaddr = Hex(Field(b, "skbaddr"));
    t.len = static_cast<uint32_t>(Int(Field(b, "len")));
    t.rc = static_cast<int32_t>(Int(Field(b, "rc")));
    return t;
  }
  if (event == "net_dev_xmit_timeout") {
    model::NetTxTimeout t;
    t.dev = Device(Field(b, "dev"));
    t.driver = model::NetDevName(Field(b, "driver"));
    t.queue = static_cast<int32_t>(Int(Field(b, "queue")));
    return t;
  }
  return std::nullopt;
}

// Fields of an event the model has no type for: its "key=value" words
// (numbers as numbers), or the whole text as "text".
GenericRecord Generic(const TextEventLine& l) {
  GenericRecord g;
  g.ts = l.ts;
  g.cpu = l.cpu;
  g.tid = l.pid;
  g.common_flags = l.flags;
  g.event = l.event == "tracing_mark_write" ? "print" : std::string(l.event);
  if (g.event == "print") {
    g.fields.push_back({"buf", true, 0, std::string(l.body)});
    return g;
  }
  for (std::string_view word : Split(l.body, ' ')) {
    size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    GenericField f;
    f.name = std::string(word.substr(0, eq));
    std::string_view v = word.substr(eq + 1);
    if (auto n = ParseInt64(v)) f.value = *n;
    else f.is_string = true, f.text = std::string(v);
    g.fields.push_back(std::move(f));
  }
  if (g.fields.empty()) g.fields.push_back({"text", true, 0, std::string(l.body)});
  return g;
}

bool IsDashes(std::string_view s) {
  s = Trim(s);
  return s.size() >= 10 && s.find_first_not_of('-') == std::string_view::npos;
}

}  // namespace

bool ParseTextEventLine(std::string_view line, TextEventLine* out) {
  // The CPU column "[001]" after "comm-pid" (and a "(tgid)" column).
  size_t open = std::string_view::npos, close = 0;
  for (size_t at = line.find(" ["); at != std::string_view::npos; at = line.find(" [", at + 1)) {
    size_t c = line.find(']', at);
    if (c != std::string_view::npos && Digits(line.substr(at + 2, c - at - 2))) {
      open = at + 1;
      close = c;
      break;
    }
  }
  if (open == std::string_view::npos) return false;
  std::string_view task = Trim(line.substr(0, open));
  if (!task.empty() && task.back() == ')') {  // record-tgid: "comm-123   (  120)"
    size_t paren = task.rfind('(');
    if (paren == std::string_view::npos) return false;
    task = Trim(task.substr(0, paren));
  }
  size_t dash = task.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || !Digits(task.substr(dash + 1))) return false;
  out->comm = std::string(task.substr(0, dash));
  out->pid = static_cast<int32_t>(Int(task.substr(dash + 1)));
  std::string_view cpu = line.substr(open + 1, close - open - 1);
  if (!CpuNumber(cpu)) return false;
  out->cpu = static_cast<uint32_t>(Int(cpu));
  std::string_view rest = TrimLeft(line.substr(close + 1));
  // Flags (irq-info), then "SECONDS.FRACTION: ".
  out->flags = 0;
  size_t sp = rest.find(' ');
  if (sp == std::string_view::npos) return false;
  std::string_view word = rest.substr(0, sp);
  if (word.back() != ':') {
    out->flags = FlagBits(word);
    rest = TrimLeft(rest.substr(sp + 1));
    sp = rest.find(' ');
    if (sp == std::string_view::npos) return false;
    word = rest.substr(0, sp);
  }
  if (word.size() < 4 || word.back() != ':') return false;
  std::string_view stamp = word.substr(0, word.size() - 1);
  size_t dot = stamp.find('.');
  if (dot == std::string_view::npos || !Digits(stamp.substr(0, dot)) || !Digits(stamp.substr(dot + 1)) ||
      stamp.size() - dot - 1 > 9)
    return false;
  uint64_t frac = static_cast<uint64_t>(Int(stamp.substr(dot + 1)));
  for (size_t d = stamp.size() - dot - 1; d < 9; ++d) frac *= 10;
  out->ts = static_cast<uint64_t>(Int(stamp.substr(0, dot))) * 1'000'000'000 + frac;
  rest = rest.substr(sp + 1);
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0 || rest.substr(0, colon).find(' ') != std::string_view::npos)
    return false;
  out->event = rest.substr(0, colon);
  out->body = rest.substr(colon + 1);
  if (!out->body.empty() && out->body.front() == ' ') out->body.remove_prefix(1);
  return true;
}

Result<TextDump> ParseTextDump(std::string_view text) {
  TextDump d;
  uint64_t promised = 0;
  bool in_dump = false, dump_ended = false, dump_begun = false;
  size_t number = 0;
  std::vector<std::string_view> lines = Split(text, '\n');
  const bool ends_with_newline = !text.empty() && text.back() == '\n';
  // A console capture holds the oops and more around the dump: only what is
  // between the dump's own lines is the ring.
  d.console_dump = text.find("Dumping ftrace buffer:") != std::string_view::npos;
  size_t bad_line = 0;
  std::string bad_text;
  for (size_t i = 0; i < lines.size(); ++i) {
    ++number;
    std::string_view raw = lines[i];
    if (i + 1 == lines.size() && raw.empty()) break;  // after the last newline
    std::string_view line = StripConsolePrefix(raw);
    std::string_view t = Trim(line);
    if (t.find("Dumping ftrace buffer:") != std::string_view::npos) {
      dump_begun = true;
      continue;
    }
    if (d.console_dump && dump_begun && IsDashes(t)) {
      if (!in_dump && !dump_ended) in_dump = true;
      else if (in_dump) in_dump = false, dump_ended = true;
      continue;
    }
    if (d.console_dump && !in_dump) continue;  // the rest of the console: not the ring
    if (t.empty()) continue;
    if (t[0] == '#') {
      // "# entries-in-buffer/entries-written: 4711/5000   #P:2"
      if (auto at = t.find("entries-in-buffer/entries-written:"); at != std::string_view::npos) {
        std::string_view v = TrimLeft(t.substr(at + 34));
        promised = static_cast<uint64_t>(Int(v.substr(0, v.find('/'))));
      }
      continue;
    }
    if (StartsWith(t, "CPU:") && t.find("[LOST ") != std::string_view::npos) {
      std::string_view lost_cpu = t.substr(4, t.find(' ') - 4);
      if (!CpuNumber(lost_cpu))
        return MakeError("line {} names CPU '{}', not one of the {} CPUs a kernel can have: the text is damaged",
                         number, lost_cpu.substr(0, 20), model::kMaxTraceCpus);
      uint32_t cpu = static_cast<uint32_t>(Int(lost_cpu));
      std::string_view n = t.substr(t.find("[LOST ") + 6);
      d.lost[cpu] += static_cast<uint64_t>(Int(n.substr(0, n.find(' '))));
      d.loss_at[cpu].push_back(d.events[cpu].size());
      continue;
    }
    TextEventLine l;
    if (!ParseTextEventLine(line, &l)) {
      if (i + 1 == lines.size() && !ends_with_newline)
        return MakeError("the ftrace text is cut short: its last line ({}) is incomplete", number);
      if (d.console_dump) {
        ++d.other_lines;  // another CPU's printk between the dump's lines
        continue;
      }
      if (!bad_line) {
        bad_line = number;
        bad_text = std::string(t.substr(0, 80));
      }
      continue;
    }
    if (i + 1 == lines.size() && !ends_with_newline)
      return MakeError("the ftrace text is cut short: its last line ({}) has no end", number);
    ++d.lines;
    ++d.records[l.cpu];
    if (!d.first_ts || l.ts < d.first_ts) d.first_ts = l.ts;
    d.last_ts = std::max(d.last_ts, l.ts);
    if (l.event == "tracing_mark_write") AddMarker(l.body, l.ts, &d.markers);
    if (l.event == "console") {
      model::KernelLogEntry e;
      e.ts = l.ts;
      e.text = std::string(l.body);
      while (!e.text.empty() && e.text.back() == '\n') e.text.pop_back();
      model::KernelLogMatch m = model::ClassifyKernelLog(e.text);
      e.cls = m.cls;
      e.about = m.device;
      e.source = model::KernelLogSource::kConsole;
      e.cpu = static_cast<int32_t>(l.cpu);
      e.tid = l.pid;
      e.comm = l.comm;
      d.log.push_back(std::move(e));
    }
    std::string irq_name;
    if (auto typed = Typed(l.event, l.body, &irq_name)) {
      model::Event e;
      e.ts = l.ts;
      e.cpu = l.cpu;
      e.tid = l.pid;
      e.common_flags = l.flags;
      e.payload = std::move(*typed);
      d.events[l.cpu].push_back(std::move(e));
      if (!irq_name.empty()) {
        int32_t irq = std::get<model::IrqEntry>(d.events[l.cpu].back().payload).irq;
        if (d.irq_names[irq].empty()) d.irq_names[irq] = irq_name;
      }
    } else {
      d.generic.push_back(Generic(l));
    }
  }
  if (dump_begun && !dump_ended)
    return MakeError("the ftrace_dump_on_oops text ends before the dump's closing line: the console capture "
                     "stopped mid-dump ({} event lines read)",
                     d.lines);
  if (!d.lines)
    return MakeError("no ftrace event line (TASK-PID [CPU] FLAGS SECONDS: EVENT: ...) in the text: not a "
                     "tracefs 'trace' file or an ftrace_dump_on_oops capture");
  if (bad_line)  // a trace file has nothing else: damaged
    return MakeError("line {} is not an ftrace event line (TASK-PID [CPU] FLAGS SECONDS: EVENT: ...): '{}'",
                     bad_line, bad_text);
  if (promised && d.lines < promised)
    return MakeError("the ftrace text is truncated: its header says {} entries, it has {}", promised, d.lines);
  return d;
}

}  // namespace gpunoise::blackbox
