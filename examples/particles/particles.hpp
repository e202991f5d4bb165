// Particles of the rebalancing example: the record every rank stores and exchanges, the
// motion model (a drifting attractor that crowds particles together) and the
// order-independent hashes the checks sum over all ranks.
#pragma once

#include <cstdint>

namespace particles {

struct Particle {
  std::uint64_t id;
  double x, y;    // position in the periodic unit box [0, 1)^2
  double vx, vy;  // velocity, box lengths per step
};
static_assert(sizeof(Particle) == 40, "the memory figures in README.md assume 40-byte particles");

// Particles are pulled towards an attractor that circles the box centre, with a per-particle
// pull and random kicks. The kicks are a hash of (seed, id, step), so every particle's path
// is the same whichever rank moves it: runs that differ only in P's exchanges end with the
// same state.
struct Flow {
  double radius = 0.25;   // of the attractor's circle
  double period = 400;    // steps per turn of the attractor
  double damping = 0.8;   // fraction of the velocity kept each step
  double pull = 0.004;    // largest pull towards the attractor, per unit of distance
  double noise = 0.0015;  // largest random kick per step
  std::uint64_t seed = 1;
};

// Where the attractor is at one step, computed once per step rather than per particle.
struct Attractor {
  double x, y;
  int step;
};
Attractor attractor_at(int step, const Flow& flow);

void advance(Particle& p, const Attractor& attractor, const Flow& flow);

std::uint64_t mix(std::uint64_t x);  // splitmix64's finalizer

// Order-independent checks: sums (mod 2^64) of these over all particles do not depend on
// where the particles lie; a lost, duplicated or corrupted particle changes them.
inline std::uint64_t id_hash(const Particle& p) {
  return mix(p.id ^ 0x5bd1e9955bd1e995ULL);
}
std::uint64_t state_hash(const Particle& p);

}  // namespace particles
