// Build-time tool: reads the FileDescriptorSet protoc makes of
// perfetto_trace_subset.proto and writes perfetto_fields.h, the one table of
// field numbers every hand encoder and decoder uses (common/proto_wire*.h,
// the CUPTI library, the trace reader and merger). The generated header
// needs only <cstdint>: libgpunoise_cupti.so must not link libprotobuf
// (common/proto_wire.h says why), so only this tool does, and it runs only
// while building.
//
//   field_table_gen DESCRIPTOR_SET OUT_HEADER FIELD_LIST
//
// For message M with field `foo_bar = N`, the header declares
// gpunoise::pf::M::kFooBar = N (nested messages nest); enum values keep
// their proto names in their scope, as protoc's C++ does
// (gpunoise::pf::BUILTIN_CLOCK_BOOTTIME, gpunoise::pf::TrackEvent::TYPE_COUNTER). FIELD_LIST is an
// X-macro list of every field and enum value, which tests/export/perfetto/
// field_table_test.cc checks against libprotobuf's own descriptors.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;

constexpr const char* kNamespace = "gpunoise::pf";

// foo_bar -> kFooBar, as Google style names constants.
std::string ConstantName(const std::string& field) {
  std::string out = "k";
  bool upper = true;
  for (char c : field) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    upper = false;
  }
  return out;
}

std::string Indent(int depth) { return std::string(2 * depth, ' '); }

// The message's path below the package, with '::' (for C++) or '.' (proto).
std::string Path(const Descriptor* m, const char* sep) {
  std::string path = m->name();
  for (const Descriptor* p = m->containing_type(); p; p = p->containing_type()) path = p->name() + sep + path;
  return path;
}

void WriteEnum(const EnumDescriptor* e, int depth, std::ostream& out, std::ostream& list) {
  out << Indent(depth) << "enum " << e->name() << " : int32_t {\n";
  // Values live in the enum's enclosing scope, as in protoc's C++.
  std::string scope = e->containing_type() ? Path(e->containing_type(), "::") + "::" : "";
  std::string proto_path = e->containing_type() ? Path(e->containing_type(), ".") + "." + e->name() : e->name();
  for (int i = 0; i < e->value_count(); ++i) {
    out << Indent(depth + 1) << e->value(i)->name() << " = " << e->value(i)->number() << ",\n";
    list << "GPUNOISE_PF_ENUM_VALUE(\"" << proto_path << "\", \"" << e->value(i)->name() << "\", " << scope
         << e->value(i)->name() << ")\n";
  }
  out << Indent(depth) << "};\n";
}

void WriteMessage(const Descriptor* m, int depth, std::ostream& out, std::ostream& list) {
  out << Indent(depth) << "struct " << m->name() << " {\n";
  for (int i = 0; i < m->field_count(); ++i) {
    const FieldDescriptor* f = m->field(i);
    out << Indent(depth + 1) << "static constexpr uint32_t " << ConstantName(f->name()) << " = " << f->number()
        << ";  // " << f->type_name() << (f->is_repeated() ? ", repeated" : "") << "\n";
    list << "GPUNOISE_PF_FIELD(\"" << Path(m, ".") << "\", \"" << f->name() << "\", " << Path(m, "::")
         << "::" << ConstantName(f->name()) << ", " << static_cast<int>(f->type()) << ")\n";
  }
  for (int i = 0; i < m->enum_type_count(); ++i) WriteEnum(m->enum_type(i), depth + 1, out, list);
  for (int i = 0; i < m->nested_type_count(); ++i) WriteMessage(m->nested_type(i), depth + 1, out, list);
  out << Indent(depth) << "};\n";
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) {
    std::cerr << "field_table_gen: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: field_table_gen DESCRIPTOR_SET OUT_HEADER FIELD_LIST\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  google::protobuf::FileDescriptorSet set;
  if (!in || !set.ParseFromIstream(&in) || set.file_size() != 1) {
    std::cerr << "field_table_gen: " << argv[1] << " is not a descriptor set of one file\n";
    return 1;
  }
  google::protobuf::DescriptorPool pool;
  const FileDescriptor* file = pool.BuildFile(set.file(0));
  if (!file) {
    std::cerr << "field_table_gen: " << argv[1] << ": descriptors do not build\n";
    return 1;
  }

  std::ostringstream out, list;
  out << "// Generated from " << file->name() << " by field_table_gen at build time. Do not edit;\n"
      << "// change the .proto (and check it against upstream: tools/check_proto_subset.sh).\n"
      << "#pragma once\n\n#include <cstdint>\n\nnamespace " << kNamespace << " {\n\n";
  list << "// Generated from " << file->name() << " by field_table_gen. Do not edit.\n"
       << "// GPUNOISE_PF_FIELD(proto message path, field name, constant, FieldDescriptor::Type)\n"
       << "// GPUNOISE_PF_ENUM_VALUE(proto enum path, value name, constant)\n";
  for (int i = 0; i < file->enum_type_count(); ++i) {
    WriteEnum(file->enum_type(i), 0, out, list);
    out << "\n";
  }
  for (int i = 0; i < file->message_type_count(); ++i) {
    WriteMessage(file->message_type(i), 0, out, list);
    out << "\n";
  }
  out << "}  // namespace " << kNamespace << "\n";
  return WriteFile(argv[2], out.str()) && WriteFile(argv[3], list.str()) ? 0 : 1;
}
