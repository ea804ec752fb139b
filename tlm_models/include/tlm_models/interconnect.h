// Address-routed interconnect: a crossbar whose output links each carry `width` bytes per cycle,
// with a hop latency each way. Targets see addresses relative to their route's base; DMI ranges
// and invalidations are translated back into the initiators' view. Formulas:
// docs/models/interconnect.md.
#ifndef TLM_MODELS_INTERCONNECT_H
#define TLM_MODELS_INTERCONNECT_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "tlm_models/at_target.h"
#include "tlm_models/bandwidth_server.h"
#include "tlm_models/burst_train.h"
#include "tlm_models/fixed_divisor.h"
#include "tlm_models/params_generated.h"
#include "tlm_models/params_check.h"
#include "tlm_models/payload_access.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/timed_path.h"

namespace tlm_models {

class Interconnect : public sc_core::sc_module, public StatsProvider, public TimedTarget {
 public:
  // The fields and their defaults: InterconnectParamFields (params_generated.h, generated from
  // the component registry).
  struct Params : InterconnectParamFields {
    std::string check() const { return check_fields(); }
  };

  struct Route {
    std::uint64_t base;
    std::uint64_t size;
    unsigned out;
    std::uint64_t offset;  // the target sees address - offset
    std::uint64_t last() const { return base + size - 1; }
    // The route's first and last address as the target sees them.
    std::uint64_t target_first() const { return base - offset; }
    std::uint64_t target_last() const { return last() - offset; }
  };

  TimedTargetSocket<Interconnect> in;
  tlm_utils::multi_passthrough_initiator_socket<Interconnect> out;

  Interconnect(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), in("in"), out("out"), p_(p),
        at_(this->name(),
            AtTarget::Defer([this](int id, tlm::tlm_generic_payload& t, sc_core::sc_time& d) {
              return forward_request(id, t, d);
            }),
            [this](int id, tlm::tlm_generic_payload& t, tlm::tlm_phase& ph, sc_core::sc_time& d) {
              return in[id]->nb_transport_bw(t, ph, d);
            }) {
    params_valid(p, this->name(), "tlm_models/interconnect");
    period_ = period_ticks(p.clock);
    hop_ = to_ticks(p.hop_latency);
    width_div_ = FixedDivisor(p.width);
    mesh_ = p.topology == "mesh";
    in.register_b_transport(this, &Interconnect::b_transport);
    in.register_nb_transport_fw(this, &Interconnect::nb_transport_fw);
    in.register_transport_dbg(this, &Interconnect::transport_dbg);
    in.register_get_direct_mem_ptr(this, &Interconnect::get_direct_mem_ptr);
    out.register_invalidate_direct_mem_ptr(this, &Interconnect::invalidate_direct_mem_ptr);
    out.register_nb_transport_bw(this, &Interconnect::nb_transport_bw);
    SC_HAS_PROCESS(Interconnect);
    SC_METHOD(send_waiting_requests);
    sensitive << request_channel_free_;
    dont_initialize();
  }

  const Params& params() const { return p_; }
  const std::vector<Route>& routes() const { return routes_; }

  // Maps [base, base + size) to output `out_index`; the target there sees address - base.
  // Overlapping routes are a platform error.
  void add_route(std::uint64_t base, std::uint64_t size, unsigned out_index) {
    add_route(base, size, out_index, base);
  }

  // The same, the target seeing address - offset: offset 0 passes addresses through unchanged,
  // for an output that leads to another interconnect which decodes the window itself.
  void add_route(std::uint64_t base, std::uint64_t size, unsigned out_index, std::uint64_t offset) {
    if (size == 0 || base + (size - 1) < base || offset > base) {
      report_route_error("route " + describe(Route{base, size, out_index, offset}) +
                         " is empty, wraps or has an offset above its base");
      return;
    }
    Route r{base, size, out_index, offset};
    for (const Route& o : routes_) {
      if (r.base <= o.last() && o.base <= r.last()) {
        report_route_error("route " + describe(r) + " overlaps route " + describe(o));
        return;
      }
    }
    routes_.insert(std::upper_bound(routes_.begin(), routes_.end(), r,
                                    [](const Route& a, const Route& b) { return a.base < b.base; }),
                   r);
    if (out_index >= links_.size()) {
      links_.resize(out_index + 1);
      out_bytes_.resize(out_index + 1, 0);
    }
  }

