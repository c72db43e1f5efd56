#include "import/metadata_reader.h"

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::import {
namespace {


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
    if (e.id == pf::ProcessTree::kProcesses) {
      int32_t pid = 0, ppid = 0;
      std::string_view name;
      bool kthread = false, first_arg = true;
      while (er.Next(&p)) {
        switch (p.id) {
          case pf::ProcessTree::Process::kPid: pid = p.as_int32(); break;
          case pf::ProcessTree::Process::kPpid: ppid = p.as_int32(); break;
          case pf::ProcessTree::Process::kIsKthread: kthread = p.as_bool(); break;
          case pf::ProcessTree::Process::kCmdline:
            if (first_arg) name = Basename(p.as_string());
            first_arg = false;
            break;
          default: break;
        }
      }
      if (er.error()) return Malformed(er, "ProcessTree.Process is malformed", error);
      // kthreadd (pid 2) is the parent of every kernel thread.
      sink.OnProcess(pid, ppid, name, kthread || ppid == 2 || pid == 2);
    } else if (e.id == pf::ProcessTree::kThreads) {
      int32_t tid = 0, tgid = 0;
      std::string_view name;
      while (er.Next(&p)) {
        switch (p.id) {
          case pf::ProcessTree::Thread::kTid: tid = p.as_int32(); break;
          case pf::ProcessTree::Thread::kTgid: tgid = p.as_int32(); break;
          case pf::ProcessTree::Thread::kName: name = p.as_string(); break;
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
    if (m.id != pf::InterruptInfo::kIrqMapping || m.type != WireType::kLengthDelimited) continue;
    int32_t irq = -1;
    std::string_view name;
    ProtoReader mr(m);
    ProtoField p;
    while (mr.Next(&p)) {
      if (p.id == pf::InterruptInfo::InterruptMapping::kIrqId) irq = p.as_int32();
      if (p.id == pf::InterruptInfo::InterruptMapping::kName) name = p.as_string();
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
      case pf::SystemInfo::kNumCpus: host.num_cpus = e.as_uint32(); break;
      case pf::SystemInfo::kMachineName:
        host.machine_name = std::string(e.as_string());
        host.hostname = host.machine_name;
        break;
      case pf::SystemInfo::kUtsname: {
        ProtoReader ur(e);
        ProtoField u;
        while (ur.Next(&u)) {
          switch (u.id) {
            case pf::Utsname::kSysname: host.sysname = std::string(u.as_string()); break;
            case pf::Utsname::kRelease: host.release = std::string(u.as_string()); break;
            case pf::Utsname::kVersion: host.version = std::string(u.as_string()); break;
            case pf::Utsname::kMachine: host.machine = std::string(u.as_string()); break;
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
