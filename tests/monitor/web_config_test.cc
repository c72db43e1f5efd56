#include "monitor/web_config.h"

#include "monitor/monitor_options.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gpunoise::monitor {
namespace {

constexpr const char* kHash = "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze";

TEST(WebConfig, ReadsTlsAndUsersInExporterToolkitFormat) {
  auto c = ParseWebConfigText(std::string("tls_server_config:\n"
                                          "  cert_file: tls.crt\n"
                                          "  key_file: /etc/k/tls.key\n"
                                          "  client_ca_file: ca.crt\n"
                                          "  client_auth_type: RequireAndVerifyClientCert\n"
                                          "  min_version: TLS13\n"
                                          "basic_auth_users:\n"
                                          "  prometheus: ") + kHash + "\n",
                              "/etc/gpunoise");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->tls.cert_file, "/etc/gpunoise/tls.crt") << "relative to the config file's directory";
  EXPECT_EQ(c->tls.key_file, "/etc/k/tls.key");
  EXPECT_EQ(c->tls.client_ca_file, "/etc/gpunoise/ca.crt");
  EXPECT_EQ(c->tls.client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(c->tls.min_version, TLS1_3_VERSION);
  ASSERT_EQ(c->users.size(), 1u);
  EXPECT_EQ(c->users.at("prometheus"), kHash);
  EXPECT_TRUE(c->authenticates());
}

TEST(WebConfig, AnEmptyFileMeansPlainHttpWithoutAuth) {
  auto c = ParseWebConfigText("# nothing yet\n", "");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->tls.enabled());
  EXPECT_FALSE(c->authenticates());
}

TEST(WebConfig, UsersWithoutTlsParse) {
  auto c = ParseWebConfigText(std::string("basic_auth_users:\n  alice: ") + kHash + "\n", "");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->tls.enabled());
  EXPECT_TRUE(c->authenticates());
}

struct BadCase {
  const char* text;
  const char* says;
};

TEST(WebConfig, BadFilesGiveOneLineNamingTheProblem) {
  const BadCase cases[] = {
      {"tls_server_config:\n  cert_file: a\n", "needs key_file"},
      {"tls_server_config:\n  key_file: a\n", "needs cert_file"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n", "client_auth_type is NoClientCert"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n",
       "needs client_ca_file"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Sometimes\n", "'Sometimes' is not"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS10\n", "TLS10 is not offered"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n",
       "min_version is newer"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n", "line 4: tls_server_config.cipher_suites is not supported"},
      {"tls_server_config:\n  cert_fiel: a\n", "line 2: unknown key tls_server_config.cert_fiel"},
      {"basic_auth_users:\n  alice: hunter2\n", "line 2: basic_auth_users.alice: not a bcrypt hash"},
      {"basic_auth_users:\n  alice: $2y$03$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n", "not a bcrypt hash"},
      {"basic_auth_users: [alice]\n", "must map user names"},
      {"http_server_config:\n  http2: false\n", "http_server_config is not supported"},
      {"tls_server_confg: {}\n", "unknown key 'tls_server_confg'"},
      {"tls_server_config: [\n", "not YAML"},
      {"- a\n- b\n", "must be a mapping"},
  };
  for (const BadCase& c : cases) {
    auto r = ParseWebConfigText(c.text, "");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.text << " -> " << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << "one line: " << r.error().message;
  }
}

TEST(WebConfig, ReadFileNamesTheFile) {
  auto missing = ReadWebConfigFile("/nonexistent/web.yml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/web.yml"), std::string::npos);
}

TEST(WebConfig, BcryptShapes) {
  EXPECT_TRUE(LooksLikeBcrypt(kHash));
  EXPECT_TRUE(LooksLikeBcrypt("$2b$12$1DpfPeqF9HzHJt.EWswy1exHluGfbhnn3yXhR7Xes6m3WJqFg0Wby"));
  EXPECT_TRUE(LooksLikeBcrypt("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"));
  EXPECT_FALSE(LooksLikeBcrypt("$2x$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"));
  EXPECT_FALSE(LooksLikeBcrypt("$6$salt$hash"));
  EXPECT_FALSE(LooksLikeBcrypt(std::string(kHash).substr(0, 59)));
}

// The command line's "usage:" path: a bad web config file stops the
// monitor before anything is loaded, with one line and exit 2.
TEST(WebConfig, MonitorRefusesABadWebConfigFileWithOneLine) {
  std::string dir = std::filesystem::temp_directory_path() / ("gn-webcfg-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/web.yml") << "tls_server_config:\n  cert_file: x.crt\n";
  std::string cmd = std::string(GPUNOISE_BIN_DEFAULT) + " monitor --web.config.file " + dir + "/web.yml 2>" + dir + "/err";
  int status = std::system(cmd.c_str());
  std::ifstream in(dir + "/err");
  std::string err((std::istreambuf_iterator<char>(in)), {});
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_EQ(err, "usage: gpunoise monitor: web config " + dir + "/web.yml: tls_server_config needs key_file\n");
}

TEST(WebConfig, ListenBeyondLoopbackNeedsTlsAndAuthentication) {
  std::string dir = std::filesystem::temp_directory_path() / ("gn-webcfg-l-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/tls-only.yml") << "tls_server_config:\n  cert_file: a\n  key_file: b\n";
  std::ofstream(dir + "/tls-users.yml") << "tls_server_config:\n  cert_file: a\n  key_file: b\n"
                                        << "basic_auth_users:\n  p: " << kHash << "\n";
  std::ofstream(dir + "/users-only.yml") << "basic_auth_users:\n  p: " << kHash << "\n";
  std::ofstream(dir + "/mtls.yml") << "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n"
                                   << "  client_auth_type: RequireAndVerifyClientCert\n";
  auto resolve = [&](std::vector<std::pair<std::string, std::string>> kv) {
    OptionLayer cli;
    for (auto& [k, v] : kv) cli[k] = {v};
    return ResolveOptions({}, cli);
  };
  EXPECT_TRUE(resolve({{"listen", "127.0.0.1:9464"}}).ok()) << "loopback needs nothing";
  EXPECT_TRUE(resolve({{"listen", "[::1]:9464"}}).ok());
  auto bare = resolve({{"listen", "0.0.0.0:9464"}});
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().message.find("beyond loopback"), std::string::npos) << bare.error().message;
  EXPECT_FALSE(resolve({{"listen", ":9464"}}).ok()) << "all addresses";
  EXPECT_FALSE(resolve({{"listen", "0.0.0.0:9464"}, {"web.config.file", dir + "/tls-only.yml"}}).ok())
      << "TLS without authentication";
  EXPECT_FALSE(resolve({{"listen", "0.0.0.0:9464"}, {"web.config.file", dir + "/users-only.yml"}}).ok())
      << "passwords without TLS";
  EXPECT_TRUE(resolve({{"listen", "0.0.0.0:9464"}, {"web.config.file", dir + "/tls-users.yml"}}).ok());
  EXPECT_TRUE(resolve({{"listen", "0.0.0.0:9464"}, {"web.config.file", dir + "/mtls.yml"}}).ok());
  EXPECT_TRUE(resolve({{"listen", "0.0.0.0:9464"}, {"insecure-listen", "on"}}).ok()) << "the operator's choice";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpunoise::monitor
