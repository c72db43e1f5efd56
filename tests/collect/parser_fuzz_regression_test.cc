// Inputs the text parsers' fuzz targets (tests/fuzz) found, kept as
// regression tests.
#include <gtest/gtest.h>

#include "collect/irq_scanner.h"

namespace gpunoise::collect {
namespace {

// An IRQ number past int32 was cut to its low bits: "4294967296" became IRQ 0.
TEST(ParserFuzzRegression, InterruptsLineWithAnImpossibleIrqNumberIsSkipped) {
  model::IrqTable t = ParseInterrupts(
      "           CPU0       CPU1\n"
      "4294967296:   1   2   IO-APIC   2-edge      bogus\n"
      "-5:           1   2   IO-APIC   2-edge      negative\n"
      " 24:          3   4   PCI-MSIX-0000:00:03.0 1-edge      virtio2-input.0\n");
  ASSERT_EQ(t.size(), 1u);
  ASSERT_EQ(t.count(24), 1u);
  EXPECT_EQ(t.at(24).name, "virtio2-input.0");
}

}  // namespace
}  // namespace gpunoise::collect
