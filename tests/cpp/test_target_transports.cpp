// Every target serves both TLM-2.0 transports and answers malformed payloads with an error:
// - an approximately-timed initiator (nb_transport_fw, four phases, pipelined requests, a
//   memory manager) through the ProtocolChecker sees 0 violations, and each BEGIN_RESP arrives
//   exactly when b_transport on an identical target, asked at the same times, says the
//   response is ready; data written on the AT path reads back;
// - a loosely-timed initiator through the checker sees 0 violations on the same targets;
// - each malformed payload class (byte-enable pointer with length 0, streaming width below the
//   length, no data pointer, data length 0, an unknown command) gets its error response on
//   both paths, without a crash; streaming width 0 is served as width = data length.
// - a debug access (transport_dbg) with no data pointer or no length transfers 0 bytes and
//   touches nothing, and the checker reports the null pointer;
// Targets: HbmMemory (bandwidth and bank level), Sram, Interconnect (to an Sram), and the
// AttentionAccelerator's register target.
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "check.h"
#include "protocol_checks.h"
#include "small_memories.h"
#include "tlm_models/attention_accelerator.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/protocol_checker.h"
#include "tlm_models/sram.h"

namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using tlm::tlm_generic_payload;
using tlm::tlm_phase;
using tlm::tlm_sync_enum;
using check::PayloadPool;
using check::prepare;

struct Request {
  tlm::tlm_command cmd;
  std::uint64_t addr;
  unsigned len;
  sc_time at;  // absolute time the request is issued (not before the request channel is free)
};

struct Outcome {
  sc_time issued;
  sc_time lt_ready;    // sc_time_stamp() + delay of b_transport on the reference target
  sc_time responded;   // when BEGIN_RESP arrived on the AT path
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
};

// Issues each request as BEGIN_REQ at its time (request exclusion kept: the next BEGIN_REQ waits
// for END_REQ or BEGIN_RESP), mirrors it as b_transport on the reference socket at the same
// moment, and ends responses alternately by TLM_COMPLETED on the backward call and by END_RESP
// on the forward path a delta cycle later (so a response queued behind it is not delayed).
struct AtInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<AtInitiator> socket;
  tlm_utils::simple_initiator_socket<AtInitiator> reference;
  std::vector<Request> requests;
  std::vector<Outcome> outcomes;
  std::vector<std::vector<unsigned char>> buffers;
  PayloadPool pool;
  bool finished = false;

  explicit AtInitiator(sc_core::sc_module_name n)
      : sc_core::sc_module(n), socket("socket"), reference("reference"),
        end_resp_(this, &AtInitiator::send_end_resp) {
    socket.register_nb_transport_bw(this, &AtInitiator::nb_transport_bw);
    SC_HAS_PROCESS(AtInitiator);
    SC_THREAD(run);
  }

  void run() {
    outcomes.resize(requests.size());
    buffers.resize(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const Request& r = requests[i];
      if (sc_core::sc_time_stamp() < r.at) wait(r.at - sc_core::sc_time_stamp());
      while (request_busy_) wait(request_free_);
      buffers[i].assign(r.len, static_cast<unsigned char>(0x30 + i));
      std::vector<unsigned char> mirror = buffers[i];
      tlm_generic_payload ref;
      prepare(ref, r.cmd, r.addr, mirror.data(), r.len);
      sc_time d = sc_core::SC_ZERO_TIME;
      reference->b_transport(ref, d);
      outcomes[i].issued = sc_core::sc_time_stamp();
      outcomes[i].lt_ready = sc_core::sc_time_stamp() + d;

      tlm_generic_payload* t = pool.get();
      t->acquire();
      prepare(*t, r.cmd, r.addr, buffers[i].data(), r.len);
      index_[t] = i;
      tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      request_busy_ = true;
      const tlm_sync_enum s = socket->nb_transport_fw(*t, phase, delay);
      if (s == tlm::TLM_COMPLETED) {
        request_busy_ = false;
        record(*t, sc_core::sc_time_stamp() + delay);
        t->release();
      } else if (s == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
        request_busy_ = false;
      } else if (s == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) {
        request_busy_ = false;
        record(*t, sc_core::sc_time_stamp() + delay);
        phase = tlm::END_RESP;
        socket->nb_transport_fw(*t, phase, delay);
        t->release();
      }
    }
    while (pool.in_use() != 0) wait(all_done_);
    finished = true;
  }

 private:
  tlm_sync_enum nb_transport_bw(tlm_generic_payload& t, tlm_phase& phase, sc_time& delay) {
    if (phase == tlm::END_REQ) {
      request_busy_ = false;
      request_free_.notify(delay);
      return tlm::TLM_ACCEPTED;
    }
    CHECK(phase == tlm::BEGIN_RESP);
    if (request_busy_) {  // BEGIN_RESP implies END_REQ
      request_busy_ = false;
      request_free_.notify(delay);
    }
    record(t, sc_core::sc_time_stamp() + delay);
    if (index_.at(&t) % 2 == 0) {
      t.release();
      all_done_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_COMPLETED;
    }
    end_resp_.notify(t, end_phase_, sc_core::SC_ZERO_TIME);
    return tlm::TLM_ACCEPTED;
  }

  void send_end_resp(tlm_generic_payload& t, const tlm_phase&) {
    tlm_phase phase = tlm::END_RESP;
    sc_time delay = sc_core::SC_ZERO_TIME;
    CHECK_EQ(socket->nb_transport_fw(t, phase, delay), tlm::TLM_COMPLETED);
    t.release();
    all_done_.notify(sc_core::SC_ZERO_TIME);
  }

  void record(tlm_generic_payload& t, const sc_time& when) {
    Outcome& o = outcomes[index_.at(&t)];
    o.responded = when;
    o.status = t.get_response_status();
  }

  tlm_utils::peq_with_cb_and_phase<AtInitiator> end_resp_;
  const tlm_phase end_phase_ = tlm::END_RESP;
  std::unordered_map<const tlm_generic_payload*, std::size_t> index_;
  bool request_busy_ = false;
  sc_core::sc_event request_free_, all_done_;
};

