#include "common/hua/model.h"

#include <cmath>

namespace fedmf::hua {
namespace {

double Dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (size_t l = 0; l < a.size(); ++l) s += a[l] * b[l];
  return s;
}

}  // namespace

void FillInitialProfile(random::Csprng& rng, std::span<double> row) {
  double norm2 = 0;
  while (norm2 == 0) {  // all-zero has probability ~0, but would divide by 0
    norm2 = 0;
    for (double& x : row) {
      x = rng.NextDouble();
      norm2 += x * x;
    }
  }
  const double inv = 1.0 / std::sqrt(norm2);
  for (double& x : row) x *= inv;
}

void ProjectUnitBall(std::span<double> u) {
  const double norm = std::sqrt(Dot(u, u));
  if (norm <= 1.0) return;
  for (double& x : u) x /= norm;
}

void AddItemGradient(std::span<const double> u, std::span<const double> v, double r,
                     std::span<double> out) {
  const double c = -2.0 * (r - Dot(u, v));
  for (size_t l = 0; l < out.size(); ++l) out[l] += c * u[l];
}

void AddUserGradient(std::span<const double> u, std::span<const double> v, double r,
                     std::span<double> out) {
  const double c = -2.0 * (r - Dot(u, v));
  for (size_t l = 0; l < out.size(); ++l) out[l] += c * v[l];
}

void StepUser(std::span<double> u, std::span<const double> grad, int32_t count,
              const HuaParams& p) {
  if (count <= 0) return;
  const double step = p.gamma / count;
  for (size_t l = 0; l < u.size(); ++l) u[l] -= step * (grad[l] + 2.0 * p.lambda * u[l]);
  ProjectUnitBall(u);
}

void StepItem(std::span<double> v, std::span<const double> sum, int32_t count, const HuaParams& p) {
  if (count <= 0) return;
  const double step = p.gamma / count;
  for (size_t l = 0; l < v.size(); ++l) v[l] -= step * (sum[l] + 2.0 * p.mu * v[l]);
}

}  // namespace fedmf::hua
