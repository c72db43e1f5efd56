"""A small PyTorch training loop for checking GPU capture on a real framework
(run by hand on a GPU machine, not by ctest): bf16 MLP forward/backward/AdamW
steps inside NVTX ranges, a CUDA graph captured once and replayed, memsets
(zeros), a host copy of the loss and a synchronize per step.

It prints the median step time of the timed steps, so the same script run with
and without `gpunoise record -- ...` gives the capture's cost per step.

Usage: python3 tests/gpu/torch_workload.py [--steps N] [--seconds S] [--warmup N]
"""
import argparse
import statistics
import sys
import time

import torch


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.0, help="run steps until this many seconds passed")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--width", type=int, default=4096)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_workload: no CUDA device", file=sys.stderr)
        return 3
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, 1024)).to(dev, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, args.width, device=dev, dtype=torch.bfloat16)
    y = torch.randn(256, 1024, device=dev, dtype=torch.bfloat16)

    # A CUDA graph of an inference pass, replayed each step.
    static_in = torch.randn(64, args.width, device=dev, dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            model(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_out = model(static_in)

    times = []
    value = float("nan")
    start = time.monotonic()
    step = 0
    while True:
        if args.seconds > 0:
            if time.monotonic() - start >= args.seconds:
                break
        elif step >= args.warmup + args.steps:
            break
        t0 = time.perf_counter()
        torch.cuda.nvtx.range_push(f"step {step}")
        torch.cuda.nvtx.range_push("forward")
        loss = torch.nn.functional.mse_loss(model(x), y)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        opt.zero_grad(set_to_none=False)  # memsets
        loss.backward()
        torch.cuda.nvtx.range_pop()
        opt.step()
        graph.replay()
        scratch = torch.zeros(1 << 20, device=dev)
        value = loss.item()  # device-to-host copy and a wait
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        del scratch
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
        step += 1
    ms = statistics.median(times) * 1e3 if times else float("nan")
    print(f"torch_workload: {step} steps, median {ms:.3f} ms/step over {len(times)} timed steps, "
          f"last loss {value:.4f}, graph out {float(static_out.float().abs().mean()):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
