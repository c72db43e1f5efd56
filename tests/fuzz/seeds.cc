// Writes the seed corpora that are made rather than recorded: small traces
// from the project's own writers (bundles, stats, interrupt names, the
// session summary; plain and zlib-compressed), the known-bad inputs a review
// of the readers found (a CPU number far beyond any per-CPU table, a
// truncated varint, the ftrace stats written twice), and text inputs shaped
// like the files the text parsers read. tools/test.sh --fuzz adds real ones
// next to them: a recording, a GPU fragment, this machine's
// /proc/interrupts, /proc/cmdline and tracefs format files.
//
// Usage: fuzz_seeds DIR   (creates DIR/<corpus>/<seed> files)
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "import/test_trace.h"
#ifdef GPUNOISE_FUZZ_HAVE_CUPTI
#include "fuzz/activity_converter_input.h"
#endif

namespace gpunoise {
namespace {

using testing::TestTrace;
using testing::Wire;

std::string g_root;

void Write(const std::string& corpus, const std::string& name, const std::string& bytes) {
  std::string dir = g_root + "/" + corpus;
  ::mkdir(dir.c_str(), 0700);
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) {
    std::fprintf(stderr, "fuzz_seeds: failed to write %s/%s\n", dir.c_str(), name.c_str());
    std::exit(1);
  }
}

std::string ReadBack(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Names : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t irq) override { return irq == 30 ? "eth0-TxRx-0" : "virtio0-input.1"; }
};

model::Event Switch(uint64_t ts, uint32_t cpu, int32_t prev, int32_t next, int64_t state, const char* comm) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = state;
  s.next_tid = next;
  s.next_comm = model::TaskComm(comm);
  return {ts, cpu, prev, s};
}

template <typename P>
model::Event Ev(uint64_t ts, uint32_t cpu, int32_t tid, P payload) {
  return {ts, cpu, tid, payload};
}

std::vector<model::Event> CpuEvents(uint32_t cpu, uint64_t t0) {
  model::SchedWaking w;
  w.tid = 11;
  w.target_cpu = 1;
  w.comm = model::TaskComm("wakee");
  return {Switch(t0 + 100, cpu, 0, 10, 0, "python"),
          Ev(t0 + 150, cpu, 10, w),
          Ev(t0 + 200, cpu, 10, model::IrqEntry{30}),
          Ev(t0 + 210, cpu, 10, model::IrqExit{30, 1}),
          Ev(t0 + 220, cpu, 10, model::SoftirqEntry{3}),
          Ev(t0 + 26000, cpu, 10, model::SoftirqExit{3}),
          Switch(t0 + 30000, cpu, 10, 12, 1, "ksoftirqd/0"),
          Switch(t0 + 90000, cpu, 12, 0, 0, "swapper/0")};
}

model::SessionInfo Session() {
  model::SessionInfo s;
  s.tool_version = "fuzz-seed";
  s.hostname = "node17";
  s.boot_id = "6d2c9a58-0000-4000-8000-000000000001";
  s.command_line = "gpunoise record -d 1";
  s.start_ts = 1000;
  s.end_ts = 200000;
  for (uint32_t cpu = 0; cpu < 2; ++cpu) {
    model::CpuLoss c;
    c.cpu = cpu;
    c.events = 8;
    c.lost = cpu;
    c.bytes = 256;
    if (cpu) c.lost_by_kind["sched_switch"] = 1;
    s.cpus.push_back(c);
  }
  s.end_reason = "duration";
  return s;
}