// Requests a memory at `base` of at least 64 KiB serves: writes then reads of several sizes,
// some issued at the same time (pipelined), some after gaps.
std::vector<Request> memory_requests(std::uint64_t base) {
  std::vector<Request> r;
  for (unsigned i = 0; i < 8; ++i)
    r.push_back({tlm::TLM_WRITE_COMMAND, base + 512 * i, 64u << (i % 4), sc_time(0, SC_NS)});
  for (unsigned i = 0; i < 8; ++i)
    r.push_back({tlm::TLM_READ_COMMAND, base + 512 * i, 64u << (i % 4), sc_time(300 + 7 * i, SC_NS)});
  r.push_back({tlm::TLM_READ_COMMAND, base + 4096, 256, sc_time(2000, SC_NS)});
  return r;
}

// Runs `requests` from an AT initiator through a ProtocolChecker to `dut` and mirrored as LT
// to `ref`; checks 0 violations, every response's time and status, and the data read back.
template <class DutSocket, class RefSocket>
void check_at_against_lt(DutSocket& dut, RefSocket& ref, const std::vector<Request>& requests,
                         bool storage) {
  AtInitiator ini("ini");
  tlm_models::ProtocolChecker checker("checker");
  ini.requests = requests;
  ini.socket.bind(checker.in);
  checker.out.bind(dut);
  ini.reference.bind(ref);
  sc_core::sc_start();
  CHECK(ini.finished);
  CHECK_EQ(checker.violations(), 0u);
  CHECK_EQ(checker.open_at_transactions(), 0u);
  CHECK_EQ(checker.transactions(), static_cast<std::uint64_t>(requests.size()));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const Outcome& o = ini.outcomes[i];
    CHECK_EQ(o.status, tlm::TLM_OK_RESPONSE);
    CHECK_EQ(o.responded, o.lt_ready);
    CHECK(o.lt_ready > o.issued);
  }
  if (!storage) return;
  // Read i (index 8 + i) returns what write i stored (the writes filled 0x30 + i).
  for (std::size_t i = 0; i < 8; ++i) {
    const std::vector<unsigned char>& back = ini.buffers[8 + i];
    CHECK_EQ(int(back.front()), int(0x30 + i));
    CHECK_EQ(int(back.back()), int(0x30 + i));
  }
}

