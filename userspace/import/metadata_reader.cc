#include "import/metadata_reader.h"

#include "import/perfetto_fields.h"

namespace gpunoise::import {
namespace {

namespace f = fields;

// "/usr/bin/python3" -> "python3"
std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool Malformed(const ProtoReader& r, const char* what, PacketError* error) {
  *error = {r.error_offset(), what};
  return false;
}

}  // namespace

bool DecodeProcessTree(const ProtoField& field, model::TraceSink& sink, PacketError* error) {
  ProtoReader r(field);
  ProtoField e;
  while (r.Next(&e)) {
    if (e.type != WireType::kLengthDelimited) continue;
    ProtoReader er(e);
    ProtoField p;
    if (e.id == f::process_tree::kProcesses) {
      int32_t pid = 0, ppid = 0;
      std::string_view name;
      bool kthread = false, first_arg = true;
      while (er.Next(&p)) {
        switch (p.id) {
          case f::process_tree::kProcessPid: pid = p.as_int32(); break;
          case f::process_tree::kProcessPpid: ppid = p.as_int32(); break;
          case f::process_tree::kProcessIsKthread: kthread = p.as_bool(); break;
          case f::process_tree::kProcessCmdline:
            if (first_arg) name = Basename(p.as_string());
            first_arg = false;
            break;
          default: break;
        }
      }
      if (er.error()) return Malformed(er, "ProcessTree.Process is malformed", error);
      // kthreadd (pid 2) is the parent of every kernel thread.
      sink.OnProcess(pid, ppid, name, kthread || ppid == 2 || pid == 2);
    } else if (e.id == f::process_tree::kThreads) {
      int32_t tid = 0, tgid = 0;
      std::string_view name;
      while (er.Next(&p)) {
        switch (p.id) {
          case f::process_tree::kThreadTid: tid = p.as_int32(); break;
          case f::process_tree::kThreadTgid: tgid = p.as_int32(); break;
          case f::process_tree::kThreadName: name = p.as_string(); break;
          default: break;
        }
      }
      if (er.error()) return Malformed(er, "ProcessTree.Thread is malformed", error);
      sink.OnThread(tid, tgid, name);
    }
  }
  if (r.error()) return Malformed(r, "ProcessTree is malformed", error);
  return true;
}

bool DecodeInterruptInfo(const ProtoField& field, model::TraceSink& sink, PacketError* error) {
  ProtoReader r(field);
  ProtoField m;
  while (r.Next(&m)) {
    if (m.id != f::interrupt_info::kIrqMapping || m.type != WireType::kLengthDelimited) continue;
    int32_t irq = -1;
    std::string_view name;
    ProtoReader mr(m);
    ProtoField p;
    while (mr.Next(&p)) {
      if (p.id == f::interrupt_info::kIrqId) irq = p.as_int32();
      if (p.id == f::interrupt_info::kName) name = p.as_string();
    }
    if (mr.error()) return Malformed(mr, "InterruptInfo mapping is malformed", error);
    if (irq >= 0 && !name.empty()) sink.OnIrqName(irq, name);
  }
  if (r.error()) return Malformed(r, "InterruptInfo is malformed", error);
  return true;
}

bool DecodeSystemInfo(const ProtoField& field, model::TraceSink& sink, PacketError* error) {
  model::HostInfo host;
  ProtoReader r(field);
  ProtoField e;
  while (r.Next(&e)) {
    switch (e.id) {
      case f::system_info::kNumCpus: host.num_cpus = e.as_uint32(); break;
      case f::system_info::kMachineName:
        host.machine_name = std::string(e.as_string());
        host.hostname = host.machine_name;
        break;
      case f::system_info::kUtsname: {
        ProtoReader ur(e);
        ProtoField u;
        while (ur.Next(&u)) {
          switch (u.id) {
            case f::system_info::kUtsSysname: host.sysname = std::string(u.as_string()); break;
            case f::system_info::kUtsRelease: host.release = std::string(u.as_string()); break;
            case f::system_info::kUtsVersion: host.version = std::string(u.as_string()); break;
            case f::system_info::kUtsMachine: host.machine = std::string(u.as_string()); break;
            default: break;
          }
        }
        if (ur.error()) return Malformed(ur, "Utsname is malformed", error);
        break;
      }
      default: break;
    }
  }
  if (r.error()) return Malformed(r, "SystemInfo is malformed", error);
  sink.OnHostInfo(host);
  return true;
}

}  // namespace gpunoise::import