// The recorder's layout: clocks, interrupt names, stats at start, bundles,
// stats at end, the session summary. Written by the real file writer.
void WriteRecording(const std::string& name, perfetto::TraceCompression compression) {
  std::string path = g_root + "/" + name + ".tmp";
  auto writer = perfetto::TraceFileWriter::Create(path, 0, compression);
  if (!writer.ok()) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", writer.error().message.c_str());
    std::exit(1);
  }
  model::SessionInfo session = Session();
  perfetto::TracePacketBuilder packet;
  perfetto::FillClockSnapshot(&packet, {1000, 900, 1700000000000000000ull, 880});
  (void)writer->WritePacket(packet);
  packet.Clear();
  model::IrqTable irqs;
  irqs[30].irq = 30;
  irqs[30].name = "eth0-TxRx-0";
  perfetto::FillInterruptInfo(&packet, irqs);
  (void)writer->WritePacket(packet);
  packet.Clear();
  perfetto::FillFtraceStats(&packet, perfetto::StatsPhase::kStart, session);
  (void)writer->WritePacket(packet);
  perfetto::FtraceBundleEncoder encoder;
  Names names;
  for (uint32_t cpu = 0; cpu < 2; ++cpu) {
    std::vector<model::Event> events = CpuEvents(cpu, 1000 + cpu);
    std::string serialized;
    encoder.EncodePacket({cpu, cpu == 1, cpu == 1 ? 900u : 0u}, events, names, &serialized);
    (void)writer->WriteSerializedPacket(serialized);
  }
  packet.Clear();
  perfetto::FillFtraceStats(&packet, perfetto::StatsPhase::kEnd, session);
  (void)writer->WritePacket(packet);
  perfetto::TrackEventWriter track_events(2, 99);
  (void)perfetto::WriteSessionSummary(track_events, session, *writer);
  if (!writer->Commit().ok()) std::exit(1);
  std::string bytes = ReadBack(path);
  std::remove(path.c_str());
  for (const char* corpus : {"trace_reader", "trace_merger"}) Write(corpus, name, bytes);
}

void WriteTraceSeeds() {
  WriteRecording("recording-plain", perfetto::TraceCompression::kNone);
  WriteRecording("recording-zlib", perfetto::TraceCompression::kZlib);

  std::vector<std::pair<std::string, std::string>> seeds;
  // Perfetto's recorder: full-format switches.
  TestTrace perfetto_style;
  perfetto_style.Add(testing::SwitchBundle(0, {{100, 0, 5}, {200, 5, 6}, {300, 6, 0}}));
  perfetto_style.Add(testing::SwitchBundle(1, {{150, 0, 7}}));
  seeds.emplace_back("perfetto-full-switch", perfetto_style.bytes());

  // Known bad: a bundle on a CPU beyond every per-CPU table (a reader that
  // sizes its tables by the CPU number it is given allocates ~4G entries).
  TestTrace far_cpu;
  far_cpu.Add(testing::SwitchBundle(4294967295u, {{100, 0, 5}, {200, 5, 0}}));
  far_cpu.Add(testing::SwitchBundle(70000, {{300, 0, 5}}));
  seeds.emplace_back("bad-cpu-beyond-table", far_cpu.bytes());

  // Known bad: a varint cut off at the end of the file, in the framing and
  // inside a packet.
  seeds.emplace_back("bad-truncated-varint-framing", std::string("\x0a\xff\xff\xff", 4));
  Wire inner;
  inner.Raw(std::string("\x08\xff\xff", 3));  // timestamp = <varint cut short>
  TestTrace cut;
  cut.AddSerialized(inner.str());
  seeds.emplace_back("bad-truncated-varint-packet", cut.bytes());

  // Known bad: the ftrace stats written twice per phase.
  TestTrace doubled;
  for (int round = 0; round < 2; ++round) {
    for (auto phase : {perfetto::FtraceStats::START_OF_TRACE, perfetto::FtraceStats::END_OF_TRACE}) {
      for (int twice = 0; twice < 2; ++twice) {
        perfetto::TracePacket p;
        auto* stats = p.mutable_ftrace_stats();
        stats->set_phase(phase);
        for (uint64_t cpu = 0; cpu < 2; ++cpu) {
          auto* c = stats->add_cpu_stats();
          c->set_cpu(cpu);
          c->set_entries(10 * (round + 1));
          c->set_overrun(phase == perfetto::FtraceStats::END_OF_TRACE ? 3 : 0);
        }
        doubled.Add(p);
      }
    }
  }
  doubled.Add(testing::SwitchBundle(0, {{100, 0, 5}, {200, 5, 0}}));
  seeds.emplace_back("bad-doubled-stats", doubled.bytes());

  for (const auto& [name, bytes] : seeds)
    for (const char* corpus : {"trace_reader", "trace_merger"}) Write(corpus, name, bytes);
}

