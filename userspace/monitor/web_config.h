// The monitor's --web.config.file, in the format of Prometheus'
// exporter-toolkit (the one node_exporter reads), so the fleet's existing
// files and scrape configs (tls_config, basic_auth) work unchanged:
//
//   tls_server_config:
//     cert_file: /etc/gpunoise/tls/tls.crt
//     key_file: /etc/gpunoise/tls/tls.key
//     client_ca_file: /etc/gpunoise/tls/ca.crt        # optional: mTLS
//     client_auth_type: RequireAndVerifyClientCert    # with client_ca_file
//     min_version: TLS12                              # optional
//   basic_auth_users:
//     prometheus: $2y$10$...                          # bcrypt hash
//
// Relative file names are taken from the web config file's directory (as
// exporter-toolkit does). A key gpunoise does not implement is an error,
// never silently ignored: a file that asks for something must get it.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpunoise::monitor {

// Go's tls.ClientAuthType names, as exporter-toolkit spells them.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,           // asked for, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // verified against client_ca_file when sent
  kRequireAndVerifyClientCert,  // required and verified
};

struct TlsServerConfig {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // empty: no client certificates checked
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  int min_version = 0;  // OpenSSL's TLS1_2_VERSION etc.; 0: TLS 1.2
  int max_version = 0;  // 0: the newest OpenSSL has

  bool enabled() const { return !cert_file.empty(); }
  bool verifies_clients() const {
    return client_auth == ClientAuth::kVerifyClientCertIfGiven ||
           client_auth == ClientAuth::kRequireAndVerifyClientCert;
  }
};

struct WebConfig {
  TlsServerConfig tls;
  // user -> bcrypt hash ("$2y$", "$2b$" or "$2a$"); empty: no basic auth.
  std::map<std::string, std::string, std::less<>> users;

  bool authenticates() const { return !users.empty() || tls.client_auth == ClientAuth::kRequireAndVerifyClientCert; }
};

// `base_dir` is where relative file names point (the config file's
// directory). Errors are one line naming the key.
Result<WebConfig> ParseWebConfigText(std::string_view text, const std::string& base_dir);
Result<WebConfig> ReadWebConfigFile(const std::string& path);

// True for a hash crypt(3) verifies as bcrypt: "$2a$", "$2b$" or "$2y$",
// a two-digit cost 04..31, then 53 characters of bcrypt's base64.
bool LooksLikeBcrypt(std::string_view hash);

}  // namespace gpunoise::monitor
