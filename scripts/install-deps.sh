#!/usr/bin/env bash
# Installs the Debian 12 packages a2av needs to build, test and benchmark, but only when
# one is missing, so repeated runs cost nothing and need no network.
set -euo pipefail

packages=(build-essential cmake pkg-config libopenmpi-dev openmpi-bin libmpich-dev mpich
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  gfortran python3 python3-dev python3-matplotlib python3-mpi4py python3-numpy libfftw3-dev
  libfftw3-mpi-dev libsimgrid-dev)

missing=()
for p in "${packages[@]}"; do
  # dpkg -s also succeeds for removed packages whose config files remain; check the state.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
[[ $(id -u) -ne 0 ]] && sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
