// Accounting of temporary memory: every buffer an exchange allocates goes through a
// TempBuffer charged to the call's MemoryTracker, whose peak the call reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace a2av {

class MemoryTracker {
 public:
  void allocate(std::int64_t bytes) {
    current_ += bytes;
    if (current_ > peak_) peak_ = current_;
  }
  void release(std::int64_t bytes) { current_ -= bytes; }
  std::int64_t peak() const { return peak_; }
  std::int64_t current() const { return current_; }

 private:
  std::int64_t current_ = 0;
  std::int64_t peak_ = 0;
};

// An uninitialised byte buffer charged to a tracker for as long as it lives.
class TempBuffer {
 public:
  TempBuffer() = default;
  TempBuffer(MemoryTracker& tracker, std::int64_t bytes) : tracker_(&tracker) { grow(bytes); }
  TempBuffer(TempBuffer&& other) noexcept { swap(other); }
  TempBuffer& operator=(TempBuffer&& other) noexcept {
    TempBuffer(std::move(other)).swap(*this);
    return *this;
  }
  ~TempBuffer() {
    if (capacity_) tracker_->release(capacity_);  // an empty buffer may outlive its tracker
  }

  // Makes room for at least `bytes`; the old contents are not kept.
  void grow(std::int64_t bytes) {
    if (bytes <= capacity_) return;
    data_.reset();
    tracker_->release(capacity_);
    capacity_ = 0;
    data_ = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes));
    capacity_ = bytes;
    tracker_->allocate(capacity_);
  }
  void attach(MemoryTracker& tracker) { tracker_ = &tracker; }

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  std::int64_t capacity() const { return capacity_; }

 private:
  void swap(TempBuffer& other) noexcept {
    std::swap(tracker_, other.tracker_);
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }

  MemoryTracker* tracker_ = nullptr;
  std::unique_ptr<std::byte[]> data_;
  std::int64_t capacity_ = 0;
};

}  // namespace a2av
