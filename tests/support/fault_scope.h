// FaultScope: installs a fault plan (io/fault_injection.h, FLOWIO_FAULT
// syntax) for the files opened while it lives, and returns to none after.
#pragma once

#include <string>

#include "io/fault_injection.h"

namespace flowio::testing {

class FaultScope {
 public:
  explicit FaultScope(const std::string& plan) : plan_(plan) {
    io::set_fault_plan(io::FaultPlan::parse(plan));
  }
  ~FaultScope() { io::set_fault_plan(io::FaultPlan{}); }
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
  const std::string& plan() const { return plan_; }

 private:
  std::string plan_;
};

}  // namespace flowio::testing
