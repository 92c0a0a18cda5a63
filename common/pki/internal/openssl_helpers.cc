#include "common/pki/internal/openssl_helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::pki::internal {
namespace {

constexpr off_t kMaxFileBytes = 1 << 20;

std::string ErrnoText(int err) { return std::strerror(err); }

absl::Status ErrnoStatus(int err, absl::string_view what) {
  absl::StatusCode code = absl::StatusCode::kInternal;
  if (err == ENOENT) code = absl::StatusCode::kNotFound;
  if (err == EACCES || err == EPERM) code = absl::StatusCode::kPermissionDenied;
  if (err == EEXIST) code = absl::StatusCode::kAlreadyExists;
  return absl::Status(code, absl::StrCat(what, ": ", ErrnoText(err)));
}

std::string ParentDir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Closes on scope exit; the write path closes explicitly to check the result.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// The new directory entry is only durable once the directory itself is synced.
void SyncDirectory(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // Best effort: some filesystems refuse fsync on directories, and the file
  // content itself was already synced.
  if (fd.get() >= 0) ::fsync(fd.get());
}

// Atomically moves `from` to `to` unless `to` exists.
absl::Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return absl::OkStatus();
  }
  const int err = errno;
  if (err == EEXIST) {
    return absl::AlreadyExistsError(absl::StrCat(to, " already exists"));
  }
  if (err != EINVAL && err != ENOSYS && err != ENOTSUP) {
    return ErrnoStatus(err, absl::StrCat("cannot create ", to));
  }
  // Filesystem without RENAME_NOREPLACE: link() also fails rather than
  // overwrite, and is just as atomic.
  if (::link(from.c_str(), to.c_str()) != 0) {
    const int link_err = errno;
    if (link_err == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat(to, " already exists"));
    }
    return ErrnoStatus(link_err, absl::StrCat("cannot create ", to));
  }
  ::unlink(from.c_str());
  return absl::OkStatus();
}

}  // namespace

absl::Status OpensslError(absl::string_view what, absl::StatusCode code) {
  std::string message(what);
  bool first = true;
  while (const unsigned long err = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(err, buf, sizeof(buf));
    absl::StrAppend(&message, first ? " (" : "; ", buf);
    first = false;
  }
  if (!first) message += ")";
  return absl::Status(code, message);
}

absl::StatusOr<X509Ptr> ParseCertificatePem(absl::string_view pem, absl::string_view label) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpensslError("BIO_new_mem_buf failed");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return OpensslError(absl::StrCat(label, " is not a PEM certificate"),
                        absl::StatusCode::kInvalidArgument);
  }
  return cert;
}

absl::StatusOr<EvpPkeyPtr> ParsePrivateKeyPem(absl::string_view pem, absl::string_view label) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpensslError("BIO_new_mem_buf failed");
  // An empty passphrase callback: our keys are unencrypted, and an encrypted
  // key must fail here rather than prompt on a daemon's terminal.
  static constexpr auto kNoPassphrase = [](char*, int, int, void*) -> int { return 0; };
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, kNoPassphrase, nullptr));
  if (!key) {
    return OpensslError(absl::StrCat(label, " is not an unencrypted PEM private key"),
                        absl::StatusCode::kInvalidArgument);
  }
  return key;
}

namespace {
absl::StatusOr<std::string> BioContents(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  if (n < 0 || (n > 0 && data == nullptr)) {
    return OpensslError("BIO_get_mem_data failed");
  }
  return std::string(data, static_cast<size_t>(n));
}
}  // namespace

absl::StatusOr<std::string> CertificateToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return OpensslError("cannot encode certificate as PEM");
  }
  return BioContents(bio.get());
}

absl::StatusOr<std::string> PrivateKeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  // PKCS#8, unencrypted: what gRPC's PEM key loading expects.
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpensslError("cannot encode private key as PEM");
  }
  return BioContents(bio.get());
}

absl::StatusOr<X509ReqPtr> ParseCertificateRequestPem(absl::string_view pem,
                                                      absl::string_view label) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpensslError("BIO_new_mem_buf failed");
  X509ReqPtr req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) {
    return OpensslError(absl::StrCat(label,
                                     " is not a PEM certificate request (-----BEGIN CERTIFICATE "
                                     "REQUEST-----, as `fedmf ca request` writes)"),
                        absl::StatusCode::kInvalidArgument);
  }
  return req;
}

