// ProtocolChecker: a correct initiator/target pair passes without a violation (LT, debug, DMI and
// the AT four-phase path); each deliberately broken initiator or target is caught, counted and
// named.
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "check.h"
#include "protocol_checks.h"
#include "tlm_models/protocol_checker.h"

namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using tlm::tlm_generic_payload;
using tlm::tlm_phase;
using tlm::tlm_sync_enum;
using check::prepare;

using BFn = std::function<void(tlm_generic_payload&, sc_time&)>;
using NbFn = std::function<tlm_sync_enum(tlm_generic_payload&, tlm_phase&, sc_time&)>;
using DmiFn = std::function<bool(tlm_generic_payload&, tlm::tlm_dmi&)>;

// A 256-byte memory that follows the base protocol unless a test replaces one of its handlers.
struct ScriptedTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<ScriptedTarget> socket;
  unsigned char mem[256] = {};
  BFn b;
  NbFn nb;
  DmiFn dmi;

  explicit ScriptedTarget(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_b_transport(this, &ScriptedTarget::b_transport);
    socket.register_nb_transport_fw(this, &ScriptedTarget::nb_transport_fw);
    socket.register_transport_dbg(this, &ScriptedTarget::transport_dbg);
    socket.register_get_direct_mem_ptr(this, &ScriptedTarget::get_direct_mem_ptr);
  }

  void access(tlm_generic_payload& t) {
    if (t.get_address() + t.get_data_length() > sizeof mem) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (t.is_read()) std::memcpy(t.get_data_ptr(), mem + t.get_address(), t.get_data_length());
    if (t.is_write()) std::memcpy(mem + t.get_address(), t.get_data_ptr(), t.get_data_length());
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  void b_transport(tlm_generic_payload& t, sc_time& d) {
    if (b) return b(t, d);
    access(t);
    d += sc_time(5, SC_NS);
  }
  tlm_sync_enum nb_transport_fw(tlm_generic_payload& t, tlm_phase& p, sc_time& d) {
    if (nb) return nb(t, p, d);
    if (p != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;  // END_RESP
    access(t);  // answers at once: BEGIN_RESP on the return path (implies END_REQ)
    p = tlm::BEGIN_RESP;
    return tlm::TLM_UPDATED;
  }
  unsigned transport_dbg(tlm_generic_payload& t) {
    access(t);
    return t.get_response_status() == tlm::TLM_OK_RESPONSE ? t.get_data_length() : 0;
  }
  bool get_direct_mem_ptr(tlm_generic_payload& t, tlm::tlm_dmi& d) {
    if (dmi) return dmi(t, d);
    d.set_dmi_ptr(mem);
    d.set_start_address(0);
    d.set_end_address(sizeof mem - 1);
    d.allow_read_write();
    return true;
  }
};

// Runs `body` in a thread; `bw` answers the backward path.
struct ScriptedInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<ScriptedInitiator> socket;
  std::function<void(ScriptedInitiator&)> body;
  NbFn bw;
  bool finished = false;

  explicit ScriptedInitiator(sc_core::sc_module_name n)
      : sc_core::sc_module(n), socket("socket") {
    socket.register_nb_transport_bw(this, &ScriptedInitiator::nb_transport_bw);
    SC_HAS_PROCESS(ScriptedInitiator);
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    finished = true;
  }
  tlm_sync_enum nb_transport_bw(tlm_generic_payload& t, tlm_phase& p, sc_time& d) {
    if (bw) return bw(t, p, d);
    return tlm::TLM_ACCEPTED;
  }
};

struct Bench {
  ScriptedInitiator ini{"ini"};
  tlm_models::ProtocolChecker checker{"checker"};
  ScriptedTarget tgt{"tgt"};

  // Violations are displayed, not thrown, so one run can count several.
  explicit Bench(bool display_only = true) {
    if (display_only)
      sc_core::sc_report_handler::set_actions(tlm_models::kProtocolCheckerMsg,
                                              sc_core::SC_DISPLAY);
    ini.socket.bind(checker.in);
    checker.out.bind(tgt.socket);
  }

  void run() {
    sc_core::sc_start();
    CHECK(ini.finished);
  }

