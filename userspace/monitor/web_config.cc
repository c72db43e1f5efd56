#include "monitor/web_config.h"

#include <openssl/ssl.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "common/files.h"

namespace gpunoise::monitor {
namespace {

std::string Where(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? fmt::format("line {}: ", m.line + 1) : std::string();
}

// A scalar's text, or an error naming the key.
Result<std::string> Scalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return MakeError("{}{} must be a string", Where(node), key);
  return node.Scalar();
}

std::string Resolve(const std::string& base_dir, const std::string& file) {
  if (file.empty() || file.front() == '/' || base_dir.empty()) return file;
  return (std::filesystem::path(base_dir) / file).string();
}

Result<ClientAuth> ParseClientAuth(std::string_view v) {
  if (v.empty() || v == "NoClientCert") return ClientAuth::kNoClientCert;
  if (v == "RequestClientCert") return ClientAuth::kRequestClientCert;
  // "RequireClientCert" is exporter-toolkit's older name for the same.
  if (v == "RequireAnyClientCert" || v == "RequireClientCert") return ClientAuth::kRequireAnyClientCert;
  if (v == "VerifyClientCertIfGiven") return ClientAuth::kVerifyClientCertIfGiven;
  if (v == "RequireAndVerifyClientCert") return ClientAuth::kRequireAndVerifyClientCert;
  return MakeError("client_auth_type: '{}' is not NoClientCert, RequestClientCert, RequireAnyClientCert, "
                   "VerifyClientCertIfGiven or RequireAndVerifyClientCert", v);
}

Result<int> ParseTlsVersion(std::string_view key, std::string_view v) {
  if (v == "TLS12") return TLS1_2_VERSION;
  if (v == "TLS13") return TLS1_3_VERSION;
  if (v == "TLS10" || v == "TLS11") return MakeError("{}: {} is not offered (gpunoise serves TLS12 or TLS13)", key, v);
  return MakeError("{}: '{}' is not TLS12 or TLS13", key, v);
}

Status ParseTls(const YAML::Node& node, const std::string& base_dir, TlsServerConfig& tls) {
  if (node.IsNull()) return OkStatus();
  if (!node.IsMap()) return MakeError("{}tls_server_config must be a mapping", Where(node));
  std::string auth_type;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key == "cert" || key == "key" || key == "cipher_suites" || key == "curve_preferences" ||
        key == "prefer_server_cipher_suites" || key == "client_allowed_sans")
      return MakeError("{}tls_server_config.{} is not supported by gpunoise (use cert_file, key_file, "
                       "client_ca_file, client_auth_type, min_version, max_version)", Where(kv.first), key);
    GN_ASSIGN_OR_RETURN(std::string v, Scalar(kv.second, "tls_server_config." + key));
    if (key == "cert_file") tls.cert_file = Resolve(base_dir, v);
    else if (key == "key_file") tls.key_file = Resolve(base_dir, v);
    else if (key == "client_ca_file") tls.client_ca_file = Resolve(base_dir, v);
    else if (key == "client_auth_type") auth_type = v;
    else if (key == "min_version") { GN_ASSIGN_OR_RETURN(tls.min_version, ParseTlsVersion(key, v)); }
    else if (key == "max_version") { GN_ASSIGN_OR_RETURN(tls.max_version, ParseTlsVersion(key, v)); }
    else
      return MakeError("{}unknown key tls_server_config.{}", Where(kv.first), key);
  }
  GN_ASSIGN_OR_RETURN(tls.client_auth, ParseClientAuth(auth_type));
  if (tls.cert_file.empty()) return MakeError("tls_server_config needs cert_file");
  if (tls.key_file.empty()) return MakeError("tls_server_config needs key_file");
  // Same rules as exporter-toolkit: a CA without a policy that uses it, or
  // a verifying policy without a CA, is a mistake, not a default.
  if (!tls.client_ca_file.empty() && tls.client_auth == ClientAuth::kNoClientCert)
    return MakeError("tls_server_config: client_ca_file is given but client_auth_type is NoClientCert "
                     "(set it to RequireAndVerifyClientCert)");
  if (tls.verifies_clients() && tls.client_ca_file.empty())
    return MakeError("tls_server_config: client_auth_type {} needs client_ca_file", auth_type);
  if (tls.min_version && tls.max_version && tls.min_version > tls.max_version)
    return MakeError("tls_server_config: min_version is newer than max_version");
  return OkStatus();
}

}  // namespace

bool LooksLikeBcrypt(std::string_view h) {
  if (h.size() != 60 || h[0] != '$' || h[1] != '2' || h[3] != '$' || h[6] != '$') return false;
  if (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') return false;
  if (!isdigit(static_cast<unsigned char>(h[4])) || !isdigit(static_cast<unsigned char>(h[5]))) return false;
  int cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (char c : h.substr(7))
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '/') return false;
  return true;
}

Result<WebConfig> ParseWebConfigText(std::string_view text, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return MakeError("line {}: not YAML: {}", e.mark.line + 1, e.msg);
  }
  WebConfig config;
  if (root.IsNull()) return config;  // an empty file: plain HTTP, no auth
  if (!root.IsMap()) return MakeError("the web config must be a mapping (tls_server_config, basic_auth_users)");
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (key == "tls_server_config") {
        GN_RETURN_IF_ERROR(ParseTls(kv.second, base_dir, config.tls));
      } else if (key == "basic_auth_users") {
        if (kv.second.IsNull()) continue;
        if (!kv.second.IsMap()) return MakeError("{}basic_auth_users must map user names to bcrypt hashes", Where(kv.second));
        for (const auto& user : kv.second) {
          const std::string name = user.first.as<std::string>();
          GN_ASSIGN_OR_RETURN(std::string hash, Scalar(user.second, "basic_auth_users." + name));
          if (name.empty() || name.find(':') != std::string::npos)
            return MakeError("{}basic_auth_users: '{}' is not a user name (no ':' allowed)", Where(user.first), name);
          if (!LooksLikeBcrypt(hash))
            return MakeError("{}basic_auth_users.{}: not a bcrypt hash ($2y$10$ and 53 more characters; "
                             "make one with 'htpasswd -nBC 10 \"\" | tr -d :' or 'mkpasswd -m bcrypt')",
                             Where(user.second), name);
          config.users[name] = hash;
        }
      } else if (key == "http_server_config" || key == "rate_limit") {
        return MakeError("{}{} is not supported by gpunoise (tls_server_config and basic_auth_users are)",
                         Where(kv.first), key);
      } else {
        return MakeError("{}unknown key '{}' (tls_server_config, basic_auth_users)", Where(kv.first), key);
      }
    }
  } catch (const YAML::Exception& e) {
    return MakeError("line {}: {}", e.mark.line + 1, e.msg);
  }
  return config;
}

Result<WebConfig> ReadWebConfigFile(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return MakeError("failed to read web config {}: {}", path, text.error().message);
  auto config = ParseWebConfigText(*text, std::filesystem::path(path).parent_path().string());
  if (!config.ok()) return MakeError("web config {}: {}", path, config.error().message);
  return config;
}

}  // namespace gpunoise::monitor