// Ethtool replies as the kernel sends them (genetlink header + attributes).
std::string EthtoolReply(uint8_t command, const std::function<void(nlmsghdr*)>& fill) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = 20;
  auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  genl->cmd = command;
  genl->version = ETHTOOL_GENL_VERSION;
  fill(nlh);
  return std::string(buf.data(), nlh->nlmsg_len);
}

void WriteEthtoolSeeds() {
  Write("ethtool_netlink", "rings", EthtoolReply(ETHTOOL_MSG_RINGS_GET_REPLY, [](nlmsghdr* n) {
          mnl_attr_put_u32(n, ETHTOOL_A_RINGS_RX_MAX, 4096);
          mnl_attr_put_u32(n, ETHTOOL_A_RINGS_RX, 1024);
          mnl_attr_put_u32(n, ETHTOOL_A_RINGS_TX_MAX, 4096);
          mnl_attr_put_u32(n, ETHTOOL_A_RINGS_TX, 1024);
        }));
  Write("ethtool_netlink", "coalesce", EthtoolReply(ETHTOOL_MSG_COALESCE_GET_REPLY, [](nlmsghdr* n) {
          mnl_attr_put_u32(n, ETHTOOL_A_COALESCE_RX_USECS, 50);
          mnl_attr_put_u32(n, ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 64);
          mnl_attr_put_u32(n, ETHTOOL_A_COALESCE_TX_USECS, 50);
          mnl_attr_put_u32(n, ETHTOOL_A_COALESCE_TX_MAX_FRAMES, 64);
          mnl_attr_put_u8(n, ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1);
          mnl_attr_put_u8(n, ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, 0);
        }));
  Write("ethtool_netlink", "linkmodes", EthtoolReply(ETHTOOL_MSG_LINKMODES_GET_REPLY, [](nlmsghdr* n) {
          mnl_attr_put_u32(n, ETHTOOL_A_LINKMODES_SPEED, 100000);
          mnl_attr_put_u8(n, ETHTOOL_A_LINKMODES_DUPLEX, DUPLEX_FULL);
          mnl_attr_put_u8(n, ETHTOOL_A_LINKMODES_AUTONEG, AUTONEG_ENABLE);
          nlattr* ours = mnl_attr_nest_start(n, ETHTOOL_A_LINKMODES_OURS);
          nlattr* bits = mnl_attr_nest_start(n, ETHTOOL_A_BITSET_BITS);
          for (const char* mode : {"100000baseCR4/Full", "25000baseSR/Full", "1000baseT/Half"}) {
            nlattr* bit = mnl_attr_nest_start(n, ETHTOOL_A_BITSET_BITS_BIT);
            mnl_attr_put_u32(n, ETHTOOL_A_BITSET_BIT_INDEX, 1);
            mnl_attr_put_strz(n, ETHTOOL_A_BITSET_BIT_NAME, mode);
            mnl_attr_nest_end(n, bit);
          }
          mnl_attr_nest_end(n, bits);
          mnl_attr_nest_end(n, ours);
        }));
}

