// The report of a trace file, as `gpunoise report [--json] PATH` prints it,
// for the tests that check what a report says.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "report/report_session.h"

namespace gpunoise::report {

inline std::string ReportOf(const std::string& path, bool json = false) {
  ReportOptions o;
  o.trace_path = path;
  o.json = json;
  auto r = RunReport(o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r->output : "";
}

}  // namespace gpunoise::report