  const BandwidthServer& link(unsigned out_index) const { return links_[out_index]; }

  void collect_stats(StatsGroup& g) const override {
    for (unsigned i = 0; i < in_requests_.size(); ++i) {
      StatsGroup& ig = g.child("in" + std::to_string(i));
      ig.add("requests", static_cast<double>(in_requests_[i]), "requests", "transactions received");
      ig.add("bytes", static_cast<double>(in_bytes_[i]), "B", "bytes of the transactions received");
    }
    for (unsigned o = 0; o < links_.size(); ++o) {
      links_[o].collect(g.child("out" + std::to_string(o)), out_bytes_[o],
                        {"transactions forwarded", "bytes forwarded",
                         "time the output link was transferring", "summed queueing for this link"});
    }
    g.add("byte_hops", static_cast<double>(byte_hops_), "B",
          "bytes forwarded x links crossed (crossbar: 1; mesh: the XY path's links + 1)");
    if (mesh_) {
      Ticks total = 0, busiest = 0;
      for (const BandwidthServer& l : mesh_links_) {
        total += l.busy_ticks();
        busiest = std::max(busiest, l.busy_ticks());
      }
      StatsGroup& mg = g.child("mesh");
      mg.add("links", static_cast<double>(mesh_links_.size()), "links", "directed router-to-router links");
      mg.add("busy_time", ticks_to_ns(total), "ns", "summed busy time of the router-to-router links");
      mg.add("busiest_link_busy_time", ticks_to_ns(busiest), "ns", "busy time of the busiest such link");
    }
    g.add("unmapped", static_cast<double>(unmapped_), "requests", "transactions to no route (address error)");
    g.add("malformed", static_cast<double>(malformed_), "requests",
          "malformed payloads answered with an error, not forwarded");
  }

  void reset_stats() override {
    for (auto& l : links_) l.reset_stats();
    for (auto& l : mesh_links_) l.reset_stats();
    byte_hops_ = 0;
    std::fill(out_bytes_.begin(), out_bytes_.end(), 0);
    std::fill(in_requests_.begin(), in_requests_.end(), 0);
    std::fill(in_bytes_.begin(), in_bytes_.end(), 0);
    unmapped_ = malformed_ = 0;
  }

 protected:
  void end_of_elaboration() override {
    in_requests_.resize(static_cast<std::size_t>(in.size()), 0);
    in_bytes_.resize(static_cast<std::size_t>(in.size()), 0);
    if (mesh_) {
      const unsigned inputs = std::max(1u, static_cast<unsigned>(in.size()));
      mesh_rows_ = (inputs + p_.mesh_columns - 1) / p_.mesh_columns;
      mesh_links_.resize(static_cast<std::size_t>(p_.mesh_columns) * mesh_rows_ * 4);
    }
    for (const Route& r : routes_)
      if (r.out >= static_cast<unsigned>(out.size()))
        report_route_error("route " + describe(r) + " names output " + std::to_string(r.out) +
                           " but only " + std::to_string(out.size()) + " are bound");
  }

