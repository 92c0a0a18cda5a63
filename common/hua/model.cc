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

void ProjectUnitBall(std::span<double> u) { ProjectBall(u, 1.0); }

void ProjectBall(std::span<double> x, double bound) {
  const double norm = std::sqrt(Dot(x, x));
  if (norm <= bound) return;
  for (double& e : x) e = e * bound / norm;  // bound 1: exactly e / norm
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

void StepUser(std::span<double> u, std::span<const double> grad, int32_t count, const HuaParams& p,
              double norm_bound) {
  if (count <= 0) return;
  const double step = p.gamma / count;
  for (size_t l = 0; l < u.size(); ++l) u[l] -= step * (grad[l] + 2.0 * p.lambda * u[l]);
  ProjectBall(u, norm_bound);
}

void StepItem(std::span<double> v, std::span<const double> sum, int32_t count, const HuaParams& p) {
  if (count <= 0) return;
  const double step = p.gamma / count;
  for (size_t l = 0; l < v.size(); ++l) v[l] -= step * (sum[l] + 2.0 * p.mu * v[l]);
}

}  // namespace fedmf::hua