  void expect_violations(std::uint64_t n, const char* text) {
    CHECK_EQ(checker.violations(), n);
    if (checker.last_violation().find(text) == std::string::npos) {
      std::fprintf(stderr, "last violation '%s' does not mention '%s'\n",
                   checker.last_violation().c_str(), text);
      ++check::failures();
    }
  }
};

unsigned char g_buf[64];

}  // namespace

// Sends one LT transaction, shaped by `shape`, through the checker and expects exactly one
// violation whose message contains `what`.
void expect_one_violation(const std::function<void(tlm_generic_payload&)>& shape, const char* what) {
  Bench b;
  b.ini.body = [shape](ScriptedInitiator& i) {
    tlm_generic_payload t;
    shape(t);
    sc_time d;
    i.socket->b_transport(t, d);
  };
  b.run();
  b.expect_violations(1, what);
}

TEST_CASE(correct_lt_pair_has_no_violations) {
  Bench b;
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    unsigned char out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {};
    sc_time d = sc_core::SC_ZERO_TIME;
    prepare(t, tlm::TLM_WRITE_COMMAND, 16, out, 8);
    i.socket->b_transport(t, d);
    CHECK_EQ(t.get_response_status(), tlm::TLM_OK_RESPONSE);
    prepare(t, tlm::TLM_READ_COMMAND, 16, back, 8);
    i.socket->b_transport(t, d);
    CHECK_EQ(int(back[7]), 8);
    CHECK_EQ(d, sc_time(10, SC_NS));  // the checker adds no time
    prepare(t, tlm::TLM_IGNORE_COMMAND, 16, nullptr, 8);
    i.socket->b_transport(t, d);
    prepare(t, tlm::TLM_READ_COMMAND, 16, back, 8);
    CHECK_EQ(i.socket->transport_dbg(t), 8u);
    tlm::tlm_dmi dmi;
    prepare(t, tlm::TLM_READ_COMMAND, 40, back, 8);
    CHECK(i.socket->get_direct_mem_ptr(t, dmi));
    CHECK_EQ(int(dmi.get_dmi_ptr()[16]), 1);
  };
  b.run();
  CHECK_EQ(b.checker.violations(), 0u);
  CHECK_EQ(b.checker.transactions(), 3u);
}

TEST_CASE(correct_at_pair_has_no_violations) {
  Bench b;
  // Full four phases: END_REQ on the return path, BEGIN_RESP on the backward path, END_RESP
  // forward, answered with TLM_COMPLETED.
  b.tgt.nb = [&b](tlm_generic_payload& t, tlm_phase& p, sc_time&) {
    if (p == tlm::END_RESP) return tlm::TLM_COMPLETED;
    b.tgt.access(t);
    sc_core::sc_spawn([&b, &t] {
      sc_core::wait(10, SC_NS);
      tlm_phase resp = tlm::BEGIN_RESP;
      sc_time d = sc_core::SC_ZERO_TIME;
      b.tgt.socket->nb_transport_bw(t, resp, d);
    });
    p = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  };
  sc_core::sc_event responded;
  b.ini.bw = [&responded](tlm_generic_payload&, tlm_phase& p, sc_time&) {
    CHECK(p == tlm::BEGIN_RESP);
    responded.notify();
    return tlm::TLM_ACCEPTED;
  };
  b.ini.body = [&responded](ScriptedInitiator& i) {
    for (int n = 0; n < 3; ++n) {
      tlm_generic_payload t;
      prepare(t, tlm::TLM_WRITE_COMMAND, 8 * n, g_buf, 8);
      tlm_phase p = tlm::BEGIN_REQ;
      sc_time d = sc_core::SC_ZERO_TIME;
      CHECK_EQ(i.socket->nb_transport_fw(t, p, d), tlm::TLM_UPDATED);
      sc_core::wait(responded);
      p = tlm::END_RESP;
      CHECK_EQ(i.socket->nb_transport_fw(t, p, d), tlm::TLM_COMPLETED);
    }
  };
  b.run();
  CHECK_EQ(b.checker.violations(), 0u);
  CHECK_EQ(b.checker.transactions(), 3u);
  CHECK_EQ(b.checker.open_at_transactions(), 0u);
}

