// The generated field table (export/perfetto/protos/perfetto_fields.h, made
// by field_table_gen from protoc's descriptor set) against libprotobuf's own
// reading of the same .proto: the descriptors compiled into
// perfetto_trace_subset.pb.cc. Every constant the hand encoders and decoders
// use is checked by name, so a generator that numbered, named or skipped a
// field wrongly fails here. Whether the subset matches upstream Perfetto is
// tools/check_proto_subset.sh's job (docs/perfetto-schema.md).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "export/perfetto/protos/perfetto_fields.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::pf {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

struct GeneratedField {
  const char* message;  // below package gpunoise.perfetto
  const char* field;
  uint32_t number;
  int type;  // FieldDescriptor::Type
};
struct GeneratedEnumValue {
  const char* enum_type;
  const char* value;
  int number;
};

constexpr GeneratedField kFields[] = {
#define GPUNOISE_PF_FIELD(message, field, constant, type) {message, field, constant, type},
#define GPUNOISE_PF_ENUM_VALUE(enum_type, value, constant)
#include "export/perfetto/protos/perfetto_fields_list.inc"
#undef GPUNOISE_PF_FIELD
#undef GPUNOISE_PF_ENUM_VALUE
};
constexpr GeneratedEnumValue kEnumValues[] = {
#define GPUNOISE_PF_FIELD(message, field, constant, type)
#define GPUNOISE_PF_ENUM_VALUE(enum_type, value, constant) {enum_type, value, constant},
#include "export/perfetto/protos/perfetto_fields_list.inc"
#undef GPUNOISE_PF_FIELD
#undef GPUNOISE_PF_ENUM_VALUE
};

const google::protobuf::FileDescriptor* Subset() { return perfetto::Trace::descriptor()->file(); }

std::string Qualified(const char* name) { return std::string("gpunoise.perfetto.") + name; }

TEST(FieldTable, EveryGeneratedConstantIsLibprotobufsNumberAndType) {
  for (const GeneratedField& g : kFields) {
    const Descriptor* message = Subset()->pool()->FindMessageTypeByName(Qualified(g.message));
    ASSERT_NE(message, nullptr) << g.message;
    const FieldDescriptor* field = message->FindFieldByName(g.field);
    ASSERT_NE(field, nullptr) << g.message << "." << g.field;
    EXPECT_EQ(static_cast<int>(g.number), field->number()) << g.message << "." << g.field;
    EXPECT_EQ(g.type, static_cast<int>(field->type())) << g.message << "." << g.field;
  }
}

void CollectFields(const Descriptor* message, std::set<std::string>* out) {
  for (int i = 0; i < message->field_count(); ++i) out->insert(message->field(i)->full_name());
  for (int i = 0; i < message->nested_type_count(); ++i) CollectFields(message->nested_type(i), out);
}

TEST(FieldTable, EveryFieldOfTheSubsetHasAConstant) {
  std::set<std::string> declared, generated;
  for (int i = 0; i < Subset()->message_type_count(); ++i) CollectFields(Subset()->message_type(i), &declared);
  for (const GeneratedField& g : kFields) generated.insert(Qualified(g.message) + "." + g.field);
  EXPECT_EQ(declared, generated);
  EXPECT_GT(declared.size(), 300u);  // the table is not empty or truncated
}

TEST(FieldTable, EveryEnumValueIsLibprotobufs) {
  size_t values = 0;
  for (const GeneratedEnumValue& g : kEnumValues) {
    const auto* e = Subset()->pool()->FindEnumTypeByName(Qualified(g.enum_type));
    ASSERT_NE(e, nullptr) << g.enum_type;
    const auto* v = e->FindValueByName(g.value);
    ASSERT_NE(v, nullptr) << g.enum_type << "." << g.value;
    EXPECT_EQ(g.number, v->number()) << g.enum_type << "." << g.value;
    ++values;
  }
  size_t declared = 0;
  auto count = [&](auto&& self, const Descriptor* m) -> void {
    for (int i = 0; i < m->enum_type_count(); ++i) declared += m->enum_type(i)->value_count();
    for (int i = 0; i < m->nested_type_count(); ++i) self(self, m->nested_type(i));
  };
  for (int i = 0; i < Subset()->enum_type_count(); ++i) declared += Subset()->enum_type(i)->value_count();
  for (int i = 0; i < Subset()->message_type_count(); ++i) count(count, Subset()->message_type(i));
  EXPECT_EQ(values, declared);
}

// The same names libprotobuf's generated classes give, spelled out for the
// few every trace needs: a generator that mangled names consistently would
// still pass the tests above.
TEST(FieldTable, NamesFollowTheProtoNames) {
  EXPECT_EQ(TracePacket::kTrustedPacketSequenceId, perfetto::TracePacket::kTrustedPacketSequenceIdFieldNumber);
  EXPECT_EQ(TracePacket::kFtraceEvents, perfetto::TracePacket::kFtraceEventsFieldNumber);
  EXPECT_EQ(FtraceEventBundle::CompactSched::kSwitchTimestamp,
            perfetto::FtraceEventBundle_CompactSched::kSwitchTimestampFieldNumber);
  EXPECT_EQ(AndroidLogPacket::LogEvent::Arg::kStringValue,
            perfetto::AndroidLogPacket_LogEvent_Arg::kStringValueFieldNumber);
  EXPECT_EQ(int{TracePacket::SEQ_INCREMENTAL_STATE_CLEARED}, int{perfetto::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED});
  EXPECT_EQ(int{BUILTIN_CLOCK_BOOTTIME}, int{perfetto::BUILTIN_CLOCK_BOOTTIME});
  EXPECT_EQ(int{TrackEvent::TYPE_COUNTER}, int{perfetto::TrackEvent::TYPE_COUNTER});
}

}  // namespace
}  // namespace gpunoise::pf