void WriteTextSeeds() {
  Write("irq_names", "interrupts",
        "           CPU0       CPU1       CPU2       CPU3\n"
        "  0:         44          0          0          0   IO-APIC   2-edge      timer\n"
        " 24:          0       9120          0          0  PCI-MSIX-0000:00:03.0 0-edge      virtio2-config\n"
        " 25:      18234          0          0          0  PCI-MSIX-0000:00:03.0 1-edge      virtio2-input.0\n"
        " 26:          0          0       1242          0  PCI-MSIX-0000:00:03.0 2-edge      virtio2-output.0\n"
        " 90:          0          0          0     901221  IR-PCI-MSI-0000:3b:00.0 12-edge      mlx5_comp12@pci:0000:3b:00.0\n"
        " 91:          3          0          0          0  IR-PCI-MSI 524289-edge      ice-eth0-TxRx-5\n"
        " 16:          0          0          0          0   IO-APIC  16-fasteoi   ehci_hcd:usb1, i801_smbus\n"
        "NMI:          0          0          0          0   Non-maskable interrupts\n"
        "LOC:    1834201    1623021    1522012    1499231   Local timer interrupts\n"
        "ERR:          0\n");
  Write("irq_names", "name-only", "mlx5_comp3@pci:0000:af:00.1");
  Write("tracefs_format", "napi_poll",
        "name: napi_poll\n"
        "ID: 1452\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:struct napi_struct * napi;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:__data_loc char[] dev_name;\toffset:16;\tsize:4;\tsigned:0;\n"
        "\tfield:int work;\toffset:20;\tsize:4;\tsigned:1;\n"
        "\tfield:int budget;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\n"
        "print fmt: \"napi poll on napi struct %p for device %s work %d budget %d\", REC->napi, "
        "__get_str(dev_name), REC->work, REC->budget\n");
  Write("tracefs_format", "inline_name",
        "name: mlx5_fake\nID: 9\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:char devname[16];\toffset:8;\tsize:16;\tsigned:1;\n"
        "\tfield:u32 queue;\toffset:24;\tsize:4;\tsigned:0;\n");
  Write("kernel_cmdline", "isolated",
        "BOOT_IMAGE=/boot/vmlinuz-6.1.0 root=UUID=1234 ro quiet isolcpus=managed_irq,domain,2-7,12-N "
        "nohz_full=2-7 rcu_nocbs=2-7 irqaffinity=0-1 intel_idle.max_cstate=1 processor.max_cstate=1 "
        "idle=poll intel_pstate=disable \"dyndbg=file foo.c +p\" -- init_arg\n");
  Write("kernel_cmdline", "plain", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 console=ttyS0,115200\n");
  Write("monitor_config", "example",
        "# /etc/gpunoise/monitor.conf\n"
        "interval = 1s\n"
        "focus = comm:python          # repeatable: each line adds one\n"
        "focus = 4242\n"
        "focus-cpus = 8-63\n"
        "threshold = softirq.share=40%\n"
        "flight-recorder = 20s\n"
        "dump-dir = /var/lib/gpunoise/dumps\n"
        "listen = [::1]:9464\n");
  Write("monitor_config", "bad-key", "interval = 1s\nfoo = bar\n");
  Write("web_config", "tls-and-users",
        "tls_server_config:\n"
        "  cert_file: tls/tls.crt\n"
        "  key_file: tls/tls.key\n"
        "  client_ca_file: /etc/gpunoise/tls/ca.crt\n"
        "  client_auth_type: RequireAndVerifyClientCert\n"
        "  min_version: TLS12\n"
        "  max_version: TLS13\n"
        "basic_auth_users:\n"
        "  prometheus: $2y$10$Vb5i0Y4.1mJjQn3gq8s7Iu2QXZ0Hcz7lB1Y0vEoWcS5m8nV1xPq6K\n");
  Write("web_config", "unknown-key", "tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n");
  Write("web_config", "header", "Basic cHJvbWV0aGV1czpzZWNyZXQ=");
  Write("web_config", "header-padded", "basic   dTo=");
  Write("http_request", "prometheus",
        "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
        "text/plain;version=0.0.4;q=0.5,*/*;q=0.1");
  Write("http_request", "plain", "text/plain");
  Write("http_request", "curl", "*/*");
  // First byte: bit 0 gives the node the names h1 and gpu-node-7, bit 1 the
  // jobs 4242 and job_77 (alert_webhook_fuzzer.cc).
  Write("alert_webhook", "job-alert",
        std::string("\x03") +
            R"({"version":"4","status":"firing","receiver":"gpunoise","groupLabels":{"alertname":"GpunoiseSlurmJobStragglerNode"},)"
            R"("alerts":[{"status":"firing","labels":{"alertname":"GpunoiseSlurmJobStragglerNode","finding":"straggler",)"
            R"("instance":"h3:9464","slurm_job_id":"4242","severity":"warning"},"annotations":{"summary":"h3 holds back"},)"
            R"("startsAt":"2026-12-01T12:40:00.123456789Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"7c1a9e0b5d3f2468"}]})");
  Write("alert_webhook", "baseline-alert",
        std::string("\x01") +
            R"({"alerts":[{"status":"firing","labels":{"alertname":"GpunoiseJobStragglerNode","node":"n3","namespace":"ml",)"
            R"("job_name":"train-a"},"annotations":{"baseline_nodes":"gpu-node-7, h2:9464"},"startsAt":"2026-12-01T12:40:00+01:00"},)"
            R"({"status":"resolved","labels":{"alertname":"GpunoiseStragglerNode","instance":"h1:9464"}}]})");
  Write("alert_webhook", "named-no-fingerprint",
        std::string("\x01") +
            R"({"alerts":[{"status":"firing","labels":{"alertname":"SiteStraggler","finding":"straggler","hostname":"h1"}}]})");
  // An oops console capture of ftrace_dump_on_oops (printk times, the
  // dump's begin and end lines, a loss line, another CPU's printk inside)
  // and the same lines as a tracefs `trace` file; the captured fixture
  // (tests/blackbox/data) is copied in by tools/fuzz_tests.sh.
  const std::string dump_lines =
      "          <idle>-0       [001] d.h1. 37570.000100: irq_handler_entry: irq=24 name=virtio0-input.0\n"
      "          <idle>-0       [001] d.h1. 37570.000104: irq_handler_exit: irq=24 ret=handled\n"
      "          <idle>-0       [001] ..s1. 37570.000105: softirq_entry: vec=3 [action=NET_RX]\n"
      "          <idle>-0       [001] ..s1. 37570.000140: softirq_exit: vec=3 [action=NET_RX]\n"
      "          <idle>-0       [000] d..2. 37570.000150: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
      "prev_state=R ==> next_comm=python3 next_pid=4411 next_prio=120\n"
      "         python3-4411    [000] d..3. 37570.000160: sched_waking: comm=ksoftirqd/0 pid=14 prio=120 target_cpu=000\n"
      "         python3-4411    [000] ..... 37570.000170: console: [37570.000170] mlx5_core 0000:3b:00.0 eth1: "
      "NETDEV WATCHDOG: CPU: 0: transmit queue 5 timed out 5120 ms\n";
  std::string console = "[37570.100000] Oops: general protection fault\n[37570.100100] Dumping ftrace buffer:\n"
                        "[37570.100101] ---------------------------------\n[37570.100102] CPU:1 [LOST 12 EVENTS]\n";
  size_t n = 0;
  for (size_t start = 0, nl; (nl = dump_lines.find('\n', start)) != std::string::npos; start = nl + 1)
    console += "[37570." + std::to_string(200000 + ++n) + "] " + dump_lines.substr(start, nl - start) + "\n";
  console += "[37570.900000] ---------------------------------\n[37570.900001] Kernel panic - not syncing\n";
  Write("text_dump", "oops-console", console);
  Write("text_dump", "trace-file",
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: 7/7   #P:2\n#\n" + dump_lines);
  Write("alert_webhook", "record-request",
        std::string(1, '\0') + R"({"reason":"step 1200 took 2x","since":"2026-12-01T19:25:28Z","id":"step-1200"})");
}


