// The motion model and the hashes of particles.hpp.
#include "particles.hpp"

#include <bit>
#include <cmath>
#include <initializer_list>
#include <numbers>

namespace particles {

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

// Shortest signed distance from a to b on the unit circle, in [-0.5, 0.5].
double periodic_delta(double a, double b) {
  const double d = b - a;
  return d - std::nearbyint(d);
}

// Into [0, 1). x - floor(x) rounds to 1.0 for tiny negative x, which would index one cell
// past the grid.
double wrap(double x) {
  x -= std::floor(x);
  return x >= 1.0 ? 0.0 : x;
}

// A uniform double in [-1, 1) from 32 random bits.
double signed_unit(std::uint64_t bits32) {
  return static_cast<double>(bits32) * 0x1p-31 - 1.0;
}

}  // namespace

Attractor attractor_at(int step, const Flow& flow) {
  const double angle = 2 * std::numbers::pi * step / flow.period;
  return {0.5 + flow.radius * std::cos(angle), 0.5 + flow.radius * std::sin(angle), step};
}

void advance(Particle& p, const Attractor& attractor, const Flow& flow) {
  // Pulls between a quarter and all of flow.pull: strongly pulled particles form a dense
  // core, weakly pulled ones a wide halo, so the density has no single scale.
  const double pull = flow.pull * (0.25 + 0.75 * static_cast<double>(mix(p.id) >> 11) * 0x1p-53);
  const std::uint64_t kick =
      mix(flow.seed * 0x9e3779b97f4a7c15ULL ^ mix(p.id) ^
          static_cast<std::uint64_t>(attractor.step) * 0xd6e8feb86659fd93ULL);
  p.vx = flow.damping * p.vx + pull * periodic_delta(p.x, attractor.x) +
         flow.noise * signed_unit(kick >> 32);
  p.vy = flow.damping * p.vy + pull * periodic_delta(p.y, attractor.y) +
         flow.noise * signed_unit(kick & 0xffffffffULL);
  p.x = wrap(p.x + p.vx);
  p.y = wrap(p.y + p.vy);
}

std::uint64_t state_hash(const Particle& p) {
  std::uint64_t h = mix(p.id + 1);
  for (double v : {p.x, p.y, p.vx, p.vy}) h = mix(h ^ std::bit_cast<std::uint64_t>(v));
  return h;
}

}  // namespace particles
