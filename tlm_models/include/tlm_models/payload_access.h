// Base-protocol helpers shared by the targets: the checks before a request is served (a
// malformed payload gets an error response, never a crash), the streaming-width rule, and
// byte-enable aware copies between a payload's data array and a memory's storage.
#ifndef TLM_MODELS_PAYLOAD_ACCESS_H
#define TLM_MODELS_PAYLOAD_ACCESS_H

#include <cstdint>
#include <cstdio>
#include <cstring>

#include <systemc>
#include <tlm>

namespace tlm_models {

// Byte-enable mask of a payload (null when every byte is enabled).
struct ByteEnables {
  const unsigned char* mask = nullptr;
  unsigned length = 0;

  static ByteEnables of(const tlm::tlm_generic_payload& t) {
    return ByteEnables{t.get_byte_enable_ptr(), t.get_byte_enable_length()};
  }
  bool all() const { return mask == nullptr; }
  // Whether byte `i` of the payload's data array takes part (the mask repeats if shorter).
  bool enabled(std::uint64_t i) const { return mask[i % length] == TLM_BYTE_ENABLED; }
};

// The message type of the one warning issued when a payload with streaming width 0 arrives.
constexpr const char* kZeroStreamingWidthMsg = "tlm_models/streaming_width_0";

// Streaming width 0 is outside the base protocol (an initiator must set it, the data length
// meaning "no streaming"), yet the CPU models of several open-source virtual prototypes leave it
// at 0. It is taken as equal to the data length: counted in `*zero_width` (when given) and
// reported once per simulation as a warning of type kZeroStreamingWidthMsg.
inline void note_zero_streaming_width(const tlm::tlm_generic_payload& t, std::uint64_t* zero_width) {
  if (zero_width) ++*zero_width;
  if (sc_core::sc_report_handler::get_count(kZeroStreamingWidthMsg) > 0) return;
  char msg[200];
  std::snprintf(msg, sizeof msg,
                "a payload with streaming width 0 (address 0x%llx) is taken as width = data "
                "length; later ones are counted by each target, not reported",
                static_cast<unsigned long long>(t.get_address()));
  SC_REPORT_WARNING(kZeroStreamingWidthMsg, msg);
}

// Our targets do not implement streaming (a FIFO-like address); the base protocol demands an
// explicit burst error for it rather than silently treating it as an incrementing burst.
// Width 0 is no streaming (note_zero_streaming_width).
inline bool reject_streaming(tlm::tlm_generic_payload& t, std::uint64_t* zero_width = nullptr) {
  const unsigned width = t.get_streaming_width();
  if (width == 0) {
    note_zero_streaming_width(t, zero_width);
    return false;
  }
  if (width < t.get_data_length()) {
    t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return true;
  }
  return false;
}

// The attributes every target relies on before it touches a payload, whatever an initiator
// sent: a command the base protocol knows, a byte-enable length of at least 1 where there is a
// byte-enable array (the mask repeats modulo that length), and for a read or write a data
// array of at least one byte. Anything else is answered with the matching error response.
// Returns true when the payload may be acted on; otherwise the response status is set.
inline bool admit_payload(tlm::tlm_generic_payload& t) {
  const tlm::tlm_command cmd = t.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND &&
      cmd != tlm::TLM_IGNORE_COMMAND) {
    t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return false;
  }
  if (t.get_byte_enable_ptr() != nullptr && t.get_byte_enable_length() == 0) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  if (cmd != tlm::TLM_IGNORE_COMMAND &&
      (t.get_data_length() == 0 || t.get_data_ptr() == nullptr)) {
    t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return false;
  }
  return true;
}

// What every target checks before it serves a debug access (transport_dbg): a read or a write
// of at least one byte has a data array to copy to or from. The debug transport has no
// response status; a request that cannot be served transfers nothing, so the target returns 0
// bytes (an ignore command, a zero length or a null data pointer alike) and never touches the
// array. Returns true when the access may be served.
inline bool admit_debug(const tlm::tlm_generic_payload& t) {
  const tlm::tlm_command cmd = t.get_command();
  return (cmd == tlm::TLM_READ_COMMAND || cmd == tlm::TLM_WRITE_COMMAND) &&
         t.get_data_length() > 0 && t.get_data_ptr() != nullptr;
}

// What a memory of `size` bytes checks before it times a request. A malformed payload (see
// admit_payload) is answered with its error; an ignore command completes with OK and no
// access; streaming (see reject_streaming) and any byte of [address, address + length) beyond
// the memory are answered with the error the base protocol names (`zero_width` counts payloads
// of streaming width 0, see reject_streaming). Returns true when the
// request is to be served; otherwise the response status is set.
inline bool admit_memory_access(tlm::tlm_generic_payload& t, std::uint64_t size,
                                std::uint64_t* zero_width = nullptr) {
  if (!admit_payload(t)) return false;
  if (t.get_command() == tlm::TLM_IGNORE_COMMAND) {
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return false;
  }
  if (reject_streaming(t, zero_width)) return false;
  std::uint64_t addr = t.get_address();
  if (addr >= size || t.get_data_length() > size - addr) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  return true;
}

// A memory's request as it serves it: whether admit_memory_access admitted it (`errors` counts
// the ones answered with an error), and the payload's address, length and direction.
struct MemoryAccess {
  bool admitted;
  std::uint64_t addr;
  std::uint64_t len;
  bool write;
};

inline MemoryAccess memory_access(tlm::tlm_generic_payload& t, std::uint64_t size,
                                  std::uint64_t* zero_width, std::uint64_t& errors) {
  if (!admit_memory_access(t, size, zero_width)) {
    if (t.is_response_error()) ++errors;
    return MemoryAccess{false, 0, 0, false};
  }
  return MemoryAccess{true, t.get_address(), t.get_data_length(),
                      t.get_command() == tlm::TLM_WRITE_COMMAND};
}

// Copies `len` bytes between memory and the payload data array, where `data` points at payload
// byte `offset` (paged storage copies in pieces). Disabled bytes are left untouched on both
// sides.
inline void copy_bytes(bool write, std::uint8_t* mem, unsigned char* data, std::uint64_t len,
                       std::uint64_t offset, const ByteEnables& be) {
  if (be.all()) {
    if (write)
      std::memcpy(mem, data, len);
    else
      std::memcpy(data, mem, len);
    return;
  }
  for (std::uint64_t i = 0; i < len; ++i) {
    if (!be.enabled(offset + i)) continue;
    if (write)
      mem[i] = data[i];
    else
      data[i] = mem[i];
  }
}

// A read of memory that holds nothing (no storage, or a page never written): enabled bytes
// read as zero. `data` points at payload byte `offset`.
inline void zero_bytes(unsigned char* data, std::uint64_t len, std::uint64_t offset,
                       const ByteEnables& be) {
  if (be.all()) {
    std::memset(data, 0, len);
    return;
  }
  for (std::uint64_t i = 0; i < len; ++i)
    if (be.enabled(offset + i)) data[i] = 0;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_PAYLOAD_ACCESS_H