#ifdef GPUNOISE_FUZZ_HAVE_CUPTI
template <typename T>
T Zeroed(CUpti_ActivityKind kind) {
  T t;
  std::memset(&t, 0, sizeof(t));
  t.kind = kind;
  return t;
}

// A training step as CUPTI reports it: the device, a launch call and its
// kernel, a copy and a memset, a graph launch, a synchronization inside
// its API call, NVTX ranges (nested, and ended on another thread), a mark,
// CUPTI overhead, and a record of a kind the converter skips.
void WriteConverterSeeds() {
  using fuzz::ConverterInput;
  // Indexes into fuzz::kKinds.
  enum : uint8_t { kKernel = 2, kMemcpy = 3, kPeer = 4, kMemset = 5, kGraph = 6, kRuntime = 7,
                   kDriver = 8, kSync = 10, kMarker = 11, kOverhead = 12, kDevice = 13, kOther = 14 };
  ConverterInput in(0x05);  // CUDA_VISIBLE_DEVICES=2,<uuid>
  auto dev = Zeroed<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  dev.numMultiprocessors = 132;
  dev.computeCapabilityMajor = 9;
  dev.globalMemorySize = 141ull << 30;
  in.Add(kDevice, dev, {"NVIDIA H200"});
  for (uint32_t step = 0; step < 3; ++step) {
    uint64_t t = 10000 + step * 100000;
    uint32_t corr = 10 + step * 10;
    auto api = Zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    api.cbid = 211;
    api.start = t;
    api.end = t + 500;
    api.processId = 4242;
    api.threadId = 4243;
    api.correlationId = corr;
    in.Add(kRuntime, api);
    auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = t + 1000;
    k.end = t + 9000;
    k.contextId = 1;
    k.streamId = 7;
    k.correlationId = corr;
    k.gridX = 128;
    k.blockX = 256;
    in.Add(kKernel, k, {"_Z5scaleIfEvPT_S0_i"});
    auto overlap = k;
    overlap.start = t + 2000;  // overlaps the first: a second lane
    overlap.correlationId = corr + 1;
    in.Add(kKernel, overlap, {nullptr});
    auto m = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20;
    m.start = t + 9500;
    m.end = t + 12000;
    m.streamId = 7;
    m.correlationId = corr + 2;
    in.Add(kMemcpy, m);
    auto p = Zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.bytes = 4 << 20;
    p.start = t + 12500;
    p.end = t + 15000;
    p.srcDeviceId = 0;
    p.dstDeviceId = 1;
    p.streamId = 8;
    in.Add(kPeer, p);
    auto ms = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    ms.bytes = 4096;
    ms.start = t + 15500;
    ms.end = t + 16000;
    ms.streamId = 7;
    in.Add(kMemset, ms);
    auto g = Zeroed<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    g.start = t + 20000;
    g.end = t + 40000;
    g.streamId = 9;
    g.correlationId = corr + 3;
    in.Add(kGraph, g);
    auto sync_api = Zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    sync_api.cbid = 131;
    sync_api.start = t + 41000;
    sync_api.end = t + 60000;
    sync_api.threadId = 4243;
    sync_api.correlationId = corr + 4;
    auto sync = Zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sync.start = t + 41100;
    sync.end = t + 59000;
    sync.streamId = 7;
    sync.correlationId = corr + 4;
    in.Add(kSync, sync);  // before its API call, as CUPTI may deliver them
    in.Add(kRuntime, sync_api);
    auto drv = Zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
    drv.cbid = 307;
    drv.start = t + 200;
    drv.end = t + 400;
    drv.threadId = 4244;
    in.Add(kDriver, drv);
    auto mark = [&](uint32_t flag, uint32_t id, uint64_t ts, uint32_t tid, const char* name, const char* domain) {
      auto mk = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
      mk.flags = static_cast<CUpti_ActivityFlag>(flag);
      mk.id = id;
      mk.timestamp = ts;
      mk.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
      mk.objectId.pt.threadId = tid;
      in.Add(kMarker, mk, {name, domain});
    };
    mark(CUPTI_ACTIVITY_FLAG_MARKER_START, 100 + step, t, 4243, "step", "pytorch");
    mark(CUPTI_ACTIVITY_FLAG_MARKER_START, 200 + step, t + 10, 4243, "forward", nullptr);
    mark(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 300 + step, t + 20, 4243, "checkpoint", "app");
    mark(CUPTI_ACTIVITY_FLAG_MARKER_END, 200 + step, t + 50000, 4243, nullptr, nullptr);
    mark(CUPTI_ACTIVITY_FLAG_MARKER_END, 100 + step, t + 90000, 4245, nullptr, nullptr);  // another thread
    auto o = Zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.threadId = 4243;
    o.start = t + 60000;
    o.end = t + 61000;
    in.Add(kOverhead, o);
    in.Add(kOther, Zeroed<CUpti_Activity>(CUPTI_ACTIVITY_KIND_NAME));
    in.Chunk(static_cast<uint8_t>(step * 3));
  }
  // An NVTX range left open at the end, closed by the final chunk.
  auto open = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  open.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  open.id = 999;
  open.timestamp = 400000;
  open.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  open.objectId.pt.threadId = 4243;
  in.Add(kMarker, open, {"unfinished", nullptr});
  Write("activity_converter", "training-steps", in.bytes());
}
#endif

}  // namespace
}  // namespace gpunoise

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  gpunoise::g_root = argv[1];
  ::mkdir(argv[1], 0700);
  gpunoise::WriteTraceSeeds();
  gpunoise::WriteEthtoolSeeds();
  gpunoise::WriteTextSeeds();
#ifdef GPUNOISE_FUZZ_HAVE_CUPTI
  gpunoise::WriteConverterSeeds();
#endif
  return 0;
}
