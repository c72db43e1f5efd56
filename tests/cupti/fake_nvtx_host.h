// Plays NVTX's and NCCL's parts for an NVTX injection library, on machines
// without NCCL: what NVTX's headers do when NVTX_INJECTION64_PATH names a
// library (its core function table handed over through an export table,
// the payload extension's slots through InitializeInjectionNvtxExtension),
// and what NCCL 2.19+ does with them (registers its collectives' payload
// schemas, pushes a range with an extended payload around each call).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpunoise::testing {

// Initializes `library` (a dlopen handle) as NVTX would and registers
// NCCL's AllReduce schema and reduction-op enum. False if an entry point
// is missing or refuses.
bool StartFakeNvtx(void* library);
// ncclAllReduce as NCCL instruments it: a push in the "NCCL" domain with
// {comm, bytes, op} attached, `body` (the launch), the pop.
void FakeNcclAllReduce(uint64_t comm, size_t bytes, int op, void (*body)());

}  // namespace gpunoise::testing
