// Approximately-timed traffic through the Interconnect (crossbar and mesh) to every target:
// SRAM, HBM at bandwidth level, HBM at bank level (immediate and queued request mode) and the
// AttentionAccelerator's register target. AT initiators in a thread and in a method, a
// ProtocolChecker on each side of the interconnect:
// - 0 violations on every link (no b_transport from a method, no non-blocking call that waits,
//   no decreasing timing annotation, request and response exclusion kept);
// - each response arrives exactly when b_transport, called at the same time on an identical
//   path, says it is ready (the LT reference issues each request from its own thread, so a
//   target that waits in b_transport holds up nothing else), with the same status;
// - data written on the AT path reads back.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
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
using check::prepare;

struct Request {
  tlm::tlm_command cmd;
  std::uint64_t addr;
  unsigned len;
  sc_time at;  // when the initiator issues it (AT: not before the request channel is free)
};

// What came back for each request.
struct Answers {
  std::vector<sc_time> ready;
  std::vector<tlm::tlm_response_status> status;
  std::vector<std::vector<unsigned char>> data;

  void size_for(const std::vector<Request>& requests) {
    ready.assign(requests.size(), sc_core::SC_ZERO_TIME);
    status.assign(requests.size(), tlm::TLM_INCOMPLETE_RESPONSE);
    data.resize(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i)
      data[i].assign(requests[i].len, static_cast<unsigned char>(0x30 + i));
  }
};

// Issues each request as BEGIN_REQ at its time, keeping request exclusion (the next BEGIN_REQ
// waits for END_REQ or BEGIN_RESP), and ends each response on the backward call (TLM_COMPLETED).
// From a thread (waits) or from a method (next_trigger); nothing else differs.
struct AtIssuer : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<AtIssuer> socket;
  std::vector<Request> requests;
  Answers answers;

  AtIssuer(sc_core::sc_module_name n, std::vector<Request> r, bool from_method)
      : sc_core::sc_module(n), socket("socket"), requests(std::move(r)) {
    answers.size_for(requests);
    socket.register_nb_transport_bw(this, &AtIssuer::nb_transport_bw);
    SC_HAS_PROCESS(AtIssuer);
    if (from_method) {
      SC_METHOD(issue_from_method);
    } else {
      SC_THREAD(issue_from_thread);
    }
  }

  bool finished() const { return next_ == requests.size() && answered_ == requests.size(); }

 private:
  void issue_from_thread() {
    while (next_ < requests.size()) {
      const sc_time& at = requests[next_].at;
      if (sc_core::sc_time_stamp() < at) wait(at - sc_core::sc_time_stamp());
      while (request_busy_) wait(request_free_);
      send(next_++);
    }
  }

  void issue_from_method() {
    if (next_ == requests.size()) return;  // no trigger: the method is done
    const sc_time& at = requests[next_].at;
    if (sc_core::sc_time_stamp() < at) {
      next_trigger(at - sc_core::sc_time_stamp());
    } else if (request_busy_) {
      next_trigger(request_free_);
    } else {
      send(next_++);
      next_trigger(sc_core::SC_ZERO_TIME);
    }
  }

  void send(std::size_t i) {
    const Request& r = requests[i];
    tlm_generic_payload* t = pool_.get();
    t->acquire();
    prepare(*t, r.cmd, r.addr, answers.data[i].data(), r.len);
    index_[t] = i;
    tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = sc_core::SC_ZERO_TIME;
    request_busy_ = true;
    const tlm_sync_enum s = socket->nb_transport_fw(*t, phase, delay);
    if (s == tlm::TLM_ACCEPTED) return;
    request_busy_ = false;
    if (s == tlm::TLM_COMPLETED) {
      answered(*t, delay);
    } else if (phase == tlm::BEGIN_RESP) {
      phase = tlm::END_RESP;
      socket->nb_transport_fw(*t, phase, delay);
      answered(*t, delay);
    }
  }

  tlm_sync_enum nb_transport_bw(tlm_generic_payload& t, tlm_phase& phase, sc_time& delay) {
    if (phase == tlm::END_REQ || (phase == tlm::BEGIN_RESP && request_busy_)) {
      request_busy_ = false;  // BEGIN_RESP implies END_REQ
      request_free_.notify(delay);
    }
    if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
    CHECK(phase == tlm::BEGIN_RESP);
    answered(t, delay);
    return tlm::TLM_COMPLETED;
  }

  void answered(tlm_generic_payload& t, const sc_time& delay) {
    const std::size_t i = index_.at(&t);
    answers.ready[i] = sc_core::sc_time_stamp() + delay;
    answers.status[i] = t.get_response_status();
    ++answered_;
    t.release();
  }

  check::PayloadPool pool_;
  std::unordered_map<const tlm_generic_payload*, std::size_t> index_;
  std::size_t next_ = 0, answered_ = 0;
  bool request_busy_ = false;
  sc_core::sc_event request_free_;
};

