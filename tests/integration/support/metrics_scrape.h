// Talking to a running `gpunoise monitor` (and to a Prometheus server) over
// HTTP, and reading the text exposition back as series -> value.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpunoise::testing {

struct HttpReply {
  int status = 0;  // 0: no connection
  std::string body;
  std::string content_type;
};
// `address`: "127.0.0.1:9464".
HttpReply HttpGet(const std::string& address, const std::string& path, const std::string& accept = "");

// "name{a="x",b="y"}" (as written, labels in the writer's order) -> value.
using Series = std::map<std::string, double>;
Series ParseExposition(const std::string& text);

// Sum of the samples of `name` whose labels include every `label=value`
// pair of `match`.
double SumOf(const Series& series, const std::string& name,
             const std::vector<std::pair<std::string, std::string>>& match = {});
// Whether any sample of `name` matches.
bool HasSeries(const Series& series, const std::string& name,
               const std::vector<std::pair<std::string, std::string>>& match = {});

// The address in the monitor's "listening on http(s)://ADDR/metrics" line.
std::optional<std::string> ListeningAddress(const std::string& stderr_text);

// A free TCP port on 127.0.0.1 (bound and released: another process could
// take it in between, which tests accept).
int FreeLoopbackPort();

}  // namespace gpunoise::testing