tlm_models::HbmMemory::Params hbm_params(bool bank_level) { return check::small_hbm_params(bank_level); }
tlm_models::Sram::Params sram_params() { return check::small_sram_params(); }

// An Interconnect in front of an Sram mapped at `base`.
struct Fabric {
  tlm_models::Interconnect noc;
  tlm_models::Sram sram;
  Fabric(const char* name, std::uint64_t base)
      : noc((std::string(name) + "_noc").c_str(), tlm_models::Interconnect::Params{}),
        sram((std::string(name) + "_sram").c_str(), sram_params()) {
    noc.out.bind(sram.target);
    noc.add_route(base, sram_params().capacity, 0);
  }
};

// ---- malformed payloads -----------------------------------------------------------------------

struct Malformed {
  const char* what;
  std::function<void(tlm_generic_payload&, unsigned char*, unsigned char*)> shape;
  tlm::tlm_response_status expected;
};

std::vector<Malformed> malformed_classes(std::uint64_t addr, unsigned len) {
  return {
      {"byte-enable pointer with length 0",
       [=](tlm_generic_payload& t, unsigned char* d, unsigned char* be) {
         prepare(t, tlm::TLM_READ_COMMAND, addr, d, len);
         t.set_byte_enable_ptr(be);
         t.set_byte_enable_length(0);
       },
       tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE},
      // Not malformed for our targets: taken as width = data length (payload_access.h).
      {"streaming width 0",
       [=](tlm_generic_payload& t, unsigned char* d, unsigned char*) {
         prepare(t, tlm::TLM_WRITE_COMMAND, addr, d, len);
         t.set_streaming_width(0);
       },
       tlm::TLM_OK_RESPONSE},
      {"streaming width below the length",
       [=](tlm_generic_payload& t, unsigned char* d, unsigned char*) {
         prepare(t, tlm::TLM_READ_COMMAND, addr, d, len);
         t.set_streaming_width(len / 2);
       },
       tlm::TLM_BURST_ERROR_RESPONSE},
      {"no data pointer",
       [=](tlm_generic_payload& t, unsigned char*, unsigned char*) {
         prepare(t, tlm::TLM_READ_COMMAND, addr, nullptr, len);
       },
       tlm::TLM_GENERIC_ERROR_RESPONSE},
      {"data length 0",
       [=](tlm_generic_payload& t, unsigned char* d, unsigned char*) {
         prepare(t, tlm::TLM_WRITE_COMMAND, addr, d, 0);
         t.set_streaming_width(1);
       },
       tlm::TLM_GENERIC_ERROR_RESPONSE},
      {"unknown command",
       [=](tlm_generic_payload& t, unsigned char* d, unsigned char*) {
         prepare(t, static_cast<tlm::tlm_command>(7), addr, d, len);
       },
       tlm::TLM_COMMAND_ERROR_RESPONSE},
  };
}

// Sends every malformed class on the LT path and on the AT path (no checker: the checker's job
// is to flag these) and expects each class's error response. `burst_first` targets (the
// register block) name a wrong length/width a burst error before they look at anything else.
struct MalformedSender : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<MalformedSender> socket;
  std::vector<Malformed> classes;
  std::vector<tlm::tlm_response_status> lt, at;
  bool finished = false;

  explicit MalformedSender(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_nb_transport_bw(this, &MalformedSender::bw);
    SC_HAS_PROCESS(MalformedSender);
    SC_THREAD(run);
  }

  void run() {
    unsigned char data[64] = {}, be[4] = {0xff, 0xff, 0xff, 0xff};
    for (const Malformed& m : classes) {
      tlm_generic_payload t;
      m.shape(t, data, be);
      sc_time d = sc_core::SC_ZERO_TIME;
      socket->b_transport(t, d);
      lt.push_back(t.get_response_status());
    }
    for (const Malformed& m : classes) {
      tlm_generic_payload* t = pool_.get();
      t->acquire();
      m.shape(*t, data, be);
      tlm_phase phase = tlm::BEGIN_REQ;
      sc_time d = sc_core::SC_ZERO_TIME;
      const tlm_sync_enum s = socket->nb_transport_fw(*t, phase, d);
      if (s == tlm::TLM_COMPLETED || (s == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
        at.push_back(t->get_response_status());
        if (s == tlm::TLM_UPDATED) {
          phase = tlm::END_RESP;
          socket->nb_transport_fw(*t, phase, d);
        }
      } else {
        wait(responded_);
        at.push_back(t->get_response_status());
      }
      t->release();
    }
    finished = true;
  }

 private:
  tlm_sync_enum bw(tlm_generic_payload&, tlm_phase& phase, sc_time&) {
    if (phase == tlm::BEGIN_RESP) {
      responded_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_COMPLETED;
    }
    return tlm::TLM_ACCEPTED;
  }
  PayloadPool pool_;
  sc_core::sc_event responded_;
};

