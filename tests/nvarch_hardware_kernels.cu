// Kernels for test_nvarch_hardware.py: a TMA tile loader, and the body of a one-warpgroup wgmma (SS) test kernel.
// The wgmma kernels themselves (one per instruction: its PTX and accumulator count come from cute-nvarch's atom)
// are rendered by the test, which includes this file, and compiled on the GPU machine with nvcc -arch=sm_90a -cubin.

#include <cuda.h>
#include <cstdint>

extern __shared__ __align__(1024) uint8_t smem_raw[];

__device__ __forceinline__ uint8_t* align1024(uint8_t* p) {
  return (uint8_t*)(((uintptr_t)p + 1023) & ~(uintptr_t)1023);
}

extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap tmap, const int* coords, const int* smem_off,
                                    int nbox, int rank, int tile_bytes, uint8_t* out) {
  __shared__ __align__(8) uint64_t bar;
  uint8_t* smem = align1024(smem_raw);
  for (int i = threadIdx.x; i < tile_bytes; i += blockDim.x) smem[i] = 0xAB;  // poison
  __syncthreads();
  uint32_t bar_addr = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(tile_bytes) : "memory");
    for (int b = 0; b < nbox; ++b) {
      uint32_t dst = (uint32_t)__cvta_generic_to_shared(smem + smem_off[b]);
      const int* c = coords + 5 * b;
      if (rank == 2) {
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(dst), "l"(&tmap), "r"(c[0]), "r"(c[1]), "r"(bar_addr) : "memory");
      } else if (rank == 3) {
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                     :: "r"(dst), "l"(&tmap), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar_addr) : "memory");
      }
    }
    asm volatile("{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT_%=;\n}"
                 :: "r"(bar_addr) : "memory");
  }
  __syncthreads();
  for (int i = threadIdx.x; i < tile_bytes; i += blockDim.x) out[i] = smem[i];
}

// Copies the A and B shared-memory images (bytes, laid out by cute-nvarch's GMMA layouts) into 1024-byte aligned
// shared memory, A first, B at the next 1024-byte boundary; then runs the k-blocks: descriptor k of A and B is
// descs[2k] and descs[2k+1] (start address 0) plus the buffer's address >> 4. Mma(d, desc_a, desc_b) issues one
// wgmma.mma_async; thread t writes its NACC accumulators to out[t * NACC ...].
template <int NACC, typename Mma>
__device__ __forceinline__ void wgmma_ss(const uint8_t* img_a, int a_bytes, const uint8_t* img_b, int b_bytes,
                                         const unsigned long long* descs, int kblocks, float* out, Mma mma) {
  uint8_t* base = align1024(smem_raw);
  int b_off = (a_bytes + 1023) & ~1023;
  for (int i = threadIdx.x; i < a_bytes; i += blockDim.x) base[i] = img_a[i];
  for (int i = threadIdx.x; i < b_bytes; i += blockDim.x) base[b_off + i] = img_b[i];
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t a0 = (uint64_t)((uint32_t)__cvta_generic_to_shared(base) >> 4);
  uint64_t b0 = (uint64_t)((uint32_t)__cvta_generic_to_shared(base + b_off) >> 4);
  float d[NACC];
  for (int i = 0; i < NACC; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < kblocks; ++k) mma(d, descs[2 * k] + a0, descs[2 * k + 1] + b0);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < NACC; ++i) out[threadIdx.x * NACC + i] = d[i];
}