TEST_CASE(at_response_on_return_path_is_accepted) {
  Bench b;  // the default target answers BEGIN_REQ with BEGIN_RESP on the return path
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 8);
    tlm_phase p = tlm::BEGIN_REQ;
    sc_time d = sc_core::SC_ZERO_TIME;
    CHECK_EQ(i.socket->nb_transport_fw(t, p, d), tlm::TLM_UPDATED);
    CHECK(p == tlm::BEGIN_RESP);
    p = tlm::END_RESP;
    i.socket->nb_transport_fw(t, p, d);
  };
  b.run();
  CHECK_EQ(b.checker.violations(), 0u);
  CHECK_EQ(b.checker.open_at_transactions(), 0u);
}

TEST_CASE(response_status_not_set) {
  Bench b;
  b.tgt.b = [](tlm_generic_payload&, sc_time&) {};
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
    sc_time d;
    i.socket->b_transport(t, d);
  };
  b.run();
  b.expect_violations(1, "response status not set");
}

TEST_CASE(payload_reused_while_in_flight) {
  Bench b;
  b.tgt.b = [&b](tlm_generic_payload& t, sc_time&) {
    sc_core::wait(10, SC_NS);
    b.tgt.access(t);
  };
  b.ini.body = [](ScriptedInitiator& i) {
    static tlm_generic_payload shared;
    prepare(shared, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
    auto use = [&i] {
      sc_time d;
      i.socket->b_transport(shared, d);
    };
    sc_core::sc_process_handle first = sc_core::sc_spawn(use);
    sc_core::wait(2, SC_NS);  // the first call is inside the target now
    shared.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    use();
    if (!first.terminated()) sc_core::wait(first.terminated_event());
  };
  b.run();
  b.expect_violations(1, "reused while a transaction with it is still in flight");
}

TEST_CASE(sequential_reuse_is_fine) {
  Bench b;
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    for (int n = 0; n < 4; ++n) {
      prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
      sc_time d;
      i.socket->b_transport(t, d);
    }
  };
  b.run();
  CHECK_EQ(b.checker.violations(), 0u);
}

TEST_CASE(invalid_command) {
  expect_one_violation(
      [](tlm_generic_payload& t) {
        prepare(t, static_cast<tlm::tlm_command>(7), 0, g_buf, 4);
      },
      "invalid command value 7");
}

TEST_CASE(zero_data_length) {
  expect_one_violation(
      [](tlm_generic_payload& t) {
        prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 0);
        t.set_streaming_width(4);
      },
      "data length is 0");
}

TEST_CASE(byte_enable_pointer_without_length) {
  Bench b;
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    unsigned char be[4] = {0xff, 0xff, 0xff, 0xff};
    prepare(t, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
    t.set_byte_enable_ptr(be);
    sc_time d;
    i.socket->b_transport(t, d);
  };
  b.run();
  b.expect_violations(1, "byte-enable pointer set with byte-enable length 0");
}

TEST_CASE(byte_enable_length_without_pointer) {
  expect_one_violation(
      [](tlm_generic_payload& t) {
        prepare(t, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
        t.set_byte_enable_length(4);
      },
      "byte-enable length 4 without a byte-enable pointer");
}

TEST_CASE(status_not_reset_by_initiator) {
  expect_one_violation(
      [](tlm_generic_payload& t) {
        prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
        t.set_response_status(tlm::TLM_OK_RESPONSE);
      },
      "the initiator must set TLM_INCOMPLETE_RESPONSE");
}

TEST_CASE(target_keeps_a_reference) {
  struct Mm : tlm::tlm_mm_interface {
    void free(tlm_generic_payload*) override {}
  } mm;
  Bench b;
  b.tgt.b = [&b](tlm_generic_payload& t, sc_time&) {
    t.acquire();  // and never releases it: the payload outlives the call
    b.tgt.access(t);
  };
  b.ini.body = [&mm](ScriptedInitiator& i) {
    tlm_generic_payload t(&mm);
    prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
    sc_time d;
    t.acquire();
    i.socket->b_transport(t, d);
    t.set_mm(nullptr);  // a stack payload: keep its destructor away from the pool
  };
  b.run();
  b.expect_violations(1, "kept a reference");
}

TEST_CASE(b_transport_from_a_method) {
  Bench b;
  b.ini.body = [](ScriptedInitiator&) {};
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  sc_core::sc_spawn(
      [&b] {
        tlm_generic_payload t;
        prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
        sc_time d;
        b.ini.socket->b_transport(t, d);
      },
      "method", &opts);
  b.run();
  b.expect_violations(1, "called from a method process");
}

TEST_CASE(dmi_range_without_the_address) {
  Bench b;
  b.tgt.dmi = [&b](tlm_generic_payload&, tlm::tlm_dmi& d) {
    d.set_dmi_ptr(b.tgt.mem);
    d.set_start_address(0);
    d.set_end_address(63);
    d.allow_read();
    return true;
  };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 100, g_buf, 4);
    tlm::tlm_dmi dmi;
    i.socket->get_direct_mem_ptr(t, dmi);
  };
  b.run();
  b.expect_violations(1, "does not contain the requested address");
}

