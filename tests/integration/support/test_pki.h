// Certificates and bcrypt hashes for tests of the monitor's web config:
// a throw-away CA, server and client certificates made by the openssl
// command (Debian package openssl), and bcrypt hashes made by libxcrypt.
#pragma once

#include <string>

namespace gpunoise::testing {

struct TestPki {
  std::string dir;
  std::string ca_cert, ca_key;
  std::string server_cert, server_key;  // CN and SAN 127.0.0.1 / localhost
  std::string client_cert, client_key;  // signed by the CA
  std::string stranger_cert, stranger_key;  // signed by another CA
};

// Makes every file under `dir` (EC P-256 keys, 1 day). Empty `dir` in the
// result: openssl failed (the reason went to stderr).
TestPki MakeTestPki(const std::string& dir);

// A new server certificate and key for the same CA and name, written over
// `pki.server_cert`/`server_key` by rename (as cert-manager's secret
// volume swaps files). Returns the new certificate's serial ("" on error).
std::string RotateServerCertificate(const TestPki& pki);

// The serial number (hex, as openssl prints it) of a PEM certificate file.
std::string CertificateSerial(const std::string& pem_file);

// A bcrypt hash ($2b$, cost `cost`) of `password`.
std::string BcryptHash(const std::string& password, int cost = 10);

}  // namespace gpunoise::testing