// The LT reference: each request is a b_transport from its own thread at its time, entered in
// request order (so links are booked in the same order as on the AT path).
struct LtIssuer : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<LtIssuer> socket;
  std::vector<Request> requests;
  Answers answers;

  LtIssuer(sc_core::sc_module_name n, std::vector<Request> r)
      : sc_core::sc_module(n), socket("socket"), requests(std::move(r)) {
    answers.size_for(requests);
    entered_.assign(requests.size(), false);
    for (std::size_t i = 0; i < requests.size(); ++i)
      sc_core::sc_spawn([this, i] { issue(i); }, sc_core::sc_gen_unique_name("request"));
  }

  bool finished() const { return done_ == requests.size(); }

 private:
  void issue(std::size_t i) {
    const Request& r = requests[i];
    if (sc_core::sc_time_stamp() < r.at) sc_core::wait(r.at - sc_core::sc_time_stamp());
    while (i > 0 && !entered_[i - 1]) sc_core::wait(entered_event_);
    entered_[i] = true;
    entered_event_.notify();
    tlm_generic_payload t;
    prepare(t, r.cmd, r.addr, answers.data[i].data(), r.len);
    sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, delay);
    answers.ready[i] = sc_core::sc_time_stamp() + delay;
    answers.status[i] = t.get_response_status();
    ++done_;
  }

  std::vector<bool> entered_;
  sc_core::sc_event entered_event_;
  std::size_t done_ = 0;
};

// An initiator that sends nothing, for the input of the interconnect that the one under test
// is not on (so that a mesh has a row of routers to cross).
struct Idle : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Idle> socket;
  explicit Idle(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {}
};

enum class Kind { sram, hbm, hbm_bank, hbm_queued, registers };

constexpr std::uint64_t kBase = 0x1000'0000;

tlm_models::HbmMemory::Params hbm_params(Kind k) {
  return check::small_hbm_params(k == Kind::hbm_bank || k == Kind::hbm_queued, k == Kind::hbm_queued);
}

tlm_models::Interconnect::Params noc_params(const std::string& topology) {
  tlm_models::Interconnect::Params p;
  p.topology = topology;
  p.mesh_columns = 4;  // input 1 at router (1, 0); output 1 on the east edge: two mesh links
  return p;
}

// Memory targets: writes of 64..512 B issued together (pipelined, queued on the link), reads of
// the same places while other requests are in flight, one read after a gap.
std::vector<Request> memory_requests() {
  std::vector<Request> r;
  for (unsigned i = 0; i < 8; ++i)
    r.push_back({tlm::TLM_WRITE_COMMAND, kBase + 512 * i, 64u << (i % 4), sc_time(0, SC_NS)});
  for (unsigned i = 0; i < 8; ++i)
    r.push_back({tlm::TLM_READ_COMMAND, kBase + 512 * i, 64u << (i % 4), sc_time(300 + 7 * i, SC_NS)});
  r.push_back({tlm::TLM_READ_COMMAND, kBase + 4096, 256, sc_time(2000, SC_NS)});
  return r;
}

// The register target: identification and configuration reads, a write of the command base.
std::vector<Request> register_requests() {
  using Acc = tlm_models::AttentionAccelerator;
  std::vector<Request> r;
  unsigned k = 0;
  for (std::uint32_t reg : {Acc::kId, Acc::kVersion, Acc::kCtrl, Acc::kStatus, Acc::kDmaChannels})
    r.push_back({tlm::TLM_READ_COMMAND, kBase + reg, 4, sc_time(2 * k++, SC_NS)});
  r.push_back({tlm::TLM_WRITE_COMMAND, kBase + Acc::kCommandBaseLo, 4, sc_time(50, SC_NS)});
  return r;
}

