// Statistics tree shared by every model: each component fills a group with named values that
// carry a unit, so Python reads the whole platform's statistics in one call (as JSON) and a
// C++ virtual prototype can print them.
#ifndef TLM_MODELS_STATS_H
#define TLM_MODELS_STATS_H

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tlm_models {

struct Stat {
  std::string name;
  double value;
  std::string unit;  // "B", "ns", "B/s", "1" (dimensionless), "ops", ...
  std::string desc;
};

class StatsGroup {
 public:
  explicit StatsGroup(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  const std::vector<Stat>& stats() const { return stats_; }
  const std::vector<std::unique_ptr<StatsGroup>>& children() const { return children_; }

  void add(const std::string& name, double value, const std::string& unit,
           const std::string& desc = "") {
    stats_.push_back(Stat{name, value, unit, desc});
  }

  // Returns the child group of that name, creating it on first use.
  StatsGroup& child(const std::string& name) {
    for (auto& c : children_)
      if (c->name_ == name) return *c;
    children_.push_back(std::make_unique<StatsGroup>(name));
    return *children_.back();
  }

  const Stat* find(const std::string& name) const {
    for (const auto& s : stats_)
      if (s.name == name) return &s;
    return nullptr;
  }

  // {"name": ..., "stats": {"x": {"value": v, "unit": u, "desc": d}}, "children": [...]}
  std::string to_json() const {
    std::string out;
    append_json(out);
    return out;
  }

 private:
  static void append_string(std::string& out, const std::string& s) {
    out += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        out += buf;
      } else {
        out += c;
      }
    }
    out += '"';
  }

  static void append_number(std::string& out, double v) {
    // JSON has no inf/nan; an undefined ratio (e.g. 0/0) is reported as null.
    if (!std::isfinite(v)) {
      out += "null";
      return;
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
  }

  void append_json(std::string& out) const {
    out += "{\"name\":";
    append_string(out, name_);
    out += ",\"stats\":{";
    for (std::size_t i = 0; i < stats_.size(); ++i) {
      if (i) out += ',';
      append_string(out, stats_[i].name);
      out += ":{\"value\":";
      append_number(out, stats_[i].value);
      out += ",\"unit\":";
      append_string(out, stats_[i].unit);
      out += ",\"desc\":";
      append_string(out, stats_[i].desc);
      out += '}';
    }
    out += "},\"children\":[";
    for (std::size_t i = 0; i < children_.size(); ++i) {
      if (i) out += ',';
      children_[i]->append_json(out);
    }
    out += "]}";
  }

  std::string name_;
  std::vector<Stat> stats_;
  std::vector<std::unique_ptr<StatsGroup>> children_;
};

// Implemented by every component: fill a group with the current statistics; reset them.
class StatsProvider {
 public:
  virtual ~StatsProvider() = default;
  virtual void collect_stats(StatsGroup& group) const = 0;
  virtual void reset_stats() = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_STATS_H
