/** \file OnChipMemory: a runner's block comes back from the pool for the same size, zeroed only when fresh, bounded. */
#include <cstdint>
#include <cstring>

#include "on_chip_memory.h"
#include "test_support.h"

TEST_CASE("on-chip memory given back is taken again by a runner of the same size, as the last one left it") {
  constexpr std::size_t kBytes = 3 * 4096 + 100;  // a size no other test's runner has
  std::byte* first = nullptr;
  {
    nki::OnChipMemory m(kBytes);
    first = m.data();
    CHECK(reinterpret_cast<std::uintptr_t>(first) % nki::OnChipMemory::kAlign == 0);
    CHECK(m.size() == kBytes);
    // Fresh memory is zeroed, so a first launch does not depend on what the host had there.
    bool zero = true;
    for (std::size_t i = 0; i < kBytes; ++i) zero = zero && m.data()[i] == std::byte{0};
    CHECK(zero);
    std::memset(m.data(), 0x5a, kBytes);
  }
  const std::size_t kept = nki::OnChipMemory::pooled_bytes();
  CHECK(kept >= kBytes);
  {
    nki::OnChipMemory other(kBytes + 64);  // another size does not take it
    CHECK(other.data() != first);
    nki::OnChipMemory again(kBytes);
    CHECK(again.data() == first);
    CHECK(again.data()[kBytes - 1] == std::byte{0x5a});  // not cleared: undefined on-chip memory, as on the device
    CHECK(nki::OnChipMemory::pooled_bytes() == kept - kBytes);
  }
}

TEST_CASE("on-chip memory larger than the pool keeps is freed, not kept") {
  const std::size_t before = nki::OnChipMemory::pooled_bytes();
  { nki::OnChipMemory huge(std::size_t{300} << 20); }
  CHECK(nki::OnChipMemory::pooled_bytes() == before);
}
