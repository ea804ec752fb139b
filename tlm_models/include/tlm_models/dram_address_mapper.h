// Address -> (channel, bank group, bank, row, column) of a DRAM. The mapping is a list of
// fields from the least significant digit up, each with a radix: a bit-level mapping
// ("row:14 bank:2 column:4 channel:4 column:1 bankgroup:2 column:5", most significant first)
// gives radix 2^bits per field, and a field may appear several times (its later, lower segments
// are its low bits). The default mapping (empty spec) is built from the counts and needs no
// power of two; from the least significant digit up:
//   column (one burst), bank group, column (rest of the interleave granule), channel,
//   column (rest of the row), bank, row
// — the channel interleave of the bandwidth level, and consecutive bursts of a granule in
// different bank groups so that a stream is bound by tCCD_S, not tCCD_L. When a granule holds
// fewer bursts than bank groups (or the granule does not divide into them), the bank group
// moves above the row's columns: column (granule), channel, column (rest), bank group, bank, row.
#ifndef TLM_MODELS_DRAM_ADDRESS_MAPPER_H
#define TLM_MODELS_DRAM_ADDRESS_MAPPER_H

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace tlm_models {

struct DramAddress {
  unsigned channel = 0;     // channel x pseudo-channel index (pseudo-channel is the low digit)
  unsigned bank_group = 0;
  unsigned bank = 0;        // flat bank index within the channel: bank_in_group * groups + group
  std::uint64_t row = 0;
  std::uint64_t column = 0; // byte offset within the row
};

class DramAddressMapper {
 public:
  enum Field : unsigned { column, channel, pseudo_channel, bank_group, bank, row, kFields };

  struct Geometry {
    unsigned channels = 1;         // channels x pseudo-channels
    unsigned bank_groups = 1;
    unsigned banks = 1;            // per (pseudo-)channel, all groups together
    std::uint64_t row_size = 1;    // bytes
    std::uint64_t interleave = 1;  // bytes per channel granule (default mapping)
    std::uint64_t burst_bytes = 1; // bytes per burst (default mapping)
  };

  // Builds the mapping; `error()` is empty when the spec fits the geometry.
  DramAddressMapper(const Geometry& g, const std::string& spec) : g_(g) {
    if (spec.empty())
      build_default();
    else
      parse(spec);
  }

  const std::string& error() const { return error_; }

  DramAddress map(std::uint64_t addr) const {
    std::uint64_t value[kFields] = {};
    std::uint64_t scale[kFields] = {1, 1, 1, 1, 1, 1};
    for (const Segment& s : segments_) {
      // Powers of two (every bit-level mapping, most defaults) cost a mask and a shift.
      const std::uint64_t digit = s.shift ? addr & (s.radix - 1) : addr % s.radix;
      addr = s.shift ? addr >> s.shift : addr / s.radix;
      value[s.field] += digit * scale[s.field];
      scale[s.field] *= s.radix;
    }
    value[row] += addr * scale[row];  // bits above the mapping extend the row
    DramAddress a;
    a.channel = static_cast<unsigned>(value[channel] * pc_count_ + value[pseudo_channel]);
    a.bank_group = static_cast<unsigned>(value[bank_group]);
    a.bank = static_cast<unsigned>(value[bank] * g_.bank_groups + value[bank_group]);
    a.row = value[row];
    a.column = value[column];
    return a;
  }

  // Bytes from `addr` to the end of its mapping unit: the largest run that stays in one
  // channel, bank and row (the lowest non-column digit boundary).
  std::uint64_t run_length(std::uint64_t addr) const { return contiguous_ - addr % contiguous_; }

 private:
  struct Segment {
    Field field;
    std::uint64_t radix;
    unsigned shift;  // log2(radix) when radix is a power of two, else 0
  };

  static Segment segment(Field f, std::uint64_t radix) {
    const bool pow2 = (radix & (radix - 1)) == 0;
    return {f, radix, pow2 ? static_cast<unsigned>(__builtin_ctzll(radix)) : 0u};
  }

  void add(Field f, std::uint64_t radix) {
    if (radix > 1) segments_.push_back(segment(f, radix));
  }

  void build_default() {
    pc_count_ = 1;
    const std::uint64_t low = g_.interleave;
    if (g_.row_size % low != 0) {
      error_ = "row_size must be a multiple of the interleave (default address mapping)";
      return;
    }
    if (g_.banks % g_.bank_groups != 0) {
      error_ = "banks must be a multiple of bank_groups";
      return;
    }
    const std::uint64_t groups = g_.bank_groups;
    const std::uint64_t burst = g_.burst_bytes;
    if (groups > 1 && low % (burst * groups) == 0) {
      add(column, burst);
      add(bank_group, groups);
      add(column, low / (burst * groups));
      add(channel, g_.channels);
      add(column, g_.row_size / (low / groups));
      contiguous_ = burst;
    } else {
      add(column, low);
      add(channel, g_.channels);
      add(column, g_.row_size / low);
      add(bank_group, groups);
      contiguous_ = low;
    }
    add(bank, g_.banks / g_.bank_groups);
  }

  static bool field_of(const std::string& name, Field* f) {
    static const char* const names[kFields] = {"column", "channel", "pseudochannel",
                                               "bankgroup", "bank", "row"};
    for (unsigned i = 0; i < kFields; ++i)
      if (name == names[i]) {
        *f = static_cast<Field>(i);
        return true;
      }
    return false;
  }

  void parse(const std::string& spec) {
    std::istringstream in(spec);
    std::vector<Segment> msb_first;
    unsigned bits[kFields] = {};
    std::string token;
    while (in >> token) {
      std::size_t colon = token.find(':');
      Field f;
      if (colon == std::string::npos || !field_of(token.substr(0, colon), &f)) {
        error_ = "address_mapping: '" + token +
                 "' is not field:bits (fields: row, bank, bankgroup, column, channel, "
                 "pseudochannel; most significant first)";
        return;
      }
      unsigned n = 0;
      try {
        n = static_cast<unsigned>(std::stoul(token.substr(colon + 1)));
      } catch (...) {
        n = 0;
      }
      if (n == 0 || n > 40) {
        error_ = "address_mapping: '" + token + "' needs 1..40 bits";
        return;
      }
      bits[f] += n;
      msb_first.push_back(segment(f, std::uint64_t{1} << n));
    }
    for (auto it = msb_first.rbegin(); it != msb_first.rend(); ++it) segments_.push_back(*it);
    auto need = [&](Field f, std::uint64_t count, const char* what) {
      if (error_.empty() && (std::uint64_t{1} << bits[f]) != count)
        error_ = std::string("address_mapping: ") + what + " bits give " +
                 std::to_string(std::uint64_t{1} << bits[f]) + ", the part has " +
                 std::to_string(count);
    };
    pc_count_ = std::uint64_t{1} << bits[pseudo_channel];
    need(column, g_.row_size, "column (row_size)");
    need(bank_group, g_.bank_groups, "bankgroup");
    need(bank, g_.banks / g_.bank_groups, "bank (banks per group)");
    if (error_.empty() && (std::uint64_t{1} << (bits[channel] + bits[pseudo_channel])) != g_.channels)
      error_ = "address_mapping: channel + pseudochannel bits give " +
               std::to_string(std::uint64_t{1} << (bits[channel] + bits[pseudo_channel])) +
               " channels, the memory has " + std::to_string(g_.channels);
    contiguous_ = 1;
    for (const Segment& s : segments_) {
      if (s.field != column) break;
      contiguous_ *= s.radix;
    }
  }

  Geometry g_;
  std::vector<Segment> segments_;  // least significant first
  std::uint64_t pc_count_ = 1;
  std::uint64_t contiguous_ = 1;
  std::string error_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_ADDRESS_MAPPER_H