TEST_CASE(dmi_start_after_end) {
  Bench b;
  b.tgt.dmi = [](tlm_generic_payload&, tlm::tlm_dmi& d) {
    d.allow_none();
    d.set_start_address(200);
    d.set_end_address(100);
    return false;
  };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 150, g_buf, 4);
    tlm::tlm_dmi dmi;
    i.socket->get_direct_mem_ptr(t, dmi);
  };
  b.run();
  b.expect_violations(1, "has its start after its end");
}

TEST_CASE(dmi_granted_without_pointer) {
  Bench b;
  b.tgt.dmi = [](tlm_generic_payload&, tlm::tlm_dmi& d) {
    d.set_start_address(0);
    d.set_end_address(255);
    d.allow_read_write();
    return true;
  };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
    tlm::tlm_dmi dmi;
    i.socket->get_direct_mem_ptr(t, dmi);
  };
  b.run();
  b.expect_violations(1, "DMI granted with a null pointer");
}

// A target that claims to have moved more bytes than were asked for.
struct OverrunTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<OverrunTarget> socket;
  explicit OverrunTarget(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_transport_dbg(this, &OverrunTarget::dbg);
  }
  unsigned dbg(tlm_generic_payload& t) { return t.get_data_length() + 1; }
};

TEST_CASE(debug_transport_overrun) {
  sc_core::sc_report_handler::set_actions(tlm_models::kProtocolCheckerMsg, sc_core::SC_DISPLAY);
  ScriptedInitiator ini("ini");
  tlm_models::ProtocolChecker checker("checker");
  OverrunTarget overrun("overrun");
  ini.socket.bind(checker.in);
  checker.out.bind(overrun.socket);
  ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
    i.socket->transport_dbg(t);
  };
  sc_core::sc_start();
  CHECK_EQ(checker.violations(), 1u);
  CHECK(checker.last_violation().find("returned 5 bytes for a data length of 4") !=
        std::string::npos);
}

TEST_CASE(at_end_req_twice) {
  Bench b;
  b.tgt.nb = [&b](tlm_generic_payload& t, tlm_phase& p, sc_time&) {
    if (p == tlm::END_RESP) return tlm::TLM_COMPLETED;
    sc_core::sc_spawn([&b, &t] {
      tlm_phase ph = tlm::END_REQ;
      sc_time d = sc_core::SC_ZERO_TIME;
      b.tgt.socket->nb_transport_bw(t, ph, d);
      sc_core::wait(1, SC_NS);
      ph = tlm::END_REQ;
      b.tgt.socket->nb_transport_bw(t, ph, d);
    });
    return tlm::TLM_ACCEPTED;
  };
  b.ini.body = [](ScriptedInitiator& i) {
    static tlm_generic_payload t;
    prepare(t, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
    tlm_phase p = tlm::BEGIN_REQ;
    sc_time d;
    i.socket->nb_transport_fw(t, p, d);
    sc_core::wait(5, SC_NS);
  };
  b.run();
  b.expect_violations(1, "END_REQ out of order");
}

TEST_CASE(at_end_resp_before_begin_resp) {
  Bench b;
  b.tgt.nb = [](tlm_generic_payload&, tlm_phase& p, sc_time&) {
    return p == tlm::END_RESP ? tlm::TLM_COMPLETED : tlm::TLM_ACCEPTED;
  };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
    tlm_phase p = tlm::BEGIN_REQ;
    sc_time d;
    i.socket->nb_transport_fw(t, p, d);
    p = tlm::END_RESP;
    i.socket->nb_transport_fw(t, p, d);
  };
  b.run();
  b.expect_violations(1, "END_RESP before BEGIN_RESP");
}

