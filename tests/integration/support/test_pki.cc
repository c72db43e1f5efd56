#include "integration/support/test_pki.h"

#include <crypt.h>
#include <stdio.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

namespace gpunoise::testing {
namespace {

bool Run(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

bool MakeKey(const std::string& key) {
  return Run(fmt::format("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out {}", key));
}

bool MakeCa(const std::string& dir, const std::string& name, std::string* cert, std::string* key) {
  *cert = dir + "/" + name + ".crt";
  *key = dir + "/" + name + ".key";
  return MakeKey(*key) &&
         Run(fmt::format("openssl req -x509 -new -key {} -out {} -days 1 -subj /CN={} "
                         "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
                         *key, *cert, name));
}

bool MakeLeaf(const std::string& dir, const std::string& name, const std::string& ca_cert, const std::string& ca_key,
              const std::string& ext, std::string* cert, std::string* key) {
  *cert = dir + "/" + name + ".crt";
  *key = dir + "/" + name + ".key";
  std::string csr = dir + "/" + name + ".csr", extfile = dir + "/" + name + ".ext";
  std::ofstream(extfile) << ext << "\n";
  return MakeKey(*key) && Run(fmt::format("openssl req -new -key {} -out {} -subj /CN={}", *key, csr, name)) &&
         Run(fmt::format("openssl x509 -req -in {} -CA {} -CAkey {} -CAcreateserial -out {} -days 1 -extfile {}", csr,
                         ca_cert, ca_key, *cert, extfile));
}

constexpr const char* kServerExt = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth";
constexpr const char* kClientExt = "extendedKeyUsage=clientAuth";

}  // namespace

TestPki MakeTestPki(const std::string& dir) {
  TestPki p;
  std::string other_ca, other_key;
  bool ok = MakeCa(dir, "test-ca", &p.ca_cert, &p.ca_key) &&
            MakeLeaf(dir, "server", p.ca_cert, p.ca_key, kServerExt, &p.server_cert, &p.server_key) &&
            MakeLeaf(dir, "client", p.ca_cert, p.ca_key, kClientExt, &p.client_cert, &p.client_key) &&
            MakeCa(dir, "other-ca", &other_ca, &other_key) &&
            MakeLeaf(dir, "stranger", other_ca, other_key, kClientExt, &p.stranger_cert, &p.stranger_key);
  if (!ok) {
    fprintf(stderr, "MakeTestPki: openssl failed in %s\n", dir.c_str());
    return {};
  }
  p.dir = dir;
  return p;
}

std::string RotateServerCertificate(const TestPki& pki) {
  std::string cert, key;
  if (!MakeLeaf(pki.dir, "server-next", pki.ca_cert, pki.ca_key, kServerExt, &cert, &key)) return "";
  // Key first, then certificate: between the two renames the pair does not
  // match, which the monitor must ride out.
  std::filesystem::rename(key, pki.server_key);
  std::filesystem::rename(cert, pki.server_cert);
  return CertificateSerial(pki.server_cert);
}

std::string CertificateSerial(const std::string& pem_file) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(("openssl x509 -noout -serial -in " + pem_file).c_str(), "r"), pclose);
  if (!p) return "";
  char buf[256] = {};
  if (!fgets(buf, sizeof(buf), p.get())) return "";
  std::string s(buf);
  if (s.rfind("serial=", 0) == 0) s = s.substr(7);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string BcryptHash(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2b$", cost, nullptr, 0, salt, sizeof(salt))) return "";
  auto data = std::make_unique<crypt_data>();
  const char* h = crypt_rn(password.c_str(), salt, data.get(), sizeof(*data));
  return h && h[0] == '$' ? h : "";
}

}  // namespace gpunoise::testing