// One initiator's path: checker -> interconnect input 1 -> output 1 -> checker -> target (the
// interconnect's input 0 idle, its output 0 a recording target nothing is routed to).
struct Path {
  Idle idle;
  tlm_models::ProtocolChecker up, down;
  tlm_models::Interconnect noc;
  check::RecordingTarget unused;
  std::unique_ptr<tlm_models::Sram> sram;
  std::unique_ptr<tlm_models::HbmMemory> hbm;
  std::unique_ptr<tlm_models::AttentionAccelerator> acc;
  std::unique_ptr<tlm_models::HbmMemory> acc_mem;
  std::unique_ptr<sc_core::sc_signal<bool>> acc_irq;

  Path(const std::string& name, Kind kind, const std::string& topology)
      : idle((name + "_idle").c_str()), up((name + "_up").c_str()), down((name + "_down").c_str()),
        noc((name + "_noc").c_str(), noc_params(topology)), unused((name + "_unused").c_str()) {
    idle.socket.bind(noc.in);
    up.out.bind(noc.in);
    noc.out.bind(unused.target);
    noc.out.bind(down.in);
    std::uint64_t size = 0;
    if (kind == Kind::sram) {
      sram = std::make_unique<tlm_models::Sram>((name + "_sram").c_str(), check::small_sram_params());
      down.out.bind(sram->target);
      size = check::small_sram_params().capacity;
    } else if (kind == Kind::registers) {
      acc = std::make_unique<tlm_models::AttentionAccelerator>(
          (name + "_acc").c_str(), tlm_models::AttentionAccelerator::Params{});
      acc_mem = std::make_unique<tlm_models::HbmMemory>((name + "_acc_mem").c_str(),
                                                        hbm_params(Kind::hbm));
      acc_irq = std::make_unique<sc_core::sc_signal<bool>>((name + "_acc_irq").c_str());
      acc->sys_port.bind(acc_mem->target);
      acc->irq.bind(*acc_irq);
      down.out.bind(acc->ctrl);
      size = 0x1000;
    } else {
      hbm = std::make_unique<tlm_models::HbmMemory>((name + "_hbm").c_str(), hbm_params(kind));
      down.out.bind(hbm->target);
      size = hbm_params(kind).size;
    }
    noc.add_route(kBase, size, 1);
  }

  void expect_clean(std::uint64_t transactions) const {
    for (const tlm_models::ProtocolChecker* c : {&up, &down}) {
      CHECK_EQ(c->violations(), 0u);
      CHECK_EQ(c->open_at_transactions(), 0u);
      CHECK_EQ(c->transactions(), transactions);
      if (c->violations() != 0) std::fprintf(stderr, "%s\n", c->last_violation().c_str());
    }
  }
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::sram: return "sram";
    case Kind::hbm: return "hbm";
    case Kind::hbm_bank: return "hbm_bank";
    case Kind::hbm_queued: return "hbm_queued";
    case Kind::registers: return "registers";
  }
  return "?";
}

// Every target behind `topology`, AT from a thread or a method against the LT reference.
void check_every_target(const std::string& topology, bool from_method) {
  sc_core::sc_report_handler::set_actions(tlm_models::kProtocolCheckerMsg, sc_core::SC_DISPLAY);
  const Kind kinds[] = {Kind::sram, Kind::hbm, Kind::hbm_bank, Kind::hbm_queued, Kind::registers};
  std::vector<std::unique_ptr<Path>> at_paths, lt_paths;
  std::vector<std::unique_ptr<AtIssuer>> at;
  std::vector<std::unique_ptr<LtIssuer>> lt;
  for (Kind k : kinds) {
    const std::string name = kind_name(k);
    const std::vector<Request> r = k == Kind::registers ? register_requests() : memory_requests();
    at_paths.push_back(std::make_unique<Path>("at_" + name, k, topology));
    lt_paths.push_back(std::make_unique<Path>("lt_" + name, k, topology));
    at.push_back(std::make_unique<AtIssuer>(("at_ini_" + name).c_str(), r, from_method));
    lt.push_back(std::make_unique<LtIssuer>(("lt_ini_" + name).c_str(), r));
    at.back()->socket.bind(at_paths.back()->up.in);
    lt.back()->socket.bind(lt_paths.back()->up.in);
  }
  sc_core::sc_start();
  for (std::size_t k = 0; k < at.size(); ++k) {
    const Answers& a = at[k]->answers;
    const Answers& l = lt[k]->answers;
    const std::size_t n = at[k]->requests.size();
    std::fprintf(stderr, "%s:\n", kind_name(kinds[k]));
    CHECK(at[k]->finished());
    CHECK(lt[k]->finished());
    at_paths[k]->expect_clean(n);
    lt_paths[k]->expect_clean(n);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK_EQ(a.status[i], tlm::TLM_OK_RESPONSE);
      CHECK_EQ(a.status[i], l.status[i]);
      CHECK_EQ(a.ready[i], l.ready[i]);
      CHECK(a.ready[i] > at[k]->requests[i].at);
    }
    if (kinds[k] == Kind::registers) {
      CHECK_EQ(int(a.data[0][0]), int(tlm_models::AttentionAccelerator::kIdValue & 0xFF));
      continue;
    }
    // Read i (index 8 + i) returns what write i stored (the writes filled 0x30 + i).
    for (std::size_t i = 0; i < 8; ++i) {
      CHECK_EQ(int(a.data[8 + i].front()), int(0x30 + i));
      CHECK_EQ(int(a.data[8 + i].back()), int(0x30 + i));
    }
  }
}

