// Throughput of the secure-aggregation primitives (common/crypto).
// Needs only: fedmf_crypto benchmark::benchmark and benchmark_main.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "common/crypto/aes_ctr_prg.h"
#include "common/crypto/aes_gcm.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/fixed_point.h"
#include "common/crypto/hkdf.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/random/csprng.h"

namespace fedmf::crypto {
namespace {

std::vector<uint8_t> Seed() {
  std::vector<uint8_t> seed(kPrgSeedBytes);
  random::Csprng rng = random::Csprng::FromSeed(1);
  rng.FillBytes(seed.data(), seed.size());
  return seed;
}

// Raw keystream bytes from one long-lived PRG.
void BM_PrgFillBytes(benchmark::State& state) {
  auto prg = AesCtrPrg::Create(Seed());
  std::vector<uint8_t> out(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    if (!prg->Fill(out).ok()) state.SkipWithError("Fill failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PrgFillBytes)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);

// Mask elements in Z_{2^32} (8 keystream bytes each) from one long-lived PRG.
void BM_PrgMasksMod2k(benchmark::State& state) {
  auto prg = AesCtrPrg::Create(Seed());
  std::vector<uint64_t> out(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    if (!prg->FillMod2k(out, 32).ok()) state.SkipWithError("FillMod2k failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 8);
}
BENCHMARK(BM_PrgMasksMod2k)->Arg(1 << 10)->Arg(1 << 17)->Arg(1 << 20);

// What a device does per mask: key a fresh PRG and add its masks into the
// input vector in place (includes the AES key schedule).
void BM_ApplyMaskMod2k(benchmark::State& state) {
  const auto seed = Seed();
  std::vector<uint64_t> acc(static_cast<size_t>(state.range(0)), 0);
  for (auto _ : state) {
    if (!ApplyMaskMod2k(seed, 32, MaskSign::kAdd, acc).ok()) state.SkipWithError("apply failed");
    benchmark::DoNotOptimize(acc.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 8);
}
BENCHMARK(BM_ApplyMaskMod2k)->Arg(1 << 10)->Arg(1 << 17)->Arg(1 << 20);

// What a device does to its input before masking: fixed-point encode one
// ML-100K item matrix (1682 x 20 values), 32 bits, as LFL's secure sums do.
void BM_FixedPointEncodeVector(benchmark::State& state) {
  constexpr size_t kValues = 1682 * 20;
  auto codec = fedmf::crypto::FixedPointCodec::Create(32, 12, 16.0, 1000);
  if (!codec.ok()) {
    state.SkipWithError("codec");
    return;
  }
  fedmf::random::Csprng rng = fedmf::random::Csprng::FromSeed(3);
  std::vector<double> x(kValues);
  for (double& v : x) v = (rng.NextDouble() * 2 - 1) * 8;
  std::vector<uint64_t> out(kValues);
  for (auto _ : state) {
    if (!codec->EncodeVector(x, out).ok()) state.SkipWithError("encode failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kValues));
}
BENCHMARK(BM_FixedPointEncodeVector);

void BM_X25519Agree(benchmark::State& state) {
  random::Csprng rng = random::Csprng::FromSeed(2);
  auto a = X25519PrivateKey::Generate(rng);
  auto b = X25519PrivateKey::Generate(rng);
  for (auto _ : state) {
    auto shared = a->Agree(b->public_key());
    benchmark::DoNotOptimize(shared);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_X25519Agree);

void BM_X25519Generate(benchmark::State& state) {
  random::Csprng rng = random::Csprng::FromSeed(3);
  for (auto _ : state) {
    auto k = X25519PrivateKey::Generate(rng);
    benchmark::DoNotOptimize(k);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_X25519Generate);

// An advertisement-sized statement (aggregation, device, three 32-byte keys).
std::vector<uint8_t> Statement() { return std::vector<uint8_t>(128, 0x5a); }

void BM_Ed25519Sign(benchmark::State& state) {
  random::Csprng rng = random::Csprng::FromSeed(4);
  auto key = Ed25519PrivateKey::Generate(rng);
  const std::vector<uint8_t> msg = Statement();
  for (auto _ : state) {
    auto sig = key->Sign(msg);
    benchmark::DoNotOptimize(sig);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Ed25519Sign);

void BM_Ed25519Verify(benchmark::State& state) {
  random::Csprng rng = random::Csprng::FromSeed(5);
  auto key = Ed25519PrivateKey::Generate(rng);
  const std::vector<uint8_t> msg = Statement();
  const std::vector<uint8_t> sig = *key->Sign(msg);
  for (auto _ : state) {
    absl::Status ok = Ed25519Verify(key->public_key(), msg, sig);
    if (!ok.ok()) state.SkipWithError("signature did not verify");
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Ed25519Verify);

void BM_HkdfSha256_32Bytes(benchmark::State& state) {
  const auto ikm = Seed();
  const std::vector<uint8_t> info = {'k', 'e', 'y'};
  for (auto _ : state) {
    auto key = HkdfSha256(ikm, {}, info, 32);
    benchmark::DoNotOptimize(key);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HkdfSha256_32Bytes);

// A sealed share pair is ~100 bytes; 64 KiB shows bulk throughput.
void BM_AesGcmSeal(benchmark::State& state) {
  random::Csprng rng = random::Csprng::FromSeed(4);
  const auto key = Seed();
  const std::vector<uint8_t> pt(static_cast<size_t>(state.range(0)), 0x5a);
  for (auto _ : state) {
    auto sealed = AesGcmSeal(key, pt, {}, rng);
    benchmark::DoNotOptimize(sealed);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AesGcmSeal)->Arg(128)->Arg(64 << 10);

// A device opens k share bundles per aggregation (its masking phase).
void BM_AesGcmOpen(benchmark::State& state) {
  random::Csprng rng = random::Csprng::FromSeed(5);
  const auto key = Seed();
  const std::vector<uint8_t> pt(static_cast<size_t>(state.range(0)), 0x5a);
  const std::vector<uint8_t> aad(24, 7);
  auto sealed = AesGcmSeal(key, pt, aad, rng);
  if (!sealed.ok()) {
    state.SkipWithError("seal failed");
    return;
  }
  for (auto _ : state) {
    auto opened = AesGcmOpen(key, *sealed, aad);
    if (!opened.ok()) {
      state.SkipWithError("open failed");
      return;
    }
    benchmark::DoNotOptimize(opened);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AesGcmOpen)->Arg(128);

// A server's unmasking reconstructs one 32-byte secret per survivor from t
// shares (t = 7 for SecAgg+ at n = 1000, 22 active).
void BM_ShamirReconstruct32Bytes(benchmark::State& state) {
  random::Csprng rng = random::Csprng::FromSeed(5);
  const size_t t = static_cast<size_t>(state.range(0));
  auto shares = ShamirSplit(Seed(), t, t + 3, rng);
  if (!shares.ok()) {
    state.SkipWithError(std::string(shares.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    auto secret = ShamirReconstruct(*shares, t);
    benchmark::DoNotOptimize(secret);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ShamirReconstruct32Bytes)->Arg(7)->Arg(22)->Arg(93);

}  // namespace
}  // namespace fedmf::crypto
