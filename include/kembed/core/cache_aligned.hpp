#pragma once
/// @file An allocator whose blocks start on a 64-byte cache line, for arrays
/// read in rows of 64 bytes at scattered places (the sparse products' d x 8
/// blocks): aligned, each such row is one cache line instead of two.
#include <cstddef>
#include <new>
#include <vector>

namespace kembed {

inline constexpr std::size_t kCacheLine = 64;

template <class T>
struct CacheAlignedAllocator {
  using value_type = T;
  CacheAlignedAllocator() = default;
  template <class U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kCacheLine)));
  }
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete(p, std::align_val_t(kCacheLine));
  }
  template <class U>
  bool operator==(const CacheAlignedAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const CacheAlignedAllocator<U>&) const noexcept {
    return false;
  }
};

/// A vector whose data() is a multiple of kCacheLine.
template <class T>
using CacheAlignedVector = std::vector<T, CacheAlignedAllocator<T>>;

}  // namespace kembed
