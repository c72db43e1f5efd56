#include "integration/support/metrics_scrape.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

namespace gpunoise::testing {

HttpReply HttpGet(const std::string& address, const std::string& path, const std::string& accept) {
  HttpReply reply;
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return reply;
  httplib::Client client(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(10, 0);
  httplib::Headers headers;
  if (!accept.empty()) headers.emplace("Accept", accept);
  auto res = client.Get(path.c_str(), headers);
  if (!res) return reply;
  reply.status = res->status;
  reply.body = res->body;
  reply.content_type = res->get_header_value("Content-Type");
  return reply;
}

Series ParseExposition(const std::string& text) {
  Series out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    // The value follows the last space (label values may hold spaces).
    size_t sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    try {
      out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
    } catch (...) {
    }
  }
  return out;
}

namespace {

bool Matches(const std::string& key, const std::string& name,
             const std::vector<std::pair<std::string, std::string>>& match) {
  if (key.compare(0, name.size(), name) != 0) return false;
  if (key.size() > name.size() && key[name.size()] != '{') return false;
  for (const auto& [label, value] : match)
    if (key.find(label + "=\"" + value + "\"") == std::string::npos) return false;
  return true;
}

}  // namespace

double SumOf(const Series& series, const std::string& name,
             const std::vector<std::pair<std::string, std::string>>& match) {
  double total = 0;
  for (const auto& [key, value] : series)
    if (Matches(key, name, match)) total += value;
  return total;
}

bool HasSeries(const Series& series, const std::string& name,
               const std::vector<std::pair<std::string, std::string>>& match) {
  for (const auto& [key, value] : series)
    if (Matches(key, name, match)) return true;
  return false;
}

std::optional<std::string> ListeningAddress(const std::string& stderr_text) {
  std::string marker = "listening on http://";
  size_t at = stderr_text.find(marker);
  if (at == std::string::npos) {
    marker = "listening on https://";
    at = stderr_text.find(marker);
  }
  if (at == std::string::npos) return std::nullopt;
  size_t start = at + marker.size();
  size_t end = stderr_text.find('/', start);
  if (end == std::string::npos) return std::nullopt;
  return stderr_text.substr(start, end - start);
}

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

}  // namespace gpunoise::testing
