#include "net/tls_certs.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cctype>
#include <memory>

namespace berth::net {
namespace {

template <class T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

Error OpenSslError(const char* what) {
  char buf[256] = "unknown error";
  unsigned long code = ERR_get_error();
  if (code) ERR_error_string_n(code, buf, sizeof(buf));
  return Error{std::string("generating certificates: ") + what + ": " + buf};
}

std::string ToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, len);
}

std::string ToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, len);
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// Builds and signs a certificate. `issuer`/`issuer_key` null: self-signed.
Result<PemPair> Make(const std::string& cn, const std::vector<std::string>& hosts, bool is_ca,
                     long days, X509* issuer, EVP_PKEY* issuer_key) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("key");
  CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 24 * 60 * 60);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("berth"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer_cert = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer_cert));
  bool ok = true;
  if (is_ca) {
    ok = AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExtension(cert.get(), signer_cert, NID_key_usage,
                      "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    std::string san;
    for (const auto& h : hosts) {
      unsigned char buf[16];
      bool ip = inet_pton(AF_INET, h.c_str(), buf) == 1 || inet_pton(AF_INET6, h.c_str(), buf) == 1;
      if (!san.empty()) san += ",";
      san += (ip ? "IP:" : "DNS:") + h;
    }
    ok = AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:FALSE") &&
         AddExtension(cert.get(), signer_cert, NID_key_usage,
                      "critical,digitalSignature,keyEncipherment") &&
         AddExtension(cert.get(), signer_cert, NID_ext_key_usage, "serverAuth") &&
         (san.empty() || AddExtension(cert.get(), signer_cert, NID_subject_alt_name, san));
  }
  if (!ok) return OpenSslError("extensions");
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key.get(), EVP_sha256()) == 0) {
    return OpenSslError("signing");
  }
  return PemPair{ToPem(cert.get()), ToPem(key.get())};
}

}  // namespace

Result<std::string> DecodeBase64(const std::string& text, std::string_view what) {
  std::string clean;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) clean.push_back(c);
  }
  std::string out(clean.size() / 4 * 3 + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(clean.data()),
                          static_cast<int>(clean.size()));
  if (n < 0 || clean.size() % 4 != 0) return Error{fmt::format("{}: invalid base64 data", what)};
  size_t pad = 0;
  if (!clean.empty() && clean.back() == '=') ++pad;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') ++pad;
  out.resize(n - pad);
  return out;
}

Result<PemPair> GenerateCa(const std::string& common_name) {
  return Make(common_name, {}, true, 3650, nullptr, nullptr);
}

Result<PemPair> GenerateServingCert(const PemPair& ca, const std::string& common_name,
                                    const std::vector<std::string>& hosts) {
  BioPtr cbio(BIO_new_mem_buf(ca.cert_pem.data(), static_cast<int>(ca.cert_pem.size())));
  CertPtr ca_cert(PEM_read_bio_X509(cbio.get(), nullptr, nullptr, nullptr));
  BioPtr kbio(BIO_new_mem_buf(ca.key_pem.data(), static_cast<int>(ca.key_pem.size())));
  KeyPtr ca_key(PEM_read_bio_PrivateKey(kbio.get(), nullptr, nullptr, nullptr));
  if (!ca_cert || !ca_key) return OpenSslError("reading the CA");
  return Make(common_name, hosts, false, 3650, ca_cert.get(), ca_key.get());
}

Result<PemPair> GenerateSelfSigned(const std::string& common_name,
                                   const std::vector<std::string>& hosts) {
  return Make(common_name, hosts, false, 3650, nullptr, nullptr);
}

}  // namespace berth::net