// Each class got its error response on both paths.
void expect_answers(const MalformedSender& s) {
  const std::vector<Malformed>& classes = s.classes;
  CHECK(s.finished);
  CHECK_EQ(s.lt.size(), classes.size());
  CHECK_EQ(s.at.size(), classes.size());
  for (std::size_t i = 0; i < classes.size() && i < s.lt.size() && i < s.at.size(); ++i) {
    if (s.lt[i] != classes[i].expected || s.at[i] != classes[i].expected) {
      std::fprintf(stderr, "%s: expected %d, LT %d, AT %d\n", classes[i].what,
                   int(classes[i].expected), int(s.lt[i]), int(s.at[i]));
      ++check::failures();
    }
  }
}

template <class DutSocket>
void check_malformed(DutSocket& dut, const std::vector<Malformed>& classes) {
  MalformedSender s("sender");
  s.classes = classes;
  s.socket.bind(dut);
  sc_core::sc_start();
  expect_answers(s);
}

std::vector<std::unique_ptr<sc_core::sc_module>> keep;  // modules a case builds in a loop
std::vector<MalformedSender*> senders;

constexpr std::uint64_t kFabricBase = 0x4000'0000;

// The accelerator with its system port on a memory and its interrupt on a signal.
struct Accelerator {
  tlm_models::AttentionAccelerator acc;
  tlm_models::HbmMemory mem;
  sc_core::sc_signal<bool> irq;
  explicit Accelerator(const char* name)
      : acc(name, tlm_models::AttentionAccelerator::Params{}),
        mem((std::string(name) + "_mem").c_str(), hbm_params(false)),
        irq((std::string(name) + "_irq").c_str()) {
    acc.sys_port.bind(mem.target);
    acc.irq.bind(irq);
  }
};

}  // namespace

TEST_CASE(hbm_bandwidth_level_at_matches_lt) {
  tlm_models::HbmMemory dut("dut", hbm_params(false)), ref("ref", hbm_params(false));
  check_at_against_lt(dut.target, ref.target, memory_requests(0), true);
}

TEST_CASE(hbm_bank_level_at_matches_lt) {
  tlm_models::HbmMemory dut("dut", hbm_params(true)), ref("ref", hbm_params(true));
  check_at_against_lt(dut.target, ref.target, memory_requests(0), true);
}

TEST_CASE(sram_at_matches_lt) {
  tlm_models::Sram dut("dut", sram_params()), ref("ref", sram_params());
  check_at_against_lt(dut.target, ref.target, memory_requests(0), true);
}

TEST_CASE(interconnect_at_matches_lt) {
  Fabric dut("dut", kFabricBase), ref("ref", kFabricBase);
  check_at_against_lt(dut.noc.in, ref.noc.in, memory_requests(kFabricBase), true);
}

TEST_CASE(accelerator_registers_at_matches_lt) {
  Accelerator dut("dut"), ref("ref");
  // Reads of the identification and configuration registers; writes of the command base.
  std::vector<Request> r;
  using Acc = tlm_models::AttentionAccelerator;
  for (std::uint32_t reg : {Acc::kId, Acc::kVersion, Acc::kCtrl, Acc::kStatus, Acc::kDmaChannels})
    r.push_back({tlm::TLM_READ_COMMAND, reg, 4, sc_time(0, SC_NS)});
  r.push_back({tlm::TLM_WRITE_COMMAND, tlm_models::AttentionAccelerator::kCommandBaseLo, 4,
               sc_time(50, SC_NS)});
  check_at_against_lt(dut.acc.ctrl, ref.acc.ctrl, r, false);
}

