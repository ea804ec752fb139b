// Cross-tile dependencies between the replayers of one chip's tiles (docs/models/tiles.md,
// "Split-K"): a load that reads what other tiles stored waits until those stores are done.
//
// The trace names them with tokens (traces/README.md): a store record with k = t != 0 posts
// token t when it is issued (its done time is known then); a load record with k = t != 0 waits
// for `code` posts of t and may start at the latest of their done times. Tokens are global to
// the chip, so a tile may post what another waits for (split-K: each tile stores the partial
// result of its slice of keys, the combining tile loads every partial of the block).
//
// A replayer whose every next operation waits (on a token, or on one that does) parks: it
// leaves the issue gate, since its next start is unknown and the other tiles must go on, and
// sleeps until a token it waits for is posted. The poster then puts it back in the gate with
// the post's start time as its bound, a valid lower bound: whatever it issues next waits for a
// post not yet made or just made, and posts are made in gate order, so at or after this one's
// start. The parked tile then looks again and parks anew while a post is still missing.
#ifndef TLM_MODELS_TILE_SYNC_H
#define TLM_MODELS_TILE_SYNC_H

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "tlm_models/issue_gate.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

// Whether a record takes part in a cross-tile dependency (a load or store with a token in k).
inline bool has_tile_token(const TraceOp& op) {
  const auto kind = static_cast<OpKind>(op.kind);
  return op.k != 0 && (kind == OpKind::load || kind == OpKind::store);
}

class TileSync {
 public:
  static constexpr Ticks kPending = std::numeric_limits<Ticks>::max();

  TileSync(IssueGate& gate, unsigned members) : gate_(gate), members_(members) {
    for (unsigned i = 0; i < members; ++i)
      members_[i].wake = std::make_unique<sc_core::sc_event>();
  }

  // A waiting load's earliest start allowed by its token: the latest done time of its `code`
  // posts, or kPending while some are missing (the member is noted as a waiter of the token).
  Ticks ready(const TraceOp& op, unsigned member) {
    const Token& t = tokens_[op.k];
    if (t.posts >= op.code) return t.done;
    Member& me = members_.at(member);
    me.token = op.k;
    me.needs = op.code;
    if (!waits(member)) waiters_[op.k].push_back(member);  // choose() asks again and again
    return kPending;
  }

  // A store was issued at `start` and completes at `done`: posts its token, wakes the parked
  // members that wait for it (back into the gate at `start`).
  void post(const TraceOp& op, Ticks start, Ticks done) {
    Token& t = tokens_[op.k];
    ++t.posts;
    if (done > t.done) t.done = done;
    auto it = waiters_.find(op.k);
    if (it == waiters_.end()) return;
    for (unsigned member : it->second) {
      Member& m = members_[member];
      if (!m.parked) continue;
      m.parked = false;
      gate_.rejoin(member, start);
      m.wake->notify();  // runs once the poster yields (gate order decides who goes first)
    }
    waiters_.erase(it);
  }

  // Parks `member` until a post of a token it waits for; false when it waits for none (the
  // replay is blocked for another reason).
  bool park(unsigned member) {
    Member& me = members_.at(member);
    if (me.token == 0 || !waits(member)) return false;
    me.parked = true;
    ++parks_;
    gate_.leave(member);
    sc_core::wait(*me.wake);
    me.token = 0;
    return true;
  }

  // What a parked member waits for (a replay that cannot progress names it).
  std::string waiting_on(unsigned member) const {
    const Member& me = members_.at(member);
    if (me.token == 0) return "";
    auto it = tokens_.find(me.token);
    const std::uint32_t posts = it == tokens_.end() ? 0 : it->second.posts;
    return "cross-tile token " + std::to_string(me.token) + " (" + std::to_string(posts) +
           " of " + std::to_string(me.needs) + " posts made)";
  }

  // Times a member parked (each one a wait for another tile's store).
  std::uint64_t parks() const { return parks_; }

 private:
  struct Token {
    std::uint32_t posts = 0;
    Ticks done = 0;
  };
  struct Member {
    std::uint32_t token = 0;  // a token it found missing (0: none)
    std::uint32_t needs = 0;
    bool parked = false;
    std::unique_ptr<sc_core::sc_event> wake;
  };

  bool waits(unsigned member) const {
    auto it = waiters_.find(members_[member].token);
    if (it == waiters_.end()) return false;
    for (unsigned m : it->second)
      if (m == member) return true;
    return false;
  }

  IssueGate& gate_;
  std::vector<Member> members_;
  std::map<std::uint32_t, Token> tokens_;
  std::map<std::uint32_t, std::vector<unsigned>> waiters_;
  std::uint64_t parks_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_TILE_SYNC_H