absl::StatusOr<std::string> CertificateRequestToPem(X509_REQ* req) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509_REQ(bio.get(), req) != 1) {
    return OpensslError("cannot encode certificate request as PEM");
  }
  return BioContents(bio.get());
}

absl::StatusOr<EvpPkeyPtr> GenerateP256Key() {
  EvpPkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpensslError("cannot generate an ECDSA P-256 key");
  return key;
}

absl::StatusOr<std::string> PublicKeyFingerprint(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  const int len = i2d_PUBKEY(key, &der);
  if (len <= 0) return OpensslError("cannot encode the public key");
  OsslStringPtr owned(der);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  if (EVP_Digest(der, static_cast<size_t>(len), digest, &digest_len, EVP_sha256(), nullptr) != 1) {
    return OpensslError("cannot hash the public key");
  }
  return absl::StrCat("sha256:", absl::BytesToHexString(absl::string_view(
                                     reinterpret_cast<const char*>(digest), digest_len)));
}

absl::StatusOr<absl::Time> Asn1TimeToAbsl(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    return OpensslError("malformed certificate time", absl::StatusCode::kInvalidArgument);
  }
  return absl::FromTimeT(::timegm(&tm));
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat(path, " does not exist"));
    }
    return ErrnoStatus(err, absl::StrCat("cannot open ", path));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot stat ", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  if (st.st_size > kMaxFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is ", st.st_size, " bytes; expected a small PEM file"));
  }
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("cannot read ", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (static_cast<off_t>(out.size()) > kMaxFileBytes) {
      return absl::InvalidArgumentError(absl::StrCat(path, " grew past 1 MiB while being read"));
    }
  }
  return out;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

absl::Status EnsureDirectory(const std::string& dir, mode_t mode) {
  if (dir.empty()) return absl::InvalidArgumentError("empty directory path");
  // Create each missing prefix in turn (mkdir -p).
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    const std::string prefix = dir.substr(0, pos);
    if (prefix.empty()) continue;
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat("cannot create directory ", prefix));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(dir, " exists but is not a directory"));
  }
  return absl::OkStatus();
}

absl::Status WriteNewFileAtomically(const std::string& path, absl::string_view data, mode_t mode) {
  const std::string dir = ParentDir(path);
  std::string tmpl = absl::StrCat(dir, "/.", BaseName(path), ".tmp.XXXXXX");
  std::vector<char> tmp_path(tmpl.begin(), tmpl.end());
  tmp_path.push_back('\0');
  // mkstemp creates the file 0600, so a private key is never readable by
  // others, not even for the instant before fchmod.
  Fd fd(::mkstemp(tmp_path.data()));
  if (fd.get() < 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot create a file in ", dir));
  }
  const std::string tmp(tmp_path.data());
  // Removes the temp file on every failure path below.
  struct Unlinker {
    const std::string& path;
    bool armed = true;
    ~Unlinker() {
      if (armed) ::unlink(path.c_str());
    }
  } unlinker{tmp};

  if (::fchmod(fd.get(), mode) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot chmod ", tmp));
  }
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("cannot write ", tmp));
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot fsync ", tmp));
  }
  if (::close(fd.Release()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot close ", tmp));
  }
  RETURN_IF_ERROR(RenameNoReplace(tmp, path));
  unlinker.armed = false;
  SyncDirectory(dir);
  return absl::OkStatus();
}

absl::Status WriteKeyAndPublicFile(const std::string& key_path, absl::string_view key_pem,
                                   const std::string& public_path, absl::string_view public_pem) {
  RETURN_IF_ERROR(WriteNewFileAtomically(key_path, key_pem, 0600));
  if (absl::Status s = WriteNewFileAtomically(public_path, public_pem, 0644); !s.ok()) {
    ::unlink(key_path.c_str());
    return s;
  }
  return absl::OkStatus();
}

}  // namespace fedmf::pki::internal
