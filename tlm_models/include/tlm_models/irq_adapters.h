// Interrupt adapters between a signal and a function call, for virtual prototypes whose
// interrupt controllers are not driven by sc_signal<bool>:
// - IrqToCallback watches a signal (the one the accelerator's `irq` drives) and calls a function
//   at each change of level, e.g. a PLIC gateway's "trigger interrupt N" on the rising edge.
// - IrqToSignal is the other way round: a source that raises and lowers its interrupt by calling
//   set(level) drives an sc_signal<bool> through its `irq` port.
// Both act in the delta cycle after the change, at the same simulated time. Usage is in
// docs/integration.md ("Interrupts").
#ifndef TLM_MODELS_IRQ_ADAPTERS_H
#define TLM_MODELS_IRQ_ADAPTERS_H

#include <functional>
#include <utility>

#include <systemc>

namespace tlm_models {

class IrqToCallback : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> irq;

  // `on_change(level)` runs in a method process: it must not wait.
  IrqToCallback(sc_core::sc_module_name name, std::function<void(bool level)> on_change)
      : sc_core::sc_module(name), irq("irq"), on_change_(std::move(on_change)) {
    SC_HAS_PROCESS(IrqToCallback);
    SC_METHOD(forward);
    sensitive << irq;
    dont_initialize();
  }

  // Rising edges seen so far.
  unsigned raised() const { return raised_; }

 private:
  void forward() {
    const bool level = irq.read();
    if (level) ++raised_;
    if (on_change_) on_change_(level);
  }

  std::function<void(bool)> on_change_;
  unsigned raised_ = 0;
};

class IrqToSignal : public sc_core::sc_module {
 public:
  sc_core::sc_out<bool> irq;

  explicit IrqToSignal(sc_core::sc_module_name name) : sc_core::sc_module(name), irq("irq") {
    SC_HAS_PROCESS(IrqToSignal);
    SC_METHOD(drive);
    sensitive << changed_;
    dont_initialize();
  }

  // Callable from any process or from outside one (e.g. a callback of another library).
  void set(bool level) {
    level_ = level;
    changed_.notify(sc_core::SC_ZERO_TIME);
  }
  bool level() const { return level_; }

 private:
  void drive() { irq.write(level_); }

  sc_core::sc_event changed_;
  bool level_ = false;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_IRQ_ADAPTERS_H