TEST_CASE(lt_initiator_sees_no_violation_on_any_target) {
  tlm_models::HbmMemory hbm("hbm", hbm_params(false)), bank("bank", hbm_params(true));
  tlm_models::Sram sram("sram", sram_params());
  Fabric fabric("fabric", kFabricBase);
  struct Lt : sc_core::sc_module {
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<Lt>>> sockets;
    std::vector<std::uint64_t> bases;
    bool finished = false;
    Lt(sc_core::sc_module_name n, std::vector<std::uint64_t> b)
        : sc_core::sc_module(n), bases(std::move(b)) {
      for (std::size_t i = 0; i < bases.size(); ++i)
        sockets.push_back(std::make_unique<tlm_utils::simple_initiator_socket<Lt>>(
            sc_core::sc_gen_unique_name("socket")));
      SC_HAS_PROCESS(Lt);
      SC_THREAD(run);
    }
    void run() {
      unsigned char buf[512] = {};
      for (std::size_t s = 0; s < sockets.size(); ++s) {
        for (const Request& r : memory_requests(bases[s])) {
          tlm_generic_payload t;
          prepare(t, r.cmd, r.addr, buf, r.len);
          sc_time d = sc_core::SC_ZERO_TIME;
          (*sockets[s])->b_transport(t, d);
          CHECK_EQ(t.get_response_status(), tlm::TLM_OK_RESPONSE);
        }
      }
      finished = true;
    }
  } lt("lt", {0, 0, 0, kFabricBase});
  std::vector<std::unique_ptr<tlm_models::ProtocolChecker>> checkers;
  for (int i = 0; i < 4; ++i)
    checkers.push_back(std::make_unique<tlm_models::ProtocolChecker>(
        sc_core::sc_gen_unique_name("checker")));
  for (int i = 0; i < 4; ++i) lt.sockets[i]->bind(checkers[i]->in);
  checkers[0]->out.bind(hbm.target);
  checkers[1]->out.bind(bank.target);
  checkers[2]->out.bind(sram.target);
  checkers[3]->out.bind(fabric.noc.in);
  sc_core::sc_start();
  CHECK(lt.finished);
  for (const auto& c : checkers) {
    CHECK_EQ(c->violations(), 0u);
    CHECK_EQ(c->transactions(), static_cast<std::uint64_t>(memory_requests(0).size()));
  }
}

TEST_CASE(hbm_answers_malformed_payloads) {
  tlm_models::HbmMemory dut("dut", hbm_params(false));
  check_malformed(dut.target, malformed_classes(0, 16));
}

TEST_CASE(hbm_bank_level_answers_malformed_payloads) {
  tlm_models::HbmMemory dut("dut", hbm_params(true));
  check_malformed(dut.target, malformed_classes(0, 16));
}

TEST_CASE(hbm_queued_answers_malformed_payloads) {
  tlm_models::HbmMemory dut("dut", check::small_hbm_params(true, true));
  check_malformed(dut.target, malformed_classes(0, 16));
}

// Both topologies forward nothing malformed, on either path, to a target that waits.
TEST_CASE(interconnect_to_queued_hbm_answers_malformed_payloads) {
  for (const char* topology : {"crossbar", "mesh"}) {
    tlm_models::Interconnect::Params p;
    p.topology = topology;
    auto noc = std::make_unique<tlm_models::Interconnect>(sc_core::sc_gen_unique_name("noc"), p);
    auto hbm = std::make_unique<tlm_models::HbmMemory>(sc_core::sc_gen_unique_name("hbm"),
                                                       check::small_hbm_params(true, true));
    noc->out.bind(hbm->target);
    noc->add_route(kFabricBase, hbm->params().size, 0);
    auto sender = std::make_unique<MalformedSender>(sc_core::sc_gen_unique_name("sender"));
    sender->classes = malformed_classes(kFabricBase, 16);
    sender->socket.bind(noc->in);
    senders.push_back(sender.get());
    keep.push_back(std::move(noc));
    keep.push_back(std::move(hbm));
    keep.push_back(std::move(sender));
  }
  sc_core::sc_start();
  for (MalformedSender* s : senders) expect_answers(*s);
}