// Several AT initiators (threads and methods alternately) on one interconnect, each sending
// 500 requests at random times to its own region of one target (of 4..1024 B; register reads
// of one word to the register target): request
// exclusion toward the target (queued behind each other at the output) and response exclusion
// toward each initiator under load, with a checker on every link.
void check_contention(const std::string& topology, Kind kind) {
  sc_core::sc_report_handler::set_actions(tlm_models::kProtocolCheckerMsg, sc_core::SC_DISPLAY);
  constexpr unsigned kInitiators = 4, kCount = 500;
  Path path("stress", kind, topology);  // its input 0 is idle; the initiators use 1..4
  std::vector<std::unique_ptr<tlm_models::ProtocolChecker>> ups;
  std::vector<std::unique_ptr<AtIssuer>> issuers;
  std::mt19937 random(12345);
  for (unsigned k = 0; k < kInitiators; ++k) {
    std::vector<Request> r;
    sc_time at = sc_core::SC_ZERO_TIME;
    for (unsigned i = 0; i < kCount; ++i) {
      at += sc_time(random() % 20, SC_NS);
      if (kind == Kind::registers) {  // 32-bit reads of the read-only registers
        const std::vector<Request> regs = register_requests();
        r.push_back({tlm::TLM_READ_COMMAND, regs[random() % 5].addr, 4, at});
        continue;
      }
      const unsigned len = 4u << (random() % 9);  // 4 B .. 1 KiB
      const std::uint64_t addr = kBase + k * 8192 + (random() % 8) * 1024;
      r.push_back({random() % 2 ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND, addr, len, at});
    }
    issuers.push_back(std::make_unique<AtIssuer>(sc_core::sc_gen_unique_name("issuer"), r, k % 2 == 1));
    if (k == 0) {
      issuers.back()->socket.bind(path.up.in);
      continue;
    }
    ups.push_back(std::make_unique<tlm_models::ProtocolChecker>(sc_core::sc_gen_unique_name("up")));
    issuers.back()->socket.bind(ups.back()->in);
    ups.back()->out.bind(path.noc.in);
  }
  sc_core::sc_start();
  std::uint64_t total = 0;
  for (const auto& ini : issuers) {
    CHECK(ini->finished());
    for (std::size_t i = 0; i < ini->requests.size(); ++i) {
      CHECK_EQ(ini->answers.status[i], tlm::TLM_OK_RESPONSE);
      CHECK(ini->answers.ready[i] > ini->requests[i].at);
    }
    total += ini->requests.size();
  }
  for (const auto& c : ups) {
    CHECK_EQ(c->violations(), 0u);
    CHECK_EQ(c->open_at_transactions(), 0u);
    CHECK_EQ(c->transactions(), std::uint64_t{kCount});
  }
  CHECK_EQ(path.up.violations(), 0u);
  CHECK_EQ(path.down.violations(), 0u);
  CHECK_EQ(path.down.open_at_transactions(), 0u);
  CHECK_EQ(path.down.transactions(), total);
}

}  // namespace

TEST_CASE(at_from_thread_through_crossbar) { check_every_target("crossbar", false); }
TEST_CASE(at_from_method_through_crossbar) { check_every_target("crossbar", true); }
TEST_CASE(at_from_thread_through_mesh) { check_every_target("mesh", false); }
TEST_CASE(at_from_method_through_mesh) { check_every_target("mesh", true); }
TEST_CASE(at_contention_through_crossbar_to_queued_hbm) { check_contention("crossbar", Kind::hbm_queued); }
TEST_CASE(at_contention_through_mesh_to_sram) { check_contention("mesh", Kind::sram); }
TEST_CASE(at_contention_through_crossbar_to_registers) { check_contention("crossbar", Kind::registers); }

CHECK_MAIN