 private:
  static std::string describe(const Route& r) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "[0x%llx, 0x%llx) -> out[%u]",
                  static_cast<unsigned long long>(r.base),
                  static_cast<unsigned long long>(r.base + r.size), r.out);
    return buf;
  }
  void report_route_error(const std::string& msg) const {
    SC_REPORT_ERROR("tlm_models/interconnect", (std::string(name()) + ": " + msg).c_str());
  }

  // The route holding addr, or null.
  const Route* find(std::uint64_t addr) const {
    auto it = std::upper_bound(routes_.begin(), routes_.end(), addr,
                               [](std::uint64_t a, const Route& r) { return a < r.base; });
    if (it == routes_.begin()) return nullptr;
    --it;
    return addr <= it->last() ? &*it : nullptr;
  }

  // Link grant g = the link's earliest free gap at or after arrival (bandwidth_server.h); the
  // link is then busy for ceil(len / width) cycles. The target sees the request at g + hop; the response reaches the initiator at
  // max(target response, g + hop + transfer) + hop.
  //
  // Approximately timed: the initiator's BEGIN_REQ is accepted at once (END_REQ, at_target.h)
  // and forwarded to the route's target as BEGIN_REQ, the links booked as b_transport books
  // them; the target's BEGIN_RESP (or TLM_COMPLETED) is ended at once and sent on to the
  // initiator at the same done time as b_transport's. Nothing waits, so initiators may call
  // from methods and targets may take any time to answer.
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    return at_.nb_transport_fw(id, t, phase, delay);
  }

  // A request on the AT path between its BEGIN_REQ here and its response from the target.
  struct Forwarded {
    unsigned out;
    std::uint64_t addr;  // the initiator's address, restored before the response goes back
    Ticks arrival;       // grant + hop: when the target is to see it
    Ticks sent;          // grant + hop + transfer: its bytes have crossed the output link
    std::uint64_t hops;
  };
  // Per output: the base protocol's request exclusion toward its target (one BEGIN_REQ without
  // END_REQ at a time); requests that find it taken wait here in arrival order.
  struct RequestChannel {
    const tlm::tlm_generic_payload* open = nullptr;
    Ticks free_at = 0;  // the open request's END_REQ time
    std::deque<tlm::tlm_generic_payload*> waiting;
  };

  // AtTarget's Defer: answers a malformed or unmapped request at once (as b_transport does),
  // otherwise books the links and queues the request for its output.
  bool forward_request(int id, tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const std::uint64_t addr = t.get_address();
    const std::uint64_t len = t.get_data_length();
    count_in(id, len);
    if (!admit_payload(t)) {
      ++malformed_;
      return true;
    }
    const Route* r = find(addr);
    if (!r || len > r->last() - addr + 1) {
      ++unmapped_;
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return true;
    }
    const Ticks now = now_ticks();
    Ticks xfer = 0, grant = 0;
    const std::uint64_t hops =
        book_links(id, *r, len, add_ticks(now, to_ticks(delay)), now, xfer, grant);
    const Ticks arrival = add_ticks(grant, hop_);
    forwarded_[&t] = Forwarded{r->out, addr, arrival, add_ticks(arrival, xfer), hops};
    t.set_address(addr - r->offset);
    if (request_channels_.size() < links_.size()) request_channels_.resize(links_.size());
    request_channels_[r->out].waiting.push_back(&t);
    send_requests(r->out);
    return false;
  }

  // Sends output o's waiting requests while its request channel is free.
  void send_requests(unsigned o) {
    RequestChannel& c = request_channels_[o];
    while (c.open == nullptr && !c.waiting.empty()) {
      tlm::tlm_generic_payload& t = *c.waiting.front();
      c.waiting.pop_front();
      const Ticks now = now_ticks();
      const Ticks at = std::max({forwarded_.at(&t).arrival, c.free_at, now});
      sc_core::sc_time delay = from_ticks(at - now);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      c.open = &t;
      const tlm::tlm_sync_enum s = out[static_cast<int>(o)]->nb_transport_fw(t, phase, delay);
      if (s == tlm::TLM_ACCEPTED) continue;  // END_REQ or BEGIN_RESP comes backward
      request_ended(o, t, delay);
      if (s == tlm::TLM_COMPLETED)
        target_responded(t, delay, false);
      else if (phase == tlm::BEGIN_RESP)
        target_responded(t, delay, true);
    }
  }

  void send_waiting_requests() {
    for (unsigned o = 0; o < request_channels_.size(); ++o) send_requests(o);
  }

  // The request channel of output o is free from now + delay (END_REQ, or BEGIN_RESP which
  // implies it).
  void request_ended(unsigned o, const tlm::tlm_generic_payload& t, const sc_core::sc_time& delay) {
    RequestChannel& c = request_channels_[o];
    if (c.open != &t) return;
    c.open = nullptr;
    c.free_at = add_ticks(now_ticks(), to_ticks(delay));
    if (!c.waiting.empty()) request_channel_free_.notify(sc_core::SC_ZERO_TIME);
  }

  tlm::tlm_sync_enum nb_transport_bw(int o, tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase == tlm::END_REQ) {
      request_ended(static_cast<unsigned>(o), t, delay);
      return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::BEGIN_RESP) {
      request_ended(static_cast<unsigned>(o), t, delay);
      target_responded(t, delay, false);
      return tlm::TLM_COMPLETED;  // the response ends here; the initiator's is sent on
    }
    return tlm::TLM_ACCEPTED;  // an ignorable phase
  }

  // The target's response is ready delay from now: the initiator's follows at
  // max(that, grant + hop + transfer) + the path's hops, as in b_transport. `end_response`:
  // the target answered BEGIN_REQ with BEGIN_RESP and waits for END_RESP.
  void target_responded(tlm::tlm_generic_payload& t, const sc_core::sc_time& delay,
                        bool end_response) {
    auto it = forwarded_.find(&t);
    const Forwarded f = it->second;
    forwarded_.erase(it);
    if (end_response) {
      tlm::tlm_phase phase = tlm::END_RESP;
      sc_core::sc_time d = delay;
      out[static_cast<int>(f.out)]->nb_transport_fw(t, phase, d);
    }
    t.set_address(f.addr);
    const Ticks now = now_ticks();
    const Ticks done = after_cycles(std::max(add_ticks(now, to_ticks(delay)), f.sent), f.hops, hop_);
    at_.respond(t, from_ticks(done - now));
  }

  void b_transport(int id, tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    if (BurstTrain* train = t.get_extension<BurstTrain>()) {
      b_transport_train(id, t, *train, delay);
      return;
    }
    std::uint64_t addr = t.get_address();
    std::uint64_t len = t.get_data_length();
    count_in(id, len);
    if (!admit_payload(t)) {  // malformed: answered here, never forwarded
      ++malformed_;
      return;
    }
    const Route* r = find(addr);
    if (!r || len > r->last() - addr + 1) {
      ++unmapped_;
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    Ticks now = now_ticks();
    Ticks xfer = 0, grant = 0;
    const std::uint64_t hops =
        book_links(id, *r, len, add_ticks(now, to_ticks(delay)), now, xfer, grant);
    const Ticks arrival = add_ticks(grant, hop_);
    sc_core::sc_time fwd = from_ticks(arrival - now);
    t.set_address(addr - r->offset);
    out[static_cast<int>(r->out)]->b_transport(t, fwd);
    t.set_address(addr);
    Ticks after = now_ticks();  // the target may have waited
    Ticks done = after_cycles(std::max(add_ticks(after, to_ticks(fwd)), add_ticks(arrival, xfer)),
                              hops, hop_);
    delay = from_ticks(done - after);
  }

  // The links a request of `len` bytes on route `r` crosses, booked from `arrival`: sets the
  // output link's transfer time and grant, counts the bytes; returns the links crossed.
  // Inlined into its callers (g++ -O2 would call it): it runs once per transaction, and the
  // call with its register saves cost more than its body (callgrind, docs/replayer.md).
  __attribute__((always_inline)) std::uint64_t book_links(int id, const Route& r, std::uint64_t len,
                                                         Ticks arrival, Ticks now, Ticks& xfer,
                                                         Ticks& grant) {
    xfer = after_cycles(0, width_div_.ceil(len), period_);
    std::uint64_t hops = 1;  // the output link
    if (mesh_) arrival = cross_mesh(static_cast<unsigned>(id), r.out, arrival, xfer, now, hops);
    grant = grant_on(links_[r.out], arrival, xfer, now);
    out_bytes_[r.out] += len;
    byte_hops_ += len * hops;
    return hops;
  }

  // timed_path.h: what b_transport does for a timing-only request inside a granted range (a
  // route whose target answered the probe, so the route exists and the request fits it, and
  // the target never waits: `after` = now there).
  // The answer's `input` names an entry of timed_entries_: the caller's input and the route the
  // answer's range lies in, so the route is known without a search (a route added since is
  // found by address, as b_transport would).
  Ticks timed_access(int input, bool write, std::uint64_t addr, std::uint64_t len, Ticks arrival,
                     Ticks now) override {
    const TimedEntry& e = timed_entries_[static_cast<std::size_t>(input)];
    const int id = e.id;
    ++in_requests_[static_cast<std::size_t>(id)];  // sized for every input answered
    in_bytes_[static_cast<std::size_t>(id)] += len;
    const Route* rp = e.route < routes_.size() ? &routes_[e.route] : nullptr;
    if (rp == nullptr || addr < rp->base || addr > rp->last()) rp = find(addr);
    const Route& r = *rp;
    Ticks xfer = 0, grant = 0;
    const std::uint64_t hops = book_links(id, r, len, arrival, now, xfer, grant);
    const TimedPathProbe& next = out_paths_[r.out];
    const Ticks seen = add_ticks(grant, hop_);  // when the target sees the request
    const Ticks ready = next.target->timed_access(next.input, write, addr - r.offset, len, seen, now);
    return after_cycles(std::max(ready, add_ticks(seen, xfer)), hops, hop_);
  }

  // Answers a probe for `addr` from input `id`: a path through this interconnect where the
  // route's target answers one, over the part of the route its answer covers; otherwise no
  // path over the route (or over the gap when no route holds addr).
  void answer_probe(TimedPathProbe& probe, int id, std::uint64_t addr) {
    const Route* r = find(addr);
    if (!r) {
      tlm::tlm_dmi gap;
      deny_gap(addr, gap);
      probe.first = gap.get_start_address();
      probe.last = gap.get_end_address();
      return;
    }
    probe.first = r->base;
    probe.last = r->last();
    if (out_paths_.size() < links_.size()) out_paths_.resize(links_.size());
    TimedPathProbe& next = out_paths_[r->out];
    if (next.target == nullptr) next = ask_timed_path(*out[static_cast<int>(r->out)], addr - r->offset);
    if (next.target == nullptr) return;
    const std::uint64_t first = std::max(r->base, next.first + r->offset);
    const std::uint64_t last = std::min(r->last(), next.last + r->offset);
    if (first > addr || last < addr) return;
    probe.target = this;
    probe.input = timed_entry(id, static_cast<std::size_t>(r - routes_.data()));
    probe.first = first;
    probe.last = last;
  }

  // The token of (input, route) for timed_access (asked once per initiator and range).
  int timed_entry(int id, std::size_t route) {
    const auto i = static_cast<std::size_t>(id);
    if (i >= in_requests_.size()) {
      in_requests_.resize(i + 1, 0);
      in_bytes_.resize(i + 1, 0);
    }
    for (std::size_t k = 0; k < timed_entries_.size(); ++k)
      if (timed_entries_[k].id == id && timed_entries_[k].route == route) return static_cast<int>(k);
    timed_entries_.push_back(TimedEntry{id, route});
    return static_cast<int>(timed_entries_.size() - 1);
  }

  // Mesh: input i sits at router (i mod C, i div C) of a C-column grid; output o leaves from the
  // west edge (column 0, o even) or the east edge (column C - 1, o odd), the k-th output of an
  // edge at row floor(k R / K) (K outputs on that edge, R rows). The request crosses the
  // When a transfer of `xfer` arriving at `arrival` is granted the link: its start, or with
  // split_requests the end of its last part minus `xfer`.
  Ticks grant_on(BandwidthServer& link, Ticks arrival, Ticks xfer, Ticks now) {
    if (p_.split_requests) return link.serve_split(arrival, xfer, now) - xfer;
    return link.serve(arrival, xfer, now);
  }

  // directed links of the XY path (all of X first, then Y), each booked for `xfer` at its
  // earliest gap after the previous grant + one hop; returns when it reaches the output link.
  Ticks cross_mesh(unsigned input, unsigned out_index, Ticks t, Ticks xfer, Ticks now,
                   std::uint64_t& hops) {
    const unsigned cols = p_.mesh_columns;
    unsigned x = input % cols, y = std::min(input / cols, mesh_rows_ - 1);
    const unsigned outs = std::max(1u, static_cast<unsigned>(out.size()));
    const unsigned side = out_index % 2;
    const unsigned on_side = (outs - side + 1) / 2;
    const unsigned tx = side == 0 ? 0 : cols - 1;
    const unsigned ty = (out_index / 2) * mesh_rows_ / std::max(1u, on_side);
    auto step = [&](unsigned dir) {
      BandwidthServer& link = mesh_links_[(static_cast<std::size_t>(y) * cols + x) * 4 + dir];
      t = add_ticks(grant_on(link, t, xfer, now), hop_);
      ++hops;
    };
    while (x != tx) {
      step(x < tx ? 0 : 1);  // east, west
      x = x < tx ? x + 1 : x - 1;
    }
    while (y != ty) {
      step(y < ty ? 2 : 3);  // south, north
      y = y < ty ? y + 1 : y - 1;
    }
    return t;
  }

  unsigned transport_dbg(int id, tlm::tlm_generic_payload& t) {
    (void)id;
    if (BurstTrain* probe = t.get_extension<BurstTrain>()) {
      probe_train(t, *probe);
      return 0;
    }
    std::uint64_t addr = t.get_address();
    const Route* r = find(addr);
    if (!r) return 0;
    unsigned len = t.get_data_length();
    std::uint64_t room = r->last() - addr + 1;
    if (len > room) t.set_data_length(static_cast<unsigned>(room));
    t.set_address(addr - r->offset);
    unsigned n = out[static_cast<int>(r->out)]->transport_dbg(t);
    t.set_address(addr);
    t.set_data_length(len);
    return n;
  }

  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    std::uint64_t addr = t.get_address();
    if (TimedPathProbe* probe = direct_probe(in, id, t)) {  // not a DMI request: answered here
      answer_probe(*probe, id, addr);
      dmi.allow_none();
      dmi.set_start_address(probe->first);
      dmi.set_end_address(probe->last);
      return false;
    }
    const Route* r = find(addr);
    if (!r) {
      deny_gap(addr, dmi);
      return false;
    }
    t.set_address(addr - r->offset);
    bool granted = out[static_cast<int>(r->out)]->get_direct_mem_ptr(t, dmi);
    t.set_address(addr);
    // The target's range, clipped to what this route exposes, in the initiator's addresses.
    std::uint64_t end = std::min<std::uint64_t>(dmi.get_end_address(), r->target_last());
    std::uint64_t start = std::max<std::uint64_t>(dmi.get_start_address(), r->target_first());
    start = std::min(start, end);
    dmi.set_start_address(start + r->offset);
    dmi.set_end_address(end + r->offset);
    sc_core::sc_time round_trip = from_ticks(2 * hop_);
    dmi.set_read_latency(dmi.get_read_latency() + round_trip);
    dmi.set_write_latency(dmi.get_write_latency() + round_trip);
    return granted;
  }

  // Denies DMI over the whole unmapped gap around addr, so the initiator need not ask again there.
  void deny_gap(std::uint64_t addr, tlm::tlm_dmi& dmi) const {
    std::uint64_t lo = 0, hi = ~std::uint64_t{0};
    for (const Route& r : routes_) {
      if (r.last() < addr) lo = std::max(lo, r.last() + 1);
      if (r.base > addr) hi = std::min(hi, r.base - 1);
    }
    dmi.allow_none();
    dmi.set_start_address(lo);
    dmi.set_end_address(hi);
  }

  void invalidate_direct_mem_ptr(int out_id, sc_dt::uint64 start, sc_dt::uint64 end) {
    for (const Route& r : routes_) {
      if (r.out != static_cast<unsigned>(out_id) || start > r.target_last() ||
          end < r.target_first())
        continue;
      std::uint64_t lo = std::max<std::uint64_t>(start, r.target_first());
      std::uint64_t hi = std::min<std::uint64_t>(end, r.target_last());
      for (unsigned i = 0; i < static_cast<unsigned>(in.size()); ++i)
        in[static_cast<int>(i)]->invalidate_direct_mem_ptr(lo + r.offset, hi + r.offset);
    }
  }

  // A burst train (burst_train.h): each burst is booked on the output link in order, as its own
  // b_transport would book it; the target gets the whole train in one call. The initiator
  // probed the path first (transport_dbg), so the route holds every burst and is a crossbar's.
  void b_transport_train(int id, tlm::tlm_generic_payload& t, BurstTrain& train,
                         sc_core::sc_time& delay) {
    const std::uint64_t addr = t.get_address();
    const Route* r = find(addr);
    if (mesh_ || !r || !admit_payload(t)) {
      SC_REPORT_ERROR("tlm_models/interconnect",
                      (std::string(name()) + ": burst train on a path that was not probed").c_str());
      t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    const Ticks now = now_ticks();
    BandwidthServer& link = links_[r->out];
    train_sent_.clear();
    for (BurstTrain::Burst& b : train.bursts) {
      count_in(id, b.bytes);
      const Ticks xfer = after_cycles(0, ceil_div(b.bytes, p_.width), period_);
      b.arrival = add_ticks(link.serve(b.arrival, xfer, now), hop_);  // grant + hop: when the target sees it
      train_sent_.push_back(add_ticks(b.arrival, xfer));  // (a target further on rewrites `arrival`)
      out_bytes_[r->out] += b.bytes;
      byte_hops_ += b.bytes;
    }
    sc_core::sc_time fwd = from_ticks(train.bursts.front().arrival - now);
    t.set_address(addr - r->offset);
    out[static_cast<int>(r->out)]->b_transport(t, fwd);
    t.set_address(addr);
    if (!train.served) {
      SC_REPORT_ERROR("tlm_models/interconnect",
                      (std::string(name()) + ": burst train not served by the target").c_str());
      t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    // The target filled in each burst's response time: done = max(target's response,
    // grant + hop + transfer) + hop, as for a single transaction.
    for (std::size_t k = 0; k < train.bursts.size(); ++k)
      train.bursts[k].done = add_ticks(std::max(train.bursts[k].done, train_sent_[k]), hop_);
    delay = from_ticks(train.bursts.front().done - now);
  }

  // Probe of a burst train's path: this link and whatever lies behind it.
  void probe_train(tlm::tlm_generic_payload& t, BurstTrain& probe) {
    const std::uint64_t addr = t.get_address();
    const Route* r = find(addr);
    if (!probe.reached(addr)) return;
    if (mesh_ || p_.split_requests || !r || probe.span == 0 || probe.span - 1 > r->last() - addr) {
      probe.blocked = true;
      return;
    }
    probe.path.push_back(&links_[r->out]);
    probe.narrow(r->base, r->last());
    probe.first -= r->offset;  // into the target's view and back
    probe.last -= r->offset;
    probe.at = addr - r->offset;
    t.set_address(probe.at);
    out[static_cast<int>(r->out)]->transport_dbg(t);
    t.set_address(addr);
    probe.first += r->offset;
    probe.last += r->offset;
  }

  void count_in(int id, std::uint64_t len) {
    auto i = static_cast<std::size_t>(id);
    if (i >= in_requests_.size()) {
      in_requests_.resize(i + 1, 0);
      in_bytes_.resize(i + 1, 0);
    }
    ++in_requests_[i];
    in_bytes_[i] += len;
  }

  Params p_;
  AtTarget at_;  // the nb_transport_fw path (at_target.h)
  std::unordered_map<const tlm::tlm_generic_payload*, Forwarded> forwarded_;  // AT, in flight
  std::vector<RequestChannel> request_channels_;                            // AT, per output
  sc_core::sc_event request_channel_free_;
  Ticks period_ = 0;
  Ticks hop_ = 0;
  FixedDivisor width_div_;  // p_.width
  std::vector<Route> routes_;  // sorted by base, disjoint
  std::vector<BandwidthServer> links_;
  std::vector<Ticks> train_sent_;  // a burst train's grant + hop + transfer, per burst
  std::vector<TimedPathProbe> out_paths_;  // per output: its target's answer to a probe
  struct TimedEntry {
    int id;             // the input
    std::size_t route;  // index in routes_ when answered
  };
  std::vector<TimedEntry> timed_entries_;  // timed_access's `input` tokens (answer_probe)
  std::vector<std::uint64_t> out_bytes_;
  std::vector<std::uint64_t> in_requests_, in_bytes_;
  bool mesh_ = false;
  unsigned mesh_rows_ = 1;
  std::vector<BandwidthServer> mesh_links_;  // 4 per router: east, west, south, north
  std::uint64_t byte_hops_ = 0;
  std::uint64_t unmapped_ = 0;
  std::uint64_t malformed_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_INTERCONNECT_H