TEST_CASE(sram_answers_malformed_payloads) {
  tlm_models::Sram dut("dut", sram_params());
  check_malformed(dut.target, malformed_classes(0, 16));
}

TEST_CASE(interconnect_answers_malformed_payloads) {
  Fabric dut("dut", kFabricBase);
  check_malformed(dut.noc.in, malformed_classes(kFabricBase, 16));
  CHECK_EQ(dut.sram.params().capacity, sram_params().capacity);
}

TEST_CASE(accelerator_registers_answer_malformed_payloads) {
  Accelerator dut("dut");
  // A register access is one aligned 32-bit word: a wrong length or width is a burst error
  // before anything else, and any byte-enable array is refused.
  std::vector<Malformed> classes = malformed_classes(0, 4);
  for (Malformed& m : classes)
    if (std::string(m.what) == "data length 0") m.expected = tlm::TLM_BURST_ERROR_RESPONSE;
    else if (std::string(m.what) == "streaming width 0") m.expected = tlm::TLM_COMMAND_ERROR_RESPONSE;  // ID is read-only
  check_malformed(dut.acc.ctrl, classes);
}

TEST_CASE(debug_access_without_data_transfers_nothing) {
  tlm_models::HbmMemory hbm("hbm", hbm_params(false)), bank("bank", hbm_params(true));
  tlm_models::Sram sram("sram", sram_params());
  Fabric fabric("fabric", kFabricBase);
  Accelerator acc("acc");
  struct Dbg : sc_core::sc_module {
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<Dbg>>> sockets;
    std::vector<std::uint64_t> bases;
    std::vector<unsigned> returned;
    explicit Dbg(sc_core::sc_module_name n, std::vector<std::uint64_t> b)
        : sc_core::sc_module(n), bases(std::move(b)) {
      for (std::size_t i = 0; i < bases.size(); ++i)
        sockets.push_back(std::make_unique<tlm_utils::simple_initiator_socket<Dbg>>(
            sc_core::sc_gen_unique_name("socket")));
      SC_HAS_PROCESS(Dbg);
      SC_THREAD(run);
    }
    void run() {
      unsigned char buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      for (std::size_t s = 0; s < sockets.size(); ++s) {
        for (tlm::tlm_command cmd : {tlm::TLM_READ_COMMAND, tlm::TLM_WRITE_COMMAND}) {
          tlm_generic_payload t;
          prepare(t, cmd, bases[s], nullptr, 8);  // no data array: nothing to copy
          returned.push_back((*sockets[s])->transport_dbg(t));
          prepare(t, cmd, bases[s], buf, 0);  // no length
          returned.push_back((*sockets[s])->transport_dbg(t));
        }
      }
    }
  } dbg("dbg", {0, 0, 0, kFabricBase, 0});
  std::vector<std::unique_ptr<tlm_models::ProtocolChecker>> checkers;
  for (int i = 0; i < 5; ++i)
    checkers.push_back(std::make_unique<tlm_models::ProtocolChecker>(
        sc_core::sc_gen_unique_name("checker")));
  sc_core::sc_report_handler::set_actions(tlm_models::kProtocolCheckerMsg, sc_core::SC_DO_NOTHING);
  for (int i = 0; i < 5; ++i) dbg.sockets[i]->bind(checkers[i]->in);
  checkers[0]->out.bind(hbm.target);
  checkers[1]->out.bind(bank.target);
  checkers[2]->out.bind(sram.target);
  checkers[3]->out.bind(fabric.noc.in);
  checkers[4]->out.bind(acc.acc.ctrl);
  sc_core::sc_start();
  CHECK_EQ(dbg.returned.size(), 20u);
  for (unsigned n : dbg.returned) CHECK_EQ(n, 0u);
  for (const auto& c : checkers) CHECK_EQ(c->violations(), 2u);  // the null read and write
}

CHECK_MAIN