TEST_CASE(at_request_exclusion) {
  Bench b;
  b.tgt.nb = [](tlm_generic_payload&, tlm_phase&, sc_time&) { return tlm::TLM_ACCEPTED; };
  b.ini.body = [](ScriptedInitiator& i) {
    static tlm_generic_payload t1, t2;
    prepare(t1, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
    prepare(t2, tlm::TLM_WRITE_COMMAND, 4, g_buf, 4);
    tlm_phase p = tlm::BEGIN_REQ;
    sc_time d;
    i.socket->nb_transport_fw(t1, p, d);
    p = tlm::BEGIN_REQ;
    i.socket->nb_transport_fw(t2, p, d);  // no END_REQ for t1 yet
  };
  b.run();
  b.expect_violations(1, "request exclusion");
}

TEST_CASE(at_phase_from_the_wrong_side) {
  Bench b;
  b.tgt.nb = [](tlm_generic_payload&, tlm_phase&, sc_time&) { return tlm::TLM_ACCEPTED; };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
    tlm_phase p = tlm::BEGIN_RESP;
    sc_time d;
    i.socket->nb_transport_fw(t, p, d);
  };
  b.run();
  b.expect_violations(1, "BEGIN_RESP sent by the initiator, only the target may send it");
}

// IEEE 1666-2011 15.2.7 c: each phase of a transaction is no earlier than the one before. The
// target annotates END_REQ 5 ns before the BEGIN_REQ it ends.
TEST_CASE(at_decreasing_timing_annotation) {
  Bench b;
  b.tgt.nb = [](tlm_generic_payload& t, tlm_phase& p, sc_time& d) {
    if (p == tlm::END_RESP) return tlm::TLM_COMPLETED;
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    d -= sc_time(5, SC_NS);
    p = tlm::BEGIN_RESP;
    return tlm::TLM_UPDATED;
  };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
    tlm_phase p = tlm::BEGIN_REQ;
    sc_time d(10, SC_NS);
    i.socket->nb_transport_fw(t, p, d);
    p = tlm::END_RESP;
    d = sc_time(10, SC_NS);
    i.socket->nb_transport_fw(t, p, d);
  };
  b.run();
  b.expect_violations(1, "decreasing timing annotation: 5 ns after a phase at 10 ns");
  CHECK_EQ(b.checker.open_at_transactions(), 0u);
}

// A target whose nb_transport_fw waits (as a blocking target behind a forwarding interconnect
// would): called from a thread it returns later than it was called.
TEST_CASE(at_non_blocking_call_that_waits) {
  Bench b;
  b.tgt.nb = [](tlm_generic_payload& t, tlm_phase& p, sc_time&) {
    if (p == tlm::END_RESP) return tlm::TLM_COMPLETED;
    sc_core::wait(3, SC_NS);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return tlm::TLM_COMPLETED;
  };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
    tlm_phase p = tlm::BEGIN_REQ;
    sc_time d;
    i.socket->nb_transport_fw(t, p, d);
  };
  b.run();
  b.expect_violations(1, "nb_transport_fw returned at 3 ns, called at 0 s (a non-blocking call waited)");
}

TEST_CASE(at_completed_without_status) {
  Bench b;
  b.tgt.nb = [](tlm_generic_payload&, tlm_phase&, sc_time&) { return tlm::TLM_COMPLETED; };
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_WRITE_COMMAND, 0, g_buf, 4);
    tlm_phase p = tlm::BEGIN_REQ;
    sc_time d;
    i.socket->nb_transport_fw(t, p, d);
  };
  b.run();
  b.expect_violations(1, "TLM_COMPLETED with the response status still");
  CHECK_EQ(b.checker.open_at_transactions(), 0u);
}

TEST_CASE(default_action_stops_the_simulation) {
  Bench b(false);
  b.tgt.b = [](tlm_generic_payload&, sc_time&) {};
  b.ini.body = [](ScriptedInitiator& i) {
    tlm_generic_payload t;
    prepare(t, tlm::TLM_READ_COMMAND, 0, g_buf, 4);
    sc_time d;
    i.socket->b_transport(t, d);
  };
  bool thrown = false;
  try {
    sc_core::sc_start();
  } catch (const sc_core::sc_report& r) {
    thrown = std::string(r.get_msg()).find("response status not set") != std::string::npos;
  }
  CHECK(thrown);
  CHECK_EQ(b.checker.violations(), 1u);
}

CHECK_MAIN
