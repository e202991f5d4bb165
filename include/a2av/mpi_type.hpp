// Maps C++ element types to MPI datatypes: built-in types for arithmetic types, a cached
// contiguous MPI_BYTE type for any other trivially copyable type.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <type_traits>

namespace a2av {

namespace detail {
MPI_Datatype byte_type_of_size(int bytes);  // committed, cached, freed at MPI_Finalize
}

template <class T>
MPI_Datatype mpi_type() {
  static_assert(std::is_trivially_copyable_v<T>, "exchanged elements must be trivially copyable");
  if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char>)
    return MPI_SIGNED_CHAR;
  else if constexpr (std::is_same_v<T, unsigned char> || std::is_same_v<T, std::byte>)
    return MPI_BYTE;
  else if constexpr (std::is_same_v<T, int>)
    return MPI_INT;
  else if constexpr (std::is_same_v<T, unsigned>)
    return MPI_UNSIGNED;
  else if constexpr (std::is_same_v<T, long>)
    return MPI_LONG;
  else if constexpr (std::is_same_v<T, unsigned long>)
    return MPI_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<T, long long>)
    return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, unsigned long long>)
    return MPI_UNSIGNED_LONG_LONG;
  else if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return MPI_C_DOUBLE_COMPLEX;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return MPI_C_FLOAT_COMPLEX;
  else
    return detail::byte_type_of_size(static_cast<int>(sizeof(T)));
}

}  // namespace a2av
