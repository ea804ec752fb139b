// Backing storage for a large memory (an 8 GiB HBM) of which a simulation touches a little:
// fixed-size pages allocated on first write or first DMI request; unallocated pages read as
// zeros.
#ifndef TLM_MODELS_SPARSE_STORAGE_H
#define TLM_MODELS_SPARSE_STORAGE_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "tlm_models/payload_access.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class SparseStorage {
 public:
  static constexpr std::uint64_t kDefaultPageSize = 64 * 1024;

  explicit SparseStorage(std::uint64_t size, std::uint64_t page_size = kDefaultPageSize)
      : size_(size), page_size_(page_size), pages_(ceil_div(size, page_size)) {}

  std::uint64_t size() const { return size_; }
  std::uint64_t page_size() const { return page_size_; }
  std::uint64_t allocated_pages() const { return allocated_; }

  // [addr, addr + len) must lie inside the storage; `data` is payload byte 0 of the access.
  void access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len,
              const ByteEnables& be) {
    std::uint64_t done = 0;
    while (done < len) {
      std::uint64_t a = addr + done;
      std::uint64_t page = a / page_size_;
      std::uint64_t in_page = a % page_size_;
      std::uint64_t n = std::min(len - done, page_size_ - in_page);
      std::uint8_t* mem = write ? page_ptr(page) : existing_page(page);
      if (mem)
        copy_bytes(write, mem + in_page, data + done, n, done, be);
      else
        zero_bytes(data + done, n, done, be);
      done += n;
    }
  }

  // The page holding `addr`, allocated if needed (DMI hands out writable pointers).
  std::uint8_t* page_ptr(std::uint64_t page) {
    auto& p = pages_[page];
    if (!p) {
      p.reset(new std::uint8_t[page_size_]());
      ++allocated_;
    }
    return p.get();
  }

  // Frees every page: all contents read as zero again and earlier page pointers dangle.
  void clear() {
    for (auto& p : pages_) p.reset();
    allocated_ = 0;
  }

 private:
  std::uint8_t* existing_page(std::uint64_t page) const { return pages_[page].get(); }

  std::uint64_t size_;
  std::uint64_t page_size_;
  std::vector<std::unique_ptr<std::uint8_t[]>> pages_;
  std::uint64_t allocated_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_SPARSE_STORAGE_H
